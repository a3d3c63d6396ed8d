/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.c -- rpma_peer: the generic part shared by providers, and the table
 * that maps a region's key to the region for flush requests.
 */
#include "config.h"

#include <stdlib.h>

#include "errormsg.h"
#include "mr.h"
#include "peer.h"

#define MRS_INITIAL 64

int
rpma_peer_init(struct rpma_peer *peer, const struct rpma_provider *prov)
{
	peer->prov = prov;
	peer->mrs = calloc(MRS_INITIAL, sizeof(*peer->mrs));
	if (peer->mrs == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate the region table");
	peer->mrs_cap = MRS_INITIAL;
	peer->mrs_count = 0;
	pthread_rwlock_init(&peer->mrs_lock, NULL);
	pthread_rwlock_init(&peer->fence_lock, NULL);
	peer->epoch_floor = 0;
	return 0;
}

void
rpma_peer_fini(struct rpma_peer *peer)
{
	pthread_rwlock_destroy(&peer->fence_lock);
	pthread_rwlock_destroy(&peer->mrs_lock);
	free(peer->mrs);
	peer->mrs = NULL;
}

static size_t
slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* linear probing; removal re-inserts the rest of the cluster */
static void
table_put(struct rpma_mr_local **t, size_t cap, struct rpma_mr_local *mr)
{
	size_t i = slot_of(mr->key, cap);

	while (t[i] != NULL)
		i = (i + 1) & (cap - 1);
	t[i] = mr;
}

int
rpma_peer_mr_insert(struct rpma_peer *peer, struct rpma_mr_local *mr)
{
	int ret = 0;

	pthread_rwlock_wrlock(&peer->mrs_lock);
	if ((peer->mrs_count + 1) * 2 > peer->mrs_cap) {
		size_t cap = peer->mrs_cap * 2;
		struct rpma_mr_local **t = calloc(cap, sizeof(*t));
		if (t == NULL) {
			ret = rpma_fail(RPMA_E_NOMEM, "cannot grow the region table");
			goto out;
		}
		for (size_t i = 0; i < peer->mrs_cap; i++)
			if (peer->mrs[i])
				table_put(t, cap, peer->mrs[i]);
		free(peer->mrs);
		peer->mrs = t;
		peer->mrs_cap = cap;
	}
	table_put(peer->mrs, peer->mrs_cap, mr);
	peer->mrs_count++;
out:
	pthread_rwlock_unlock(&peer->mrs_lock);
	return ret;
}

void
rpma_peer_mr_remove(struct rpma_peer *peer, struct rpma_mr_local *mr)
{
	size_t cap, i;

	pthread_rwlock_wrlock(&peer->mrs_lock);
	cap = peer->mrs_cap;
	for (i = slot_of(mr->key, cap); peer->mrs[i] != NULL; i = (i + 1) & (cap - 1))
		if (peer->mrs[i] == mr)
			break;
	if (peer->mrs[i] == mr) {
		peer->mrs[i] = NULL;
		peer->mrs_count--;
		for (i = (i + 1) & (cap - 1); peer->mrs[i] != NULL; i = (i + 1) & (cap - 1)) {
			struct rpma_mr_local *m = peer->mrs[i];
			peer->mrs[i] = NULL;
			table_put(peer->mrs, cap, m);
		}
	}
	pthread_rwlock_unlock(&peer->mrs_lock);
}

struct rpma_mr_local *
rpma_peer_mr_get(struct rpma_peer *peer, uint64_t key)
{
	struct rpma_mr_local *found = NULL;
	size_t cap, i;

	pthread_rwlock_rdlock(&peer->mrs_lock);
	cap = peer->mrs_cap;
	for (i = slot_of(key, cap); peer->mrs[i] != NULL; i = (i + 1) & (cap - 1)) {
		if (peer->mrs[i]->key == key) {
			found = peer->mrs[i];
			rpma_mr_hold(found);
			break;
		}
	}
	pthread_rwlock_unlock(&peer->mrs_lock);
	return found;
}

void
rpma_peer_mr_put(struct rpma_mr_local *mr)
{
	rpma_mr_release(mr);
}

int
rpma_peer_delete(struct rpma_peer **peer_ptr)
{
	int ret;

	if (peer_ptr == NULL)
		return RPMA_E_INVAL;
	if (*peer_ptr == NULL)
		return 0;
	if ((*peer_ptr)->mrs_count != 0)
		return rpma_fail(RPMA_E_INVAL,
			"peer still has %zu registered regions", (*peer_ptr)->mrs_count);
	ret = (*peer_ptr)->prov->peer_delete(*peer_ptr);
	if (ret == 0)
		*peer_ptr = NULL;
	return ret;
}

int
rpma_ext_peer_fence(struct rpma_peer *peer, uint64_t epoch)
{
	if (peer == NULL)
		return RPMA_E_INVAL;
	pthread_rwlock_wrlock(&peer->fence_lock);
	if (epoch > peer->epoch_floor)
		peer->epoch_floor = epoch;
	pthread_rwlock_unlock(&peer->fence_lock);
	return 0;
}
