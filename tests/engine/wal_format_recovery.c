/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_format_recovery.c -- the local log: append, sync, read back, reopen
 * (recovery), wraparound with records straddling the ring's end over many
 * laps, a torn tail (nothing after it is returned), a torn header update
 * (the other copy is used), a full ring (blocks, then REPL_E_FULL),
 * records too big for the ring, and the header's flags (a log made anew
 * waits for its promise floor, across a reopen and a torn update, and a
 * header with an unknown flag is refused).
 */
#include <string.h>
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
	CU_ASSERT_EQUAL(wal_read(wal, 101, NULL, 0, &(size_t){0}), REPL_E_NOT_FOUND);

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
	CU_ASSERT_EQUAL(wal_read(wal, 3, NULL, 0, &(size_t){0}), REPL_E_NOT_FOUND);
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
	CU_ASSERT(st.health & REPL_HEALTH_NOT_CLOSED);
	/* both copies broken: the log refuses to open */
	wal_close(&wal);
	corrupt(mem, 40);
	corrupt(mem, 4096 + 40);
	CU_ASSERT_EQUAL(wal_open(mem, &wal), REPL_E_CORRUPT);
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
	CU_ASSERT_EQUAL(st.health & REPL_HEALTH_NOT_CLOSED, 0);
	/* a file is not PMem: nothing the device could report is known */
	CU_ASSERT(st.health & REPL_HEALTH_USC_UNKNOWN);
	CU_ASSERT(st.health & REPL_HEALTH_BADBLOCKS_UNKNOWN);
	CU_ASSERT_EQUAL(st.health & REPL_HEALTH_SUSPECT, 0);
	/* opened a second time without a close: as after a crash */
	CU_ASSERT_FATAL(wal_open(mem, &again) == 0);
	wal_status(again, &st);
	CU_ASSERT(st.health & REPL_HEALTH_NOT_CLOSED);
	wal_close(&again);
	wal_close(&wal);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	wal_status(wal, &st);
	CU_ASSERT_EQUAL(st.health & REPL_HEALTH_NOT_CLOSED, 0);
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
	CU_ASSERT_EQUAL(wal_open(mem, &wal), REPL_E_CORRUPT);
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
	CU_ASSERT_EQUAL(ret, REPL_E_FULL);
	CU_ASSERT(n >= 3);
	CU_ASSERT_EQUAL(wal_sync(wal, lsn), 0);
	CU_ASSERT_EQUAL(wal_release(wal, 2), 0);
	CU_ASSERT_EQUAL(wal_append(wal, &iov, 1, 0, 10, &lsn), 0);
	CU_ASSERT_EQUAL(lsn, n + 1);
	/* larger than the ring can ever hold */
	{
		static unsigned char big[8192];
		struct iovec biov = { big, sizeof(big) };
		CU_ASSERT_EQUAL(wal_append(wal, &biov, 1, 0, 0, &lsn), REPL_E_TOO_BIG);
	}
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/*
 * A ring that appends filled to the brim (large records, then empty ones
 * until none fits) still takes an epoch-start record: a promotion can
 * open a log its primary left full (without the reserve it failed with
 * REPL_E_FULL, and the log could not be opened as a primary again).
 */
static void
wal__full_ring_keeps_room_for_epoch_start(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 8192 + 4096, &mem);
	unsigned char buf[1000] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	uint64_t lsn;
	int ret;

	while ((ret = wal_append(wal, &iov, 1, 0, 0, &lsn)) == 0)
		;
	CU_ASSERT_EQUAL(ret, REPL_E_FULL);
	while ((ret = wal_append(wal, NULL, 0, 0, 0, &lsn)) == 0)
		;
	CU_ASSERT_EQUAL(ret, REPL_E_FULL);
	CU_ASSERT_EQUAL(wal_append_epoch_start(wal, 0, &lsn), 0);
	CU_ASSERT(wal_is_epoch_start(wal, lsn));
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/*
 * Identity: every format draws a new incarnation; the checkpoint keeps the
 * epoch of the record before it, so a log whose records were all released
 * still says how recent it is (it used to report epoch 0).
 */
