/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_replica.c -- the log as a replica uses it: a ring written from
 * elsewhere (here: copied from a primary's log, as RDMA writes would),
 * refreshed by scanning, truncated, restarted at a foreign position, its
 * checkpoint moved forward only along its own chain, and its readers held
 * at the commit point.  Every change must survive a reopen.
 */
#include <unistd.h>

#include "unit.h"
#include "wal_test.h"

#define SEED 0xA11CEull
#define SIZE (8192 + 256 * 1024)
#define MAX_LEN 512

static char dir[] = "/tmp/rpma-walrep-XXXXXX";
static char ppath[256], rpath[256];

static void
append_n(struct wal *wal, uint64_t from, uint64_t to)
{
	for (uint64_t l = from; l <= to; l++)
		wt_append(wal, SEED, l, MAX_LEN);
	CU_ASSERT_EQUAL_FATAL(wal_sync(wal, to), 0);
}

/* what an RDMA write of the whole ring and a flush would leave */
static void
ship(struct rpma_ext_mem *from, struct rpma_ext_mem *to)
{
	char *a, *b;

	rpma_ext_mem_get_ptr(from, (void **)&a);
	rpma_ext_mem_get_ptr(to, (void **)&b);
	memcpy(b + WAL_RING_OFF, a + WAL_RING_OFF, SIZE - WAL_RING_OFF);
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(to, WAL_RING_OFF, SIZE - WAL_RING_OFF), 0);
}

static int
same_pos(const struct log_pos *a, const struct log_pos *b)
{
	return a->lsn == b->lsn && a->off == b->off && a->lap == b->lap &&
		a->crc == b->crc;
}

static void
wal__replica_ring_refresh_truncate_head_limit(void)
{
	struct rpma_ext_mem *pm, *rm;
	struct wal *p = wt_fresh(ppath, SIZE, &pm), *r = wt_fresh(rpath, SIZE, &rm);
	struct wal_status st;
	struct log_pos a, b;
	unsigned char buf[512];
	size_t len;

	/* records written into the ring from elsewhere appear on refresh */
	append_n(p, 1, 100);
	ship(pm, rm);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 0);
	CU_ASSERT_EQUAL(wal_refresh(r), 0);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 100);
	for (uint64_t l = 0; l <= 100; l += 10) {
		CU_ASSERT_EQUAL(wal_pos_after(p, l, &a), 0);
		CU_ASSERT_EQUAL(wal_pos_after(r, l, &b), 0);
		CU_ASSERT(same_pos(&a, &b));
	}
	CU_ASSERT_EQUAL(wal_pos_after(r, 101, &b), REPL_E_NOT_FOUND);

	/* truncation at a point of its chain forgets what follows, durably */
	CU_ASSERT_EQUAL(wal_pos_after(p, 50, &a), 0);
	CU_ASSERT_EQUAL(wal_truncate(r, &a, 0), 0);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 50);
	wt_reopen(rpath, &r, &rm);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 50);
	CU_ASSERT_EQUAL(wal_read(r, 51, buf, sizeof(buf), &len), REPL_E_NOT_FOUND);

	/* the checkpoint moves forward along the chain, never back */
	CU_ASSERT_EQUAL(wal_pos_after(p, 20, &a), 0);
	CU_ASSERT_EQUAL(wal_set_head(r, &a), 0);
	CU_ASSERT_EQUAL(wal_pos_after(p, 10, &a), 0);
	CU_ASSERT_EQUAL(wal_set_head(r, &a), REPL_E_NOT_FOUND);
	a.crc ^= 1;	/* a point not of its chain */
	CU_ASSERT_EQUAL(wal_set_head(r, &a), REPL_E_NOT_FOUND);
	wt_reopen(rpath, &r, &rm);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.first_lsn, 21);
	CU_ASSERT_EQUAL(st.last_lsn, 50);

	/* readers stop at the commit point */
	wal_set_read_limit(r, 30);
	CU_ASSERT_EQUAL(wal_read(r, 30, buf, sizeof(buf), &len), 0);
	CU_ASSERT_EQUAL(len, wal_test_len(SEED, 30, MAX_LEN));
	CU_ASSERT_EQUAL(wal_read(r, 31, buf, sizeof(buf), &len), REPL_E_NOT_FOUND);
	wal_set_read_limit(r, UINT64_MAX);
	CU_ASSERT_EQUAL(wal_read(r, 31, buf, sizeof(buf), &len), 0);

	/* a position not in its chain: the log restarts there, empty */
	append_n(p, 101, 400);
	CU_ASSERT_EQUAL(wal_release(p, 300), 0);
	CU_ASSERT_EQUAL(wal_pos_after(p, 300, &a), 0);
	CU_ASSERT_EQUAL(wal_truncate(r, &a, 0), 0);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.first_lsn, 0);
	CU_ASSERT_EQUAL(st.last_lsn, 300);
	/* the primary's records from there on, shipped, are taken in */
	ship(pm, rm);
	CU_ASSERT_EQUAL(wal_refresh(r), 0);
	wt_reopen(rpath, &r, &rm);
	wal_status(r, &st);
	CU_ASSERT_EQUAL(st.first_lsn, 301);
	CU_ASSERT_EQUAL(st.last_lsn, 400);
	CU_ASSERT_EQUAL(wal_pos_after(r, 400, &b), 0);
	CU_ASSERT_EQUAL(wal_pos_after(p, 400, &a), 0);
	CU_ASSERT(same_pos(&a, &b));

	wal_close(&p);
	wal_close(&r);
	rpma_ext_mem_close(&pm);
	rpma_ext_mem_close(&rm);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(wal__replica_ring_refresh_truncate_head_limit),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	snprintf(ppath, sizeof(ppath), "%s/primary", dir);
	snprintf(rpath, sizeof(rpath), "%s/replica", dir);
	ret = unit_run("wal_replica", cases);
	unlink(ppath);
	unlink(rpath);
	rmdir(dir);
	return ret;
}
