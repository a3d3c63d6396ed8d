/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_file.c -- the memory+file and crash backends.
 *
 * The region lives in memfd memory (shmem: registrable for RDMA); the file
 * holds the durable image.  Open faults the whole region in and loads the
 * file into it, so a restarted process sees exactly what was persisted
 * before and no append pays for a page of its memory.
 *
 * FILE:  persist = pwrite the range to the file, then fdatasync.
 * CRASH: the file (normally in /dev/shm) is mapped and persist copies the
 *        range into it: no syscall, nothing durable across power loss, but a
 *        SIGKILL loses exactly what was not persisted.  With eviction noise,
 *        each persist also copies a few random 64-byte lines, persisted or
 *        not, as a CPU evicting dirty cache lines would.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "errormsg.h"
#include "log.h"
#include "mem.h"

#define LINE 64
#define NOISE_LINES 4

struct file_data {
	int fd;
	atomic_bool no_dsync;	/* pwritev2(RWF_DSYNC) refused: two calls */
	char *shadow;		/* CRASH: the file mapped */
	bool noise;
	atomic_uint_fast64_t rng;
};

static uint64_t
splitmix64(atomic_uint_fast64_t *state)
{
	uint64_t z = atomic_fetch_add(state, 0x9E3779B97F4A7C15ull) +
		0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* the range into the file, not yet durable */
static int
file_write_back(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	struct file_data *fd = mem->backend_data;
	off_t off = addr - mem->addr;

	while (len > 0) {
		ssize_t n = pwrite(fd->fd, addr, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return rpma_fail(RPMA_E_PROVIDER, "persist: write failed: %s",
				strerror(errno));
		}
		addr += n;
		off += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
file_sync(struct rpma_ext_mem *mem)
{
	struct file_data *fd = mem->backend_data;

	if (fdatasync(fd->fd) != 0)
		return rpma_fail(RPMA_E_PROVIDER, "persist: fdatasync failed: %s",
			strerror(errno));
	return 0;
}

/*
 * One range durable: one pwritev2(RWF_DSYNC), the write and its
 * fdatasync in one system call (it makes that range durable, as
 * fdatasync would; nothing calls persist to sync other ranges).  Where
 * the kernel or filesystem refuses the flag: pwrite, then fdatasync.
 */
static int
file_persist(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	struct file_data *fd = mem->backend_data;
	int ret;

#ifdef RWF_DSYNC
	if (len > 0 && !atomic_load_explicit(&fd->no_dsync, memory_order_relaxed)) {
		struct iovec iov = { .iov_base = addr, .iov_len = len };
		ssize_t n;

		do
			n = pwritev2(fd->fd, &iov, 1, addr - mem->addr, RWF_DSYNC);
		while (n < 0 && errno == EINTR);
		if (n >= 0 && (size_t)n == len)
			return 0;
		if (n >= 0) {
			addr += n;	/* a short write: the rest the long way */
			len -= (size_t)n;
		} else if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) {
			atomic_store(&fd->no_dsync, true);
		} else {
			return rpma_fail(RPMA_E_PROVIDER, "persist: write failed: %s",
				strerror(errno));
		}
	}
#endif
	ret = file_write_back(mem, addr, len);
	return ret ? ret : file_sync(mem);
}

static int
crash_persist(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	struct file_data *fd = mem->backend_data;
	size_t off = (size_t)(addr - mem->addr);

	memcpy(fd->shadow + off, addr, len);
	if (fd->noise && mem->size >= LINE) {
		for (int i = 0; i < NOISE_LINES; i++) {
			size_t line = splitmix64(&fd->rng) % (mem->size / LINE);
			memcpy(fd->shadow + line * LINE, mem->addr + line * LINE, LINE);
		}
	}
	return 0;
}

/* the region is plain memory: the image is only touched by persist */
static void
file_memcpy(struct rpma_ext_mem *mem, char *dst, const void *src, size_t len)
{
	(void)mem;
	memcpy(dst, src, len);
}

static void
file_close(struct rpma_ext_mem *mem)
{
	struct file_data *fd = mem->backend_data;

	munmap(mem->addr, mem->size);
	if (fd->shadow)
		munmap(fd->shadow, mem->size);
	close(fd->fd);
	free(fd);
}

static const struct rpma_mem_ops file_ops = {
	.persist = file_persist,
	.write_back = file_write_back,
	.sync = file_sync,
	.memcpy = file_memcpy,
	.close = file_close,
};

/* nothing to wait for: counted where FILE would fdatasync */
static int
crash_sync(struct rpma_ext_mem *mem)
{
	(void)mem;
	return 0;
}

static const struct rpma_mem_ops crash_ops = {
	.persist = crash_persist,
	.write_back = crash_persist,
	.sync = crash_sync,
	.memcpy = file_memcpy,
	.close = file_close,
};

/*
 * Fault every page of the region in now.  A memfd's pages are otherwise
 * allocated and zeroed by the first write to each, on the append path: a
 * new log's first lap took a page fault per 4 KiB record on the primary
 * and on the replica each.  MADV_POPULATE_WRITE (Linux 5.14) says ENOMEM
 * here rather than SIGBUS later; before it, one write per page.
 */
static int
prefault(char *addr, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

#ifdef MADV_POPULATE_WRITE
	if (madvise(addr, size, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate %zu bytes of memory: %s",
			size, strerror(errno));
#endif
	for (size_t off = 0; off < size; off += page)
		((volatile char *)addr)[off] = 0;	/* still all zeros */
	return 0;
}

/* read the durable image into the region */
static int
load(int fd, char *dst, size_t size, const char *path)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = pread(fd, dst + done, size - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return rpma_fail(RPMA_E_PROVIDER, "cannot read %s: %s", path,
				n == 0 ? "unexpected end of file" : strerror(errno));
		done += (size_t)n;
	}
	return 0;
}

static uint64_t
noise_seed(void)
{
	const char *s = getenv("RPMA_CRASH_SEED");
	struct timespec ts;

	if (s != NULL && *s != '\0')
		return strtoull(s, NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
}

int
rpma_mem_open_file(struct rpma_ext_mem *mem, const char *path, size_t size,
		unsigned flags)
{
	bool crash = mem->backend == RPMA_EXT_MEM_CRASH;
	struct file_data *fd;
	struct stat st;
	bool created, touched;
	size_t old_size;	/* the file's size before: what a failure leaves */
	int memfd = -1;
	int ret;

	fd = calloc(1, sizeof(*fd));
	if (fd == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate file backend state");
	fd->fd = rpma_mem_file_open(path, flags, &created);
	if (fd->fd < 0) {
		ret = fd->fd;
		goto err_free;
	}
	touched = created;
	if (fstat(fd->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ret = rpma_fail(RPMA_E_INVAL, "%s is not a regular file", path);
		goto err_close;
	}
	old_size = (size_t)st.st_size;
	if (size == 0)
		size = old_size;
	if (size == 0) {
		ret = rpma_fail(RPMA_E_INVAL, "%s is empty and no size was given", path);
		goto err_undo;
	}
	if (old_size < size) {
		if (!(flags & RPMA_EXT_MEM_CREATE)) {
			ret = rpma_fail(RPMA_E_INVAL, "%s holds %lld bytes, %zu needed",
				path, (long long)st.st_size, size);
			goto err_close;
		}
		touched = true;
		ret = rpma_mem_file_extend(fd->fd, path, old_size, size);
		if (ret)
			goto err_undo;
	}

	memfd = memfd_create("rpma-mem", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)size) != 0) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot create %zu bytes of memory: %s",
			size, strerror(errno));
		goto err_memfd;
	}
	mem->addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (mem->addr == MAP_FAILED) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot map %zu bytes: %s", size,
			strerror(errno));
		goto err_memfd;
	}
	close(memfd);
	memfd = -1;
	mem->size = size;

	/* what the file was extended by is zeros, as the new memory is */
	ret = prefault(mem->addr, size);
	if (ret == 0)
		ret = load(fd->fd, mem->addr, old_size < size ? old_size : size, path);
	if (ret)
		goto err_unmap;

	if (crash) {
		fd->shadow = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				fd->fd, 0);
		if (fd->shadow == MAP_FAILED) {
			fd->shadow = NULL;
			ret = rpma_fail(RPMA_E_PROVIDER, "cannot map %s: %s", path,
				strerror(errno));
			goto err_unmap;
		}
		fd->noise = (flags & RPMA_EXT_MEM_EVICTION_NOISE) != 0;
		atomic_init(&fd->rng, noise_seed());
	}

	mem->ops = crash ? &crash_ops : &file_ops;
	mem->durable = !crash && rpma_mem_fd_is_durable(fd->fd);
	mem->registrable = true;
	mem->backend_data = fd;
	return 0;

err_unmap:
	munmap(mem->addr, size);
	mem->addr = NULL;
err_memfd:
	if (memfd >= 0)
		close(memfd);
err_undo:
	/* a failed open leaves no file it made, and none it extended */
	if (touched)
		rpma_mem_file_undo(fd->fd, path, created, old_size);
err_close:
	close(fd->fd);
err_free:
	free(fd);
	return ret;
}
