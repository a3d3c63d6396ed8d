/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_verify.c -- a checksum of a range of records, to compare two logs
 * that should hold the same records (a primary's and a replica's).
 *
 * It covers what identifies each record and what it carries: its LSN,
 * client id, epoch (the 32 bits kept), length and payload, as the bytes
 * u64 lsn, u64 client_id, u32 epoch, u32 len (little-endian) followed by
 * the payload, record after record, in one CRC-32C from 0.  It does not
 * trust the records' own checksums: those are what a damaged copy may
 * fail, and a payload damaged after they were checked is what it must
 * find.  Records are reached by their headers' lengths, so a damaged
 * header in the way makes the range unreadable rather than wrong.
 */
#include "config.h"

#include <string.h>

#include "crc32c.h"
#include "log/wal_internal.h"
#include "common/errors.h"

#define IDENT_SIZE 24

int
wal_range_crc(struct wal *wal, uint64_t from, uint64_t to, uint32_t *crc)
{
	struct rec_hdr h;
	struct log_pos p;
	uint32_t c = 0;
	int ret = 0;

	if (wal == NULL || crc == NULL || from == 0 || to < from)
		return REPL_E_INVAL;
	wal_lock(wal);
	if (from < wal->head.lsn || to >= wal->pub.lsn) {
		ret = REPL_E_NOT_FOUND;
		goto out;
	}
	p = wal_idx_find(wal, from);
	while (p.lsn <= to) {
		uint8_t ident[IDENT_SIZE];
		bool wrap;

		if (wal->ring_size - p.off < REC_HDR) {
			ret = REPL_E_CORRUPT;
			break;
		}
		memcpy(&h, wal->ring + p.off, sizeof(h));
		if (h.lsn != p.lsn || h.lap != p.lap ||
		    h.len > wal->ring_size - p.off - REC_HDR) {
			ret = REPL_E_CORRUPT;
			break;
		}
		wrap = (h.flags & FLAG_WRAP) != 0;
		if (!wrap && p.lsn >= from) {
			/* the host is little-endian (wal.c asserts it) */
			memcpy(ident, &h.lsn, 8);
			memcpy(ident + 8, &h.client_id, 8);
			memcpy(ident + 16, &h.epoch, 4);
			memcpy(ident + 20, &h.len, 4);
			c = rpma_crc32c(c, ident, IDENT_SIZE);
			c = rpma_crc32c(c, wal->ring + p.off + REC_HDR, h.len);
		}
		wal_advance(wal, &p, h.len, wrap, h.crc);
	}
	if (ret == 0)
		*crc = c;
out:
	wal_unlock(wal);
	return ret;
}
