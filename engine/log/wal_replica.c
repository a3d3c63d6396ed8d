/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_replica.c -- the log as a replica keeps it: its ring is written by
 * the primary (one-sided writes), so the log's view is refreshed by
 * scanning, and the primary shapes it (truncate, restart at a foreign
 * position, move the checkpoint) and limits its readers (commit point).
 * Also the positions and identity a primary's links compare.
 */
#include "config.h"

#include <string.h>

#include "common/tsan.h"
#include "log/wal_internal.h"
#include "common/errors.h"

void
wal_positions(struct wal *wal, struct log_pos *head, struct log_pos *pub,
		struct log_pos *durable)
{
	wal_lock(wal);
	if (head)
		*head = wal->head;
	if (pub)
		*pub = wal->pub;
	if (durable)
		*durable = wal->durable;
	wal_unlock(wal);
}

/* the position after record lsn (under the lock); lsn may be head.lsn - 1 */
static int
pos_after(struct wal *wal, uint64_t lsn, struct log_pos *after)
{
	struct rec_hdr h;
	struct log_pos at;
	int ret;

	if (lsn + 1 == wal->head.lsn) {
		*after = wal->head;
		return 0;
	}
	if (lsn + 1 == wal->pub.lsn) {
		*after = wal->pub;
		return 0;
	}
	ret = wal_find(wal, lsn, &at, &h);
	if (ret)
		return ret;
	wal_advance(wal, &at, h.len, false, h.crc);
	*after = at;
	return 0;
}

