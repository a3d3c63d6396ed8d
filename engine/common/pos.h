/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pos.h -- a position in a log's ring, the same in the log and on the wire:
 * where record lsn starts (off, in lap), and the chain value before it
 * (crc: the CRC of record lsn - 1).  Two logs that hold equal positions
 * hold the same records up to there.
 */
#ifndef REPL_POS_H
#define REPL_POS_H

#include <stdbool.h>
#include <stdint.h>

struct log_pos {
	uint64_t lsn;
	uint64_t off;		/* in the ring (add WAL_RING_OFF for the region) */
	uint32_t lap;
	uint32_t crc;		/* the CRC of record lsn - 1 (the chain value) */
};

static inline bool
pos_equal(const struct log_pos *a, const struct log_pos *b)
{
	return a->lsn == b->lsn && a->off == b->off && a->lap == b->lap &&
		a->crc == b->crc;
}

#endif
