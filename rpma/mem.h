/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem.h -- persistence backends behind one interface (rpma_ext_mem_*).
 * The generic part (mem.c) checks arguments and dispatches; each backend
 * lives in its own file and fills the ops at open.
 */
#ifndef RPMA_MEM_H
#define RPMA_MEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "rpma.h"

struct rpma_ext_mem;

struct rpma_mem_ops {
	/* make [addr, addr + len) durable; addr lies inside the region */
	int (*persist)(struct rpma_ext_mem *mem, char *addr, size_t len);
	/*
	 * Optional, for a backend whose persist ends in a costly barrier (a
	 * file's fdatasync): persist without the barrier, then the barrier
	 * once for several ranges.  Without them, write_back is persist.
	 */
	int (*write_back)(struct rpma_ext_mem *mem, char *addr, size_t len);
	int (*sync)(struct rpma_ext_mem *mem);
	/* copy into [dst, dst + len) without making it durable; hot path:
	 * no allocation, syscall or lock */
	void (*memcpy)(struct rpma_ext_mem *mem, char *dst, const void *src,
			size_t len);
	void (*close)(struct rpma_ext_mem *mem);
};

struct rpma_ext_mem {
	const struct rpma_mem_ops *ops;
	enum rpma_ext_mem_backend backend;
	char *addr;
	size_t size;
	bool durable;
	/* device-dax or anonymous memory: safe to pin for RDMA */
	bool registrable;
	void *backend_data;
	/* regions registered on it: close refuses while any remains */
	atomic_int registrations;
	/* read once at open (PMEM only); zero: nothing known */
	struct rpma_ext_mem_health health;
	/* rpma_ext_mem_get_stats: relaxed counters, any thread may persist */
	_Atomic uint64_t ranges, barriers;
};

int rpma_mem_open_pmem(struct rpma_ext_mem *mem, const char *path, size_t size,
		unsigned flags);
int rpma_mem_open_file(struct rpma_ext_mem *mem, const char *path, size_t size,
		unsigned flags);

/*
 * persist in two halves, for several ranges under one barrier: each range
 * written back, then one sync; [addr, addr + len) lies inside the region
 */
int rpma_mem_write_back(struct rpma_ext_mem *mem, char *addr, size_t len);
int rpma_mem_sync(struct rpma_ext_mem *mem);

/*
 * Open path read-write; with RPMA_EXT_MEM_CREATE, create it (mode 0600) if
 * it does not exist, and tell whether this call did.  The descriptor, or
 * a negative RPMA_E_* code with the error message set.
 */
int rpma_mem_file_open(const char *path, unsigned flags, bool *created);

/*
 * Extend the regular file fd (path names it in messages) from its size
 * `from` to `to` bytes: reserve the blocks, write zeros over them, and
 * fdatasync, so that every block of a new log is allocated and written
 * before the log is used.  Bytes below `from` are not touched.  0, or a
 * negative RPMA_E_* code with the error message set (the file may then be
 * longer than `from`: rpma_mem_file_undo() cuts it back).
 */
int rpma_mem_file_extend(int fd, const char *path, size_t from, size_t to);

/* a failed open: remove the file it created, or cut it back to size */
void rpma_mem_file_undo(int fd, const char *path, bool created, size_t size);

/* whether the filesystem holding fd keeps data across power loss */
bool rpma_mem_fd_is_durable(int fd);

/* bytes of the bad block [offset, offset + length) inside [0, map_len) */
size_t rpma_mem_badblock_overlap(size_t offset, size_t length, size_t map_len);

#endif
