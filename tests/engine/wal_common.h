/* SPDX-License-Identifier: BSD-3-Clause */
/* wal_common.h -- shared by the log's tests: payloads derived from an LSN */
#ifndef WAL_COMMON_H
#define WAL_COMMON_H

#include <stdint.h>
#include <stddef.h>

/* the payload of record lsn under seed: its length, and its bytes */
static inline size_t
wal_test_len(uint64_t seed, uint64_t lsn, size_t max)
{
	uint64_t x = (seed ^ (lsn * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;

	return 1 + (size_t)((x >> 17) % max);
}

static inline void
wal_test_fill(uint64_t seed, uint64_t lsn, unsigned char *buf, size_t len)
{
	uint64_t x = seed + lsn * 0x94D049BB133111EBull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
}

#endif
