/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coordinator.h -- automatic failover on etcd (the ha/ wing's loop): a
 * thread beside a node that
 *
 *   - publishes the node under PREFIX<uuid>/members/<id> (its role, epoch,
 *     log position, whether its link to the primary is up), with a lease
 *     of its own;
 *   - as the primary, holds PREFIX<uuid>/leader with its lease, renewed
 *     every lease/3, and steps down when a switchover names it; keeps
 *     PREFIX<uuid>/membership equal to its log's membership, and carries a
 *     change left there (coord_membership.c);
 *   - as a replica, campaigns for the leader key when the rules say so
 *     (ha_rules.h: the link rule, the keyless rule, the rank) and promotes
 *     the node when it wins, giving the key back at once when that
 *     promotion is refused.
 *
 * It drives the node it serves only through struct coord_node_ops, which
 * the node's owner fills (repld's node_ha.c; an application linking
 * librepl could fill it as well), and logs through the cfg's function.
 *
 * etcd only decides who may try to promote.  Whether a promotion may go
 * on (n - k + 1 nodes fenced, the most advanced log, the commit rule) is
 * the engine's, so a wrong lease costs availability, never an acknowledged
 * record (docs/replication.md, "Automatic failover").  While etcd does not
 * answer the primary goes on acknowledging and failover pauses.
 *
 * Threads: the coordinator's own thread does every etcd call and every
 * change of the node it starts (those in a worker thread, so that the
 * leases are renewed while a promotion or a step-down runs); a watch
 * thread wakes it when a key changes.  The view and the request slot are
 * under its lock, a leaf: no lock of the node is taken while it is held.
 * A membership change waits for the coordinator's thread while holding the
 * node's change lock (repld's node_membership.c, remember); that thread never takes
 * the change lock (it reads the node through ops->local, which must not
 * wait for it, and what needs the lock runs in the worker), so the wait
 * closes no cycle.
 */
#ifndef HA_COORDINATOR_H
#define HA_COORDINATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"
#include "coord_keys.h"
#include "ha_rules.h"

struct coordinator;

/* a membership change with a coordinator, refused before anything changed */
#define COORD_E_UNREACHABLE	(-3)	/* etcd does not answer */
#define COORD_E_NOT_LEADER	(-4)	/* this node does not hold the leader key */
#define COORD_E_CHANGE_PENDING	(-5)	/* etcd holds a change not yet carried */
#define COORD_E_CONFLICT	(-6)	/* etcd's membership changed meanwhile */

/* log levels of cfg.log: syslog's (LOG_ERR, LOG_WARNING, LOG_NOTICE) */
typedef void coord_log_fn(void *arg, int level, const char *msg);

struct coord_cfg {
	/* etcd: its client endpoints and TLS (paths; NULL: none) */
	const char *const *endpoints;
	size_t n_endpoints;
	int timeout_ms;			/* one etcd request */
	const char *ca, *cert, *key;
	const char *prefix;		/* e.g. "/rpma-repl/" */
	const char *cluster_uuid;	/* text: the keys are under PREFIX<uuid>/ */
	uint32_t node_id;
	uint64_t lease_ms;		/* a whole number of seconds */
	bool candidate;			/* it may take over by itself */
	uint64_t down_ms;		/* the node's timeouts.down_ms */
	const char *ctl_addr;		/* its control address "host:port" */
	coord_log_fn *log;		/* NULL: silent */
	void *log_arg;
};

/*
 * How the coordinator drives its node; each called from the coordinator's
 * threads, with no lock of the coordinator held.
 */
struct coord_node_ops {
	/* what the node is now; must not wait for the node's changes */
	void (*local)(void *node, struct ha_local *out);
	/* the log's stored membership (config_epoch 0: none); 0, or -1 */
	int (*membership)(void *node, struct repl_membership *out);
	/*
	 * Promote the replica: never forced, gated on this coordinator's
	 * lease (coordinator_promote_gate).  0, or an error with msg.
	 */
	int (*promote)(void *node, char *msg, size_t msglen);
	/* step the primary down: drain, then serve as a replica */
	int (*step_down)(void *node, char *msg, size_t msglen);
	/* carry etcd's change m (two configuration epochs ahead) to the logs */
	int (*carry)(void *node, const struct coord_membership *m, char *msg,
		size_t msglen);
	/* before a promotion: promote over m's nodes, not the configured ones */
	void (*take_peers)(void *node, const struct coord_membership *m);
	/*
	 * Whether the node would archive its log now (it has an archive and
	 * is in a role that archives); NULL: it never archives.  The one
	 * node that holds the log-archiver key does (coordinator_archiver_allowed).
	 */
	bool (*archive_wanted)(void *node);
};

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
	char leader_addr[COORD_HOST_MAX + 10];	/* its control address ("": not
						   known) */
	int64_t leader_ttl_s;		/* its lease's TTL left; -1 unknown */
	uint64_t leader_age_ms;		/* since the key was read */
	bool has_switchover;
	uint32_t sw_from, sw_to;
	bool sw_failover;
	bool maintenance;		/* the maintenance key, as last read */
	struct coord_maintenance maint;
	struct coord_member members[COORD_MEMBERS_MAX];
	int n_members;
	/* the log-archiver key: whether it exists, its holder (0: unknown) */
	bool has_archiver;
	uint32_t archiver_id;
	/* a replica's reason not to campaign now (ha_wait_name; "" if none) */
	char waiting[16];
	uint64_t campaigns, promotions;
	uint64_t takeovers;		/* silent primaries whose lease it revoked */
	uint64_t etcd_requests;		/* HTTP requests its client sent */
	/* the membership key, and how it stands to this node's log:
	   "applied", "pending", "behind", "changing", "absent", "invalid" */
	bool has_ms;
	struct coord_membership ms;
	char ms_state[12];
	char last_error[256];
};

