/* SPDX-License-Identifier: BSD-3-Clause */
/* mem.c -- rpma_ext_mem: argument checks and dispatch to a backend */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "log.h"
#include "mem.h"

#define KNOWN_FLAGS (RPMA_EXT_MEM_CREATE | RPMA_EXT_MEM_EVICTION_NOISE)
#define ZERO_CHUNK ((size_t)1 << 20)	/* bytes a write of a new file's zeros */

bool
rpma_mem_fd_is_durable(int fd)
{
	struct statfs st;

	if (fstatfs(fd, &st) != 0)
		return false;
	return st.f_type != TMPFS_MAGIC && st.f_type != RAMFS_MAGIC;
}

int
rpma_mem_file_open(const char *path, unsigned flags, bool *created)
{
	int fd;

	*created = false;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && (flags & RPMA_EXT_MEM_CREATE)) {
		/* O_EXCL: only a file this call made is this call's to remove */
		fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			*created = true;
		else if (errno == EEXIST)
			/* made meanwhile, or a dangling symbolic link (O_EXCL
			 * does not follow it): opened, not removed on failure */
			fd = open(path, O_RDWR | O_CLOEXEC | O_CREAT, 0600);
	}
	if (fd < 0)
		return rpma_fail(RPMA_E_INVAL, "cannot open %s: %s", path,
			strerror(errno));
	return fd;
}

static int
extend(int fd, const char *path, size_t from, size_t to)
{
	const size_t chunk = ZERO_CHUNK;
	bool in_memory = !rpma_mem_fd_is_durable(fd);
	char *zeros;
	size_t off;

	/*
	 * Reserve first: contiguous blocks, and ENOSPC before a byte is
	 * written.  KEEP_SIZE leaves the size where the zeros have reached,
	 * so a creation killed half-way is finished by the next one.  A
	 * filesystem that cannot reserve gets its blocks from the writes.
	 * Memory (tmpfs) has no unwritten state: its reserved pages are
	 * zeroed pages, and writing them again would only cost the time.
	 */
	if (fallocate(fd, in_memory ? 0 : FALLOC_FL_KEEP_SIZE, (off_t)from,
			(off_t)(to - from)) == 0) {
		if (in_memory)
			return 0;
	} else if (errno != EOPNOTSUPP && errno != ENOSYS) {
		return rpma_fail(RPMA_E_PROVIDER, "cannot allocate %zu bytes for %s: %s",
			to - from, path, strerror(errno));
	}
	zeros = calloc(1, chunk);
	if (zeros == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a buffer to write %s",
			path);
	/*
	 * Blocks only reserved are unwritten extents (ext4, XFS): the first
	 * write to each converts it, and that conversion is a journal commit
	 * inside the fdatasync of every append until the ring has lapped.
	 * Written once here, the log's appends overwrite written blocks.
	 */
	for (off = from; off < to;) {
		size_t len = to - off < chunk ? to - off : chunk;
		ssize_t n = pwrite(fd, zeros, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : ENOSPC;

			free(zeros);
			return rpma_fail(RPMA_E_PROVIDER, "cannot write %s at byte %zu "
				"of %zu: %s", path, off, to, strerror(e));
		}
		off += (size_t)n;
	}
	free(zeros);
	if (fdatasync(fd) != 0)
		return rpma_fail(RPMA_E_PROVIDER, "cannot write %s: fdatasync failed: %s",
			path, strerror(errno));
	return 0;
}

int
rpma_mem_file_extend(int fd, const char *path, size_t from, size_t to)
{
	int ret = extend(fd, path, from, to);

	/* the file system's reason, where the caller may only say "failed" */
	if (ret)
		RPMA_LOG_ERROR("%s", rpma_ext_errormsg());
	return ret;
}

void
rpma_mem_file_undo(int fd, const char *path, bool created, size_t size)
{
	if (created)
		(void) unlink(path);
	else if (ftruncate(fd, (off_t)size) != 0)
		RPMA_LOG_WARNING("%s: cannot cut it back to its %zu bytes: %s",
			path, size, strerror(errno));
}