static void
wal__incarnation_and_checkpoint_epoch(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal_identity a, b;
	uint64_t ring, lsn;

	wal_identity(wal, &a, &ring);
	CU_ASSERT_NOT_EQUAL(a.incarnation, 0);
	CU_ASSERT_EQUAL(a.epoch_inc, a.incarnation);	/* its own epoch */
	CU_ASSERT_EQUAL(wal_tail_epoch(wal), 0);	/* never held a record */
	for (uint64_t l = 1; l <= 10; l++)
		wt_append(wal, SEED, l, 100);
	CU_ASSERT_EQUAL(wal_sync(wal, 10), 0);
	CU_ASSERT_EQUAL(wal_tail_epoch(wal), WT_EPOCH);
	CU_ASSERT_EQUAL(wal_release(wal, 10), 0);	/* all of them */
	CU_ASSERT_EQUAL(wal_tail_epoch(wal), WT_EPOCH);
	CU_ASSERT_EQUAL(wal_epoch_before(wal, 11), WT_EPOCH);
	/* a newer epoch and its start record: the tail says the new one */
	CU_ASSERT_EQUAL(wal_set_epoch(wal, 0x10007, a.incarnation), 0);
	CU_ASSERT_EQUAL(wal_append_epoch_start(wal, 0, &lsn), 0);
	CU_ASSERT_EQUAL(lsn, 11);
	CU_ASSERT(wal_is_epoch_start(wal, 11));
	CU_ASSERT(!wal_is_epoch_start(wal, 10));
	CU_ASSERT_EQUAL(wal_sync(wal, 11), 0);
	CU_ASSERT_EQUAL(wal_tail_epoch(wal), 0x10007);
	wt_reopen(path, &wal, &mem);
	wal_identity(wal, &b, &ring);
	CU_ASSERT_EQUAL(b.incarnation, a.incarnation);	/* kept across opens */
	CU_ASSERT_EQUAL(b.epoch, 0x10007);
	CU_ASSERT(wal_is_epoch_start(wal, 11));
	CU_ASSERT_EQUAL(wal_epoch_before(wal, 11), WT_EPOCH);	/* ck_epoch */
	wal_close(&wal);
	rpma_ext_mem_close(&mem);

	/* made anew: another incarnation */
	wal = wt_fresh(path, 1 << 20, &mem);
	wal_identity(wal, &b, &ring);
	CU_ASSERT_NOT_EQUAL(b.incarnation, a.incarnation);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/* the header's flags at offset 128, its crc over bytes 0..131 */
static void
set_flags(char *copy, uint32_t flags)
{
	uint32_t crc;

	memcpy(copy + 128, &flags, 4);
	crc = rpma_crc32c(0, copy, 132);
	memcpy(copy + 132, &crc, 4);
}

/*
 * A log made anew waits for its promise floor: PROMISE_PENDING is in the
 * header from the format on, a reopen (a crash before the floor) still
 * says so, and only the update that stores the floor clears it: a torn
 * one leaves the pending log.  The floor never lowers a promise.  A
 * header with a flag this code does not know is not a valid header.
 */
static void
wal__promise_pending_until_the_floor(void)
{
	struct wal_identity id = { .node_id = 7, .flags = 1u << 5 };
	struct rpma_ext_mem *mem;
	struct wal *wal = NULL, *again = NULL;
	uint64_t ring;
	char *p;

	unlink(path);
	mem = wt_mem_open(path, 1 << 20, RPMA_EXT_MEM_CREATE);
	/* unknown flags are not formatted */
	CU_ASSERT_EQUAL(wal_format(mem, &id), REPL_E_INVAL);
	id.flags = WAL_F_PROMISE_PENDING;
	CU_ASSERT_FATAL(wal_format(mem, &id) == 0);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	wal_identity(wal, &id, &ring);
	CU_ASSERT_EQUAL(id.flags, WAL_F_PROMISE_PENDING);
	CU_ASSERT_EQUAL(id.epoch, 0);
	/* a restart before the floor: the flag is on the medium */
	wt_reopen(path, &wal, &mem);
	wal_identity(wal, &id, &ring);
	CU_ASSERT_EQUAL(id.flags, WAL_F_PROMISE_PENDING);
	/*
	 * A crash in the floor's update, its copy torn: what recovers (a
	 * second open, as after the crash) is the pending log.
	 */
	CU_ASSERT_EQUAL(wal_take_floor(wal, 0x30002, 0xfeed), 0);
	corrupt(mem, newest_copy(mem) + 40);
	CU_ASSERT_FATAL(wal_open(mem, &again) == 0);
	wal_identity(again, &id, &ring);
	CU_ASSERT_EQUAL(id.flags, WAL_F_PROMISE_PENDING);
	CU_ASSERT_EQUAL(id.epoch, 0);
	wal_close(&again);
	wal_close(&wal);
	CU_ASSERT_FATAL(rpma_ext_mem_close(&mem) == 0);

	/* the floor stored: no flag, its promise, kept across a reopen */
	mem = wt_mem_open(path, 0, 0);
	id = (struct wal_identity){ .node_id = 7, .flags = WAL_F_PROMISE_PENDING };
	CU_ASSERT_FATAL(wal_format(mem, &id) == 0);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	CU_ASSERT_EQUAL(wal_take_floor(wal, 0x30002, 0xfeed), 0);
	wt_reopen(path, &wal, &mem);
	wal_identity(wal, &id, &ring);
	CU_ASSERT_EQUAL(id.flags, 0);
	CU_ASSERT_EQUAL(id.epoch, 0x30002);
	CU_ASSERT_EQUAL(id.epoch_inc, 0xfeed);
	/* a lower floor does not lower the promise */
	CU_ASSERT_EQUAL(wal_take_floor(wal, 0x20001, 0xbeef), 0);
	wal_identity(wal, &id, &ring);
	CU_ASSERT_EQUAL(id.epoch, 0x30002);
	CU_ASSERT_EQUAL(id.epoch_inc, 0xfeed);
	wal_close(&wal);

	/* an unknown flag in both copies: no valid header */
	rpma_ext_mem_get_ptr(mem, (void **)&p);
	set_flags(p, 1u << 2);
	set_flags(p + 4096, 1u << 31);
	CU_ASSERT_EQUAL(wal_open(mem, &wal), REPL_E_CORRUPT);
	CU_ASSERT_EQUAL(wal_probe(mem), WAL_PROBE_DAMAGED);
	/* the same field with the known flag checks out */
	set_flags(p + 4096, WAL_F_PROMISE_PENDING);
	CU_ASSERT_FATAL(wal_open(mem, &wal) == 0);
	wal_identity(wal, &id, &ring);
	CU_ASSERT_EQUAL(id.flags, WAL_F_PROMISE_PENDING);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/* an epoch-start record is not passed to an iteration's callback */
static int
count_cb(void *arg, uint64_t lsn, const void *data, size_t len)
{
	(void)lsn;
	(void)data;
	(void)len;
	++*(int *)arg;
	return 0;
}

static void
wal__epoch_start_is_not_iterated(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	uint64_t lsn;
	int n = 0;

	CU_ASSERT_EQUAL(wal_append_epoch_start(wal, 0, &lsn), 0);
	CU_ASSERT_EQUAL(lsn, 1);
	wt_append(wal, SEED, 2, 100);
	CU_ASSERT_EQUAL(wal_iterate(wal, 1, count_cb, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/*
 * A version 1 header (no incarnation, crc at 108) opens, and is rewritten
 * as version 2 in both copies with a fresh incarnation; the records stay.
 */
static void
wal__version_1_is_upgraded(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	struct wal_identity id;
	uint64_t ring;
	char *base;
	uint32_t v1 = 1, crc, zero = 0;

	for (uint64_t l = 1; l <= 5; l++)
		wt_append(wal, SEED, l, 100);
	CU_ASSERT_EQUAL(wal_sync(wal, 5), 0);
	wal_close(&wal);
	CU_ASSERT_FATAL(rpma_ext_mem_get_ptr(mem, (void **)&base) == 0);
	/* make both copies what version 1 wrote */
	for (int k = 0; k < 2; k++) {
		char *h = base + 4096 * k;

		if (memcmp(h, "RPLWAL", 6) != 0)
			continue;
		memcpy(h + 8, &v1, 4);
		memset(h + 104, 0, 4096 - 104);
		crc = rpma_crc32c(0, h, 108);
		memcpy(h + 108, &crc, 4);
		memcpy(h + 104, &zero, 4);
	}
	CU_ASSERT_EQUAL(rpma_ext_mem_persist(mem, 0, 8192), 0);
	CU_ASSERT_EQUAL(wal_probe(mem), WAL_PROBE_VALID);
	CU_ASSERT_EQUAL_FATAL(wal_open(mem, &wal), 0);
	wal_identity(wal, &id, &ring);
	CU_ASSERT_NOT_EQUAL(id.incarnation, 0);
	for (uint64_t l = 1; l <= 5; l++)
		CU_ASSERT(wt_record_ok(wal, SEED, l, 100));
	for (int k = 0; k < 2; k++) {
		uint32_t v;

		memcpy(&v, base + 4096 * k + 8, 4);
		CU_ASSERT_EQUAL(v, 2);
	}
	wal_close(&wal);
	rpma_ext_mem_close(&mem);
}

/* what a medium holds, before anything formats it */
static void
wal__probe_tells_blank_damaged_foreign(void)
{
	struct rpma_ext_mem *mem;
	struct wal *wal = wt_fresh(path, 1 << 20, &mem);
	char *base;

	CU_ASSERT_EQUAL(wal_probe(mem), WAL_PROBE_VALID);
	wal_close(&wal);
	CU_ASSERT_FATAL(rpma_ext_mem_get_ptr(mem, (void **)&base) == 0);
	base[20] ^= 1;			/* both copies' seq: their crcs fail */
	base[4096 + 20] ^= 1;
	CU_ASSERT_EQUAL(wal_probe(mem), WAL_PROBE_DAMAGED);
	memset(base, 0, 8192);
	CU_ASSERT_EQUAL(wal_probe(mem), WAL_PROBE_BLANK);
	memcpy(base + 100, "some other file", 15);
	CU_ASSERT_EQUAL(wal_probe(mem), WAL_PROBE_FOREIGN);
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
		UNIT_CASE(wal__full_ring_keeps_room_for_epoch_start),
		UNIT_CASE(wal__incarnation_and_checkpoint_epoch),
		UNIT_CASE(wal__epoch_start_is_not_iterated),
		UNIT_CASE(wal__version_1_is_upgraded),
		UNIT_CASE(wal__probe_tells_blank_damaged_foreign),
		UNIT_CASE(wal__promise_pending_until_the_floor),
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
