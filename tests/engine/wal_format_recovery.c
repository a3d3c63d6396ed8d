/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_format_recovery.c -- the local log: append, sync, read back, reopen
 * (recovery), wraparound with records straddling the ring's end over many
 * laps, a torn tail (nothing after it is returned), a torn header update
 * (the other copy is used), a full ring (blocks, then WAL_E_FULL), and
 * records too big for the ring.
 */
#include <unistd.h>

#include "crc32c.h"
#include "unit.h"
#include "wal_test.h"

#define SEED 0x5EEDull

static char dir[] = "/tmp/rpma-wal-XXXXXX";
static char path[256];

static void
wal__append_sync_read_reopen(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal_status st;

	for (uint64_t l = 1; l <= 100; l++)
		wt_append(wal, SEED, l, 1000);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 100);
	CU_ASSERT_EQUAL(st.durable_lsn, 0);
	CU_ASSERT_EQUAL(wal_sync(wal, 100), 0);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.durable_lsn, 100);
	CU_ASSERT_EQUAL(st.first_lsn, 1);
	for (uint64_t l = 1; l <= 100; l++)
		CU_ASSERT(wt_record_ok(wal, SEED, l, 1000));
	CU_ASSERT_EQUAL(wal_read(wal, 101, NULL, 0, &(size_t){0}), WAL_E_NOT_FOUND);

	wt_reopen(path, &wal, &mem);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 100);
	CU_ASSERT_EQUAL(st.epoch, 3);
	for (uint64_t l = 1; l <= 100; l++)
		CU_ASSERT(wt_record_ok(wal, SEED, l, 1000));
	/* appends go on after the recovered tail */
	wt_append(wal, SEED, 101, 1000);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

static void
wal__unsynced_records_are_not_on_media(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal_status st;

	for (uint64_t l = 1; l <= 10; l++)
		wt_append(wal, SEED, l, 500);
	CU_ASSERT_EQUAL(wal_sync(wal, 5), 0);	/* persists all ten (group) */
	for (uint64_t l = 11; l <= 20; l++)
		wt_append(wal, SEED, l, 500);	/* never synced */
	/* the file backend's image holds only what was persisted */
	wt_reopen(path, &wal, &mem);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 10);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

static void
wal__wraparound_straddling_many_laps(void)
{
	struct rpma_ext_mem *mem;
	/* a 16 KiB ring; records up to 1.5 KiB straddle its end often */
	struct wal *wal = wt_fresh(path, 8192 + 16384, &mem);
	struct wal_status st;
	uint64_t kept_from = 1;

	for (uint64_t l = 1; l <= 2000; l++) {
		wt_append(wal, SEED, l, 1500);
		CU_ASSERT_EQUAL_FATAL(wal_sync(wal, l), 0);
		/* keep the last 6 records, release the rest */
		if (l > 6) {
			CU_ASSERT_EQUAL_FATAL(wal_release(wal, l - 6), 0);
			kept_from = l - 5;
		}
		if (l % 250 == 0) {
			wt_reopen(path, &wal, &mem);
			wal_status(wal, &st);
			CU_ASSERT_EQUAL(st.last_lsn, l);
			CU_ASSERT_EQUAL(st.first_lsn, kept_from);
			for (uint64_t k = kept_from; k <= l; k++)
				CU_ASSERT(wt_record_ok(wal, SEED, k, 1500));
		}
	}
	wal_status(wal, &st);
	CU_ASSERT(st.used <= st.size);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/* flip one byte of the image at ring offset off */
static void
corrupt(struct rpma_ext_mem *mem, size_t off)
{
	char *p;

	rpma_ext_mem_get_ptr(mem, (void **)&p);
	p[off] ^= 0x40;
	rpma_ext_mem_persist(mem, off, 1);
}

static void
wal__torn_tail_ends_the_log(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal_status st;
	size_t rec2_off;

	wt_append(wal, SEED, 1, 100);
	wt_append(wal, SEED, 2, 100);
	wt_append(wal, SEED, 3, 100);
	CU_ASSERT_EQUAL(wal_sync(wal, 3), 0);
	/* the second record's payload starts after record 1 and its header */
	rec2_off = 8192 + 40 + ((wal_test_len(SEED, 1, 100) + 7) & ~(size_t)7) + 40;
	corrupt(mem, rec2_off);
	wt_reopen(path, &wal, &mem);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.last_lsn, 1);	/* record 3 is intact but past the tear */
	CU_ASSERT_EQUAL(wal_read(wal, 3, NULL, 0, &(size_t){0}), WAL_E_NOT_FOUND);
	CU_ASSERT(wt_record_ok(wal, SEED, 1, 100));
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/* the header copy with the higher generation (seq at byte 16) */
static size_t
newest_copy(struct rpma_ext_mem *mem)
{
	uint64_t a, b;
	char *p;

	rpma_ext_mem_get_ptr(mem, (void **)&p);
	memcpy(&a, p + 16, 8);
	memcpy(&b, p + 4096 + 16, 8);
	return a > b ? 0 : 4096;
}

static void
wal__torn_header_update_uses_the_other_copy(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal_status st;

	for (uint64_t l = 1; l <= 20; l++)
		wt_append(wal, SEED, l, 200);
	CU_ASSERT_EQUAL(wal_sync(wal, 20), 0);
	CU_ASSERT_EQUAL(wal_release(wal, 10), 0);
	wal_close(&wal);
	/* the last update (the clean close) torn half way */
	corrupt(mem, newest_copy(mem) + 40);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.first_lsn, 11);
	CU_ASSERT_EQUAL(st.last_lsn, 20);
	/* the surviving copy was written while the log was open */
	CU_ASSERT(st.health & WAL_HEALTH_NOT_CLOSED);
	/* both copies broken: the log refuses to open */
	wal_close(&wal);
	corrupt(mem, 40);
	corrupt(mem, 4096 + 40);
	CU_ASSERT_EQUAL(wal_open(mem, &wal), WAL_E_CORRUPT);
	rpma_ext_mem_close(&mem);
}

