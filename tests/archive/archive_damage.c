/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_damage.c -- what a crash or a bad disk leaves is caught: a
 * temporary file left over is ignored and removed (unless its writer
 * lives; on S3, where a PUT is atomic and nothing is temporary, objects
 * under such names are ignored); a segment cut short or with a flipped bit fails read and verify,
 * which name it; an archive of another cluster is refused, and so is a
 * segment of another cluster put into this one; zstd that would inflate
 * past the raw length a header states is stopped there.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "archive_test.h"

/* an archive of records 1..600 in small segments */
static void
fill(const char *dir)
{
	struct archive_writer_cfg cfg = { .segment_bytes = 16 * 1024 };
	struct archive_target *t;
	struct archive_writer *w;
	char why[ARCHIVE_WHY_MAX];

	OK(archive_target_open(tgt(dir), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		exit(1);
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	OK(add_range(w, 1, 600, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	archive_writer_close(&w);
	archive_target_close(&t);
}

static void
touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "partial", 7) == 7);
		close(fd);
	}
}

/* S3: objects named as a directory's temporary files, or as nothing of
   the archive's, are not listed nor read */
static void
leftover_s3(void)
{
	struct archive_target *t;
	struct archive_listing l;
	struct seen s = { 0 };
	char why[ARCHIVE_WHY_MAX];
	size_t n_before;

	fill("tmp");
	OK(archive_target_open(tgt("tmp"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_list(t, &l, why, sizeof(why)));
	n_before = l.n_segments;
	archive_listing_free(&l);
	CHECK(obj_write("tmp", "seg/.tmp-999999999-3-00000000000000000601-"
		"00000000000000000700.rseg", "partial", 7) == 0);
	CHECK(obj_write("tmp", "seg/junk", "partial", 7) == 0);
	CHECK(obj_write("tmp", "base/00000000000000000009.rbase.old", "partial", 7) == 0);
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_segments == n_before && l.n_bases == 0 && l.contiguous_to == 600);
	archive_listing_free(&l);
	OK(archive_read(t, 0, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 600 && s.bad == 0);
	archive_target_close(&t);
}

static void
leftover_tmp(void)
{
	struct archive_target *t;
	struct archive_listing l;
	struct seen s = { 0 };
	char why[ARCHIVE_WHY_MAX], live[128];
	size_t n_before;

	fill("tmp");
	OK(archive_target_open(tgt("tmp"), uuid_a, &t, why, sizeof(why)));
	OK(archive_list(t, &l, why, sizeof(why)));
	n_before = l.n_segments;
	archive_listing_free(&l);
	archive_target_close(&t);

	/* a dead writer's (no such PID), one with no PID, and a live one's */
	touch(at("tmp/seg/.tmp-999999999-3-00000000000000000601-00000000000000000700.rseg"));
	touch(at("tmp/seg/.tmp-junk"));
	touch(at("tmp/.tmp-999999999-0-cluster-uuid"));
	snprintf(live, sizeof(live), "tmp/base/.tmp-%ld-0-00000000000000000009.rbase",
		(long)getpid());
	touch(at(live));

	OK(archive_target_open(tgt("tmp"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	CHECK(file_size(at("tmp/seg/.tmp-999999999-3-00000000000000000601-"
		"00000000000000000700.rseg")) == -1);
	CHECK(file_size(at("tmp/seg/.tmp-junk")) == -1);
	CHECK(file_size(at("tmp/.tmp-999999999-0-cluster-uuid")) == -1);
	CHECK(file_size(at(live)) == 7);	/* its writer may yet rename it */
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.n_segments == n_before && l.n_bases == 0 && l.contiguous_to == 600);
	archive_listing_free(&l);
	OK(archive_read(t, 0, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 600 && s.bad == 0);
	archive_target_close(&t);
	unlink(at(live));
}

/* the name of the segment holding lsn, in dir */
static void
segment_holding(const char *dir, uint64_t lsn, char *name, size_t len)
{
	struct archive_target *t;
	struct archive_listing l;
	char why[ARCHIVE_WHY_MAX];

	name[0] = '\0';
	OK(archive_target_open(tgt(dir), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_list(t, &l, why, sizeof(why)));
	for (size_t i = 0; i < l.n_segments; i++)
		if (l.obj[i].first_lsn <= lsn && lsn <= l.obj[i].last_lsn)
			snprintf(name, len, "%s", l.obj[i].name);
	archive_listing_free(&l);
	archive_target_close(&t);
}

/* read and verify fail on dir's damaged segment, naming it and what */
static void
damaged(const char *dir, const char *name, const char *what, bool list_fails,
		uint64_t n_bad)
{
	struct archive_target *t;
	struct archive_listing l;
	struct seen s = { 0 };
	uint64_t checked, bad;
	char why[ARCHIVE_WHY_MAX];
	int rc;

	OK(archive_target_open(tgt(dir), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	rc = archive_read(t, 0, 0, check_record, &s, why, sizeof(why));
	CHECK(rc == -1 && strstr(why, name) != NULL && strstr(why, what) != NULL);
	if (rc != -1 || strstr(why, what) == NULL)
		fprintf(stderr, "  read: %s\n", why);
	CHECK(s.bad == 0);	/* nothing wrong was handed out */
	rc = archive_verify(t, &checked, &bad, why, sizeof(why));
	CHECK(rc == -1 && bad == n_bad && checked > 10);
	CHECK(strstr(why, name) != NULL && strstr(why, what) != NULL);
	rc = archive_list(t, &l, why, sizeof(why));
	if (list_fails)
		CHECK(rc == -1 && strstr(why, name) != NULL);
	else
		CHECK(rc == 0);
	if (rc == 0)
		archive_listing_free(&l);
	archive_target_close(&t);
}

static void
truncated_and_flipped(void)
{
	char name[96], name2[96];

	/* cut short: the header's stored length no longer fits */
	fill("cut");
	segment_holding("cut", 300, name, sizeof(name));
	CHECK(obj_truncate("cut", name, 10) == 0);
	damaged("cut", name, "stored length", true, 1);

	/* a bit of the body: its CRC */
	fill("flip");
	segment_holding("flip", 300, name, sizeof(name));
	CHECK(obj_flip("flip", name, 96 + 50) == 0);
	damaged("flip", name, "body: CRC", false, 1);

	/* a bit of the header: its own CRC */
	fill("hflip");
	segment_holding("hflip", 300, name, sizeof(name));
	CHECK(obj_flip("hflip", name, 40) == 0);
	damaged("hflip", name, "header: CRC", true, 1);

	/* two segments' objects swapped: each holds LSNs its name does not */
	fill("swapped");
	segment_holding("swapped", 100, name, sizeof(name));
	segment_holding("swapped", 300, name2, sizeof(name2));
	CHECK(obj_move("swapped", name, "swapped", "seg/x") == 0);
	CHECK(obj_move("swapped", name2, "swapped", name) == 0);
	CHECK(obj_move("swapped", "seg/x", "swapped", name2) == 0);
	damaged("swapped", name, "not what its name says", true, 2);
}

static void
other_cluster(void)
{
	struct archive_target *t = SENTINEL;
	struct archive_writer_cfg cfg = { .segment_bytes = 1024 * 1024 };
	struct archive_writer *w;
	struct seen s = { 0 };
	char why[ARCHIVE_WHY_MAX], name[96];
	int rc;

	fill("mine");
	rc = archive_target_open(tgt("mine"), uuid_b, &t, why, sizeof(why));
	CHECK(rc == -1 && t == NULL && strstr(why, "not of this cluster") != NULL);

	/* no uuid given: the archive's is taken (a restore) */
	OK(archive_target_open(tgt("mine"), NULL, &t, why, sizeof(why)));
	if (t != NULL) {
		OK(archive_read(t, 0, 0, check_record, &s, why, sizeof(why)));
		CHECK(s.count == 600 && s.bad == 0);
		archive_target_close(&t);
	}
	/* ... and nothing to take from a target that is no archive */
	if (!on_s3)
		CHECK(mkdir(tgt("nothing"), 0755) == 0);
	rc = archive_target_open(tgt("nothing"), NULL, &t, why, sizeof(why));
	CHECK(rc == -1 && t == NULL && strstr(why, "not an archive: no cluster-uuid") != NULL);
	/* no such kind of target, and an s3:// URL without a bucket */
	rc = archive_target_open("ftp://host/x", uuid_a, &t, why, sizeof(why));
	CHECK(rc == -1 && t == NULL && strstr(why, "not a target") != NULL);
	rc = archive_target_open("s3://", uuid_a, &t, why, sizeof(why));
	CHECK(rc == -1 && t == NULL && strstr(why, "bucket name") != NULL);
	if (!on_s3) {
		char tmp[700];
		struct stat st;
		int fd;

		rc = archive_target_open(tgt("no/such/parent"), uuid_a, &t, why,
			sizeof(why));
		CHECK(rc == -1 && t == NULL);
		/* a reader makes nothing: no directory where there was none */
		rc = archive_target_open(tgt("absent"), NULL, &t, why, sizeof(why));
		CHECK(rc == -1 && t == NULL && strstr(why, "No such file") != NULL);
		CHECK(stat(tgt("absent"), &st) != 0 && errno == ENOENT);
		/* ... nor removes anything: a temporary file stays */
		/* of a writer gone (pid 2^31 - 2): only an archiver removes it */
		snprintf(tmp, sizeof(tmp), "%s/seg/.tmp-2147483646-1-x", tgt("mine"));
		fd = open(tmp, O_CREAT | O_WRONLY, 0644);
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
		OK(archive_target_open(tgt("mine"), NULL, &t, why, sizeof(why)));
		archive_target_close(&t);
		CHECK(stat(tmp, &st) == 0);
		/* the archiver's open removes what a kill left */
		OK(archive_target_open(tgt("mine"), uuid_a, &t, why, sizeof(why)));
		archive_target_close(&t);
		CHECK(stat(tmp, &st) != 0 && errno == ENOENT);
	}

	/* the other cluster's archive of 601..700: its segment put in mine */
	OK(archive_target_open(tgt("theirs"), uuid_b, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	OK(add_range(w, 601, 700, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	archive_writer_close(&w);
	archive_target_close(&t);
	snprintf(name, sizeof(name), "seg/00000000000000000601-00000000000000000700.rseg");
	CHECK(obj_move("theirs", name, "mine", name) == 0);
	damaged("mine", name, "another cluster", true, 1);

	/* the cluster-uuid object itself damaged */
	CHECK(obj_write("mine", "cluster-uuid", "partial", 7) == 0);
	rc = archive_target_open(tgt("mine"), uuid_a, &t, why, sizeof(why));
	CHECK(rc == -1 && t == NULL && strstr(why, "cluster-uuid") != NULL);
}

/* a segment of one record of n zero bytes whose header says raw_len */
static size_t
zstd_segment(uint8_t **obj, size_t n, uint64_t raw_len)
{
	struct archive_zstd *z = archive_zstd_new(1);
	struct archive_hdr h = { .kind = ARCHIVE_SEGMENT, .flags = ARCHIVE_FLAG_ZSTD,
		.first_lsn = 1, .last_lsn = 1, .count = 1, .raw_len = raw_len };
	uint8_t *raw = calloc(1, ARCHIVE_REC_HDR_SIZE + n);
	const void *body = NULL;
	size_t body_len = 0;
	char why[ARCHIVE_WHY_MAX];

	archive_rec_encode(raw, 1, 1, 0, 0, 0, (uint32_t)n, archive_crc(raw + ARCHIVE_REC_HDR_SIZE, n));
	OK(archive_zstd_compress(z, raw, ARCHIVE_REC_HDR_SIZE + n, &body, &body_len, why,
		sizeof(why)));
	h.stored_len = body_len;
	h.body_crc = archive_crc(body, body_len);
	*obj = malloc(ARCHIVE_HDR_SIZE + body_len);
	archive_hdr_encode(&h, *obj);
	memcpy(*obj + ARCHIVE_HDR_SIZE, body, body_len);
	archive_zstd_free(z);
	free(raw);
	return ARCHIVE_HDR_SIZE + body_len;
}

/* zstd never gives more than the header's raw length, nor less */
static void
zstd_bounded(void)
{
	struct archive_hdr h;
	const void *raw;
	void *owned;
	uint8_t *obj;
	size_t len, n = 64 << 20;
	char why[ARCHIVE_WHY_MAX];
	int rc;

	len = zstd_segment(&obj, n, ARCHIVE_REC_HDR_SIZE + n);
	OK(archive_object_parse(obj, len, ARCHIVE_SEGMENT, NULL, NULL, "whole", &h, &raw,
		&owned, why, sizeof(why)));
	CHECK(len < 64 * 1024 && h.raw_len == ARCHIVE_REC_HDR_SIZE + n);
	free(owned);
	free(obj);
	/* 64 MiB from a few KiB, where the header says 1 MiB: stopped there */
	len = zstd_segment(&obj, n, 1 << 20);
	rc = archive_object_parse(obj, len, ARCHIVE_SEGMENT, NULL, NULL, "bomb", &h, &raw,
		&owned, why, sizeof(why));
	CHECK(rc == -1 && owned == NULL && strstr(why, "bomb: body: zstd gives more "
		"than the raw length 1048576") != NULL);
	free(obj);
	len = zstd_segment(&obj, 1000, 2000);
	rc = archive_object_parse(obj, len, ARCHIVE_SEGMENT, NULL, NULL, "short", &h, &raw,
		&owned, why, sizeof(why));
	CHECK(rc == -1 && owned == NULL && strstr(why, "not the raw length 2000") != NULL);
	free(obj);
}

int
main(void)
{
	/* the checksum is CRC-32C: its check value */
	CHECK(archive_crc("123456789", 9) == 0xE3069283u);
	CHECK(archive_crc("", 0) == 0);
	scratch_make("archive_damage");
	if (on_s3)
		leftover_s3();
	else
		leftover_tmp();
	truncated_and_flipped();
	other_cluster();
	zstd_bounded();
	if (failures > 0) {
		printf("archive_damage: %d failures\n", failures);
		return 1;
	}
	printf("archive_damage: ok\n");
	return 0;
}
