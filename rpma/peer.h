/* SPDX-License-Identifier: BSD-3-Clause */
/* peer.h -- the generic part of a peer and its table of registered regions */
#ifndef RPMA_PEER_H
#define RPMA_PEER_H

#include <pthread.h>
#include <stdint.h>

#include "provider.h"

struct rpma_mr_local;

struct rpma_peer {
	const struct rpma_provider *prov;
	/*
	 * Registered regions by key, so that a flush request arriving from a
	 * remote side finds the region and its persistence backend.
	 */
	pthread_rwlock_t mrs_lock;
	struct rpma_mr_local **mrs;	/* open addressing, power-of-two size */
	size_t mrs_cap;
	size_t mrs_count;
	/*
	 * Fencing: flush requests carrying an epoch below epoch_floor are
	 * refused.  A request is served under fence_lock's read side, so a
	 * raise (write side) returns only when none of the old epoch is
	 * still being carried out.
	 */
	pthread_rwlock_t fence_lock;
	uint64_t epoch_floor;
};

int rpma_peer_init(struct rpma_peer *peer, const struct rpma_provider *prov);
void rpma_peer_fini(struct rpma_peer *peer);

int rpma_peer_mr_insert(struct rpma_peer *peer, struct rpma_mr_local *mr);
void rpma_peer_mr_remove(struct rpma_peer *peer, struct rpma_mr_local *mr);
/* the region with this key, its in-flight count raised; NULL if none */
struct rpma_mr_local *rpma_peer_mr_get(struct rpma_peer *peer, uint64_t key);
void rpma_peer_mr_put(struct rpma_mr_local *mr);

#endif
