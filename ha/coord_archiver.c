/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_archiver.c -- which node archives the log: the one that holds the
 * log-archiver key (coord_keys.h), under its member lease.
 *
 * Each tick, a node whose archive may run now (ops.archive_wanted: it has
 * an archive and is in a role that archives) takes the key when it is
 * free, by create-if-absent; a holder that may not archive any more (it
 * became the primary of an archive.on = "replica" cluster, say) deletes
 * it, so another takes it.  A holder that dies lets its lease run out,
 * and the key goes with it.  So at most one node archives at a time --
 * while etcd answers: a node cut from etcd stops archiving (it cannot
 * know the key is still its own).  The archive itself stays consistent
 * either way (whole segments, names that say what they hold); this only
 * keeps two nodes from writing segments of their own.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "coord_internal.h"

/* create-if-absent, under the member lease: true when this node holds it */
static bool
take(struct coordinator *c)
{
	char value[COORD_VALUE_MAX];
	size_t len = coord_archiver_value(c->node_id, value, sizeof(value));
	const uint8_t *k = (const uint8_t *)c->k_archiver;
	size_t kl = strlen(c->k_archiver);
	struct etcd_compare cmp = {
		.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
		.key = k, .key_len = kl, .number = 0,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = k, .key_len = kl,
		.value = (const uint8_t *)value, .value_len = len,
		.lease = c->member_lease,
	};
	struct etcd_txn t = { &cmp, 1, &put, 1, NULL, 0 };
	struct etcd_txn_result res;
	bool won;

	if (len == 0 || !co_client_ok(c, etcd_txn(c->etcd, &t, &res), "archiver txn"))
		return false;
	won = res.succeeded;
	etcd_txn_result_free(&res);
	return won;
}

void
co_archiver_tick(struct coordinator *c)
{
	bool wanted, holds;
	uint32_t holder;

	if (c->ops.archive_wanted == NULL)
		return;
	if (!c->keys_valid) {	/* etcd not read: the key may be another's */
		atomic_store(&c->archiver_mine, false);
		atomic_store(&c->archiver_holder, -1);
		return;
	}
	wanted = c->ops.archive_wanted(c->node) && c->member_lease != 0;
	holder = c->keys.has_archiver ? c->keys.archiver : 0;
	holds = c->keys.has_archiver && holder == c->node_id;
	if (wanted && !c->keys.has_archiver && take(c)) {
		co_notice(c, "coordinator: this node archives the log (it took the "
			"log-archiver key)");
		holds = true;
		holder = c->node_id;
	} else if (!wanted && holds) {
		if (co_client_ok(c, etcd_delete(c->etcd, c->k_archiver,
				strlen(c->k_archiver), false, NULL), "archiver delete")) {
			co_notice(c, "coordinator: this node no longer archives the "
				"log (it gave the log-archiver key up)");
			holds = false;
			holder = 0;
		}
	}
	pthread_mutex_lock(&c->lock);
	c->view.archiver_id = holder;
	c->view.has_archiver = holder != 0 || c->keys.has_archiver;
	pthread_mutex_unlock(&c->lock);
	atomic_store(&c->archiver_mine, holds && c->reachable);
	atomic_store(&c->archiver_holder, c->reachable ? (int64_t)holder : -1);
}

int64_t
coordinator_archiver_holder(struct coordinator *c)
{
	return c == NULL ? -1 : atomic_load(&c->archiver_holder);
}

bool
coordinator_archiver_allowed(struct coordinator *c)
{
	return c != NULL && atomic_load(&c->archiver_mine);
}
