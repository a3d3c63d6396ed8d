/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_state.c -- a link's state and its failures: the one writer of
 * l->state (the changes cluster.h draws), a lost connection, a fenced
 * primary.  Every other part of a link (link.c, link_connect.c) reports
 * through these.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primary/primary.h"
#include "common/clock.h"
#include "common/elog.h"

/* how often a replica that stays down is said to be down again */
#define LINK_DOWN_SAY_MS (5 * 60 * 1000)

/* ------------------------------------------------------------------ */
/* the link's state                                                   */

static const char *const state_names[REPL_LINK_STATES] = {
	[REPL_LINK_DOWN] = "down",
	[REPL_LINK_CONNECTING] = "connecting",
	[REPL_LINK_CATCHING_UP] = "catching_up",
	[REPL_LINK_STREAMING] = "streaming",
	[REPL_LINK_DRAINING] = "draining",
	[REPL_LINK_FENCED] = "fenced",
	[REPL_LINK_RETIRED] = "retired",
};

/* the changes cluster.h draws; DRAINING to itself: a second failure */
static const bool allowed[REPL_LINK_STATES][REPL_LINK_STATES] = {
	[REPL_LINK_DOWN] = { [REPL_LINK_CONNECTING] = true, [REPL_LINK_FENCED] = true,
		[REPL_LINK_RETIRED] = true },
	[REPL_LINK_CONNECTING] = { [REPL_LINK_CATCHING_UP] = true, [REPL_LINK_DRAINING] = true },
	[REPL_LINK_CATCHING_UP] = { [REPL_LINK_STREAMING] = true, [REPL_LINK_DRAINING] = true },
	[REPL_LINK_STREAMING] = { [REPL_LINK_DRAINING] = true },
	[REPL_LINK_DRAINING] = { [REPL_LINK_DRAINING] = true, [REPL_LINK_DOWN] = true },
};

const char *
repl_link_state_name(enum repl_link_state s)
{
	return (unsigned)s < REPL_LINK_STATES ? state_names[s] : "unknown";
}

void
link_set_state(struct link *l, enum repl_link_state to)
{
	enum repl_link_state from = l->state;
	uint64_t now = clock_now_ms();

	/* a change the table does not draw is a bug: a debug build stops
	 * there, a release build says so and goes on */
	if ((unsigned)to >= REPL_LINK_STATES || !allowed[from][to]) {
		REPL_LOG_ERROR("link %s:%s: no change from %s to %s", l->host,
			l->ctl_port, repl_link_state_name(from), repl_link_state_name(to));
#ifndef NDEBUG
		fprintf(stderr, "link %s:%s: no change from %s to %s\n", l->host,
			l->ctl_port, repl_link_state_name(from), repl_link_state_name(to));
		abort();
#endif
		if ((unsigned)to >= REPL_LINK_STATES)
			return;
	}
	if (from == to)
		return;
	if (from == REPL_LINK_STREAMING)
		l->left_ms = now;	/* its lag's age from here on */
	if (l->state_since_ms && now > l->state_since_ms)
		link_count(&l->n.state_ms[from], now - l->state_since_ms);
	link_count(&l->n.entered[to], 1);
	l->state_since_ms = now;
	l->state = to;
	pthread_cond_broadcast(&l->c->cond);
}

/* ------------------------------------------------------------------ */
/* a link's connection                                                */

/* the connection is lost: it drains, its thread closes it */
void
link_fail(struct link *l, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	uint64_t now = clock_now_ms();

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	cluster_lock(l->c);
	/*
	 * Said once when it goes down; while it stays down (a reconnect every
	 * second or so) once every LINK_DOWN_SAY_MS, with what was not said
	 */
	if (l->down_since_ms == 0) {
		REPL_LOG_WARNING("replica %s:%s is down: %s", l->host, l->ctl_port, why);
		l->down_since_ms = l->down_said_ms = now;
		l->down_unsaid = 0;
	} else if (now - l->down_said_ms >= LINK_DOWN_SAY_MS) {
		REPL_LOG_WARNING("replica %s:%s is still down, for %llu s (%u failed "
			"attempts since the last line): %s", l->host, l->ctl_port,
			(unsigned long long)((now - l->down_since_ms) / 1000),
			l->down_unsaid + 1, why);
		l->down_said_ms = now;
		l->down_unsaid = 0;
	} else {
		l->down_unsaid++;
	}
	snprintf(l->why, sizeof(l->why), "%s", why);
	link_set_state(l, REPL_LINK_DRAINING);
	cluster_unlock(l->c);
}

/*
 * The replica follows a newer primary (a promotion happened): this
 * primary is deposed.  Appends waiting for durability end, none follows,
 * and no link reconnects.
 */
void
link_fenced(struct link *l, const char *why)
{
	struct cluster *c = l->c;

	cluster_lock(c);
	if (!atomic_exchange(&c->fenced, true)) {
		snprintf(c->fenced_why, sizeof(c->fenced_why), "%s", why);
		REPL_LOG_ERROR("this primary is fenced: replica %s:%s says %s; it "
			"acknowledges nothing more", l->host, l->ctl_port, why);
	}
	pthread_cond_broadcast(&c->cond);
	quorum_wake_all(c);
	cluster_unlock(c);
	for (int i = 0; i < c->n_links; i++)
		link_kick(&c->links[i]);
	link_fail(l, "fenced: %s", why);
}
