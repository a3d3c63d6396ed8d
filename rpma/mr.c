/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.c -- rpma_mr_local: registration checks, descriptors, persistence.
 *
 * A region's descriptor is format 0 on verbs (librpma peers read it) and
 * format 1 on ofi (64-bit keys).
 */
#include "config.h"

#include <stdlib.h>

#include "descriptor.h"
#include "errormsg.h"
#include "fault_injection.h"
#include "mem.h"
#include "mr.h"
#include "peer.h"

#define USAGE_ALL 0xFF

static int
mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_ext_mem *mem, struct rpma_mr_local **mr_ptr)
{
	struct rpma_mr_local *mr;
	int ret;

	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a region");
	mr->peer = peer;
	mr->ptr = ptr;
	mr->size = size;
	mr->usage = usage;
	mr->mem = mem;
	atomic_init(&mr->inflight, 0);

	ret = peer->prov->mr_reg(peer, mr);
	if (ret)
		goto err_free;
	ret = rpma_peer_mr_insert(peer, mr);
	if (ret)
		goto err_dereg;
	if (mem)
		atomic_fetch_add(&mem->registrations, 1);
	*mr_ptr = mr;
	return 0;

err_dereg:
	peer->prov->mr_dereg(mr);
err_free:
	free(mr);
	return ret;
}

static int
usage_valid(int usage)
{
	return usage > 0 && (usage & ~USAGE_ALL) == 0;
}

int
rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr)
{
	if (peer == NULL || ptr == NULL || mr_ptr == NULL || size == 0)
		return rpma_fail(RPMA_E_INVAL, "peer, ptr or mr_ptr is NULL or size is 0");
	if (!usage_valid(usage))
		return rpma_fail(RPMA_E_INVAL, "usage 0x%x is not a set of RPMA_MR_USAGE_* bits",
			(unsigned)usage);
	return mr_reg(peer, ptr, size, usage, NULL, mr_ptr);
}

int
rpma_ext_mr_reg_mem(struct rpma_peer *peer, struct rpma_ext_mem *mem,
		int usage, struct rpma_mr_local **mr_ptr)
{
	if (peer == NULL || mem == NULL || mr_ptr == NULL)
		return rpma_fail(RPMA_E_INVAL, "peer, mem or mr_ptr is NULL");
	if (!usage_valid(usage))
		return rpma_fail(RPMA_E_INVAL, "usage 0x%x is not a set of RPMA_MR_USAGE_* bits",
			(unsigned)usage);
	if (!mem->registrable && peer->prov->transport == RPMA_EXT_TRANSPORT_VERBS)
		return rpma_fail(RPMA_E_NOSUPP,
			"a file mapping cannot be pinned for RDMA: use device-dax or the file backend");
	return mr_reg(peer, mem->addr, mem->size, usage, mem, mr_ptr);
}

int
rpma_mr_dereg(struct rpma_mr_local **mr_ptr)
{
	struct rpma_mr_local *mr;
	long inflight;
	int ret;

	if (mr_ptr == NULL)
		return RPMA_E_INVAL;
	mr = *mr_ptr;
	if (mr == NULL)
		return 0;
	/* never let a transport write into memory the caller will reuse */
	inflight = atomic_load_explicit(&mr->inflight, memory_order_acquire);
	if (inflight != 0)
		return rpma_fail(RPMA_E_AGAIN,
			"region has %ld operations in flight; complete them first",
			inflight);
	rpma_peer_mr_remove(mr->peer, mr);
	ret = mr->peer->prov->mr_dereg(mr);
	if (ret) {
		rpma_peer_mr_insert(mr->peer, mr);
		return ret;
	}
	if (mr->mem)
		atomic_fetch_sub(&mr->mem->registrations, 1);
	free(mr);
	*mr_ptr = NULL;
	return 0;
}

static enum rpma_mr_desc_format
desc_format(const struct rpma_mr_local *mr)
{
	return mr->peer->prov->transport == RPMA_EXT_TRANSPORT_VERBS ?
		RPMA_MR_DESC_FORMAT_0 : RPMA_MR_DESC_FORMAT_1;
}

int
rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc)
{
	struct rpma_mr_desc d;

	if (mr == NULL || desc == NULL)
		return RPMA_E_INVAL;
	d.raddr = mr->raddr;
	d.size = mr->size;
	d.key = mr->key;
	d.usage = mr->usage;
	d.transport = mr->peer->prov->transport;
	return rpma_mr_desc_encode(&d, desc_format(mr), desc);
}

int
rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size)
{
	if (mr == NULL || desc_size == NULL)
		return RPMA_E_INVAL;
	*desc_size = rpma_mr_desc_size(desc_format(mr));
	return 0;
}

int
rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr)
{
	if (mr == NULL || ptr == NULL)
		return RPMA_E_INVAL;
	*ptr = mr->ptr;
	return 0;
}

int
rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size)
{
	if (mr == NULL || size == NULL)
		return RPMA_E_INVAL;
	*size = mr->size;
	return 0;
}

int
rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags)
{
	if (mr == NULL)
		return RPMA_E_INVAL;
	if (offset > mr->size || len > mr->size - offset || len > UINT32_MAX)
		return rpma_fail(RPMA_E_INVAL, "advice range [%zu, +%zu) is outside the region",
			offset, len);
	/* prefetching for writes needs a region this side may write into */
	if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    !(mr->usage & (RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_RECV)))
		return rpma_fail(RPMA_E_INVAL, "the region's usage allows no writes to prefetch for");
	if (mr->peer->prov->mr_advise == NULL)
		return rpma_fail(RPMA_E_NOSUPP, "the %s provider has no memory advice",
			mr->peer->prov->name);
	return mr->peer->prov->mr_advise(mr, offset, len, advice, flags);
}

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* the CPU's way to push [ptr, ptr + len) out of its caches */
static void
cache_flush(const char *ptr, size_t len)
{
#if defined(__x86_64__)
	uintptr_t p = (uintptr_t)ptr & ~(uintptr_t)63;

	for (; p < (uintptr_t)ptr + len; p += 64)
		_mm_clflush((const void *)p);
	_mm_sfence();
#else
	__builtin___clear_cache((char *)ptr, (char *)ptr + len);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

int
rpma_mr_write_back(struct rpma_mr_local *mr, char *ptr, size_t len)
{
	if (mr->mem)
		return rpma_mem_write_back(mr->mem, ptr, len);
	cache_flush(ptr, len);
	return 0;
}

int
rpma_mr_sync(struct rpma_mr_local *mr)
{
	return mr->mem ? rpma_mem_sync(mr->mem) : 0;
}

int
rpma_mr_persist(struct rpma_mr_local *mr, char *ptr, size_t len)
{
	if (mr->mem)
		return rpma_ext_mem_persist(mr->mem, (size_t)(ptr - mr->mem->addr), len);
	cache_flush(ptr, len);
	return 0;
}
