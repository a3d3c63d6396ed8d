/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_hdr.c -- the log's header generations: two copies, each write of a
 * new generation goes into the older one and is durable before it is
 * current (wal.c's top comment has the format).  A checkpoint's move is
 * one such generation, written without the log's lock (wal_move_head).
 */
#include "config.h"

#include <string.h>

#include "common/fault.h"
#include "log/wal_internal.h"
#include "common/errors.h"

/* write h into copy k and make it durable */
int
wal_hdr_write(struct rpma_ext_mem *mem, char *base, int k, struct wal_hdr *h)
{
	h->crc = wal_hdr_crc(h);
	memcpy(base + (size_t)k * HDR_COPY_SIZE, h, sizeof(*h));
	REPL_FAULT(REPL_E_IO, {});
	return err_medium(rpma_ext_mem_persist(mem, (size_t)k * HDR_COPY_SIZE, sizeof(*h)));
}

/* nh as the next header generation, durable in the older copy */
static int
hdr_write_next(struct wal *wal, struct wal_hdr *nh)
{
	nh->seq = wal->hdr.seq + 1;
	return wal_hdr_write(wal->mem, wal->base, 1 - wal->hdr_copy, nh);
}

/* ... and from now on the current one */
static void
hdr_take(struct wal *wal, const struct wal_hdr *nh)
{
	wal->hdr = *nh;
	wal->hdr_copy = 1 - wal->hdr_copy;
}

/* write the next header generation into the older copy */
int
wal_hdr_update(struct wal *wal, struct wal_hdr *nh)
{
	int ret = hdr_write_next(wal, nh);

	if (ret == 0)
		hdr_take(wal, nh);
	return ret;
}

/* the current header with its checkpoint at at */
static struct wal_hdr
hdr_at_checkpoint(const struct wal *wal, const struct log_pos *at,
		uint64_t ck_epoch)
{
	struct wal_hdr nh = wal->hdr;

	nh.ck_epoch = ck_epoch;
	nh.ck_lsn = at->lsn;
	nh.ck_off = at->off;
	nh.ck_lap = at->lap;
	nh.ck_crc = at->crc;
	return nh;
}

/* the checkpoint is at: a new header generation, durable on return */
int
wal_set_checkpoint(struct wal *wal, const struct log_pos *at, uint64_t ck_epoch)
{
	struct wal_hdr nh = hdr_at_checkpoint(wal, at, ck_epoch);

	return wal_hdr_update(wal, &nh);
}

/*
 * The checkpoint (and with it the log's head) moves to at, the end of a
 * record of epoch ck_epoch: a new header generation, durable, and only
 * then the space before at free.  Called with hdr_lock and lock held,
 * returns with both; lock is released while the generation is written and
 * persisted, so appenders reserve meanwhile (hdr_lock keeps every other
 * header writer, and so every other move of head, out; hdr and hdr_copy
 * change only under it, so they are read here without lock).
 */
int
wal_move_head(struct wal *wal, const struct log_pos *at, uint64_t ck_epoch)
{
	struct wal_hdr nh = hdr_at_checkpoint(wal, at, ck_epoch);
	int ret;

	wal_unlock(wal);
	ret = hdr_write_next(wal, &nh);
	wal_lock(wal);
	if (ret)
		return ret;
	hdr_take(wal, &nh);
	wal->used -= wal_pos_distance(wal->ring_size, &wal->head, at);
	wal->head = *at;
	wal->full = false;
	pthread_cond_broadcast(&wal->space);
	return 0;
}

int
wal_clear_flags(struct wal *wal, uint32_t flags)
{
	struct wal_hdr nh;
	int ret = 0;

	if (wal == NULL)
		return REPL_E_INVAL;
	wal_hdr_lock(wal);
	wal_lock(wal);
	nh = wal->hdr;
	if (nh.flags & flags) {
		nh.flags &= ~flags;
		ret = wal_hdr_update(wal, &nh);
	}
	wal_unlock(wal);
	wal_hdr_unlock(wal);
	return ret;
}
