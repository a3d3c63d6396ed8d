/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_test.h -- what the archive's tests share: a check that counts
 * failures, a scratch directory removed at exit, the targets the tests
 * archive to, and records whose bytes follow from their LSN (so a
 * reader's are checked without keeping them).
 *
 * The targets are directories under the scratch directory, or, with
 * ARCHIVE_TEST_TARGET=s3://BUCKET/PREFIX in the environment (and the S3
 * variables of repld.conf(5)), prefixes under PREFIX/PROGRAM in that
 * bucket (tests/archive/archive_s3.sh runs the tests so).  A test damages
 * a target's objects through obj_*, which go to the target's own
 * functions: the same damage on either kind.
 */
#ifndef TESTS_ARCHIVE_TEST_H
#define TESTS_ARCHIVE_TEST_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "archive_int.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
/* a call that must succeed, its why printed when it does not */
#define OK(call) do { why[0] = '\0'; if ((call) != 0) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, why); } \
	} while (0)

static const uint8_t uuid_a[16] = { 0x6b, 0x1f, 0x0e, 0x53, 0x9a, 0x02, 0x4c, 0x11,
	0x8d, 0x3e, 0x75, 0x20, 0xc4, 0xab, 0x19, 0xe0 };
static const uint8_t uuid_b[16] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10 };

/* a pointer value no allocator returns: shows an output was written */
#define SENTINEL ((void *)(uintptr_t)0xDEADBEEF)

static char scratch[256];
static char target_root[512];	/* the scratch directory, or an s3:// URL */
static bool on_s3;

static void
rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[1024];

	if (d == NULL) {
		unlink(path);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rm_tree(sub);
	}
	closedir(d);
	rmdir(path);
}

static void
scratch_remove(void)
{
	if (scratch[0] != '\0')
		rm_tree(scratch);
}

/* a fresh scratch directory for this program, removed at exit */
static void
scratch_make(const char *prog)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(scratch, sizeof(scratch), "%s/%s.XXXXXX", tmp ? tmp : "/tmp", prog);
	if (mkdtemp(scratch) == NULL) {
		printf("SKIP: %s: no scratch directory\n", prog);
		exit(77);
	}
	atexit(scratch_remove);
	if (getenv("ARCHIVE_TEST_TARGET") != NULL && getenv("ARCHIVE_TEST_TARGET")[0]) {
		on_s3 = true;
		snprintf(target_root, sizeof(target_root), "%s/%s",
			getenv("ARCHIVE_TEST_TARGET"), prog);
	} else {
		snprintf(target_root, sizeof(target_root), "%s", scratch);
	}
}

