/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_test.h -- what the log's unit tests share: a log on a FILE backend
 * at a path, records whose payload is derived from (seed, LSN), and their
 * check.  CUnit assertions; include after unit.h.
 */
#ifndef WAL_TEST_H
#define WAL_TEST_H

#include <unistd.h>

#include "log/wal.h"
#include "wal_common.h"

#define WT_MAX_PAYLOAD 4096
#define WT_EPOCH 3

static inline struct rpma_ext_mem *
wt_mem_open(const char *path, size_t size, unsigned flags)
{
	struct rpma_ext_mem *mem = NULL;

	CU_ASSERT_FATAL(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, path, size, flags,
		&mem) == 0);
	return mem;
}

/* a new, empty log of size bytes at path (epoch WT_EPOCH) */
static inline struct wal *
wt_fresh(const char *path, size_t size, struct rpma_ext_mem **mem)
{
	struct wal_identity id = { .node_id = 7, .epoch = WT_EPOCH };
	struct wal *wal = NULL;

	unlink(path);
	*mem = wt_mem_open(path, size, RPMA_EXT_MEM_CREATE);
	CU_ASSERT_FATAL(wal_format(*mem, &id) == 0);
	CU_ASSERT_FATAL(wal_open(*mem, &wal) == 0);
	return wal;
}

/* close and open again from what the file holds (recovery) */
static inline void
wt_reopen(const char *path, struct wal **wal, struct rpma_ext_mem **mem)
{
	wal_close(wal);
	CU_ASSERT_FATAL(rpma_ext_mem_close(mem) == 0);
	*mem = wt_mem_open(path, 0, 0);
	CU_ASSERT_FATAL(wal_open(*mem, wal) == 0);
}

/* append record `want` (payload from seed, at most max bytes) */
static inline uint64_t
wt_append(struct wal *wal, uint64_t seed, uint64_t want, size_t max)
{
	unsigned char buf[WT_MAX_PAYLOAD];
	size_t len = wal_test_len(seed, want, max);
	struct iovec iov = { buf, len };
	uint64_t lsn = 0;

	wal_test_fill(seed, want, buf, len);
	CU_ASSERT_EQUAL_FATAL(wal_append(wal, &iov, 1, want, 0, &lsn), 0);
	CU_ASSERT_EQUAL_FATAL(lsn, want);
	return lsn;
}

/* does the log hold record lsn exactly as wt_append wrote it? */
static inline int
wt_record_ok(struct wal *wal, uint64_t seed, uint64_t lsn, size_t max)
{
	unsigned char got[WT_MAX_PAYLOAD], want[WT_MAX_PAYLOAD];
	size_t len = 0, wl = wal_test_len(seed, lsn, max);

	if (wal_read(wal, lsn, got, sizeof(got), &len) != 0 || len != wl)
		return 0;
	wal_test_fill(seed, lsn, want, wl);
	return memcmp(got, want, wl) == 0;
}

#endif
