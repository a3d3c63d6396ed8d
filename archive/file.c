/* SPDX-License-Identifier: BSD-3-Clause */
/* file.c -- a whole regular file into memory (archive_int.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_int.h"

int
archive_file_read(const char *path, const char *what, uint64_t max, bool grow_fails,
		void **buf, size_t *len, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *p = NULL;
	size_t done = 0, cap;

	*buf = NULL;
	*len = 0;
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0 || fstat(fd, &st) != 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return archive_fail(why, whylen, "%s: not a regular file", what);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return archive_fail(why, whylen, "%s: %" PRIu64 " bytes, more than %"
			PRIu64, what, (uint64_t)st.st_size, max);
	}
	/* one more than its size: whether it grew while read shows */
	cap = (size_t)st.st_size + 1;
	if ((p = malloc(cap)) == NULL) {
		close(fd);
		return archive_fail(why, whylen, "%s: out of memory for %zu bytes",
			what, cap);
	}
	for (;;) {
		ssize_t r = read(fd, p + done, cap - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;	/* cut while read: what there is, which parsing judges */
		done += (size_t)r;
		if (done == cap) {
			if (grow_fails) {
				close(fd);
				free(p);
				return archive_fail(why, whylen, "%s: grew while read", what);
			}
			done--;	/* what it held when looked at */
			break;
		}
	}
	close(fd);
	*buf = p;
	*len = done;
	return 0;
fail:
	{
		int e = errno;

		if (fd >= 0)
			close(fd);
		free(p);
		return archive_fail(why, whylen, "%s: reading: %s", what, strerror(e));
	}
}
