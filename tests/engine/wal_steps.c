/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_steps.c -- the local log under a crash at every step, and under
 * concurrent appenders.
 *
 * A crash during an append or a header update leaves the media holding any
 * mix of the old and the new 8-byte words of what was being written (stores
 * of aligned words are never torn; cache eviction may write any of them
 * early).  For one append and one header update, every such mix is built
 * and recovered: the log comes back as it was before or as it was after,
 * never with a damaged record, and never with fewer records than before.
 *
 * Concurrent appenders (copying outside the lock, publishing in LSN order)
 * must produce exactly the records each of them was told it wrote.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "unit.h"
#include "wal_test.h"

#define SEED 0x57E95ull
#define RING_SIZE (64 * 1024)
#define REGION (8192 + RING_SIZE)
#define MAX_SUBSETS 20000

static char dir[] = "/tmp/rpma-walsteps-XXXXXX";
static char path[256];

static char *
region(struct rpma_ext_mem *mem)
{
	void *p;

	CU_ASSERT_FATAL(rpma_ext_mem_get_ptr(mem, &p) == 0);
	return p;
}

/* 8-byte word indexes where two images differ */
static size_t
diff_words(const char *a, const char *b, size_t size, size_t *idx, size_t cap)
{
	size_t n = 0;

	for (size_t w = 0; w < size / 8; w++)
		if (memcmp(a + w * 8, b + w * 8, 8) != 0) {
			CU_ASSERT_FATAL(n < cap);
			idx[n++] = w;
		}
	return n;
}

/*
 * Every mix of before and after over the differing words (all of them when
 * there are few, else every prefix, every suffix and random subsets), each
 * recovered and checked by check(), which returns 1 for "as after".
 */
typedef int check_fn(struct wal *wal, void *arg);

static void
every_mix(struct rpma_ext_mem *mem, const char *before, const char *after,
		check_fn *check, void *arg, unsigned *n_before, unsigned *n_after)
{
	static size_t idx[REGION / 8];
	size_t n = diff_words(before, after, REGION, idx, REGION / 8);
	char *img = region(mem);
	uint64_t masks;
	unsigned rnd = 12345;

	CU_ASSERT_FATAL(n > 0);
	masks = n <= 14 ? (1ull << n) : MAX_SUBSETS;
	for (uint64_t m = 0; m < masks; m++) {
		struct wal *wal = NULL;

		memcpy(img, before, REGION);
		for (size_t i = 0; i < n; i++) {
			int take;

			if (n <= 14)
				take = (int)((m >> i) & 1);
			else if (m < n + 1)
				take = i < m;			/* prefixes */
			else if (m < 2 * n + 2)
				take = i >= m - (n + 1);	/* suffixes */
			else
				take = (rnd = rnd * 1103515245 + 12345) >> 31;
			if (m == masks - 1)
				take = 1;	/* the last mix is the whole update */
			if (take)
				memcpy(img + idx[i] * 8, after + idx[i] * 8, 8);
		}
		CU_ASSERT_EQUAL_FATAL(wal_open(mem, &wal), 0);
		if (check(wal, arg))
			(*n_after)++;
		else
			(*n_before)++;
		wal_close(&wal);
	}
}

struct append_case {
	uint64_t last;		/* records before the append */
	uint64_t first;
	size_t max;
	unsigned bad;
};

/* records first..last intact, then either nothing or record last + 1 */
static int
check_append(struct wal *wal, void *arg)
{
	struct append_case *c = arg;
	struct wal_status st;

	wal_status(wal, &st);
	for (uint64_t l = c->first; l <= c->last; l++)
		if (!wt_record_ok(wal, SEED, l, c->max))
			c->bad++;
	if (st.last_lsn == c->last + 1) {
		if (!wt_record_ok(wal, SEED, c->last + 1, c->max))
			c->bad++;
		return 1;
	}
	if (st.last_lsn != c->last ||
	    wal_read(wal, c->last + 1, NULL, 0, &(size_t){0}) != REPL_E_NOT_FOUND)
		c->bad++;
	return 0;
}

static char before[REGION], after[REGION];

/* does the update write both the ring's last KiB and its first (a WRAP)? */
static int
straddles(void)
{
	int end = 0, start = 0;

	for (size_t w = 8192 / 8; w < REGION / 8; w++)
		if (memcmp(before + w * 8, after + w * 8, 8) != 0) {
			start |= w < (8192 + 1024) / 8;
			end |= w >= (REGION - 1024) / 8;
		}
	return start && end;
}