/* a clean close is remembered; an open that was never closed is reported */
static void
wal__open_state_and_health_are_reported(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal *again = NULL;
	struct wal_status st;

	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.health & WAL_HEALTH_NOT_CLOSED, 0);
	/* a file is not PMem: nothing the device could report is known */
	CU_ASSERT(st.health & WAL_HEALTH_USC_UNKNOWN);
	CU_ASSERT(st.health & WAL_HEALTH_BADBLOCKS_UNKNOWN);
	CU_ASSERT_EQUAL(st.health & WAL_HEALTH_SUSPECT, 0);
	/* opened a second time without a close: as after a crash */
	CU_ASSERT_FATAL(wal_open(mem, &again) == 0);
	wal_status(again, &st);
	CU_ASSERT(st.health & WAL_HEALTH_NOT_CLOSED);
	wal_close(&again);
	wal_close(&wal);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.health & WAL_HEALTH_NOT_CLOSED, 0);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/* a header whose checkpoint sits in the ring's last 39 bytes is refused */
static void
wal__checkpoint_at_the_ring_end_is_refused(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 8192 + 4096, &mem);
	uint64_t ck_off = 4096 - 8;
	uint32_t crc;
	char *p;

	wal_close(&wal);
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	for (size_t c = 0; c < 8192; c += 4096) {
		memcpy(p + c + 72, &ck_off, 8);		/* ck_off */
		crc = rpma_crc32c(0, p + c, 108);	/* a header that checks out */
		memcpy(p + c + 108, &crc, 4);
	}
	CU_ASSERT_EQUAL(wal_open(mem, &wal), WAL_E_CORRUPT);
	CU_ASSERT_PTR_NULL(wal);
	rpma_ext_mem_close(&mem);
}

static void
wal__full_ring_blocks_then_fails(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 8192 + 4096, &mem);
	unsigned char buf[1000] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	uint64_t lsn, n = 0;
	int ret;

	while ((ret = wal_append(wal, &iov, 1, 0, 10, &lsn)) == 0)
		n++;
	CU_ASSERT_EQUAL(ret, WAL_E_FULL);
	CU_ASSERT(n >= 3);
	CU_ASSERT_EQUAL(wal_sync(wal, lsn), 0);
	CU_ASSERT_EQUAL(wal_release(wal, 2), 0);
	CU_ASSERT_EQUAL(wal_append(wal, &iov, 1, 0, 10, &lsn), 0);
	CU_ASSERT_EQUAL(lsn, n + 1);
	/* larger than the ring can ever hold */
	{
		static unsigned char big[8192];
		struct iovec biov = { big, sizeof(big) };
		CU_ASSERT_EQUAL(wal_append(wal, &biov, 1, 0, 0, &lsn), WAL_E_TOO_BIG);
	}
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(wal__append_sync_read_reopen),
		UNIT_CASE(wal__unsynced_records_are_not_on_media),
		UNIT_CASE(wal__wraparound_straddling_many_laps),
		UNIT_CASE(wal__torn_tail_ends_the_log),
		UNIT_CASE(wal__torn_header_update_uses_the_other_copy),
		UNIT_CASE(wal__open_state_and_health_are_reported),
		UNIT_CASE(wal__checkpoint_at_the_ring_end_is_refused),
		UNIT_CASE(wal__full_ring_blocks_then_fails),
		CU_TEST_INFO_NULL,
	};
	int ret;

	if (mkdtemp(dir) == NULL)
		return 99;
	snprintf(path, sizeof(path), "%s/log", dir);
	ret = unit_run("wal", cases);
	unlink(path);
	rmdir(dir);
	return ret;
}