int
rpma_ext_mem_open(enum rpma_ext_mem_backend backend, const char *path,
		size_t size, unsigned flags, struct rpma_ext_mem **mem_ptr)
{
	struct rpma_ext_mem *mem;
	int ret;

	if (path == NULL || mem_ptr == NULL)
		return rpma_fail(RPMA_E_INVAL, "path or mem_ptr is NULL");
	if (flags & ~KNOWN_FLAGS)
		return rpma_fail(RPMA_E_INVAL, "unknown flags 0x%x", flags & ~KNOWN_FLAGS);
	if ((flags & RPMA_EXT_MEM_EVICTION_NOISE) && backend != RPMA_EXT_MEM_CRASH)
		return rpma_fail(RPMA_E_INVAL, "eviction noise is only for the crash backend");

	if (backend != RPMA_EXT_MEM_PMEM && backend != RPMA_EXT_MEM_FILE &&
	    backend != RPMA_EXT_MEM_CRASH)
		return rpma_fail(RPMA_E_INVAL, "unknown backend %d", (int)backend);

	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	mem = calloc(1, sizeof(*mem));
	if (mem == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a memory object");
	mem->backend = backend;

	switch (backend) {
	case RPMA_EXT_MEM_PMEM:
		ret = rpma_mem_open_pmem(mem, path, size, flags);
		break;
	default:
		ret = rpma_mem_open_file(mem, path, size, flags);
		break;
	}
	if (ret) {
		free(mem);
		return ret;
	}
	*mem_ptr = mem;
	return 0;
}

int
rpma_ext_mem_close(struct rpma_ext_mem **mem_ptr)
{
	if (mem_ptr == NULL)
		return RPMA_E_INVAL;
	if (*mem_ptr == NULL)
		return 0;
	if (atomic_load(&(*mem_ptr)->registrations) != 0)
		return rpma_fail(RPMA_E_INVAL,
			"memory is still registered %d time(s): deregister it first",
			atomic_load(&(*mem_ptr)->registrations));
	(*mem_ptr)->ops->close(*mem_ptr);
	free(*mem_ptr);
	*mem_ptr = NULL;
	return 0;
}

int
rpma_ext_mem_get_ptr(const struct rpma_ext_mem *mem, void **ptr)
{
	if (mem == NULL || ptr == NULL)
		return RPMA_E_INVAL;
	*ptr = mem->addr;
	return 0;
}

int
rpma_ext_mem_get_size(const struct rpma_ext_mem *mem, size_t *size)
{
	if (mem == NULL || size == NULL)
		return RPMA_E_INVAL;
	*size = mem->size;
	return 0;
}

int
rpma_ext_mem_get_backend(const struct rpma_ext_mem *mem,
		enum rpma_ext_mem_backend *backend)
{
	if (mem == NULL || backend == NULL)
		return RPMA_E_INVAL;
	*backend = mem->backend;
	return 0;
}

int
rpma_ext_mem_is_durable(const struct rpma_ext_mem *mem, bool *durable)
{
	if (mem == NULL || durable == NULL)
		return RPMA_E_INVAL;
	*durable = mem->durable;
	return 0;
}

int
rpma_ext_mem_persist(struct rpma_ext_mem *mem, size_t offset, size_t len)
{
	if (mem == NULL)
		return RPMA_E_INVAL;
	if (offset > mem->size || len > mem->size - offset)
		return rpma_fail(RPMA_E_INVAL,
			"persist range [%zu, +%zu) is outside the %zu-byte region",
			offset, len, mem->size);
	if (len == 0)
		return 0;
	atomic_fetch_add_explicit(&mem->ranges, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&mem->barriers, 1, memory_order_relaxed);
	return mem->ops->persist(mem, mem->addr + offset, len);
}

int
rpma_mem_write_back(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	if (len == 0)
		return 0;
	atomic_fetch_add_explicit(&mem->ranges, 1, memory_order_relaxed);
	if (mem->ops->write_back)
		return mem->ops->write_back(mem, addr, len);
	atomic_fetch_add_explicit(&mem->barriers, 1, memory_order_relaxed);
	return mem->ops->persist(mem, addr, len);
}

int
rpma_mem_sync(struct rpma_ext_mem *mem)
{
	if (!mem->ops->sync)
		return 0;
	atomic_fetch_add_explicit(&mem->barriers, 1, memory_order_relaxed);
	return mem->ops->sync(mem);
}

int
rpma_ext_mem_get_stats(const struct rpma_ext_mem *mem,
		struct rpma_ext_mem_stats *stats)
{
	if (mem == NULL || stats == NULL)
		return RPMA_E_INVAL;
	memset(stats, 0, sizeof(*stats));
	stats->ranges = atomic_load_explicit(&((struct rpma_ext_mem *)mem)->ranges,
		memory_order_relaxed);
	stats->barriers = atomic_load_explicit(&((struct rpma_ext_mem *)mem)->barriers,
		memory_order_relaxed);
	return 0;
}

int
rpma_ext_mem_memcpy(struct rpma_ext_mem *mem, size_t offset, const void *src,
		size_t len)
{
	if (mem == NULL)
		return RPMA_E_INVAL;
	if (offset > mem->size || len > mem->size - offset)
		return rpma_fail(RPMA_E_INVAL,
			"memcpy range [%zu, +%zu) is outside the %zu-byte region",
			offset, len, mem->size);
	if (len == 0)
		return 0;
	if (src == NULL)
		return RPMA_E_INVAL;
	mem->ops->memcpy(mem, mem->addr + offset, src, len);
	return 0;
}

int
rpma_ext_mem_get_health(const struct rpma_ext_mem *mem,
		struct rpma_ext_mem_health *health)
{
	if (mem == NULL || health == NULL)
		return RPMA_E_INVAL;
	memcpy(health, &mem->health, sizeof(*health));
	return 0;
}

size_t
rpma_mem_badblock_overlap(size_t offset, size_t length, size_t map_len)
{
	if (offset >= map_len)
		return 0;
	return length < map_len - offset ? length : map_len - offset;
}