/* append record c->last + 1; returns whether it straddled the ring's end */
static int
append_between_images(struct wal *wal, struct rpma_ext_mem *mem,
		struct append_case *c)
{
	memcpy(before, region(mem), REGION);
	wt_append(wal, SEED, c->last + 1, c->max);
	CU_ASSERT_EQUAL_FATAL(wal_sync(wal, c->last + 1), 0);
	memcpy(after, region(mem), REGION);
	return straddles();
}

/* every mix of the images around the last append, then back to after */
static void
crash_during_append(struct wal **wal, struct rpma_ext_mem *mem,
		struct append_case *c)
{
	unsigned nb = 0, na = 0;

	wal_close(wal);
	every_mix(mem, before, after, check_append, c, &nb, &na);
	CU_ASSERT_EQUAL(c->bad, 0);
	CU_ASSERT(nb > 0);
	CU_ASSERT(na > 0);	/* the complete record is recovered */
	memcpy(region(mem), after, REGION);
	CU_ASSERT_FATAL(wal_open(mem, wal) == 0);
	c->last++;
}

static void
wal__crash_at_every_step_of_an_append(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, REGION, &mem);
	struct append_case c = { .first = 1, .max = 60 };
	struct wal_status st;
	int wrapped = 0;

	/* on fresh (zeroed) media, after three records */
	for (uint64_t l = 1; l <= 3; l++)
		wt_append(wal, SEED, l, c.max);
	CU_ASSERT_EQUAL(wal_sync(wal, 3), 0);
	c.last = 3;
	append_between_images(wal, mem, &c);
	crash_during_append(&wal, mem, &c);

	/* over a previous lap's records, after the ring wrapped */
	c.max = 700;
	for (;;) {
		wt_append(wal, SEED, ++c.last, c.max);
		CU_ASSERT_EQUAL_FATAL(wal_sync(wal, c.last), 0);
		CU_ASSERT_EQUAL_FATAL(wal_release(wal, c.last - 20), 0);
		wal_status(wal, &st);
		if (c.last > 200 && st.used < RING_SIZE / 2)
			break;
	}
	c.first = st.first_lsn;
	append_between_images(wal, mem, &c);
	crash_during_append(&wal, mem, &c);

	/* a record that does not fit before the ring's end (a WRAP first) */
	for (int i = 0; i < 2000 && !wrapped; i++) {
		CU_ASSERT_EQUAL_FATAL(wal_release(wal, c.last - 10), 0);
		wal_status(wal, &st);
		c.first = st.first_lsn;
		wrapped = append_between_images(wal, mem, &c);
		if (wrapped)
			crash_during_append(&wal, mem, &c);
		else
			c.last++;
	}
	CU_ASSERT(wrapped);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

struct release_case {
	uint64_t old_first, new_first, last;
	size_t max;
	unsigned bad;
};

static int
check_release(struct wal *wal, void *arg)
{
	struct release_case *c = arg;
	struct wal_status st;

	wal_status(wal, &st);
	if (st.last_lsn != c->last ||
	    (st.first_lsn != c->old_first && st.first_lsn != c->new_first))
		c->bad++;
	for (uint64_t l = st.first_lsn; l && l <= st.last_lsn; l++)
		if (!wt_record_ok(wal, SEED, l, c->max))
			c->bad++;
	return st.first_lsn == c->new_first;
}

static void
wal__crash_at_every_step_of_a_header_update(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, REGION, &mem);
	struct release_case c = { .max = 300 };
	unsigned nb = 0, na = 0;

	for (uint64_t l = 1; l <= 40; l++)
		wt_append(wal, SEED, l, c.max);
	CU_ASSERT_EQUAL(wal_sync(wal, 40), 0);
	/* both header copies in play: the update rewrites the older one */
	for (int round = 0; round < 2; round++) {
		c.old_first = round == 0 ? 1 : 11;
		c.new_first = round == 0 ? 11 : 26;
		c.last = 40;
		memcpy(before, region(mem), REGION);
		CU_ASSERT_EQUAL_FATAL(wal_release(wal, c.new_first - 1), 0);
		memcpy(after, region(mem), REGION);
		wal_close(&wal);
		nb = na = 0;
		every_mix(mem, before, after, check_release, &c, &nb, &na);
		CU_ASSERT_EQUAL(c.bad, 0);
		CU_ASSERT(nb > 0);
		CU_ASSERT(na > 0);
		memcpy(region(mem), after, REGION);
		CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	}
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

