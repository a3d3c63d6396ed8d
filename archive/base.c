/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * base.c -- a base: a file's bytes as one object (segment.c's header,
 * kind 2, then the file, as is or zstd), named by the LSN it stands for;
 * and the newest base at or before an LSN written back to a path through
 * a temporary file renamed over it.  A base is held in memory whole while
 * it goes either way (at most 4 GiB).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive_int.h"

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}


int
archive_put_base(struct archive_target *t, uint64_t lsn, const char *path,
		int zstd_level, char *why, size_t whylen)
{
	struct archive_hdr h = { .kind = ARCHIVE_BASE };
	uint8_t hdr[ARCHIVE_HDR_SIZE];
	struct archive_zstd *z = NULL;
	struct iovec iov[2];
	const void *body;
	size_t len = 0, body_len;
	void *buf;
	char name[96];
	int rc;

	if (zstd_level < 0 || zstd_level > ARCHIVE_ZSTD_LEVEL_MAX)
		return archive_fail(why, whylen, "archive %s: zstd_level %d is not 0..%d",
			t->url, zstd_level, ARCHIVE_ZSTD_LEVEL_MAX);
	{
		char what[1100];

		snprintf(what, sizeof(what), "base %s", path);
		rc = archive_file_read(path, what, ARCHIVE_BODY_MAX, true, &buf, &len,
			why, whylen);
		if (rc == 1)
			return archive_fail(why, whylen, "base %s: no such file", path);
		if (rc != 0)
			return -1;
	}
	body = buf;
	body_len = len;
	if (zstd_level > 0) {
		z = archive_zstd_new(zstd_level);
		if (z == NULL) {
			free(buf);
			return archive_fail(why, whylen, "archive %s: zstd: out of memory",
				t->url);
		}
		if (archive_zstd_compress(z, buf, len, &body, &body_len, why,
				whylen) != 0) {
			archive_zstd_free(z);
			free(buf);
			return -1;
		}
		h.flags = ARCHIVE_FLAG_ZSTD;
	}
	memcpy(h.uuid, t->uuid, 16);
	h.first_lsn = h.last_lsn = lsn;
	h.first_ms = h.last_ms = now_ms();
	h.stored_len = body_len;
	h.raw_len = len;
	h.body_crc = archive_crc(body, body_len);
	archive_hdr_encode(&h, hdr);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)body, body_len };
	archive_base_name(name, lsn);
	rc = archive_put(t, name, iov, 2, why, whylen);
	archive_zstd_free(z);
	free(buf);
	return rc;
}

/* buf as the file at path: a temporary file beside it, renamed over it */
static int
file_write(const char *path, const void *buf, size_t len, char *why, size_t whylen)
{
	char tmp[4096], dir[4096];
	const char *slash = strrchr(path, '/');
	size_t done = 0;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >= (int)sizeof(tmp))
		return archive_fail(why, whylen, "base %s: path too long", path);
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
			path);
	fd = mkstemp(tmp);
	if (fd < 0)
		return archive_fail(why, whylen, "base %s: creating %s: %s", path, tmp,
			strerror(errno));
	while (done < len) {
		ssize_t w = write(fd, (const uint8_t *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		done += (size_t)w;
	}
	if (fchmod(fd, 0644) != 0 || fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto fail;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return archive_fail(why, whylen, "base %s: fsync of %s: %s", path, dir,
			strerror(e));
	}
	close(fd);
	return 0;
fail:
	{
		int e = errno;

		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return archive_fail(why, whylen, "base %s: writing: %s", path,
			e != 0 ? strerror(e) : "short write");
	}
}

int
archive_get_base(struct archive_target *t, uint64_t max_lsn, const char *path,
		uint64_t *lsn, char *why, size_t whylen)
{
	struct archive_listing l;
	const struct archive_object *o = NULL;
	struct archive_hdr h;
	const void *raw;
	void *buf = NULL, *owned = NULL;
	size_t len;
	char what[700];
	int rc;

	if (archive_list_names(t, &l, why, whylen) != 0)
		return -1;
	for (size_t i = l.n_segments; i < l.n_segments + l.n_bases; i++)
		if (l.obj[i].first_lsn <= max_lsn)
			o = &l.obj[i];		/* by LSN: the last is the newest */
	if (o == NULL) {
		archive_listing_free(&l);
		return 0;
	}
	snprintf(what, sizeof(what), "archive %s: %s", t->url, o->name);
	rc = t->ops->get(t, o->name, ARCHIVE_HDR_SIZE + ARCHIVE_BODY_MAX, &buf, &len,
		why, whylen);
	if (rc > 0)
		rc = archive_fail(why, whylen, "%s: gone while read (pruned?)", what);
	if (rc == 0)
		rc = archive_object_parse(buf, len, ARCHIVE_BASE, t->uuid, o, what, &h,
			&raw, &owned, why, whylen);
	if (rc == 0)
		rc = file_write(path, raw, (size_t)h.raw_len, why, whylen);
	if (rc == 0)
		*lsn = o->first_lsn;
	free(owned);
	free(buf);
	archive_listing_free(&l);
	return rc == 0 ? 1 : -1;
}
