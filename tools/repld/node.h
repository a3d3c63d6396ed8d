/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node.h -- what a repld node is right now (a replica serving primaries,
 * or the primary), and the changes between those states: promotion,
 * stepping down, a new membership, a drained stop.
 *
 * Appenders pass a gate: node_enter() hands out the primary's handle and
 * counts them in; a change of state closes the gate, waits until every
 * appender inside has had its answer (durable or an error), changes, and
 * opens it again.  So no record is appended under one primary and
 * acknowledged under another, and nothing is acknowledged after a stop
 * began closing the log.  The gate holds no lock while appenders wait for
 * durability: it is a count.
 */
#ifndef REPLD_NODE_H
#define REPLD_NODE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "repl.h"
#include "repld_conf.h"
#include "rv_copy.h"
#include "retention.h"

struct archiver;
struct coordinator;

/* the daemon's exit status: repld(8), EXIT STATUS */
#define REPLD_EXIT_FAILED	1	/* a runtime failure: the message says which */
#define REPLD_EXIT_USAGE	2	/* bad usage, or a file that does not load */
#define REPLD_EXIT_FENCED	3	/* a newer primary took over (no coordinator) */
#define REPLD_EXIT_NO_QUORUM	4	/* a promotion at the start: too few nodes */
#define REPLD_EXIT_REFUSED	5	/* the log or the membership forbids the start */

enum node_role {
	NODE_DOWN = 0,		/* neither: starting, or failed */
	NODE_REPLICA,
	NODE_PRIMARY,
};

/*
 * What the node is doing: its one state, written by node_set_state alone,
 * under lock; the role (node_role) and the gate follow from it
 * (node_state.c has the changes allowed between them).  The gate is open
 * in REPLICA, PRIMARY and FAILED only.
 */
enum node_state {
	NODE_ST_STARTING = 0,	/* node_init until node_start opens a log */
	NODE_ST_REPLICA,	/* a replica serves (or its open failed: replica_ret) */
	NODE_ST_PRIMARY,	/* the primary's log is open: appenders enter */
	NODE_ST_PROMOTING,	/* the gate closed, the replica not stopped yet */
	NODE_ST_STEPPING_DOWN,	/* the gate closed, the primary's log still open */
	NODE_ST_CHANGING,	/* the same, for a new membership (node_membership.c) */
	NODE_ST_SWITCHING,	/* within a change: one log closed, the next not open */
	NODE_ST_FENCED,		/* a newer primary took over: appenders are told,
				   the log closes */
	NODE_ST_DEPOSED,	/* fenced, the log closed: it exits REPLD_EXIT_FENCED,
				   or with a coordinator follows the new primary */
	NODE_ST_REOPENING,	/* no log after a failed change: node_reopen.c */
	NODE_ST_FAILED,		/* no log, the gate open: the start or a change
				   failed (exit_code), the daemon ends */
	NODE_ST_STOPPING,	/* a stop began: the log stop_from had closes */
	NODE_ST_STOPPED,
	NODE_STATES
};

/* node_state.c: the table, and what a state says (stop_from: see struct node) */
const char *node_state_name(enum node_state s);
bool node_state_allowed(enum node_state from, enum node_state to);
enum node_role node_state_role(enum node_state s, enum node_state stop_from);
enum node_state node_state_opened(enum node_role r);	/* the gate open again */
bool node_state_gate_open(enum node_state s);
bool node_state_stopping(enum node_state s);
/* the gate closed by a change (node_try_enter's changing) */
bool node_state_changing(enum node_state s);
/* appenders wait at the gate (not refused at once) */
bool node_state_waits(enum node_state s);
bool node_state_fenced(enum node_state s, enum node_state stop_from);
bool node_state_reopening(enum node_state s, enum node_state stop_from);

/* the gate's refusals, beyond repl.h's REPL_E_* */
#define NODE_E_WRONG_ROLE	(-1)	/* a replica, or down */
#define NODE_E_STOPPING		(-2)	/* a stop has begun */
/* a membership change with a coordinator, refused before anything changed */
#define NODE_E_COORD_UNREACHABLE (-3)	/* etcd does not answer */
#define NODE_E_NOT_LEADER	(-4)	/* this node does not hold the leader key */
#define NODE_E_CHANGE_PENDING	(-5)	/* etcd holds a change not yet carried */
#define NODE_E_CONFLICT		(-6)	/* etcd's membership changed meanwhile */
/* the gate: a failed change left the log closed; it is being reopened */
#define NODE_E_REOPENING	(-7)

/*
 * A membership change that closed the primary's log and could reopen
 * neither configuration: the old one is reopened by a thread of its own,
 * with back-off, until enough of its nodes answer.  Meanwhile the node is
 * down and its gate closed, and appenders are refused (NODE_E_REOPENING)
 * rather than kept waiting.
 */
struct node_reopen {
	unsigned attempts;		/* failed since the log was closed */
	uint64_t since_ms;		/* CLOCK_MONOTONIC: when it closed */
	char error[512];		/* why the last one failed */
};

struct node {
	const char *conf_path;
	/* the membership (peers, n_peers, quorum) changes under lock */
	struct repld_conf conf;
	char provider[16];		/* "verbs" or a libfabric provider */

	pthread_mutex_t lock;		/* guards what follows */
	pthread_cond_t cond;
	enum node_state state;		/* node_set_state's alone */
	enum node_state stop_from;	/* the state a stop began in */
	struct repl *repl;		/* NODE_PRIMARY */
	int active;			/* appenders inside the gate */
	int exit_code;			/* >= 0: the daemon should exit with it */

