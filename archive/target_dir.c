/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_dir.c -- the archive in a directory of the file system:
 *
 *   DIR/cluster-uuid      the cluster's uuid (target.c)
 *   DIR/seg/, DIR/base/   the segments and bases (names.c)
 *
 * An object is written whole to ".tmp-PID-N-NAME" beside its name, made
 * durable (fsync), renamed over its name and its directory made durable,
 * so a crash leaves either nothing or the whole object under the name;
 * at most a temporary file, which lists ignore.  Opening removes the
 * temporary files no live process on this host is writing (its PID is
 * gone, or it is older than a day, or its name carries no PID).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "archive_int.h"

#define TMP_MAX_AGE_S (24 * 3600)

struct dir_target {
	char root[512];
};

static atomic_uint tmp_seq;

static const char *const subdirs[] = { "seg", "base" };

static struct dir_target *
dir_of(struct archive_target *t)
{
	return t->impl;
}

/* root/name, or -1 when it does not fit */
static int
path_of(struct archive_target *t, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s", dir_of(t)->root, name);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
fsync_dir(const char *path, const char *url, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) != 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return archive_fail(why, whylen, "archive %s: fsync of directory %s: %s",
			url, path, strerror(e));
	}
	close(fd);
	return 0;
}

/* a temporary file whose writer is gone: ".tmp-PID-..." of no process */
static bool
tmp_is_stale(int dfd, const char *name)
{
	struct stat st;
	char *end;
	long pid;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return false;
	if (time(NULL) - st.st_mtime > TMP_MAX_AGE_S)
		return true;
	errno = 0;
	pid = strtol(name + strlen(ARCHIVE_TMP_PREFIX), &end, 10);
	if (errno != 0 || end == name + strlen(ARCHIVE_TMP_PREFIX) || *end != '-' ||
			pid <= 0 || pid > INT32_MAX)
		return true;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static int
clean_tmp(const char *dirpath, const char *url, char *why, size_t whylen)
{
	DIR *d = opendir(dirpath);
	struct dirent *e;
	bool removed = false;

	if (d == NULL)
		return archive_fail(why, whylen, "archive %s: %s: %s", url, dirpath,
			strerror(errno));
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, ARCHIVE_TMP_PREFIX, strlen(ARCHIVE_TMP_PREFIX)) != 0)
			continue;
		if (!tmp_is_stale(dirfd(d), e->d_name))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
			int err = errno;

			closedir(d);
			return archive_fail(why, whylen, "archive %s: removing %s/%s: %s",
				url, dirpath, e->d_name, strerror(err));
		}
		removed = true;
	}
	closedir(d);
	return removed ? fsync_dir(dirpath, url, why, whylen) : 0;
}

