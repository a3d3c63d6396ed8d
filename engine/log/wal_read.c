/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_read.c -- reading the log's records (the format is wal.c's): by LSN
 * (wal_find, through the position index), one at a time or in order.
 * Every reader holds the log's lock; what it returns was published, so it
 * was checked when written or recovered, and the record asked for is
 * checked again in full.
 */
#include "config.h"

#include <string.h>

#include "log/wal_internal.h"
#include "common/errors.h"

int
wal_read(struct wal *wal, uint64_t lsn, void *buf, size_t buf_size, size_t *len)
{
	struct rec_hdr h;
	struct log_pos at;
	int ret;

	if (wal == NULL || len == NULL || (buf == NULL && buf_size))
		return REPL_E_INVAL;
	wal_lock(wal);
	ret = lsn >= wal->read_limit ? REPL_E_NOT_FOUND : wal_find(wal, lsn, &at, &h);
	if (ret == 0) {
		*len = h.len;
		memcpy(buf, wal->ring + at.off + REC_HDR, h.len < buf_size ? h.len : buf_size);
	}
	wal_unlock(wal);
	return ret;
}

bool
wal_is_epoch_start(struct wal *wal, uint64_t lsn)
{
	struct rec_hdr h;
	struct log_pos at;
	bool yes;

	wal_lock(wal);
	yes = wal_find(wal, lsn, &at, &h) == 0 && (h.flags & FLAG_EPOCH_START);
	wal_unlock(wal);
	return yes;
}

int
wal_record_info(struct wal *wal, uint64_t lsn, uint64_t *client_id,
		uint64_t *epoch, size_t *len)
{
	struct rec_hdr h;
	struct log_pos at;
	int ret;

	if (wal == NULL || client_id == NULL || epoch == NULL || len == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	ret = lsn >= wal->read_limit ? REPL_E_NOT_FOUND : wal_find(wal, lsn, &at, &h);
	if (ret == 0) {
		*client_id = h.client_id;
		*epoch = h.epoch;
		*len = h.len;
	}
	wal_unlock(wal);
	return ret;
}

int
wal_iterate(struct wal *wal, uint64_t from, wal_iterate_fn *cb, void *arg)
{
	struct rec_hdr h;
	struct log_pos p;
	int kind, ret = 0;

	if (wal == NULL || cb == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	p = from > wal->head.lsn ? wal_idx_find(wal, from) : wal->head;
	while (ret == 0 && p.lsn < wal->pub.lsn && p.lsn < wal->read_limit) {
		kind = wal_rec_at(wal, &p, &h);
		if (kind == 0) {
			/* published, yet it fails its checksum now: the media */
			ret = REPL_E_CORRUPT;
			break;
		}
		/* an epoch start is the protocol's, not the database's */
		if (kind == 1 && h.lsn >= from && !(h.flags & FLAG_EPOCH_START))
			ret = cb(arg, h.lsn, wal->ring + p.off + REC_HDR, h.len);
		wal_advance(wal, &p, h.len, kind == 2, h.crc);
	}
	wal_unlock(wal);
	return ret;
}

int
wal_iterate_records(struct wal *wal, uint64_t from, uint64_t to,
		repl_record_fn *cb, void *arg)
{
	struct rec_hdr h;
	struct log_pos p;
	int kind, ret = 0;

	if (wal == NULL || cb == NULL)
		return REPL_E_INVAL;
	wal_lock(wal);
	p = from > wal->head.lsn ? wal_idx_find(wal, from) : wal->head;
	while (ret == 0 && p.lsn < wal->pub.lsn && p.lsn < wal->read_limit &&
	       p.lsn <= to) {
		kind = wal_rec_at(wal, &p, &h);
		if (kind == 0) {
			ret = REPL_E_CORRUPT;	/* as in wal_iterate */
			break;
		}
		if (kind == 1 && h.lsn >= from) {
			struct repl_log_record rec = {
				.lsn = h.lsn, .epoch = h.epoch,
				.client_id = h.client_id, .len = h.len,
				.data = wal->ring + p.off + REC_HDR,
				.off = p.off, .lap = h.lap,
				.epoch_start = (h.flags & FLAG_EPOCH_START) != 0,
			};

			ret = cb(arg, &rec);
		}
		wal_advance(wal, &p, h.len, kind == 2, h.crc);
	}
	wal_unlock(wal);
	return ret;
}
