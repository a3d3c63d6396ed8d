/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_gate.c -- a repld node's state and its gate (enter, leave, close,
 * open): what every change and every append passes through, in one
 * place, below the changes (node_role.c, node_membership.c,
 * node_reopen.c), the lifecycle (node.c) and retention, which all use it.
 * See node.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "deadline.h"
#include "log.h"
#include "node_internal.h"

const char *
node_role_name(enum node_role r)
{
	return r == NODE_PRIMARY ? "primary" : r == NODE_REPLICA ? "replica" : "down";
}

enum node_role
node_role(struct node *n)
{
	enum node_role r;

	pthread_mutex_lock(&n->lock);
	r = node_state_role(n->state, n->stop_from);
	pthread_mutex_unlock(&n->lock);
	return r;
}

void
node_set_state(struct node *n, enum node_state to)
{
	enum node_state from = n->state;

	if (from == to)
		return;
	/* a change the table does not draw is a bug: a debug build stops
	 * there, a release build says so and goes on */
	if (!node_state_allowed(from, to)) {
		log_error("node: no change from %s to %s", node_state_name(from),
			node_state_name(to));
#ifndef NDEBUG
		abort();
#endif
		if ((unsigned)to >= NODE_STATES)
			return;
	}
	if (to == NODE_ST_STOPPING)
		n->stop_from = from;
	n->state = to;
	/* appenders at the gate look again: enter, wait on, or be refused */
	pthread_cond_broadcast(&n->cond);
}

/* ---- the gate ---- */

struct repl *
node_enter(struct node *n, int *err)
{
	struct repl *repl = NULL;

	pthread_mutex_lock(&n->lock);
	/* a reopen may take long: its appenders are told, not kept waiting */
	while (node_state_waits(n->state))
		pthread_cond_wait(&n->cond, &n->lock);
	if (node_state_fenced(n->state, n->stop_from))
		*err = REPL_E_FENCED;
	else if (node_state_stopping(n->state))
		*err = NODE_E_STOPPING;
	else if (n->state == NODE_ST_REOPENING)
		*err = NODE_E_REOPENING;
	else if (n->state != NODE_ST_PRIMARY)
		*err = NODE_E_WRONG_ROLE;
	else {
		repl = n->repl;
		n->active++;
	}
	pthread_mutex_unlock(&n->lock);
	return repl;
}

struct repl *
node_try_enter(struct node *n, bool *changing)
{
	struct repl *repl = NULL;

	pthread_mutex_lock(&n->lock);
	*changing = node_state_changing(n->state);
	if (n->state == NODE_ST_PRIMARY) {
		repl = n->repl;
		n->active++;
	}
	pthread_mutex_unlock(&n->lock);
	return repl;
}

void
node_leave(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	if (--n->active == 0)
		pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

void
node_gate_close(struct node *n, enum node_state to)
{
	/* a wait longer than a second is said, and again every 10 s */
	struct timespec say = deadline_after_ms(CLOCK_REALTIME, 1000);
	unsigned waited_s = 1;

	pthread_mutex_lock(&n->lock);
	node_set_state(n, to);
	while (n->active > 0) {
		if (pthread_cond_timedwait(&n->cond, &n->lock, &say) != ETIMEDOUT)
			continue;
		log_notice("%s: waiting for %d operations on the log to end (an append "
			"waits for its quorum until it is durable or times out), %u s "
			"so far", to == NODE_ST_STOPPING ? "stopping" : "changing state",
			n->active, waited_s);
		say = deadline_after_ms(CLOCK_REALTIME, 10000);
		waited_s += 10;
	}
	pthread_mutex_unlock(&n->lock);
}

void
node_gate_open(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	node_set_state(n, node_state_opened(node_state_role(n->state,
		n->stop_from)));
	pthread_mutex_unlock(&n->lock);
}

/* ---- start, tick, stop ---- */
