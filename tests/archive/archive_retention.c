/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_retention.c -- a missing segment is a gap the listing shows and a
 * read across refuses; bases go in and the newest at or before an LSN
 * comes back byte for byte; pruning keeps what a restore to a kept point
 * needs and deletes the rest.
 */
#include <fcntl.h>
#include <time.h>

#include "archive_test.h"

static void
fill(struct archive_target *t, uint64_t first, uint64_t last, uint64_t segment_bytes)
{
	struct archive_writer_cfg cfg = { .segment_bytes = segment_bytes };
	struct archive_writer *w;
	char why[ARCHIVE_WHY_MAX];

	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	if (w == NULL)
		exit(1);
	CHECK(archive_writer_next(w) == (first == 1 ? 0 : first));
	OK(add_range(w, first, last, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	archive_writer_close(&w);
}

static void
gaps(void)
{
	struct archive_target *t;
	struct archive_writer *w;
	struct archive_writer_cfg cfg = { .segment_bytes = 16 * 1024 };
	struct archive_listing l;
	struct archive_object hole = { 0 };
	struct seen s = { 0 };
	char why[ARCHIVE_WHY_MAX], expect[64];
	int rc;

	OK(archive_target_open(tgt("gaps"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	fill(t, 1, 600, 16 * 1024);
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_segments > 6 && l.gap_at == 0 && l.contiguous_to == 600);
	if (l.n_segments > 6)
		hole = l.obj[l.n_segments / 2];
	archive_listing_free(&l);
	CHECK(obj_delete("gaps", hole.name) == 0 && obj_size("gaps", hole.name) == -1);

	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.gap_at == hole.first_lsn && l.contiguous_to == hole.first_lsn - 1);
	archive_listing_free(&l);
	/* across it: refused, naming the LSNs missing */
	rc = archive_read(t, 1, 600, check_record, &s, why, sizeof(why));
	snprintf(expect, sizeof(expect), "%llu..%llu", (unsigned long long)hole.first_lsn,
		(unsigned long long)hole.last_lsn);
	CHECK(rc == -1 && strstr(why, "gap") != NULL && strstr(why, expect) != NULL);
	rc = archive_read(t, hole.first_lsn, hole.first_lsn, check_record, &s, why,
		sizeof(why));
	CHECK(rc == -1 && strstr(why, "gap") != NULL);
	/* before it and after it: whole */
	s = (struct seen){ .next = 1 };
	OK(archive_read(t, 1, hole.first_lsn - 1, check_record, &s, why, sizeof(why)));
	CHECK(s.count == hole.first_lsn - 1 && s.bad == 0);
	s = (struct seen){ .next = hole.last_lsn + 1 };
	OK(archive_read(t, hole.last_lsn + 1, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 600 - hole.last_lsn && s.bad == 0);

	/* a writer goes on after the newest segment, not into the hole */
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	if (w != NULL) {
		CHECK(archive_writer_next(w) == 601);
		/* records 601..700 lost: a skip past them, never back */
		CHECK(archive_writer_skip_to(w, 601, why, sizeof(why)) == -1);
		CHECK(archive_writer_skip_to(w, 500, why, sizeof(why)) == -1);
		OK(archive_writer_skip_to(w, 701, why, sizeof(why)));
		CHECK(archive_writer_next(w) == 701);
		OK(add_range(w, 701, 710, why, sizeof(why)));
		OK(archive_writer_flush(w, why, sizeof(why)));
		CHECK(archive_writer_archived(w) == 710);
		archive_writer_close(&w);
		OK(archive_list(t, &l, why, sizeof(why)));
		/* the first gap is still the hole; the archive ends at 710 */
		CHECK(l.gap_at == hole.first_lsn && l.n_segments > 0 &&
			l.obj[l.n_segments - 1].last_lsn == 710);
		archive_listing_free(&l);
	}
	archive_target_close(&t);
}

/* a file of n bytes that follow from seed */
static void
make_file(const char *path, size_t n, unsigned seed)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		fputc(i % 3 == 0 ? (int)(mix(seed * 1000003ull + i) & 0xff) : 'b', f);
	fclose(f);
}

static bool
same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	bool same = fa != NULL && fb != NULL;
	int ca, cb;

	while (same) {
		ca = fgetc(fa);
		cb = fgetc(fb);
		if (ca != cb)
			same = false;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static void
bases(void)
{
	struct archive_target *t;
	struct archive_listing l, before;
	struct seen s = { 0 };
	uint64_t lsn = 0, deleted, expect = 0, checked, bad;
	char why[ARCHIVE_WHY_MAX];
	int rc;

	OK(archive_target_open(tgt("bases"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	make_file(at("db-100"), 200000, 1);
	make_file(at("db-300"), 0, 2);
	make_file(at("db-500"), 1 << 20, 3);
	fill(t, 1, 600, 32 * 1024);
	OK(archive_put_base(t, 100, at("db-100"), 0, why, sizeof(why)));
	OK(archive_put_base(t, 300, at("db-300"), 3, why, sizeof(why)));
	OK(archive_put_base(t, 500, at("db-500"), 1, why, sizeof(why)));
	rc = archive_put_base(t, 700, at("no-such-file"), 0, why, sizeof(why));
	CHECK(rc == -1 && strstr(why, "no-such-file") != NULL);

	/* the newest at or before: written back whole, the LSN said */
	rc = archive_get_base(t, 299, at("out"), &lsn, why, sizeof(why));
	CHECK(rc == 1 && lsn == 100 && same_file(at("out"), at("db-100")));
	rc = archive_get_base(t, 300, at("out"), &lsn, why, sizeof(why));
	CHECK(rc == 1 && lsn == 300 && file_size(at("out")) == 0);
	rc = archive_get_base(t, UINT64_MAX, at("out"), &lsn, why, sizeof(why));
	CHECK(rc == 1 && lsn == 500 && same_file(at("out"), at("db-500")));
	lsn = 77;
	rc = archive_get_base(t, 99, at("none"), &lsn, why, sizeof(why));
	CHECK(rc == 0 && lsn == 77 && file_size(at("none")) == -1);

	OK(archive_list(t, &before, why, sizeof(why)));
	CHECK(before.n_bases == 3 && before.gap_at == 0 && before.contiguous_to == 600);
	CHECK(before.n_bases == 3 && before.obj[before.n_segments].first_lsn == 100);
	CHECK(before.n_bases == 3 && before.obj[before.n_segments + 2].bytes < (1 << 20));
	OK(archive_verify(t, &checked, &bad, why, sizeof(why)));
	CHECK(checked == before.n_segments + 3 && bad == 0);

	/* keeping all bases and no age: the segments before the oldest go */
	for (size_t i = 0; i < before.n_segments; i++)
		expect += before.obj[i].last_lsn <= 100;
	OK(archive_prune(t, 0, 0, 0, &deleted, why, sizeof(why)));
	CHECK(deleted == expect && expect > 0);

	/* keeping 1: the older bases and every segment wholly before 500 */
	expect = 2;
	for (size_t i = 0; i < before.n_segments; i++)
		expect += before.obj[i].last_lsn > 100 && before.obj[i].last_lsn <= 500;
	OK(archive_prune(t, 1, 0, 0, &deleted, why, sizeof(why)));
	CHECK(deleted == expect);
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_bases == 1 && l.obj[l.n_segments].first_lsn == 500);
	CHECK(l.n_segments > 0 && l.obj[0].first_lsn <= 501 && l.obj[0].last_lsn > 500);
	CHECK(l.gap_at == 0 && l.contiguous_to == 600);
	archive_listing_free(&l);
	/* a restore to any point kept: the base and what follows */
	rc = archive_get_base(t, 550, at("out"), &lsn, why, sizeof(why));
	CHECK(rc == 1 && lsn == 500 && same_file(at("out"), at("db-500")));
	s = (struct seen){ .next = 501 };
	OK(archive_read(t, 501, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 100 && s.bad == 0);
	/* again: nothing more to delete */
	OK(archive_prune(t, 1, 0, 0, &deleted, why, sizeof(why)));
	CHECK(deleted == 0);
	archive_listing_free(&before);
	archive_target_close(&t);
}

/* keep_ms: records younger than now - keep_ms, and what restores to them need */
static void
by_age(void)
{
	struct archive_target *t;
	struct archive_listing l, before;
	uint64_t deleted, expect = 0, now = rec_time(400), keep = rec_time(400) -
		rec_time(250), later;
	char why[ARCHIVE_WHY_MAX];
	struct timespec ts;

	/* a raw log's archive (no base): only what is wholly older goes */
	OK(archive_target_open(tgt("age-raw"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	fill(t, 1, 600, 16 * 1024);
	OK(archive_list(t, &before, why, sizeof(why)));
	for (size_t i = 0; i < before.n_segments; i++)
		expect += before.obj[i].last_ms < now - keep;
	OK(archive_prune(t, 3, 0, now, &deleted, why, sizeof(why)));
	CHECK(deleted == 0);	/* no base: keep_bases does not apply */
	OK(archive_prune(t, 0, keep, now, &deleted, why, sizeof(why)));
	CHECK(deleted == expect && expect > 0);
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_segments == before.n_segments - expect);
	CHECK(l.n_segments > 0 && l.obj[0].first_lsn <= 250 && l.obj[0].last_lsn >= 250);
	CHECK(l.gap_at == 0 && l.contiguous_to == 600);
	archive_listing_free(&l);
	archive_listing_free(&before);
	archive_target_close(&t);

	/* with bases at 100 and 300, keeping 1 base but 150 records' time:
	   a restore to 250 needs the base at 100 and what follows it */
	make_file(at("db"), 1000, 4);
	OK(archive_target_open(tgt("age-bases"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	fill(t, 1, 600, 16 * 1024);
	OK(archive_put_base(t, 100, at("db"), 0, why, sizeof(why)));
	OK(archive_put_base(t, 300, at("db"), 0, why, sizeof(why)));
	OK(archive_list(t, &before, why, sizeof(why)));
	expect = 0;
	for (size_t i = 0; i < before.n_segments; i++)
		expect += before.obj[i].last_lsn <= 100;
	OK(archive_prune(t, 1, keep, now, &deleted, why, sizeof(why)));
	CHECK(deleted == expect && expect > 0);
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_bases == 2 && l.gap_at == 0 && l.contiguous_to == 600);
	archive_listing_free(&l);
	/* a day on (the bases' times are when they were put): only the
	   newest base and what follows stay */
	clock_gettime(CLOCK_REALTIME, &ts);
	later = (uint64_t)ts.tv_sec * 1000 + 86400000;
	OK(archive_prune(t, 1, keep, later, &deleted, why, sizeof(why)));
	CHECK(deleted > 1);
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_bases == 1 && l.obj[l.n_segments].first_lsn == 300);
	CHECK(l.n_segments > 0 && l.obj[0].first_lsn <= 301);
	archive_listing_free(&l);
	archive_listing_free(&before);
	archive_target_close(&t);
}

int
main(void)
{
	scratch_make("archive_retention");
	gaps();
	bases();
	by_age();
	if (failures > 0) {
		printf("archive_retention: %d failures\n", failures);
		return 1;
	}
	printf("archive_retention: ok\n");
	return 0;
}