/* a path under the scratch directory */
static __attribute__((unused)) const char *
at(const char *name)
{
	static char paths[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(paths[k], sizeof(paths[k]), "%s/%s", scratch, name);
	return paths[k];
}

/* the URL of a target the test archives to */
static __attribute__((unused)) const char *
tgt(const char *name)
{
	static char urls[4][700];
	static int k;

	k = (k + 1) % 4;
	snprintf(urls[k], sizeof(urls[k]), "%s/%s", target_root, name);
	return urls[k];
}

/* target dir's objects as they are, the archive's checks bypassed */
static __attribute__((unused)) struct archive_target *
raw_open(const char *dir)
{
	struct archive_target *t = calloc(1, sizeof(*t));
	char why[ARCHIVE_WHY_MAX];

	if (t == NULL)
		exit(1);
	snprintf(t->url, sizeof(t->url), "%s", tgt(dir));
	if ((on_s3 ? archive_s3_open(t, t->url, why, sizeof(why)) :
			archive_dir_open(t, t->url, true, why, sizeof(why))) != 0) {
		fprintf(stderr, "FAIL: opening %s: %s\n", t->url, why);
		exit(1);
	}
	return t;
}

static __attribute__((unused)) void
raw_close(struct archive_target *t)
{
	t->ops->close(t);
	free(t);
}

/* object name of target dir: its bytes (malloc'd), 0; -1 when missing */
static __attribute__((unused)) int
obj_read(const char *dir, const char *name, uint8_t **buf, size_t *len)
{
	struct archive_target *t = raw_open(dir);
	char why[ARCHIVE_WHY_MAX];
	void *p = NULL;
	int rc = t->ops->get(t, name, 1ull << 32, &p, len, why, sizeof(why));

	raw_close(t);
	*buf = p;
	return rc == 0 ? 0 : -1;
}

static __attribute__((unused)) int
obj_write(const char *dir, const char *name, const void *p, size_t len)
{
	struct archive_target *t = raw_open(dir);
	struct iovec v = { (void *)p, len };
	char why[ARCHIVE_WHY_MAX];
	int rc = t->ops->put(t, name, &v, 1, why, sizeof(why));

	if (rc != 0)
		fprintf(stderr, "writing %s: %s\n", name, why);
	raw_close(t);
	return rc;
}

static __attribute__((unused)) int
obj_delete(const char *dir, const char *name)
{
	struct archive_target *t = raw_open(dir);
	char why[ARCHIVE_WHY_MAX];
	int rc = t->ops->del(t, name, why, sizeof(why));

	raw_close(t);
	return rc;
}

/* its size in bytes, or -1 when it is missing */
static __attribute__((unused)) long long
obj_size(const char *dir, const char *name)
{
	uint8_t *p;
	size_t len;

	if (obj_read(dir, name, &p, &len) != 0)
		return -1;
	free(p);
	return (long long)len;
}

/* cut by bytes at its end */
static __attribute__((unused)) int
obj_truncate(const char *dir, const char *name, size_t by)
{
	uint8_t *p;
	size_t len;
	int rc;

	if (obj_read(dir, name, &p, &len) != 0 || len < by)
		return -1;
	rc = obj_write(dir, name, p, len - by);
	free(p);
	return rc;
}

/* one bit of the byte at off flipped */
static __attribute__((unused)) int
obj_flip(const char *dir, const char *name, size_t off)
{
	uint8_t *p;
	size_t len;
	int rc;

	if (obj_read(dir, name, &p, &len) != 0 || off >= len)
		return -1;
	p[off] ^= 0x10;
	rc = obj_write(dir, name, p, len);
	free(p);
	return rc;
}

/* from_dir's object from put in to_dir as to, and deleted where it was */
static __attribute__((unused)) int
obj_move(const char *from_dir, const char *from, const char *to_dir, const char *to)
{
	uint8_t *p;
	size_t len;
	int rc;

	if (obj_read(from_dir, from, &p, &len) != 0)
		return -1;
	rc = obj_write(to_dir, to, p, len);
	free(p);
	return rc != 0 ? rc : obj_delete(from_dir, from);
}

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* record LSN's payload length: mostly small, some large, epoch starts 0 */
static size_t
rec_len(uint64_t lsn)
{
	if (lsn % 500 == 0)
		return 0;
	if (lsn % 397 == 0)
		return 300 * 1024 + (size_t)(mix(lsn) % 4096);
	return (size_t)(mix(lsn) % 4096);
}

static unsigned
rec_flags(uint64_t lsn)
{
	return lsn % 500 == 0 ? ARCHIVE_REC_EPOCH_START : 0;
}

static uint64_t
rec_time(uint64_t lsn)
{
	return 1700000000000ull + lsn * 10;
}

/* half random, half a repeating text: zstd has something to do */
static void
rec_fill(uint64_t lsn, uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = i < len / 2 ? (uint8_t)mix(lsn * 131 + i) : (uint8_t)("archive "[i % 8]);
}

/* records first..last added (and not flushed) */
static int
add_range(struct archive_writer *w, uint64_t first, uint64_t last, char *why,
		size_t whylen)
{
	static uint8_t buf[400 * 1024];

	for (uint64_t lsn = first; lsn <= last; lsn++) {
		size_t len = rec_len(lsn);

		rec_fill(lsn, buf, len);
		if (archive_writer_add(w, lsn, 1 + lsn / 500, lsn % 7, rec_time(lsn),
				rec_flags(lsn), buf, len, why, whylen) != 0)
			return -1;
	}
	return 0;
}

/* what a reader saw: each record checked against the one added */
struct seen {
	uint64_t next, count, bad;
};

static int
check_record(void *arg, const struct archive_record *r)
{
	static uint8_t buf[400 * 1024];
	struct seen *s = arg;
	size_t len = rec_len(r->lsn);

	rec_fill(r->lsn, buf, len);
	if ((s->next != 0 && r->lsn != s->next) || r->len != len ||
			r->epoch != 1 + r->lsn / 500 || r->client_id != r->lsn % 7 ||
			r->time_ms != rec_time(r->lsn) || r->flags != rec_flags(r->lsn) ||
			(len > 0 && memcmp(r->data, buf, len) != 0)) {
		if (s->bad++ == 0)
			fprintf(stderr, "record of LSN %llu is not what was added\n",
				(unsigned long long)r->lsn);
	}
	s->next = r->lsn + 1;
	s->count++;
	return 0;
}

static __attribute__((unused)) long long
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

#endif
