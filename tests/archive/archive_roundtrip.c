/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_roundtrip.c -- records written to an archive (stored as is, and
 * zstd) come back byte for byte, over any range crossing segments; a
 * writer opened on an archive continues at its end, and refuses a record
 * that is not the next.
 */
#include "archive_test.h"

#define FIRST 1000
#define LAST 3999

static void
round_trip(int zstd_level)
{
	struct archive_writer_cfg cfg = { .segment_bytes = 64 * 1024,
		.zstd_level = zstd_level };
	struct archive_target *t;
	struct archive_writer *w;
	struct archive_listing l;
	struct seen s = { 0 };
	uint64_t checked, bad, raw_bytes = 0, stored = 0;
	char why[ARCHIVE_WHY_MAX], dir[64];
	int rc;

	snprintf(dir, sizeof(dir), "rt-zstd%d", zstd_level);
	OK(archive_target_open(tgt(dir), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	CHECK(archive_writer_next(w) == 0);	/* empty: any */
	CHECK(archive_writer_archived(w) == 0);
	OK(add_range(w, FIRST, LAST, why, sizeof(why)));
	CHECK(archive_writer_next(w) == LAST + 1);
	/* segments went out as they filled; the rest waits for a flush */
	CHECK(archive_writer_archived(w) > FIRST && archive_writer_archived(w) < LAST);
	CHECK(archive_writer_pending_bytes(w) > 0);
	OK(archive_writer_flush(w, why, sizeof(why)));
	CHECK(archive_writer_archived(w) == LAST);
	CHECK(archive_writer_pending_bytes(w) == 0);
	OK(archive_writer_flush(w, why, sizeof(why)));	/* nothing: no-op */
	archive_writer_close(&w);
	CHECK(w == NULL);

	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_segments > 10 && l.n_bases == 0);
	CHECK(l.contiguous_to == LAST && l.gap_at == 0);
	CHECK(l.n_segments > 0 && l.obj[0].first_lsn == FIRST);
	for (size_t i = 0; i < l.n_segments; i++) {
		const struct archive_object *o = &l.obj[i];

		CHECK(o->kind == ARCHIVE_SEGMENT);
		CHECK(i == 0 || o->first_lsn == l.obj[i - 1].last_lsn + 1);
		CHECK(o->first_ms == rec_time(o->first_lsn));
		CHECK(o->last_ms == rec_time(o->last_lsn));
		CHECK(strncmp(o->name, "seg/", 4) == 0 && strlen(o->name) == 50);
		CHECK(obj_size(dir, o->name) == (long long)o->bytes);
		stored += o->bytes;
	}
	for (uint64_t lsn = FIRST; lsn <= LAST; lsn++)
		raw_bytes += 44 + rec_len(lsn);
	/* a segment is cut before the record that would take it past
	   segment_bytes: only one record alone may be larger */
	for (size_t i = 0; i < l.n_segments; i++)
		if (l.obj[i].first_lsn != l.obj[i].last_lsn && zstd_level == 0)
			CHECK(l.obj[i].bytes <= 96 + cfg.segment_bytes);
	if (zstd_level > 0)
		CHECK(stored < raw_bytes * 9 / 10);
	else
		CHECK(stored == raw_bytes + 96 * l.n_segments);
	archive_listing_free(&l);

	/* all of it */
	OK(archive_read(t, 0, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == LAST - FIRST + 1 && s.bad == 0 && s.next == LAST + 1);
	/* a range from the middle of one segment to the middle of another */
	s = (struct seen){ .next = 1234 };
	OK(archive_read(t, 1234, 3210, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 3210 - 1234 + 1 && s.bad == 0 && s.next == 3211);
	/* one record */
	s = (struct seen){ .next = LAST };
	OK(archive_read(t, LAST, LAST, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 1 && s.bad == 0);
	/* outside the archive: refused, not an empty success */
	rc = archive_read(t, FIRST - 1, LAST, check_record, &s, why, sizeof(why));
	CHECK(rc == -1 && strstr(why, "not a range") != NULL);
	rc = archive_read(t, FIRST, LAST + 1, check_record, &s, why, sizeof(why));
	CHECK(rc == -1);

	OK(archive_verify(t, &checked, &bad, why, sizeof(why)));
	CHECK(checked > 10 && bad == 0);
	archive_target_close(&t);
	CHECK(t == NULL);
}

static int
stop_at_2000(void *arg, const struct archive_record *r)
{
	uint64_t *last = arg;

	*last = r->lsn;
	return r->lsn == 2000 ? 1 : 0;
}

static int
fail_at_2000(void *arg, const struct archive_record *r)
{
	(void)arg;
	return r->lsn == 2000 ? -1 : 0;
}

/* the reader's callback stops (not an error) or fails */
static void
callback_stops(void)
{
	struct archive_target *t;
	uint64_t last = 0;
	char why[ARCHIVE_WHY_MAX];
	int rc;

	OK(archive_target_open(tgt("rt-zstd0"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_read(t, 0, 0, stop_at_2000, &last, why, sizeof(why)));
	CHECK(last == 2000);
	rc = archive_read(t, 0, 0, fail_at_2000, NULL, why, sizeof(why));
	CHECK(rc == -1 && strstr(why, "2000") != NULL);
	archive_target_close(&t);
}

static void
resume(void)
{
	struct archive_writer_cfg cfg = { .segment_bytes = 32 * 1024 };
	struct archive_target *t;
	struct archive_writer *w;
	struct seen s = { 0 };
	uint8_t byte = 7;
	char why[ARCHIVE_WHY_MAX];
	int rc;

	OK(archive_target_open(tgt("resume"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	OK(add_range(w, 1, 100, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	/* added, never published: a writer closed drops them */
	OK(add_range(w, 101, 110, why, sizeof(why)));
	archive_writer_close(&w);

	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	if (w == NULL)
		return;
	CHECK(archive_writer_next(w) == 101);
	CHECK(archive_writer_archived(w) == 100);
	/* a hole, a repeat, and LSN 0 are refused and change nothing */
	rc = archive_writer_add(w, 105, 1, 0, 5, 0, &byte, 1, why, sizeof(why));
	CHECK(rc == -1 && strstr(why, "101") != NULL);
	rc = archive_writer_add(w, 100, 1, 0, 5, 0, &byte, 1, why, sizeof(why));
	CHECK(rc == -1);
	rc = archive_writer_add(w, 0, 1, 0, 5, 0, &byte, 1, why, sizeof(why));
	CHECK(rc == -1);
	/* an epoch's start carries nothing; unknown flags are refused */
	rc = archive_writer_add(w, 101, 1, 0, 5, ARCHIVE_REC_EPOCH_START, &byte, 1, why,
		sizeof(why));
	CHECK(rc == -1);
	rc = archive_writer_add(w, 101, 1, 0, 5, 0x80, &byte, 1, why, sizeof(why));
	CHECK(rc == -1);
	CHECK(archive_writer_next(w) == 101 && archive_writer_pending_bytes(w) == 0);
	OK(add_range(w, 101, 700, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	archive_writer_close(&w);
	OK(archive_read(t, 0, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 700 && s.bad == 0);
	archive_target_close(&t);

	/* settings out of range are refused */
	OK(archive_target_open(tgt("resume"), uuid_a, &t, why, sizeof(why)));
	cfg.zstd_level = 20;
	CHECK(archive_writer_open(t, &cfg, &w, why, sizeof(why)) == -1 && w == NULL);
	cfg.zstd_level = 0;
	cfg.segment_bytes = (1ull << 30) + 1;
	CHECK(archive_writer_open(t, &cfg, &w, why, sizeof(why)) == -1 && w == NULL);
	archive_target_close(&t);
}

int
main(void)
{
	scratch_make("archive_roundtrip");
	round_trip(0);
	round_trip(1);
	round_trip(3);
	callback_stops();
	resume();
	if (failures > 0) {
		printf("archive_roundtrip: %d failures\n", failures);
		return 1;
	}
	printf("archive_roundtrip: ok\n");
	return 0;
}