	pthread_mutex_t change;		/* one change of state at a time */

	/* NODE_REPLICA: repl_replica_run in its own thread */
	pthread_t replica_thread;
	bool replica_running;
	/*
	 * How the replica's next start makes its log (once: cleared by it):
	 * bootstrap formats a blank medium (a new cluster's node), reinit
	 * formats whatever the path holds (a log made anew).
	 */
	bool bootstrap;
	bool reinit;
	struct repl_replica_node *replica;	/* under lock: STATUS reads it */
	/* the replica's open or run result (REPL_E_*), once it failed or returned */
	atomic_int replica_ret;
	struct repl_replica_info replica_last;	/* what it served last */
	struct rv_copy *copy;		/* sqlite_copy, while a replica; under
					   lock */
	struct rv_copy_status copy_last;	/* what it showed last */
	/* archive: set before the node starts, freed with it (NULL: none) */
	struct archiver *_Atomic archiver;
	char ctl_port[8], data_port[8];
	/* the replica's peers: the file's peers as they were at replica_start */
	struct repl_replica floor_peers[REPLD_PEERS_MAX];
	char floor_hosts[REPLD_PEERS_MAX][REPLD_ADDRESS_MAX + 1];
	char floor_ports[REPLD_PEERS_MAX][8];

	/* a failed change's reopen (NODE_ST_REOPENING): reopen under lock,
	   the thread's handle and the proposal to withdraw under change */
	struct node_reopen reopen;
	pthread_t reopen_thread;
	bool reopen_joinable;
	int64_t reopen_rev;		/* etcd's revision of the proposal, 0: none */
	uint64_t reopen_config_epoch;	/* the log's before the change */

	/* the primary's log reuse and space alarm (its own lock) */
	struct retention retention;

	/*
	 * automatic failover (coordinator.h); NULL without one.  Set once the
	 * node started, while the admin socket already serves: atomic.  Freed
	 * only by node_free, so a status may read it while the daemon stops.
	 */
	_Atomic(struct coordinator *) coord;
};

/* a node that is down yet; conf is taken over */
void node_init(struct node *n, const char *conf_path, struct repld_conf *conf);

/*
 * Start the node in the role its configuration names.  reconfigure: a
 * primary adopts the file's membership even if the log stores another.
 * Returns 0, or the daemon's exit code.
 */
/* how the daemon was started (repld's options) */
struct node_start_how {
	bool reconfigure;	/* a primary: the file's membership is the next */
	bool bootstrap;		/* the first start of a new cluster */
	bool reinit;		/* a replica whose log is made anew */
	bool as_replica;	/* whatever the file's role: the coordinator
				   found another node leading */
};
/* 0, or the daemon's exit code (repld(8)) */
int node_start(struct node *n, const struct node_start_how *how);

/* the primary's handle for an append, or NULL with *err (REPL_E_*, NODE_E_*) */
struct repl *node_enter(struct node *n, int *err);
void node_leave(struct node *n);
/* the same without waiting: NULL while a change is under way */
struct repl *node_try_enter(struct node *n, bool *changing);

/* the changes; each 0 or an error with a sentence in msg */
/*
 * gated: the coordinator stands behind it, so it stops before fencing once
 * the leader key's lease may have run out (coordinator_promote_gate)
 */
int node_promote(struct node *n, bool force, bool gated, char *msg, size_t msglen);
int node_fence(struct node *n, char *msg, size_t msglen);
/* a new membership: peers (host:port pairs) and quorum, -1: keep it */
int node_add(struct node *n, const char *host, uint16_t port, int quorum,
		char *msg, size_t msglen);
int node_remove(struct node *n, const char *host, uint16_t port, int quorum,
		char *msg, size_t msglen);
/* read the configuration file again and apply its membership */
int node_reload(struct node *n, char *msg, size_t msglen);
/*
 * The coordinator carries the membership key's change to the log: peers
 * (addresses the node takes over) and quorum, without writing etcd again;
 * nothing when the log holds config_epoch or a later one already.
 */
int node_carry(struct node *n, struct repld_peer *peers, int n_peers, int quorum,
		uint64_t config_epoch, char *msg, size_t msglen);
/* n's configured peers and quorum are these (the same addresses, any
 * order); the caller holds n->change or is the only thread */
bool node_members_are(const struct node *n, const struct repld_peer *peers,
		int n_peers, int quorum);
/* a replica's peers and quorum for its next promotion (addresses taken
 * over); -1 (and freed) on a primary */
int node_take_peers(struct node *n, struct repld_peer *peers, int n_peers,
		int quorum);
/* a primary's stored membership; -1 when not a primary (or changing) */
int node_membership(struct node *n, struct repl_membership *out);

/* false when the log is open (or the node never was a primary) */
bool node_reopen_info(struct node *n, struct node_reopen *out);

/* every TICK: notices a fenced primary or a failed replica; -1 or an exit code */
int node_tick(struct node *n);

/* drain the appenders, close the log; the daemon's exit code */
int node_stop(struct node *n);
/* once nothing uses the node any more */
void node_free(struct node *n);

enum node_role node_role(struct node *n);
/* what the replica serves (or served last), for STATUS */
void node_replica_info(struct node *n, struct repl_replica_info *info);
/*
 * node_copy.c: sqlite_copy, followed while the node is a replica (started
 * once its replica serves, stopped before the replica stops); false: none
 * configured
 */
void node_copy_start(struct node *n, struct repl_replica_node *replica);
void node_copy_stop(struct node *n);
bool node_copy_status(struct node *n, struct rv_copy_status *st);
const char *node_role_name(enum node_role r);

#endif
