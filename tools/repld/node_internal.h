/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_internal.h -- what node.c, node_role.c, node_membership.c and
 * node_reopen.c share and nothing else calls: the gate's closing and
 * opening, the roles' opening and closing, and the membership change's
 * helpers the reopen thread needs again.
 */
#ifndef REPLD_NODE_INTERNAL_H
#define REPLD_NODE_INTERNAL_H

#include "node.h"

/* node.c: the gate */

/*
 * The only writer of n->state, with n->lock held: a change the table
 * (node_state.c) does not allow is logged, and stops a debug build.
 * Wakes the appenders at the gate.
 */
void node_set_state(struct node *n, enum node_state to);
/* close the gate (to: why) and wait until every appender inside had its
 * answer */
void node_gate_close(struct node *n, enum node_state to);
/* open it again, as what the node is now (FAILED when nothing is open) */
void node_gate_open(struct node *n);

/* node_role.c: the roles */

/* how node_primary_open promotes */
struct open_how {
	bool force;		/* with fewer than n - k + 1 nodes */
	bool reconfigure;	/* the file's membership becomes the next */
	bool bootstrap;		/* the first start of a cluster */
	bool restart;		/* a start from the file, not a promotion asked */
	bool quiet;		/* the caller logs the outcome */
	/* a promotion the coordinator stands behind: it stops once the
	   leader key's lease may have run out (repl_cfg.promote_gate) */
	bool gated;
};

/*
 * Open the log as a replica and serve it in a thread.  An open that fails
 * leaves the node a replica with replica_ret set: node_tick says why.
 */
int node_replica_start(struct node *n);
/* stop serving primaries; the log is closed on return */
int node_replica_stop(struct node *n);
/* open the log as the primary: 0, or a REPL_E_* with a sentence in msg */
int node_primary_open(struct node *n, const struct open_how *how, char *msg,
		size_t msglen);
int node_primary_close(struct node *n);
/* the sentences for a log another process holds, or another cluster's */
void node_refused_locked(const char *path, char *msg, size_t msglen);
void node_other_cluster(const struct repld_conf *conf, char *msg, size_t msglen);

/* node_membership.c */

/* CLOCK_MONOTONIC in ms */
uint64_t node_now_ms(void);
/* withdraw etcd's proposal rev of a change the log never took */
void node_proposal_withdraw(struct node *n, int64_t rev, uint64_t config_epoch);

/* node_reopen.c: the reopen after a change that could reopen nothing */

#define REOPEN_FIRST_MS	2000	/* then doubled at each failure */
#define REOPEN_MAX_MS	10000

/* what may come right once nodes are back; any other failure stays */
bool node_reopen_retryable(int ret);
/* start the reopen thread; with n->change held; -1: it did not start */
int node_reopen_start(struct node *n, const char *why, uint64_t closed_ms,
		int64_t rev, uint64_t config_epoch);

#endif
