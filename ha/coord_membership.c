/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_membership.c -- the membership key in etcd: the cluster's
 * configuration by node id with its configuration epoch.
 *
 *   - A change (replctl add, remove, reload on the primary) is written to
 *     the key first, by compare-and-swap on the revision last read and on
 *     the leader key's lease, then carried to the logs by S -> J -> F
 *     (repld's node_membership.c, remember).  So no two changes take one configuration epoch
 *     while etcd keeps its history: the key's epoch only grows, and only
 *     one writer wins each revision.
 *   - The primary holding the leader key keeps the key equal to its log's
 *     final membership (node ids filled in as they become known), and
 *     carries a change the key holds one step (two epochs) ahead of its
 *     log: a change whose primary died before it was carried.
 *   - What counts is still only the logs' membership (promote.c): the key
 *     says what the next change is, never who counts.
 * docs/replication.md, "The membership in etcd", argues it.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"

/* a carry refused waits this many leases before the next try */
#define CARRY_BACKOFF_LEASES 10

bool
coord_membership_from_log(const struct repl_membership *m,
		struct coord_membership *out)
{
	memset(out, 0, sizeof(*out));
	if (m->config_epoch == 0 || (m->flags & REPL_MEMBERSHIP_JOINT))
		return false;
	out->config_epoch = m->config_epoch;
	out->quorum = m->k;
	for (uint32_t i = 0; i < m->count && i < REPL_MEMBERS_MAX; i++) {
		const struct repl_member *e = &m->nodes[i];
		struct coord_ms_node *nd;

		if (!(e->flags & REPL_MEMBER_NEW))
			continue;
		if (e->host[0] == '\0' || e->port == 0 || out->n == COORD_MEMBERS_MAX)
			return false;
		nd = &out->nodes[out->n++];
		nd->node_id = e->node_id;
		snprintf(nd->ctl_addr, sizeof(nd->ctl_addr), strchr(e->host, ':') ?
			"[%s]:%u" : "%s:%u", e->host, (unsigned)e->port);
	}
	return out->n >= 1 && out->quorum < (uint32_t)out->n;
}

/*
 * Put m if the key is still at revision rev (0: absent) and, with
 * as_leader, this node's lease still holds the leader key.  1: written
 * (*new_rev), 0: a compare failed, -1: etcd did not answer.
 */
static int
cas_put(struct coordinator *c, const struct coord_membership *m, int64_t rev,
		bool as_leader, int64_t *new_rev)
{
	char value[COORD_MEMBERSHIP_VALUE_MAX];
	size_t len = coord_membership_value(m, value, sizeof(value));
	struct etcd_compare cmp[2] = {
		{
			.target = ETCD_CMP_MOD, .result = ETCD_CMP_EQUAL,
			.key = (const uint8_t *)c->k_membership,
			.key_len = strlen(c->k_membership), .number = rev,
		},
		{
			.target = ETCD_CMP_LEASE, .result = ETCD_CMP_EQUAL,
			.key = (const uint8_t *)c->k_leader, .key_len = strlen(c->k_leader),
			.number = coord_leader_lease(c->leader),
		},
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = cmp[0].key, .key_len = cmp[0].key_len,
		.value = (const uint8_t *)value, .value_len = len,
	};
	struct etcd_txn t = { cmp, as_leader ? 2 : 1, &put, 1, NULL, 0 };
	struct etcd_txn_result res;
	int ok;

	if (len == 0)
		return 0;
	if (!co_client_ok(c, etcd_txn(c->etcd, &t, &res), "membership txn"))
		return -1;
	ok = res.succeeded;
	if (ok && new_rev != NULL)
		*new_rev = res.header.revision;
	etcd_txn_result_free(&res);
	return ok;
}

/* ---- a proposal or a withdrawal, on the coordinator's thread ---- */

int
co_serve_membership(struct coordinator *c, bool withdraw,
		const struct coord_membership *m, int64_t rev_in, int64_t *rev_out,
		char *msg, size_t msglen)
{
	const struct coord_keys *k = &c->keys;
	int r;

	if (withdraw) {
		if (cas_put(c, m, rev_in, false, NULL) == 1)
			co_notice(c, "coordinator: the membership key says configuration "
				"epoch %" PRIu64 " again: the change was not made",
				m->config_epoch);
		return 0;
	}
	if (!c->reachable || !c->keys_valid) {
		snprintf(msg, msglen, "etcd does not answer (%s): with a coordinator a "
			"membership change is written to etcd first; nothing changed",
			c->view.last_error);
		return COORD_E_UNREACHABLE;
	}
	if (coord_leader_state(c->leader) != COORD_LEADER_HELD) {
		snprintf(msg, msglen, "this primary does not hold the leader key: only "
			"the holder changes the membership; nothing changed");
		return COORD_E_NOT_LEADER;
	}
	if (k->has_membership && k->membership.config_epoch >= m->config_epoch) {
		snprintf(msg, msglen, "etcd's membership key holds configuration epoch %"
			PRIu64 ", at or past this change's %" PRIu64 ": a change not yet "
			"carried to the logs, which the primary carries first; nothing "
			"changed, try again once status shows it applied",
			k->membership.config_epoch, m->config_epoch);
		return COORD_E_CHANGE_PENDING;
	}
	r = cas_put(c, m, k->membership_rev, true, rev_out);
	if (r < 0) {
		snprintf(msg, msglen, "etcd did not take the change (%s): nothing "
			"changed", c->view.last_error);
		return COORD_E_UNREACHABLE;
	}
	if (r == 0) {
		snprintf(msg, msglen, "etcd's membership key or leader key changed since "
			"this primary read them (another change, or the lease lost): "
			"nothing changed");
		return COORD_E_CONFLICT;
	}
	co_notice(c, "coordinator: membership of configuration epoch %" PRIu64 " (%d "
		"nodes, quorum %" PRIu32 ") written to etcd, to be carried to the logs",
		m->config_epoch, m->n, m->quorum);
	/* the proposer carries it now; the tick only if that fails to */
	c->carry_backoff_until = co_now_ns() + CARRY_BACKOFF_LEASES * c->lease_ms * MS;
	return 0;
}

/* a request from another thread: wait for the coordinator to serve it */
static int
ask(struct coordinator *c, bool withdraw, const struct coord_membership *m,
		int64_t rev_in, int64_t *rev_out, char *msg, size_t msglen)
{
	struct coord_req r = {
		.kind = withdraw ? REQ_WITHDRAW : REQ_MEMBERSHIP, .ms = m,
		.rev = rev_in, .msg = msg, .msglen = msglen,
	};

	if (c == NULL)
		return 0;
	if (!co_request(c, &r)) {
		snprintf(msg, msglen, "the daemon is stopping: nothing changed");
		return COORD_E_UNREACHABLE;
	}
	if (rev_out != NULL)
		*rev_out = r.rev;
	return r.ret;
}

int
coordinator_membership_propose(struct coordinator *c,
		const struct coord_membership *want, int64_t *rev, char *msg,
		size_t msglen)
{
	*rev = 0;
	return ask(c, false, want, 0, rev, msg, msglen);
}

void
coordinator_membership_withdraw(struct coordinator *c,
		const struct coord_membership *applied, int64_t rev)
{
	char msg[256];

	(void)ask(c, true, applied, rev, NULL, msg, sizeof(msg));
}

/* ---- the primary's tick ---- */

/* the worker's carry: the key's membership as the node's */
void
co_carry_run(struct coordinator *c)
{
	c->worker_ret = c->ops.carry(c->node, &c->carry, c->worker_msg,
		sizeof(c->worker_msg));
}

void
co_take_peers(struct coordinator *c)
{
	c->ops.take_peers(c->node, &c->carry);
}

void
co_carried(struct coordinator *c, uint64_t now)
{
	if (c->worker_ret == 0) {
		co_notice(c, "coordinator: the change of the membership key (configuration "
			"epoch %" PRIu64 ") is carried: %s", c->carry.config_epoch,
			c->worker_msg);
		return;
	}
	c->carry_backoff_until = now + CARRY_BACKOFF_LEASES * c->lease_ms * MS;
	co_error(c, "coordinator: the change of the membership key (configuration "
		"epoch %" PRIu64 ") could not be carried, next try in %u leases: %s",
		c->carry.config_epoch, CARRY_BACKOFF_LEASES, c->worker_msg);
}

void
co_membership_view(struct coordinator *c, uint64_t log_ce, bool joint)
{
	pthread_mutex_lock(&c->lock);
	snprintf(c->view.ms_state, sizeof(c->view.ms_state), "%s",
		ha_membership_state(&c->keys, log_ce, joint));
	c->view.has_ms = c->keys.has_membership;
	c->view.ms = c->keys.membership;
	pthread_mutex_unlock(&c->lock);
}

void
co_membership_tick(struct coordinator *c, uint64_t now, bool busy)
{
	const struct coord_keys *k = &c->keys;
	struct repl_membership stored;
	struct coord_membership log_ms;
	enum ha_ms_action_kind act;
	bool final;
	int r;

	if (!c->keys_valid || c->ops.membership(c->node, &stored) != 0 ||
	    stored.config_epoch == 0)
		return;
	co_membership_view(c, stored.config_epoch,
		(stored.flags & REPL_MEMBERSHIP_JOINT) != 0);
	final = coord_membership_from_log(&stored, &log_ms);
	act = ha_membership_step(&(struct ha_ms_input){
		.now_ms = now / MS, .node_id = c->node_id, .ctl_addr = c->ctl_addr,
		.log = final ? &log_ms : NULL, .keys = k,
		.carry_backoff_until_ms = c->carry_backoff_until / MS, .busy = busy });
	switch (act) {
	case HA_MS_NONE:
		return;
	case HA_MS_NOT_NEXT:
	case HA_MS_REMOVES_ME:
		if (c->carry_warned != k->membership.config_epoch)
			co_error(c, "coordinator: etcd's membership key holds configuration "
				"epoch %" PRIu64 " and this primary's log %" PRIu64 ": %s; "
				"it is left as it is", k->membership.config_epoch,
				log_ms.config_epoch, act == HA_MS_NOT_NEXT ?
				"not the next change, which this primary could carry" :
				"a change that removes this primary, which another node "
				"must carry (switch over)");
		c->carry_warned = k->membership.config_epoch;
		return;
	case HA_MS_CARRY:
		co_notice(c, "coordinator: etcd's membership key holds a change to "
			"configuration epoch %" PRIu64 " (%d nodes, quorum %" PRIu32 ") not "
			"in this primary's log (%" PRIu64 "): carrying it",
			k->membership.config_epoch, k->membership.n, k->membership.quorum,
			log_ms.config_epoch);
		c->carry = k->membership;
		(void)co_worker_start(c, WORK_CARRY, co_carry_run);
		return;
	case HA_MS_PUBLISH:
		break;
	}
	/*
	 * Absent, unreadable, behind the log (an etcd restored from a backup),
	 * or the same epoch with node ids the log has learned since: the key
	 * takes the log's final membership.
	 */
	r = cas_put(c, &log_ms, k->membership_rev, true, NULL);
	if (r == 1)
		co_notice(c, "coordinator: the membership key now says this primary's "
			"membership: configuration epoch %" PRIu64 ", %d nodes, quorum %"
			PRIu32 "%s", log_ms.config_epoch, log_ms.n, log_ms.quorum,
			!k->has_membership ? "" : k->membership.config_epoch <
			log_ms.config_epoch ? " (it held an older one)" : " (node ids)");
}
