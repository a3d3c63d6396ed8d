/* SPDX-License-Identifier: BSD-3-Clause */
/* mr.h -- a local registered memory region */
#ifndef RPMA_MR_H
#define RPMA_MR_H

#include <stdatomic.h>
#include <stdint.h>

#include "rpma.h"

struct rpma_mr_local {
	struct rpma_peer *peer;
	char *ptr;
	size_t size;
	int usage;
	uint64_t key;		/* what a remote side names it by */
	uint64_t raddr;		/* the address remote sides use for ptr[0] */
	struct rpma_ext_mem *mem;	/* persistence backend, or NULL */
	/* operations that may still touch the memory: dereg refuses while > 0 */
	atomic_long inflight;
	void *prov_handle;	/* struct fid_mr * or struct ibv_mr * */
	void *prov_desc;	/* fi_mr_desc() on ofi */
};

static inline void
rpma_mr_hold(const struct rpma_mr_local *mr)
{
	if (mr)
		atomic_fetch_add_explicit(&((struct rpma_mr_local *)mr)->inflight,
			1, memory_order_relaxed);
}

static inline void
rpma_mr_release(const struct rpma_mr_local *mr)
{
	if (mr)
		atomic_fetch_sub_explicit(&((struct rpma_mr_local *)mr)->inflight,
			1, memory_order_release);
}

/* make [ptr, ptr + len) of mr persistent, by its backend or a cache flush */
int rpma_mr_persist(struct rpma_mr_local *mr, char *ptr, size_t len);
/*
 * The same in two halves, so that several ranges share one barrier: each
 * range written back, then one rpma_mr_sync (of each region's backend)
 */
int rpma_mr_write_back(struct rpma_mr_local *mr, char *ptr, size_t len);
int rpma_mr_sync(struct rpma_mr_local *mr);

#endif
