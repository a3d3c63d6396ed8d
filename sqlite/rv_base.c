/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_base.c -- a database file's base marker (rv_base.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rv_base.h"

#ifdef RPMA_DEBUG_FAULT_INJECTION
bool rv_base_crash_before_rename;
#endif

static const uint8_t magic[8] = { 'R', 'V', 'B', 'A', 'S', 'E', 0, 1 };

static void
put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int
marker_path(char *out, size_t size, const char *db_path, const char *suffix,
		char *why, size_t whylen)
{
	if (snprintf(out, size, "%s%s%s", db_path, RV_BASE_SUFFIX, suffix) >=
	    (int)size) {
		snprintf(why, whylen, "%.200s: the path is too long", db_path);
		return -1;
	}
	return 0;
}

int
rv_base_read(const char *db_path, const uint8_t db_uuid[16], uint64_t *lsn,
		char *why, size_t whylen)
{
	uint8_t b[RV_BASE_SIZE + 1];
	char path[4200];
	ssize_t n;
	int fd;

	if (marker_path(path, sizeof(path), db_path, "", why, whylen) != 0)
		return -1;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "%.256s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, b, sizeof(b));
	close(fd);
	if (n != RV_BASE_SIZE || memcmp(b, magic, sizeof(magic)) != 0) {
		snprintf(why, whylen, "%.256s: not a base marker (%s)", path,
			n < 0 ? strerror(errno) : n != RV_BASE_SIZE ?
			"its size" : "its magic");
		return -1;
	}
	for (int i = 40; i < RV_BASE_SIZE; i++)
		if (b[i] != 0) {
			snprintf(why, whylen, "%.256s: a base marker with reserved "
				"byte %d set", path, i);
			return -1;
		}
	if (get64(b + 24) == 0 || get64(b + 24) != ~get64(b + 32)) {
		snprintf(why, whylen, "%.256s: a damaged base marker (its LSN)", path);
		return -1;
	}
	if (memcmp(b + 8, db_uuid, 16) != 0) {
		snprintf(why, whylen, "%.256s: the base marker of another cluster's "
			"database", path);
		return -1;
	}
	*lsn = get64(b + 24);
	return 1;
}

static int
sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, ret = -1;

	if (copy == NULL)
		return -1;
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		ret = fsync(fd);
		close(fd);
	}
	free(copy);
	return ret;
}

int
rv_base_write(const char *db_path, int db_fd, const uint8_t db_uuid[16],
		uint64_t lsn, char *why, size_t whylen)
{
	uint8_t b[RV_BASE_SIZE] = { 0 };
	char path[4200], tmp[4200];
	int fd;

	if (lsn == 0 || marker_path(path, sizeof(path), db_path, "", why, whylen) != 0 ||
	    marker_path(tmp, sizeof(tmp), db_path, ".tmp", why, whylen) != 0) {
		if (lsn == 0)
			snprintf(why, whylen, "%.256s: a base at LSN 0", db_path);
		return -1;
	}
	/* the file first: the marker must never say more than it holds */
	if (fdatasync(db_fd) != 0) {
		snprintf(why, whylen, "%.256s: %s", db_path, strerror(errno));
		return -1;
	}
	memcpy(b, magic, sizeof(magic));
	memcpy(b + 8, db_uuid, 16);
	put64(b + 24, lsn);
	put64(b + 32, ~lsn);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		snprintf(why, whylen, "%.256s: %s", tmp, strerror(errno));
		return -1;
	}
	if (write(fd, b, sizeof(b)) != (ssize_t)sizeof(b) || fsync(fd) != 0) {
		snprintf(why, whylen, "%.256s: %s", tmp, strerror(errno ? errno : EIO));
		close(fd);
		unlink(tmp);
		return -1;
	}
	close(fd);
#ifdef RPMA_DEBUG_FAULT_INJECTION
	if (rv_base_crash_before_rename)
		raise(SIGKILL);
#endif
	if (rename(tmp, path) != 0 || sync_dir_of(path) != 0) {
		snprintf(why, whylen, "%.256s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int
rv_base_remove(const char *db_path, char *why, size_t whylen)
{
	char path[4200];

	if (marker_path(path, sizeof(path), db_path, "", why, whylen) != 0)
		return -1;
	if (unlink(path) != 0 && errno != ENOENT) {
		snprintf(why, whylen, "%.256s: %s", path, strerror(errno));
		return -1;
	}
	if (sync_dir_of(path) != 0) {
		snprintf(why, whylen, "%.256s: syncing its directory: %s", path,
			strerror(errno));
		return -1;
	}
	return 0;
}