int
wal_pos_after(struct wal *wal, uint64_t lsn, struct log_pos *after)
{
	int ret;

	if (wal == NULL || after == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	if (lsn + 1 < wal->head.lsn || lsn >= wal->pub.lsn)
		ret = REPL_E_NOT_FOUND;
	else
		ret = pos_after(wal, lsn, after);
	wal_unlock(wal);
	return ret;
}

int
wal_lsn_keeping(struct wal *wal, uint64_t keep, uint64_t *lsn)
{
	struct log_pos at;
	uint64_t lo, hi;
	int ret = 0;

	if (wal == NULL || lsn == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	lo = wal->head.lsn - 1;		/* releasing nothing keeps everything */
	hi = wal->pub.lsn - 1;
	/* what follows a record shrinks as its LSN grows: bisect */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if ((ret = pos_after(wal, mid, &at)) != 0)
			break;
		if (wal_distance(wal, &at, &wal->pub) >= keep)
			lo = mid;
		else
			hi = mid - 1;
	}
	wal_unlock(wal);
	*lsn = lo;
	return ret;
}

/* extend the log over valid records found after pub (under the lock) */
static void
scan_forward(struct wal *wal)
{
	struct rec_hdr h;
	int kind;

	/* the ring's bytes, as the transport writes them (common/tsan.h) */
	RING_READS_BEGIN();
	while ((kind = wal_rec_at(wal, &wal->pub, &h)) != 0) {
		if (kind == 1)
			wal_idx_note(wal, &wal->pub);
		wal_advance(wal, &wal->pub, h.len, kind == 2, h.crc);
		if (wal_distance(wal, &wal->head, &wal->pub) >= wal->ring_size)
			break;
	}
	RING_READS_END();
	wal->tail = wal->pub;
	/*
	 * What the scan found is in memory, not necessarily persistent: a
	 * primary's write lands before its flush.  durable moves only on a
	 * flushed position the primary reports, or on a persist of our own.
	 */
	if (wal->durable.lsn > wal->pub.lsn)
		wal->durable = wal->pub;
	wal->used = wal_distance(wal, &wal->head, &wal->tail);
	atomic_store_explicit(&wal->pub_lsn, wal->pub.lsn, memory_order_release);
	atomic_store_explicit(&wal->durable_lsn, wal->durable.lsn, memory_order_release);
}

int
wal_refresh(struct wal *wal)
{
	if (wal == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	scan_forward(wal);
	wal_unlock(wal);
	return 0;
}

/* make the ring hold no record at p: zero the header there, durably */
static int
end_at(struct wal *wal, const struct log_pos *p)
{
	static const char zero[REC_HDR];

	if (wal->ring_size - p->off < REC_HDR)
		return 0;	/* no record can start there anyway */
	rpma_ext_mem_memcpy(wal->mem, RING_OFF + p->off, zero, REC_HDR);
	return wal_persist(wal, RING_OFF + p->off, REC_HDR);
}

static bool
pos_valid(const struct wal *wal, const struct log_pos *p)
{
	return p->lsn > 0 && p->lap > 0 && (p->off & 7) == 0 &&
		p->off < wal->ring_size;
}

/* the epoch of record lsn - 1, under wal->lock (0: not known) */
static uint64_t
epoch_before(struct wal *wal, uint64_t lsn)
{
	struct log_pos at;
	struct rec_hdr h;

	if (lsn == wal->head.lsn)
		return wal->hdr.ck_epoch;
	if (lsn > wal->head.lsn && wal_find(wal, lsn - 1, &at, &h) == 0)
		return h.epoch;
	return 0;
}

uint64_t
wal_tail_epoch(struct wal *wal)
{
	uint64_t epoch;

	/* every record released: the checkpoint remembers the last one's */
	wal_lock(wal);
	epoch = epoch_before(wal, wal->pub.lsn);
	wal_unlock(wal);
	return epoch;
}

uint64_t
wal_epoch_before(struct wal *wal, uint64_t lsn)
{
	uint64_t e;

	wal_lock(wal);
	e = epoch_before(wal, lsn);
	wal_unlock(wal);
	return e;
}

int
wal_note_persisted(struct wal *wal, const struct log_pos *p)
{
	struct log_pos own;

	if (wal == NULL || p == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	if (p->lsn > wal->durable.lsn && p->lsn <= wal->pub.lsn &&
	    pos_after(wal, p->lsn - 1, &own) == 0 && pos_equal(&own, p)) {
		wal->durable = *p;
		atomic_store_explicit(&wal->durable_lsn, p->lsn, memory_order_release);
	}
	wal_unlock(wal);
	return 0;
}

int
wal_refresh_persist(struct wal *wal)
{
	struct log_pos pub;

	if (wal == NULL)
		return REPL_E_INVAL;
	wal_refresh(wal);
	wal_positions(wal, NULL, &pub, NULL);
	return pub.lsn > 1 ? wal_sync(wal, pub.lsn - 1) : 0;
}

int
wal_truncate(struct wal *wal, const struct log_pos *at, uint64_t at_epoch)
{
	struct log_pos own;
	int ret = 0;

	if (wal == NULL || at == NULL || !pos_valid(wal, at))
		return REPL_E_INVAL;
	wal_hdr_lock(wal);
	wal_lock(wal);
	if (wal->tail.lsn != wal->pub.lsn || wal->syncing) {
		ret = REPL_E_INVAL;	/* appends in flight: not a replica */
		goto out;
	}
	scan_forward(wal);
	if (at->lsn >= wal->head.lsn && at->lsn <= wal->pub.lsn &&
	    pos_after(wal, at->lsn - 1, &own) == 0 && pos_equal(&own, at)) {
		/* a point of our own chain: forget what follows */
		if ((ret = end_at(wal, at)))
			goto out;
	} else {
		/* not in our chain: the log restarts empty at it */
		if ((ret = end_at(wal, at)))
			goto out;
		if ((ret = wal_set_checkpoint(wal, at, at_epoch)))
			goto out;
		wal->head = *at;
		wal->durable = *at;
	}
	wal->pub = *at;
	memset(wal->idx, 0, wal->idx_cap * sizeof(*wal->idx));
	scan_forward(wal);	/* finds nothing: records the new end */
	pthread_cond_broadcast(&wal->space);
out:
	wal_unlock(wal);
	wal_hdr_unlock(wal);
	return ret;
}

int
wal_set_head(struct wal *wal, const struct log_pos *at)
{
	struct log_pos own;
	int ret = 0;

	if (wal == NULL || at == NULL || !pos_valid(wal, at))
		return REPL_E_INVAL;
	wal_hdr_lock(wal);
	wal_lock(wal);
	scan_forward(wal);
	if (at->lsn < wal->head.lsn || at->lsn > wal->pub.lsn ||
	    pos_after(wal, at->lsn - 1, &own) || !pos_equal(&own, at)) {
		ret = REPL_E_NOT_FOUND;	/* only forward, along our chain */
		goto out;
	}
	if (pos_equal(at, &wal->head))
		goto out;
	/* the flushes this replica answers meanwhile need lock */
	if ((ret = wal_move_head(wal, at, epoch_before(wal, at->lsn))))
		goto out;
	if (wal->durable.lsn < at->lsn)
		wal->durable = *at;	/* what precedes is released */
out:
	wal_unlock(wal);
	wal_hdr_unlock(wal);
	return ret;
}

/*
 * The promise (epoch, the incarnation that chose it) in one header update;
 * a floor only raises it, and ends the log's promise-pending mark.
 */
static int
set_promise(struct wal *wal, uint64_t epoch, uint64_t epoch_inc, bool floor)
{
	struct wal_hdr nh;
	int ret;

	if (wal == NULL)
		return REPL_E_INVAL;
	wal_hdr_lock(wal);
	wal_lock(wal);
	nh = wal->hdr;
	if (!floor || epoch > nh.epoch) {
		nh.epoch = epoch;
		nh.epoch_inc = epoch_inc;
	}
	if (floor)
		nh.flags &= ~WAL_F_PROMISE_PENDING;
	ret = wal_hdr_update(wal, &nh);
	wal_unlock(wal);
	wal_hdr_unlock(wal);
	return ret;
}

int
wal_set_epoch(struct wal *wal, uint64_t epoch, uint64_t epoch_inc)
{
	return set_promise(wal, epoch, epoch_inc, false);
}

int
wal_take_floor(struct wal *wal, uint64_t epoch, uint64_t epoch_inc)
{
	return set_promise(wal, epoch, epoch_inc, true);
}

void
wal_set_read_limit(struct wal *wal, uint64_t lsn)
{
	wal_lock(wal);
	wal->read_limit = lsn == UINT64_MAX ? UINT64_MAX : lsn + 1;
	wal_unlock(wal);
}

void
wal_identity(struct wal *wal, struct wal_identity *id, uint64_t *ring_size)
{
	wal_lock(wal);
	memcpy(id->cluster_uuid, wal->hdr.cluster_uuid, sizeof(id->cluster_uuid));
	id->node_id = wal->hdr.node_id;
	id->epoch = wal->hdr.epoch;
	id->incarnation = wal->hdr.incarnation;
	id->epoch_inc = wal->hdr.epoch_inc;
	id->flags = wal->hdr.flags;
	*ring_size = wal->ring_size;
	wal_unlock(wal);
}