#define THREADS 4
#define PER_THREAD 3000

struct appender {
	struct wal *wal;
	int id;
	uint64_t lsn[PER_THREAD];
	int failed;
};

/* payload of thread t's i-th record: its identity, then derived bytes */
static size_t
payload(int t, int i, unsigned char *buf)
{
	uint64_t key = (uint64_t)t << 32 | (uint64_t)i;
	size_t len = 8 + wal_test_len(SEED, key, 300);

	memcpy(buf, &key, 8);
	wal_test_fill(SEED, key, buf + 8, len - 8);
	return len;
}

static void *
appender_main(void *arg)
{
	struct appender *a = arg;
	unsigned char buf[512];

	for (int i = 0; i < PER_THREAD; i++) {
		struct iovec iov[2];
		size_t len = payload(a->id, i, buf);

		/* two pieces, so appendv's gathering is exercised too */
		iov[0] = (struct iovec){ buf, 5 };
		iov[1] = (struct iovec){ buf + 5, len - 5 };
		if (wal_append(a->wal, iov, 2, (uint64_t)a->id, 5000, &a->lsn[i]) ||
		    (i % 7 == 0 && wal_sync(a->wal, a->lsn[i]))) {
			a->failed = 1;
			break;
		}
	}
	return NULL;
}

struct releaser {
	struct wal *wal;
	volatile int stop;
};

/* keeps releasing all but the last 500 durable records, so the ring laps */
static void *
releaser_main(void *arg)
{
	struct releaser *r = arg;
	struct wal_status st;

	while (!r->stop) {
		wal_status(r->wal, &st);
		if (st.durable_lsn > 500)
			wal_release(r->wal, st.durable_lsn - 500);
		usleep(200);
	}
	return NULL;
}

static void
wal__concurrent_appenders_get_exactly_their_records(void)
{
	static struct appender a[THREADS];
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 8192 + 1024 * 1024, &mem);
	struct releaser r = { .wal = wal };
	pthread_t th[THREADS], rt;
	struct wal_status st;
	unsigned char want[512], got[512];
	uint64_t first;

	pthread_create(&rt, NULL, releaser_main, &r);
	for (int t = 0; t < THREADS; t++) {
		a[t] = (struct appender){ .wal = wal, .id = t };
		pthread_create(&th[t], NULL, appender_main, &a[t]);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	r.stop = 1;
	pthread_join(rt, NULL);
	for (int t = 0; t < THREADS; t++)
		CU_ASSERT_FATAL(a[t].failed == 0);

	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.last_lsn, THREADS * PER_THREAD);
	CU_ASSERT(st.first_lsn > 1);	/* the ring lapped */
	CU_ASSERT_EQUAL(wal_sync(wal, st.last_lsn), 0);
	first = st.first_lsn;

	/* after recovery, every LSN still kept holds what its appender wrote */
	wal_close(&wal);
	CU_ASSERT_FATAL(rpma_ext_mem_close(&mem) == 0);
	mem = wt_mem_open(path, 0, 0);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.first_lsn, first);
	CU_ASSERT_EQUAL(st.last_lsn, THREADS * PER_THREAD);
	for (int t = 0; t < THREADS; t++) {
		uint64_t prev = 0;

		for (int i = 0; i < PER_THREAD; i++) {
			size_t len = payload(t, i, want), got_len = 0;

			/* a thread's records are in its own order */
			CU_ASSERT(a[t].lsn[i] > prev);
			prev = a[t].lsn[i];
			if (a[t].lsn[i] < first)
				continue;
			CU_ASSERT_EQUAL(wal_read(wal, a[t].lsn[i], got, sizeof(got),
				&got_len), 0);
			CU_ASSERT_EQUAL(got_len, len);
			CU_ASSERT(memcmp(got, want, len) == 0);
		}
	}
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(wal__crash_at_every_step_of_an_append),
		UNIT_CASE(wal__crash_at_every_step_of_a_header_update),
		UNIT_CASE(wal__concurrent_appenders_get_exactly_their_records),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	snprintf(path, sizeof(path), "%s/log", dir);
	ret = unit_run("wal_steps", cases);
	unlink(path);
	rmdir(dir);
	return ret;
}