/*
 * "armed", "paused" (etcd unreachable), "maintenance" (the maintenance
 * key exists: no node takes over by itself) or "off" (not a candidate),
 * the first that applies from the last
 */
const char *coord_view_failover(const struct coord_view *v);

/*
 * Starts the coordinator's threads for node (cfg and ops are copied; the
 * strings cfg points to must outlive it).  0, or -1 with why in err.
 */
int coordinator_start(const struct coord_cfg *cfg,
		const struct coord_node_ops *ops, void *node,
		struct coordinator **out, char *err, size_t errlen);
/*
 * Resigns the leader key if held, revokes the member lease, ends the
 * thread; the view stays readable, and requests are refused, until
 * coordinator_free.  NULL: nothing.
 */
void coordinator_stop(struct coordinator *c);
void coordinator_free(struct coordinator *c);

void coordinator_view(struct coordinator *c, struct coord_view *v);
/*
 * Whether this node holds the log-archiver key (etcd answering): the one
 * node of the cluster that archives the log.  false for NULL.
 */
bool coordinator_archiver_allowed(struct coordinator *c);
/*
 * The log-archiver key's holder as last read: its node id, 0 when it is
 * free, -1 when unknown (etcd not answering, or not read yet; NULL).
 */
int64_t coordinator_archiver_holder(struct coordinator *c);

/*
 * repl_cfg.promote_gate for a promotion the coordinator stands behind (arg:
 * the coordinator): non-zero once this node's hold on the leader key may
 * have run out (leader.h's valid_until passed, or the key given back), so a
 * node paused past its lease does not fence the primary that replaced it.
 * Any thread.
 */
int coordinator_promote_gate(void *arg);

/*
 * What a node's op_local reports, from what librepl says of its log: as
 * the primary (its status), or as a replica (its replica's info; a log
 * that never joined a cluster, or made anew before its floor, is no
 * member: it has nothing to lead with, and a promotion would refuse it).
 */
void coordinator_local_primary(struct ha_local *l, const struct repl_status *st);
void coordinator_local_replica(struct ha_local *l, const struct repl_replica_info *info);

/*
 * At start, before the node opens its log: the node id of the leader key's
 * holder when it is another node than cfg's (0: none, this node, or etcd
 * does not answer within the configured timeout).  A node whose file says
 * primary then starts as a replica rather than attempt a restart
 * promotion that the failover already superseded.
 */
uint32_t coordinator_leader_at_start(const struct coord_cfg *cfg,
		uint64_t *epoch);

/*
 * At start too: the membership key as etcd holds it (false: absent, a
 * value that does not parse, or etcd does not answer in time).  The
 * caller takes it only where its log holds the same configuration epoch:
 * the key is written by compare-and-swap, by the primary that holds the
 * leader key, from its log.
 */
bool coordinator_membership_at_start(const struct coord_cfg *cfg,
		struct coord_membership *out);

/* a log's final membership as the key says it (false: joint, none, or a
 * node without a control address) */
bool coord_membership_from_log(const struct repl_membership *m,
		struct coord_membership *out);

/*
 * A membership change on the primary, before it is carried to the logs:
 * writes want (the next final membership, its configuration epoch the
 * log's + 2) to the membership key by compare-and-swap -- on the revision
 * last read, and only while this node's lease holds the leader key.  0
 * (*rev: the revision written), or COORD_E_UNREACHABLE,
 * COORD_E_NOT_LEADER, COORD_E_CHANGE_PENDING or COORD_E_CONFLICT with a
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

/* a MAINTENANCE request's answer (error NULL: done) */
struct coord_maint_answer {
	const char *error;		/* NO_COORDINATOR, COORDINATOR_UNREACHABLE,
					   BAD_REQUEST */
	bool on;			/* maintenance now */
	bool was_on;			/* the key existed before */
	/* on: the value written; off: the value removed (zeroed when none,
	   or when it did not parse) */
	struct coord_maintenance m;
	char message[320];
};

/*
 * Maintenance on (the key written, without a lease, as set by this node
 * now with reason: coord_reason_ok's, "" for none) or off (the key
 * deleted): while the key exists no node takes over or campaigns by
 * itself (ha_rules.h); switchover and failover requests still go on.
 * Any thread.
 */
void coordinator_maintenance(struct coordinator *c, bool on, const char *reason,
		struct coord_maint_answer *a);

/* a HISTORY request's answer (error NULL: done) */
struct coord_history_answer {
	const char *error;		/* NO_COORDINATOR, COORDINATOR_UNREACHABLE */
	char message[320];
	struct coord_history_list list;
};

/* the promotions the coordinators recorded (history/ keys), oldest first;
 * any thread */
void coordinator_history(struct coordinator *c, struct coord_history_answer *a);

#endif
