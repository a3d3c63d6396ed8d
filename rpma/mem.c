/* SPDX-License-Identifier: BSD-3-Clause */
/* mem.c -- rpma_ext_mem: argument checks and dispatch to a backend */
#include "config.h"

#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "mem.h"

#define KNOWN_FLAGS (RPMA_EXT_MEM_CREATE | RPMA_EXT_MEM_EVICTION_NOISE)

bool
rpma_mem_fd_is_durable(int fd)
{
	struct statfs st;

	if (fstatfs(fd, &st) != 0)
		return false;
	return st.f_type != TMPFS_MAGIC && st.f_type != RAMFS_MAGIC;
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
