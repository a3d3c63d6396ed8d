/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal.c -- the local write-ahead log: format, appends, group persist,
 * recovery and space.
 *
 * ON-MEDIA FORMAT (little-endian; version 2)
 *
 * The log is one persistence-backend region (rpma_ext_mem) of S bytes:
 *
 *   [0, 4096)     header copy A
 *   [4096, 8192)  header copy B
 *   [8192, S)     the ring: records, back to back, 8-byte aligned
 *
 * Header (136 bytes at the start of its copy):
 *
 *   off size field
 *     0    8 magic       "RPLWAL" 0x00 0x01
 *     8    4 version     2
 *    12    4 node_id
 *    16    8 seq         generation: of two valid copies the larger wins
 *    24   16 cluster_uuid
 *    40    8 epoch       the newest epoch this log accepted (a replica's
 *                        promise) or started (a primary's)
 *    48    8 ring_off    8192
 *    56    8 ring_size   S - 8192
 *    64    8 ck_lsn      the checkpoint: LSN of the first record kept,
 *    72    8 ck_off      its offset in the ring,
 *    80    4 ck_lap      the lap it was written in,
 *    84    4 ck_crc      and the chain value before it
 *    88    8 usc         the device's unsafe-shutdown count when the log
 *                        was last opened (0: not known)
 *    96    4 dev_crc     CRC-32C of the device's id (0: not known)
 *   100    4 state       1 while a process has the log open, 0 after a
 *                        clean close
 *   104    8 incarnation random at format, never 0, never changed: a log
 *                        made anew (a replaced disk) is another log
 *   112    8 epoch_inc   the incarnation of the log whose node chose
 *                        epoch (0: not known)
 *   120    8 ck_epoch    the epoch of record ck_lsn - 1 (0: none, or
 *                        not known), so a log whose records were all
 *                        released still says how recent it is
 *   128    4 flags       bit 0 PROMISE_PENDING: the log was made anew
 *                        (a replica's reinit) and has not taken its
 *                        promise floor yet: it serves no primary until
 *                        it has (docs/replication.md); set at format,
 *                        cleared by the header update that stores the
 *                        floor.  Bit 1 RESTORED: the log was written
 *                        offline from an archive's records
 *                        (wal_restore.c) and no cluster took it yet: a
 *                        bootstrap may take it as its first log; cleared
 *                        once that bootstrap stored its membership.  No
 *                        other bit may be set: a header with an unknown
 *                        bit is not valid
 *   132    4 crc         CRC-32C of bytes 0..131
 *
 * Version 1 had the fields up to state, then reserved (104) and crc
 * (108, over bytes 0..107); opening such a log rewrites its header as
 * version 2 with a fresh incarnation, ck_epoch 0 and no flags.  Offset
 * 128 was a reserved field that had to be 0 before it held the flags, so
 * a program from before them refuses a log that waits for its floor
 * rather than serve it.
 *
 * The rest of each 4 KiB copy is zeroed at format; the membership
 * (membership.h) lives at offset 1024 of each copy, with its own
 * generation (the configuration epoch) and checksum, and the peer floors
 * (peer_floor.h: what this node saw each peer's log promise and store)
 * at offset 2048 of each copy, with their own magic, generation and
 * checksum.  Each is stored over its own older copy, so a torn store
 * leaves the previous one; neither touches the header above.
 *
 * A header update writes the older copy with seq + 1 and persists it, so a
 * torn update leaves the other copy valid.  The checkpoint moves only after
 * the database released the records before it (wal_release), and space
 * before it is reused only once the new header is persistent.
 *
 * Record (40-byte header, then the payload, padded to 8 bytes):
 *
 *   off size field
 *     0    8 lsn         1, 2, 3, ... without gaps
 *     8    4 len         payload bytes (aligned: never torn)
 *    12    4 lap         the pass over the ring, from 1
 *    16    8 client_id
 *    24    4 epoch       the epoch it was written in (epochs are at
 *                        most 2^32 - 1)
 *    28    4 flags       1 = WRAP: no payload, the next record is at ring
 *                        offset 0 with lap + 1 (a WRAP takes no LSN);
 *                        2 = EPOCH_START: no payload, the first record a
 *                        primary writes in its epoch (the commit rule,
 *                        docs/replication.md); the two never together
 *    32    4 crc         CRC-32C of this header (crc field zero) and the
 *                        payload, chained: seeded with the previous
 *                        record's crc (the checkpoint's ck_crc first)
 *    36    4 reserved    0
 *
 * A record that does not fit before the ring's end is preceded by a WRAP
 * record; where fewer than 40 bytes remain, the next record is at offset 0
 * with lap + 1 without one.
 *
 * VALIDITY: recovery starts at the checkpoint and accepts a record only if
 * its LSN is the next expected one, its lap the current lap, its length fits
 * the ring and its chained CRC matches.  The first record that fails ends
 * the log: it is the torn tail, and nothing after it is ever returned.  A
 * record from an earlier pass has an older lap and so can never be taken
 * for the tail; memory never written has lap 0 and LSN 0.
 *
 * HEALTH: opening the log records the device's unsafe-shutdown count and
 * marks it open.  If it was still marked open and the same device now
 * counts more unsafe shutdowns, the power failed while the log was in use
 * and data the CPU had flushed may not have reached the media: the log is
 * reported suspect (so are bad blocks overlapping it).  A process crash
 * alone loses nothing that was persisted.
 *
 * DURABILITY: an append copies into the ring without persisting (the
 * backend's NOFLUSH copy); wal_sync persists everything appended so far in
 * one go (appends that arrive while it runs share the next one).  A
 * record's header is stored after its payload, so a record is complete
 * before anything can take it for one.  Nothing is durable because of a
 * pointer: only the records themselves say what the log holds.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "crc32c.h"
#include "common/elog.h"
#include "common/fault.h"
#include "log/wal_internal.h"
#include "common/errors.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	"the log's format is little-endian; this host is not");

int
wal_persist(struct wal *wal, uint64_t off, uint64_t len)
{
	return err_medium(rpma_ext_mem_persist(wal->mem, (size_t)off, (size_t)len));
}

int
wal_hdrs_read(struct rpma_ext_mem *mem, char **base, size_t *size, struct wal_hdr *a,
		struct wal_hdr *b, bool *va, bool *vb)
{
	if (wal_region(mem, base, size))
		return REPL_E_INVAL;
	memcpy(a, *base, sizeof(*a));
	memcpy(b, *base + HDR_COPY_SIZE, sizeof(*b));
	*va = wal_hdr_check(a, *size, NULL) || wal_hdr_from_v1(a, *size);
	*vb = wal_hdr_check(b, *size, NULL) || wal_hdr_from_v1(b, *size);
	return *va || *vb ? 0 : REPL_E_CORRUPT;
}

int
wal_region(struct rpma_ext_mem *mem, char **base, size_t *size)
{
	void *p;

	if (mem == NULL || rpma_ext_mem_get_ptr(mem, &p) || rpma_ext_mem_get_size(mem, size))
		return REPL_E_INVAL;
	if (*size < RING_OFF + 4096)
		return REPL_E_INVAL;
	*base = p;
	return 0;
}

int
wal_format(struct rpma_ext_mem *mem, const struct wal_identity *id)
{
	struct wal_hdr h;
	size_t size;
	char *base;
	int ret;

	if (id == NULL || (id->flags & ~WAL_F_KNOWN) ||
	    (ret = wal_region(mem, &base, &size)))
		return REPL_E_INVAL;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, wal_magic, sizeof(h.magic));
	h.version = WAL_VERSION;
	h.node_id = id->node_id;
	memcpy(h.cluster_uuid, id->cluster_uuid, sizeof(h.cluster_uuid));
	h.epoch = id->epoch;
	h.incarnation = id->incarnation ? id->incarnation : wal_new_incarnation();
	h.epoch_inc = id->epoch_inc ? id->epoch_inc : id->epoch ? h.incarnation : 0;
	h.ring_off = RING_OFF;
	h.ring_size = (size - RING_OFF) & ~(uint64_t)7;
	h.ck_lsn = 1;
	h.ck_off = 0;
	h.ck_lap = 1;
	h.ck_crc = 0;
	h.flags = id->flags;
	/* an empty ring: no stale record may look like LSN 1 of lap 1 */
	memset(base + RING_OFF, 0, REC_HDR);
	REPL_FAULT(REPL_E_IO, {});
	if ((ret = err_medium(rpma_ext_mem_persist(mem, RING_OFF, REC_HDR))))
		return ret;
	/* the rest of both copies is reserved (membership.h): none yet */
	memset(base + sizeof(h), 0, HDR_COPY_SIZE - sizeof(h));
	memset(base + HDR_COPY_SIZE + sizeof(h), 0, HDR_COPY_SIZE - sizeof(h));
	REPL_FAULT(REPL_E_IO, {});
	if ((ret = err_medium(rpma_ext_mem_persist(mem, 0, RING_OFF))))
		return ret;
	h.seq = 1;
	if ((ret = wal_hdr_write(mem, base, 0, &h)))
		return ret;
	memset(base + HDR_COPY_SIZE, 0, sizeof(h));	/* copy B: invalid */
	REPL_FAULT(REPL_E_IO, {});
	return err_medium(rpma_ext_mem_persist(mem, HDR_COPY_SIZE, sizeof(h)));
}

/* the next position after a record of len payload bytes at p */
void
wal_advance(const struct wal *wal, struct log_pos *p, uint32_t len, bool wrap,
		uint32_t crc)
{
	wal_pos_next(wal->ring_size, p, len, wrap, crc);
}

/*
 * Is there a valid record at p?  Fills *h; returns 1 for a record, 2 for a
 * WRAP, 0 for the end of the log.
 */
int
wal_rec_at(const struct wal *wal, const struct log_pos *p, struct rec_hdr *h)
{
	enum wal_slot kind;
	uint32_t crc;

	if (wal->ring_size - p->off < REC_HDR)
		return 0;	/* never read past the ring, whatever a header said */
	memcpy(h, wal->ring + p->off, sizeof(*h));
	kind = wal_slot_check(h, p, wal->ring_size, NULL);
	if (kind != WAL_SLOT_RECORD && kind != WAL_SLOT_WRAP)
		return 0;	/* the end: a damaged slot ends the log too */
	crc = wal_rec_crc_start(h, p->crc);
	crc = rpma_crc32c(crc, wal->ring + p->off + REC_HDR, h->len);
	if (crc != h->crc)
		return 0;
	return kind == WAL_SLOT_WRAP ? 2 : 1;
}

uint64_t
wal_distance(const struct wal *wal, const struct log_pos *from, const struct log_pos *to)
{
	return wal_pos_distance(wal->ring_size, from, to);
}

static void
wal_free(struct wal *wal)
{
	pthread_cond_destroy(&wal->published);
	pthread_cond_destroy(&wal->synced);
	pthread_cond_destroy(&wal->space);
	pthread_mutex_destroy(&wal->lock);
	pthread_mutex_destroy(&wal->hdr_lock);
	free(wal->idx);
	free(wal->slots);
	free(wal);
}

/*
 * What the medium says about itself (rpma_ext_mem_get_health), against
 * what the header recorded at the last open; then record this open.
 */
static int
check_health(struct wal *wal)
{
	struct rpma_ext_mem_health mh;
	struct wal_hdr nh = wal->hdr;
	uint32_t dev_crc = 0;

	if (rpma_ext_mem_get_health(wal->mem, &mh))
		memset(&mh, 0, sizeof(mh));
	if (mh.device_id_known)
		dev_crc = rpma_crc32c(0, mh.device_id, strlen(mh.device_id)) | 1;
	if (wal->hdr.state == STATE_OPEN)
		wal->health |= REPL_HEALTH_NOT_CLOSED;
	if (!mh.usc_known || !dev_crc)
		wal->health |= REPL_HEALTH_USC_UNKNOWN;
	else if (wal->hdr.state == STATE_OPEN && wal->hdr.dev_crc == dev_crc &&
		 wal->hdr.usc != mh.usc)
		wal->health |= REPL_HEALTH_UNSAFE_SHUTDOWN;
	if (!mh.badblocks_known)
		wal->health |= REPL_HEALTH_BADBLOCKS_UNKNOWN;
	else if (mh.badblocks)
		wal->health |= REPL_HEALTH_BAD_BLOCKS;
	if (wal->health & REPL_HEALTH_UNSAFE_SHUTDOWN)
		REPL_LOG_ERROR("the log's device counted an unsafe shutdown while the log "
			"was open (count %llu, now %llu): records may be lost",
			(unsigned long long)wal->hdr.usc, (unsigned long long)mh.usc);
	if (wal->health & REPL_HEALTH_BAD_BLOCKS)
		REPL_LOG_ERROR("%llu bad block(s), %llu bytes, overlap the log",
			(unsigned long long)mh.badblocks,
			(unsigned long long)mh.badblock_bytes);
	nh.usc = (mh.usc_known && dev_crc) ? mh.usc : 0;
	nh.dev_crc = (mh.usc_known && dev_crc) ? dev_crc : 0;
	nh.state = STATE_OPEN;
	return wal_hdr_update(wal, &nh);
}

/* remember where a record starts, if its LSN is a multiple of the stride */
void
wal_idx_note(struct wal *wal, const struct log_pos *p)
{
	if (p->lsn % IDX_STRIDE == 0)
		wal->idx[(p->lsn / IDX_STRIDE) % wal->idx_cap] = *p;
}

/* the closest noted position at or before lsn, else the head */
struct log_pos
wal_idx_find(const struct wal *wal, uint64_t lsn)
{
	uint64_t base = lsn - lsn % IDX_STRIDE;
	const struct log_pos *e = &wal->idx[(base / IDX_STRIDE) % wal->idx_cap];

	if (base > wal->head.lsn && e->lsn == base)
		return *e;
	return wal->head;
}

int
wal_open(struct rpma_ext_mem *mem, struct wal **wal_ptr)
{
	struct wal_hdr a, b;
	pthread_condattr_t ca;
	struct rec_hdr h;
	struct wal *wal;
	size_t size;
	char *base;
	bool va, vb, upgrade;
	int kind, ret;

	if (wal_ptr == NULL)
		return REPL_E_INVAL;
	if ((ret = wal_hdrs_read(mem, &base, &size, &a, &b, &va, &vb)))
		return ret;
	upgrade = (va && a.version == 1) || (vb && b.version == 1);

	REPL_FAULT(REPL_E_NOMEM, {});
	wal = calloc(1, sizeof(*wal));
	if (wal == NULL)
		return REPL_E_NOMEM;
	wal->mem = mem;
	{
		enum rpma_ext_mem_backend be;

		wal->slow_persist = rpma_ext_mem_get_backend(mem, &be) == 0 &&
			be == RPMA_EXT_MEM_FILE;
	}
	wal->base = base;
	wal->hdr_copy = wal_hdr_pick(&a, &b, va, vb);
	wal->hdr = wal->hdr_copy == 0 ? a : b;
	wal->ring = base + RING_OFF;
	wal->ring_size = wal->hdr.ring_size;
	/* live LSNs span fewer than ring_size / REC_HDR: no two share a slot */
	wal->idx_cap = wal->ring_size / REC_HDR / IDX_STRIDE + 2;
	wal->idx = calloc(wal->idx_cap, sizeof(*wal->idx));
	wal->slots = calloc(PUB_SLOTS, sizeof(*wal->slots));
	if (REPL_FAULTED() || wal->idx == NULL || wal->slots == NULL) {
		free(wal->idx);
		free(wal->slots);
		free(wal);
		return REPL_E_NOMEM;
	}
	{
		/* critical sections are a few hundred instructions: spin first */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&wal->lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	pthread_mutex_init(&wal->hdr_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wal->space, &ca);
	pthread_cond_init(&wal->synced, &ca);
	pthread_cond_init(&wal->published, &ca);
	pthread_condattr_destroy(&ca);

	/* recovery: from the checkpoint to the first record that fails */
	wal->head = (struct log_pos){ .off = wal->hdr.ck_off, .lap = wal->hdr.ck_lap,
		.lsn = wal->hdr.ck_lsn, .crc = wal->hdr.ck_crc };
	wal->tail = wal->head;
	while ((kind = wal_rec_at(wal, &wal->tail, &h)) != 0) {
		if (kind == 1)
			wal_idx_note(wal, &wal->tail);
		wal_advance(wal, &wal->tail, h.len, kind == 2, h.crc);
		if (wal_distance(wal, &wal->head, &wal->tail) >= wal->ring_size)
			break;	/* a full circle: cannot be, stop */
	}
	wal->used = wal_distance(wal, &wal->head, &wal->tail);
	wal->pub = wal->tail;
	wal->durable = wal->tail;	/* what recovery found is what the media holds */
	wal->read_limit = UINT64_MAX;
	atomic_init(&wal->pub_lsn, wal->pub.lsn);
	atomic_init(&wal->durable_lsn, wal->durable.lsn);
	if (upgrade) {
		/* both copies as version 2, so no version 1 copy can win later */
		wal->hdr.version = WAL_VERSION;
		wal->hdr.incarnation = wal_new_incarnation();
		REPL_LOG_NOTICE("the log's header is of format version 1: "
			"rewritten as version 2 (incarnation %016llx)",
			(unsigned long long)wal->hdr.incarnation);
		if ((ret = wal_hdr_update(wal, &wal->hdr)) ||
		    (ret = wal_hdr_update(wal, &wal->hdr))) {
			wal_free(wal);
			return ret;
		}
	}
	if ((ret = check_health(wal))) {
		wal_free(wal);
		return ret;
	}
	*wal_ptr = wal;
	return 0;
}

void
wal_close(struct wal **wal_ptr)
{
	struct wal *wal;

	if (wal_ptr == NULL || (wal = *wal_ptr) == NULL)
		return;
	if (wal->hdr.state == STATE_OPEN) {
		struct wal_hdr nh = wal->hdr;

		nh.state = 0;
		if (wal_hdr_update(wal, &nh))
			REPL_LOG_WARNING("cannot mark the log closed: the next open reports it "
				"as not closed cleanly");
	}
	wal_free(wal);
	*wal_ptr = NULL;
}

/*
 * An append in three steps, so that copying and checksumming run outside
 * the lock and appenders overlap:
 *   1. reserve (lock): an LSN and ring space, and a WRAP before it if the
 *      record does not fit before the ring's end;
 *   2. fill (no lock): copy the payload, CRC header + payload from zero;
 *   3. publish (lock): leave the record in its slot; whoever finds the
 *      record at pub ready publishes it and every ready one after it, in
 *      LSN order: chain the CRC onto the previous record's
 *      (rpma_crc32c_shift), store the header, move pub.  Nobody waits for
 *      a slower appender before it.
 * A record's header is stored last, so a reader or a recovery never sees a
 * record whose payload is still being copied.
 */
static void
publish_ready(struct wal *wal)
{
	struct slot *s;
	bool moved = false;

	while ((s = &wal->slots[wal->pub.lsn % PUB_SLOTS])->ready &&
	       s->h.lsn == wal->pub.lsn) {
		uint32_t crc = wal->pub.crc;
		struct log_pos at = s->at;

		if (s->wrap) {
			struct rec_hdr wrap;

			memset(&wrap, 0, sizeof(wrap));
			wrap.lsn = wal->pub.lsn;
			wrap.lap = wal->pub.lap;
			wrap.epoch = (uint32_t)wal->hdr.epoch;
			wrap.flags = FLAG_WRAP;
			wrap.crc = rpma_crc32c(crc, &wrap, sizeof(wrap));
			crc = wrap.crc;
			rpma_ext_mem_memcpy(wal->mem, RING_OFF + wal->pub.off, &wrap,
				sizeof(wrap));
		}
		at.crc = crc;
		s->h.crc = s->crc0 ^ rpma_crc32c_mulmod(crc, s->xpow);
		rpma_ext_mem_memcpy(wal->mem, RING_OFF + at.off, &s->h, sizeof(s->h));
		wal_idx_note(wal, &at);
		wal->pub = at;
		wal_advance(wal, &wal->pub, s->h.len, false, s->h.crc);
		s->ready = false;
		moved = true;
	}
	if (moved) {
		atomic_store_explicit(&wal->pub_lsn, wal->pub.lsn, memory_order_release);
		if (wal->pub_waiters)
			pthread_cond_broadcast(&wal->published);
	}
}

static int
append(struct wal *wal, const struct iovec *iov, int iovcnt,
		uint64_t client_id, uint32_t flags, int timeout_ms, uint64_t *lsn)
{
	struct timespec until = { 0, 0 };
	bool waited = false;
	struct rec_hdr h;
	struct log_pos at;
	struct slot *s;
	uint64_t len = 0, need, waste, before;
	uint32_t crc0, xpow, epoch;
	size_t done = 0;

	if (wal == NULL || lsn == NULL || iovcnt < 0 || (iovcnt && iov == NULL))
		return REPL_E_INVAL;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	need = REC_HDR + wal_align8(len);
	/* a record must fit with room for a WRAP in front of it (and the reserve) */
	if (len > UINT32_MAX || need > wal->ring_size - REC_HDR -
			(flags & FLAG_EPOCH_START ? 0 : EPOCH_START_RESERVE))
		return REPL_E_TOO_BIG;

	/* 1. reserve */
	wal_lock(wal);
	for (;;) {
		waste = need > wal->ring_size - wal->tail.off ?
			wal->ring_size - wal->tail.off : 0;
		if (wal->used + waste + need + (flags & FLAG_EPOCH_START ? 0 :
			EPOCH_START_RESERVE) <= wal->ring_size &&
		    wal->tail.lsn - wal->pub.lsn < PUB_SLOTS)
			break;
		if (wal->tail.lsn - wal->pub.lsn >= PUB_SLOTS) {
			/* every slot taken by appenders still copying */
			wal->pub_waiters++;
			pthread_cond_wait(&wal->published, &wal->lock);
			wal->pub_waiters--;
			continue;
		}
		if (timeout_ms <= 0) {
			wal->full = true;
			wal->full_refusals++;
			wal_unlock(wal);
			return REPL_E_FULL;
		}
		if (!waited) {
			until = clock_deadline(timeout_ms);
			waited = true;
		}
		if (pthread_cond_timedwait(&wal->space, &wal->lock, &until) == ETIMEDOUT) {
			wal->full = true;
			wal->full_refusals++;
			wal_unlock(wal);
			return REPL_E_FULL;
		}
	}
	wal->full = false;
	s = &wal->slots[wal->tail.lsn % PUB_SLOTS];
	s->wrap = waste != 0;
	if (waste) {
		/* does not fit before the end: a WRAP sends readers to 0 */
		wal_advance(wal, &wal->tail, 0, true, 0);
		wal->used += waste;
	}
	at = wal->tail;
	before = wal->tail.off;
	wal_advance(wal, &wal->tail, (uint32_t)len, false, 0);
	/* the implicit wrap's unused end counts as used */
	wal->used += wal->tail.off > before ? wal->tail.off - before :
		wal->ring_size - before;
	/* under the lock: a release rewrites the header meanwhile */
	epoch = (uint32_t)wal->hdr.epoch;
	wal_unlock(wal);

	/* 2. fill: the slot is ours until it is marked ready */
	memset(&h, 0, sizeof(h));
	h.lsn = at.lsn;
	h.len = (uint32_t)len;
	h.lap = at.lap;
	h.client_id = client_id;
	h.epoch = epoch;
	h.flags = flags;
	crc0 = rpma_crc32c(0, &h, sizeof(h));
	for (int i = 0; i < iovcnt; i++) {
		rpma_ext_mem_memcpy(wal->mem, RING_OFF + at.off + REC_HDR + done,
			iov[i].iov_base, iov[i].iov_len);
		crc0 = rpma_crc32c(crc0, iov[i].iov_base, iov[i].iov_len);
		done += iov[i].iov_len;
	}
	xpow = rpma_crc32c_xpow8n(REC_HDR + len);

	/* 3. publish what is ready from pub on, ours included if its turn */
	wal_lock(wal);
	s->h = h;
	s->at = at;
	s->crc0 = crc0;
	s->xpow = xpow;
	s->ready = true;
	publish_ready(wal);
	wal_unlock(wal);
	*lsn = h.lsn;
	return 0;
}

int
wal_append(struct wal *wal, const struct iovec *iov, int iovcnt,
		uint64_t client_id, int timeout_ms, uint64_t *lsn)
{
	return append(wal, iov, iovcnt, client_id, 0, timeout_ms, lsn);
}

int
wal_append_epoch_start(struct wal *wal, int timeout_ms, uint64_t *lsn)
{
	return append(wal, NULL, 0, 0, FLAG_EPOCH_START, timeout_ms, lsn);
}

/* persist the ring between two positions (at most one wrap) */
static int
persist_range(struct wal *wal, const struct log_pos *from, const struct log_pos *to)
{
	int ret;

	REPL_FAULT(REPL_E_IO, {});
	if (from->lap == to->lap)
		return to->off > from->off ?
			wal_persist(wal, RING_OFF + from->off, to->off - from->off) : 0;
	ret = wal_persist(wal, RING_OFF + from->off, wal->ring_size - from->off);
	if (ret == 0 && to->off)
		ret = wal_persist(wal, RING_OFF, to->off);
	return ret;
}

/*
 * Wait (under the lock) until *watched passes lsn, spinning briefly first:
 * with a fast medium the persist or the copy being waited for takes less
 * than a sleep and a wake-up would.
 */
static void
wait_past(struct wal *wal, _Atomic uint64_t *watched, uint64_t lsn,
		pthread_cond_t *cond, unsigned *waiters, const bool *busy,
		bool spin)
{
	wal_unlock(wal);
	for (int i = 0; spin && i < SPIN_ROUNDS; i++) {
		if (atomic_load_explicit(watched, memory_order_acquire) > lsn)
			break;
		sched_yield();
	}
	wal_lock(wal);
	/* done, or whoever would have woken us finished meanwhile: look again */
	if (atomic_load_explicit(watched, memory_order_acquire) > lsn ||
	    (busy && !*busy))
		return;
	(*waiters)++;
	pthread_cond_wait(cond, &wal->lock);
	(*waiters)--;
}

int
wal_sync(struct wal *wal, uint64_t lsn)
{
	int ret = 0;

	if (wal == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	if (lsn >= wal->tail.lsn)
		lsn = wal->tail.lsn - 1;	/* everything appended so far */
	while (wal->durable.lsn <= lsn && ret == 0) {
		struct log_pos from, to;

		if (wal->pub.lsn <= lsn) {
			/* reserved, still being copied */
			wait_past(wal, &wal->pub_lsn, lsn, &wal->published,
				&wal->pub_waiters, NULL, true);
			continue;
		}
		if (wal->syncing) {
			/* another caller persists: its range may cover ours */
			wait_past(wal, &wal->durable_lsn, lsn, &wal->synced,
				&wal->sync_waiters, &wal->syncing,
				!wal->slow_persist);
			continue;
		}
		wal->syncing = true;
		from = wal->durable;
		to = wal->pub;
		wal_unlock(wal);
		ret = persist_range(wal, &from, &to);
		wal_lock(wal);
		if (ret == 0) {
			wal->durable = to;
			atomic_store_explicit(&wal->durable_lsn, to.lsn,
				memory_order_release);
		}
		wal->syncing = false;
		if (wal->sync_waiters)
			pthread_cond_broadcast(&wal->synced);
	}
	wal_unlock(wal);
	return ret;
}

/*
 * Find the record with lsn (under the lock): from the nearest indexed
 * position, hop over published records by their lengths (they were checked
 * when written or recovered), then check the one asked for in full.
 */
int
wal_find(struct wal *wal, uint64_t lsn, struct log_pos *at, struct rec_hdr *h)
{
	struct log_pos p;

	if (lsn < wal->head.lsn || lsn >= wal->pub.lsn)
		return REPL_E_NOT_FOUND;
	p = wal_idx_find(wal, lsn);
	while (p.lsn < lsn) {
		if (wal->ring_size - p.off < REC_HDR)
			return REPL_E_CORRUPT;
		memcpy(h, wal->ring + p.off, sizeof(*h));
		if (h->lsn != p.lsn || h->lap != p.lap)
			return REPL_E_CORRUPT;
		wal_advance(wal, &p, h->len, (h->flags & FLAG_WRAP) != 0, h->crc);
	}
	for (int hops = 0; hops < 2; hops++) {
		switch (wal_rec_at(wal, &p, h)) {
		case 1:
			*at = p;
			return 0;
		case 2:
			wal_advance(wal, &p, 0, true, h->crc);	/* a WRAP before it */
			continue;
		default:
			/* published, yet it fails its checksum now: the media */
			return REPL_E_CORRUPT;
		}
	}
	return REPL_E_CORRUPT;
}

int
wal_release(struct wal *wal, uint64_t lsn)
{
	struct rec_hdr h;
	struct log_pos at;
	int ret = 0;

	if (wal == NULL)
		return REPL_E_INVAL;
	wal_hdr_lock(wal);
	wal_lock(wal);
	/* only durable records can be let go */
	if (lsn >= wal->durable.lsn)
		lsn = wal->durable.lsn - 1;
	if (lsn < wal->head.lsn)
		goto out;	/* nothing more to let go */
	/* found through the index, not by a walk over every record let go */
	if ((ret = wal_find(wal, lsn, &at, &h)) == 0) {
		wal_advance(wal, &at, h.len, false, h.crc);
		ret = wal_move_head(wal, &at, h.epoch);
	}
out:
	wal_unlock(wal);
	wal_hdr_unlock(wal);
	return ret;
}

void
wal_status(struct wal *wal, struct wal_status *st)
{
	wal_lock(wal);
	st->first_lsn = wal->head.lsn < wal->pub.lsn ? wal->head.lsn : 0;
	st->last_lsn = wal->pub.lsn - 1;
	st->durable_lsn = wal->durable.lsn - 1;
	st->used = wal->used;
	st->size = wal->ring_size;
	st->epoch = wal->hdr.epoch;
	st->health = wal->health;
	st->full = wal->full;
	st->full_refusals = wal->full_refusals;
	wal_unlock(wal);
}
