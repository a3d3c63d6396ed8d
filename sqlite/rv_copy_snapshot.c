/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_copy_snapshot.c -- a consistent copy of a replica's copy (rv_copy.h,
 * rv_copy_snapshot): what repld's archiver publishes as a base.
 *
 * The file is opened anew and locked the way an SQLite reader locks it
 * (a read lock of PENDING, then of the SHARED bytes, then PENDING let
 * go), as an open file description lock, which conflicts with the copy's
 * own EXCLUSIVE lock although both are this process's: while it is held
 * the copy writes nothing, and the LSN the copy set under its last
 * EXCLUSIVE lock is the file's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rv_apply.h"
#include "rv_copy.h"
#include "rv_copy_internal.h"

#define COPY_CHUNK	(8u << 20)	/* bytes per copy_file_range or read */

static int
read_lock(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start,
		.l_len = len };

	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* SHARED, as a reader takes it; false when wait_ms passed first */
static bool
lock_shared(struct rv_copy *c, int fd, int wait_ms)
{
	uint64_t until = rv_copy_now_ms() + (uint64_t)wait_ms;

	for (;;) {
		if (read_lock(fd, F_RDLCK, LOCK_PENDING, 1) == 0) {
			bool got = read_lock(fd, F_RDLCK, LOCK_SHARED, LOCK_SHARED_LEN) == 0;

			(void)read_lock(fd, F_UNLCK, LOCK_PENDING, 1);
			if (got)
				return true;
		}
		if (atomic_load(&c->stop) || rv_copy_now_ms() >= until)
			return false;
		rv_copy_sleep_ms(1);
	}
}

/* size bytes of in into out: a reflink, else copy_file_range, else read */
static int
copy_bytes(int in, int out, uint64_t size)
{
	static char buf[1 << 16];
	uint64_t done = 0;
	off_t off_in = 0, off_out = 0;

	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	while (done < size) {
		size_t want = size - done < COPY_CHUNK ? (size_t)(size - done) : COPY_CHUNK;
		ssize_t n = copy_file_range(in, &off_in, out, &off_out, want, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (uint64_t)n;
	}
	/* a file system without copy_file_range: plain reads and writes */
	while (done < size) {
		size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
		ssize_t n = pread(in, buf, want, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;	/* shorter than fstat said */
			return -1;
		}
		if (rv_write_all(out, buf, (size_t)n, (off_t)done) != 0)
			return -1;
		done += (uint64_t)n;
	}
	return 0;
}

int
rv_copy_snapshot(struct rv_copy *c, const char *dest, int wait_ms,
		uint64_t *lsn, char *why, size_t whylen)
{
	struct stat st;
	int in, out = -1, ret = -1;

	*lsn = 0;
	if ((in = open(c->path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "%s: %s", c->path, strerror(errno));
		return -1;
	}
	if (!lock_shared(c, in, wait_ms)) {
		close(in);
		return 0;
	}
	if ((*lsn = atomic_load(&c->file_lsn)) == 0) {
		close(in);		/* the lock goes with the descriptor */
		return 0;
	}
	if (fstat(in, &st) != 0) {
		snprintf(why, whylen, "%s: %s", c->path, strerror(errno));
		goto out;
	}
	if ((out = open(dest, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0) {
		snprintf(why, whylen, "%s: %s", dest, strerror(errno));
		goto out;
	}
	if (copy_bytes(in, out, (uint64_t)st.st_size) != 0) {
		snprintf(why, whylen, "%s into %s: %s", c->path, dest, strerror(errno));
		goto out;
	}
	ret = 1;
out:
	if (out >= 0)
		close(out);
	close(in);
	if (ret != 1) {
		(void)unlink(dest);
		*lsn = 0;
	}
	return ret;
}