static int
dir_put(struct archive_target *t, const char *name, const struct iovec *iov,
		int iovcnt, char *why, size_t whylen)
{
	char path[1024], tmp[1100], dir[1024];
	const char *base;
	int fd;
	size_t done = 0, total = 0;

	if (path_of(t, name, path, sizeof(path)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: path too long", t->url,
			name);
	base = strrchr(path, '/') + 1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - path - 1), path);
	snprintf(tmp, sizeof(tmp), "%s/%s%ld-%u-%s", dir, ARCHIVE_TMP_PREFIX,
		(long)getpid(), atomic_fetch_add(&tmp_seq, 1), base);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return archive_fail(why, whylen, "archive %s: %s: creating %s: %s", t->url,
			name, tmp, strerror(errno));
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	/* writev, on from wherever a short write stopped */
	while (done < total) {
		struct iovec rest[8];
		int n = 0;
		size_t skip = done;
		ssize_t w;

		for (int i = 0; i < iovcnt && n < 8; i++) {
			if (skip >= iov[i].iov_len) {
				skip -= iov[i].iov_len;
				continue;
			}
			rest[n].iov_base = (char *)iov[i].iov_base + skip;
			rest[n].iov_len = iov[i].iov_len - skip;
			skip = 0;
			n++;
		}
		w = writev(fd, rest, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		done += (size_t)w;
	}
	if (fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto fail;
	return fsync_dir(dir, t->url, why, whylen);
fail:
	{
		int e = errno;

		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return archive_fail(why, whylen, "archive %s: %s: writing: %s", t->url,
			name, e != 0 ? strerror(e) : "short write");
	}
}

static int
dir_get(struct archive_target *t, const char *name, uint64_t max, void **buf,
		size_t *len, char *why, size_t whylen)
{
	char path[1024], what[1200];

	*buf = NULL;
	*len = 0;
	if (path_of(t, name, path, sizeof(path)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: path too long", t->url,
			name);
	snprintf(what, sizeof(what), "archive %s: %s", t->url, name);
	return archive_file_read(path, what, max, false, buf, len, why, whylen);
}

static int
dir_head(struct archive_target *t, const char *name, void *buf, size_t len,
		size_t *got, uint64_t *size, char *why, size_t whylen)
{
	char path[1024];
	struct stat st;
	ssize_t r;
	int fd;

	if (path_of(t, name, path, sizeof(path)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: path too long", t->url,
			name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0)
		goto fail;
	do
		r = pread(fd, buf, len, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		goto fail;
	close(fd);
	*got = (size_t)r;
	*size = (uint64_t)st.st_size;
	return 0;
fail:
	{
		int e = errno;

		if (fd >= 0)
			close(fd);
		return archive_fail(why, whylen, "archive %s: %s: reading: %s", t->url,
			name, strerror(e));
	}
}

static int
dir_list(struct archive_target *t, char ***names, size_t *n, char *why, size_t whylen)
{
	char **v = NULL;
	size_t len = 0, cap = 0;

	for (size_t s = 0; s < sizeof(subdirs) / sizeof(subdirs[0]); s++) {
		char path[1024];
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s/%s", dir_of(t)->root, subdirs[s]);
		d = opendir(path);
		if (d == NULL) {
			archive_fail(why, whylen, "archive %s: %s: %s", t->url, path,
				strerror(errno));
			goto fail;
		}
		while ((e = readdir(d)) != NULL) {
			char name[300];

			if (e->d_name[0] == '.')	/* ".", "..", ".tmp-*" */
				continue;
			snprintf(name, sizeof(name), "%s/%s", subdirs[s], e->d_name);
			if (len == cap) {
				char **nv = realloc(v, (cap ? cap * 2 : 64) * sizeof(*v));

				if (nv == NULL) {
					closedir(d);
					archive_fail(why, whylen, "archive %s: out of memory",
						t->url);
					goto fail;
				}
				v = nv;
				cap = cap ? cap * 2 : 64;
			}
			v[len] = strdup(name);
			if (v[len] == NULL) {
				closedir(d);
				archive_fail(why, whylen, "archive %s: out of memory", t->url);
				goto fail;
			}
			len++;
		}
		closedir(d);
	}
	*names = v;
	*n = len;
	return 0;
fail:
	for (size_t i = 0; i < len; i++)
		free(v[i]);
	free(v);
	return -1;
}

static int
dir_del(struct archive_target *t, const char *name, char *why, size_t whylen)
{
	char path[1024];
	char *slash;

	if (path_of(t, name, path, sizeof(path)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: path too long", t->url,
			name);
	if (unlink(path) != 0) {
		if (errno == ENOENT)
			return 0;
		return archive_fail(why, whylen, "archive %s: %s: deleting: %s", t->url,
			name, strerror(errno));
	}
	slash = strrchr(path, '/');
	*slash = '\0';
	return fsync_dir(path, t->url, why, whylen);
}

static void
dir_close(struct archive_target *t)
{
	free(t->impl);
	t->impl = NULL;
}

static const struct archive_target_ops dir_ops = {
	.put = dir_put,
	.get = dir_get,
	.head = dir_head,
	.list = dir_list,
	.del = dir_del,
	.close = dir_close,
};

/* mkdir path unless it is a directory already; *made when it was made */
static int
mkdir_one(const char *path, bool *made, const char *url, char *why, size_t whylen)
{
	struct stat st;

	*made = false;
	if (mkdir(path, 0755) == 0) {
		*made = true;
		return 0;
	}
	if (errno != EEXIST)
		return archive_fail(why, whylen, "archive %s: making %s: %s", url, path,
			strerror(errno));
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return archive_fail(why, whylen, "archive %s: %s is not a directory", url,
			path);
	return 0;
}

/* a reader's open: the directory is there, and nothing is changed */
static int
dir_there(const char *path, const char *url, char *why, size_t whylen)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return archive_fail(why, whylen, "archive %s: %s: %s", url, path,
			strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return archive_fail(why, whylen, "archive %s: %s is not a directory",
			url, path);
	return 0;
}

int
archive_dir_open(struct archive_target *t, const char *path, bool writer,
		char *why, size_t whylen)
{
	struct dir_target *d;
	char sub[1024], parent[1024];
	bool made, made_sub = false;
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(d->root) - 16)
		return archive_fail(why, whylen, "archive %s: no directory path, or one "
			"too long", t->url);
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return archive_fail(why, whylen, "archive %s: out of memory", t->url);
	memcpy(d->root, path, n);
	d->root[n] = '\0';
	if (!writer) {
		if (dir_there(d->root, t->url, why, whylen) != 0)
			goto fail;
		goto done;
	}
	if (mkdir_one(d->root, &made, t->url, why, whylen) != 0)
		goto fail;
	if (made) {
		const char *slash = strrchr(d->root, '/');

		if (slash == NULL)
			snprintf(parent, sizeof(parent), ".");
		else
			snprintf(parent, sizeof(parent), "%.*s",
				slash == d->root ? 1 : (int)(slash - d->root), d->root);
		if (fsync_dir(parent, t->url, why, whylen) != 0)
			goto fail;
	}
	for (size_t s = 0; s < sizeof(subdirs) / sizeof(subdirs[0]); s++) {
		snprintf(sub, sizeof(sub), "%s/%s", d->root, subdirs[s]);
		if (mkdir_one(sub, &made, t->url, why, whylen) != 0)
			goto fail;
		made_sub |= made;
		if (clean_tmp(sub, t->url, why, whylen) != 0)
			goto fail;
	}
	if (clean_tmp(d->root, t->url, why, whylen) != 0)
		goto fail;
	if (made_sub && fsync_dir(d->root, t->url, why, whylen) != 0)
		goto fail;
done:
	t->impl = d;
	t->ops = &dir_ops;
	return 0;
fail:
	free(d);
	return -1;
}
