/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coordinator.h -- automatic failover on etcd (repld.conf's coordinator):
 * a thread beside the node that
 *
 *   - publishes this node under PREFIX<uuid>/members/<id> (its role, epoch,
 *     log position, whether its link to the primary is up), with a lease
 *     of its own;
 *   - as the primary, holds PREFIX<uuid>/leader with its lease, renewed
 *     every lease/3, and steps down when a switchover names it; keeps
 *     PREFIX<uuid>/membership equal to its log's membership, and carries a
 *     change left there (coord_membership.c);
 *   - as a replica, campaigns for the leader key when it is gone, its own
 *     link to the primary is down and no live member reports one up: the
 *     most advanced log first, the r-th after r * lease/2; the winner runs
 *     the node's own promotion (node_promote) and gives the key back at
 *     once when that promotion is refused, backing off lease * [1, 2).
 *
 * etcd only decides who may try to promote.  Whether a promotion may go
 * on (n - k + 1 nodes fenced, the most advanced log, the commit rule) is
 * the engine's, so a wrong lease costs availability, never an acknowledged
 * record (docs/replication.md, "Automatic failover").  While etcd does not
 * answer the primary goes on acknowledging and failover pauses.
 *
 * Threads: the coordinator's own thread does every etcd call and every
 * change of the node it starts (those in a worker thread, so that the
 * leases are renewed while a promotion or a step-down runs).  The view and
 * the request slot are under its lock, a leaf: no node lock is taken while
 * it is held.  A membership change waits for the coordinator's thread while
 * holding the node's change lock (node.c, remember); that thread never
 * takes the change lock (it reads the node with node_try_enter, and what
 * needs the lock runs in the worker), so the wait closes no cycle.
 */
#ifndef REPLD_COORDINATOR_H
#define REPLD_COORDINATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"
#include "coord_keys.h"
#include "repld_conf.h"

struct node;
struct coordinator;

/* what status, the metrics and the log show (a copy) */
struct coord_view {
	char endpoint[256];		/* the endpoint tried first */
	bool reachable;
	uint64_t unreachable_ms;	/* 0 while reachable */
	bool candidate;
	uint64_t lease_ms;		/* as etcd granted (0: none yet) */
	bool holds_leader;
	bool has_leader;		/* leader_*: the key as last read */
	uint32_t leader_id;
	uint64_t leader_epoch;
	char leader_state[12];		/* "primary", "promoting", "?" */
	int64_t leader_ttl_s;		/* its lease's TTL left; -1 unknown */
	uint64_t leader_age_ms;		/* since the key was read */
	bool has_switchover;
	uint32_t sw_from, sw_to;
	bool sw_failover;
	struct coord_member members[COORD_MEMBERS_MAX];
	int n_members;
	/* a replica's reason not to campaign now (ha_wait_name; "" if none) */
	char waiting[16];
	uint64_t campaigns, promotions;
	uint64_t etcd_requests;		/* HTTP requests its client sent */
	/* the membership key, and how it stands to this node's log:
	   "applied", "pending", "behind", "changing", "absent", "invalid" */
	bool has_ms;
	struct coord_membership ms;
	char ms_state[12];
	char last_error[256];
};

/* "armed", "paused" (etcd unreachable) or "off" (not a candidate) */
const char *coord_view_failover(const struct coord_view *v);

/*
 * Starts the thread when n's configuration names a coordinator (*out NULL
 * when it does not).  0, or -1 with why in err.
 */
int coordinator_start(struct node *n, struct coordinator **out, char *err,
		size_t errlen);
/*
 * Resigns the leader key if held, revokes the member lease, ends the
 * thread; the view stays readable, and requests are refused, until
 * coordinator_free.  NULL: nothing.
 */
void coordinator_stop(struct coordinator *c);
void coordinator_free(struct coordinator *c);

void coordinator_view(struct coordinator *c, struct coord_view *v);

/*
 * repl_cfg.promote_gate for a promotion the coordinator stands behind (arg:
 * the coordinator): non-zero once this node's hold on the leader key may
 * have run out (leader.h's valid_until passed, or the key given back), so a
 * node paused past its lease does not fence the primary that replaced it.
 * Any thread.
 */
int coordinator_promote_gate(void *arg);

/*
 * At start, before the node opens its log: the node id of the leader key's
 * holder when it is another node than conf's (0: none, this node, or etcd
 * does not answer within the configured timeout).  A node whose file says
 * primary then starts as a replica rather than attempt a restart
 * promotion that the failover already superseded.
 */
uint32_t coordinator_leader_at_start(const struct repld_conf *conf,
		uint64_t *epoch);

/* a log's final membership as the key says it (false: joint, none, or a
 * node without a control address) */
bool coord_membership_from_log(const struct repl_membership *m,
		struct coord_membership *out);

/*
 * A membership change on the primary, before it is carried to the logs:
 * writes want (the next final membership, its configuration epoch the
 * log's + 2) to the membership key by compare-and-swap -- on the revision
 * last read, and only while this node's lease holds the leader key.  0
 * (*rev: the revision written), or NODE_E_COORD_UNREACHABLE,
 * NODE_E_NOT_LEADER, NODE_E_CHANGE_PENDING or NODE_E_CONFLICT with a
 * sentence in msg: nothing was written.  Any thread but the coordinator's.
 */
int coordinator_membership_propose(struct coordinator *c,
		const struct coord_membership *want, int64_t *rev, char *msg,
		size_t msglen);
/*
 * A proposal the log did not take (no membership of its epoch was stored
 * anywhere): the key goes back to applied if it still holds what rev
 * wrote.  Best effort: the tick carries a change left in the key.
 */
void coordinator_membership_withdraw(struct coordinator *c,
		const struct coord_membership *applied, int64_t rev);

/* a SWITCHOVER or FAILOVER request's answer (error NULL: done) */
struct coord_answer {
	const char *error;		/* NO_COORDINATOR, COORDINATOR_UNREACHABLE,
					   NO_PRIMARY, BAD_TARGET, PENDING */
	uint32_t from, to;
	uint64_t epoch;
	char message[320];
};

/*
 * Records a switchover in etcd (to 0: the most advanced replica; failover:
 * also with no primary, the target campaigning regardless of its link)
 * and returns; the primary steps down and the target takes over by
 * themselves.  Any thread.
 */
void coordinator_switchover(struct coordinator *c, uint32_t to, bool failover,
		struct coord_answer *a);

#endif
