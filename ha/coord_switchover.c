/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_switchover.c -- SWITCHOVER and FAILOVER: the admin thread hands
 * the request to the coordinator's thread (the one that talks to etcd)
 * and waits for its answer; the switchover key then does the rest.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"

/* ---- a switchover request (from the admin socket) ---- */

void
co_serve_request(struct coordinator *c, uint32_t to, bool failover,
		struct coord_answer *a)
{
	const struct coord_keys *k = &c->keys;
	char value[COORD_VALUE_MAX];
	const struct coord_member *target = NULL;
	int64_t lease, ttl, sw_ttl;
	enum etcd_rc rc;

	memset(a, 0, sizeof(*a));
	if (!c->reachable || !c->keys_valid) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "etcd does not answer (%s)",
			c->view.last_error);
		return;
	}
	if (k->has_switchover) {
		a->error = "PENDING";
		snprintf(a->message, sizeof(a->message), "a switchover from node %" PRIu32
			" to %s%.0" PRIu32 " is pending", k->sw.from,
			k->sw.to ? "node " : "the most advanced replica", k->sw.to);
		return;
	}
	if (k->has_leader && strcmp(k->leader.state, "primary") == 0) {
		a->from = k->leader.node_id;
		a->epoch = k->leader.epoch;
	} else if (!failover) {
		a->error = "NO_PRIMARY";
		snprintf(a->message, sizeof(a->message), "no primary holds the leader key%s:"
			" name the node to take over with failover --to NODE",
			k->has_leader ? " (a promotion is under way)" : "");
		return;
	}
	for (int i = 0; i < k->n_members; i++)
		if (strcmp(k->members[i].role, "replica") == 0 &&
		    k->members[i].node_id != a->from &&
		    (to == 0 ? target == NULL : k->members[i].node_id == to))
			target = &k->members[i];
	if (target == NULL) {
		a->error = "BAD_TARGET";
		if (to != 0 && to == a->from)
			snprintf(a->message, sizeof(a->message), "node %" PRIu32 " is the "
				"primary already", to);
		else if (to != 0)
			snprintf(a->message, sizeof(a->message), "node %" PRIu32 " is not a "
				"live replica of this cluster (no members/%" PRIu32
				" key says so)", to, to);
		else
			snprintf(a->message, sizeof(a->message), "no live replica to take "
				"over");
		return;
	}
	a->to = to;
	/* it goes by itself if nobody acts on it: max(10 s, 10 leases) */
	sw_ttl = (int64_t)(c->lease_ms / 1000) * 10;
	if (sw_ttl < 10)
		sw_ttl = 10;
	if (!co_client_ok(c, etcd_lease_grant(c->etcd, sw_ttl, &lease, &ttl),
			"switchover lease grant")) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "%s", c->view.last_error);
		return;
	}
	if (!coord_switchover_value(a->from, to, failover, value, sizeof(value))) {
		a->error = "BAD_TARGET";
		snprintf(a->message, sizeof(a->message), "out of memory");
		(void)etcd_lease_revoke(c->etcd, lease);
		return;
	}
	struct etcd_compare cmp = {
		.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
		.key = (const uint8_t *)c->k_switchover, .key_len = strlen(c->k_switchover),
		.number = 0,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = cmp.key, .key_len = cmp.key_len,
		.value = (const uint8_t *)value, .value_len = strlen(value), .lease = lease,
	};
	struct etcd_txn t = { &cmp, 1, &put, 1, NULL, 0 };
	struct etcd_txn_result res;

	rc = etcd_txn(c->etcd, &t, &res);
	if (!co_client_ok(c, rc, "switchover txn")) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "%s", c->view.last_error);
		return;
	}
	if (!res.succeeded) {
		etcd_txn_result_free(&res);
		(void)etcd_lease_revoke(c->etcd, lease);
		a->error = "PENDING";
		snprintf(a->message, sizeof(a->message), "another switchover was "
			"requested meanwhile");
		return;
	}
	etcd_txn_result_free(&res);
	co_notice(c, "coordinator: %s requested: node %" PRIu32 " steps down, %s%.0"
		PRIu32 " takes over", failover ? "failover" : "switchover", a->from,
		to ? "node " : "the most advanced replica", to);
	snprintf(a->message, sizeof(a->message), "%s requested: %s%.0" PRIu32
		"%s, %s%.0" PRIu32 " takes over", failover ? "failover" : "switchover",
		a->from ? "node " : "no primary", a->from, a->from ? " steps down" : "",
		to ? "node " : "the most advanced replica", to);
}

void
coordinator_switchover(struct coordinator *c, uint32_t to, bool failover,
		struct coord_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (c == NULL) {
		a->error = "NO_COORDINATOR";
		snprintf(a->message, sizeof(a->message), "this node has no coordinator: "
			"repld.conf names none (coordinator.etcd); promote by hand "
			"(replctl promote)");
		return;
	}
	if (!co_request(c, &(struct coord_req){ .kind = REQ_SWITCHOVER, .to = to,
			.failover = failover, .ans = a })) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "the daemon is stopping");
	}
}

