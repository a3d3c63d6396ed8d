/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_reopen.c -- after a membership change that could reopen neither
 * configuration: a thread of its own reopens the old one with back-off
 * while the gate refuses appenders (NODE_E_REOPENING), until enough of its
 * nodes answer, a newer primary is found, or a stop begins.  Apart from
 * node_membership.c because it outlives the change that started it.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "deadline.h"
#include "log.h"
#include "node_internal.h"

/* what may come right once nodes are back; any other failure stays */
bool
node_reopen_retryable(int ret)
{
	return ret == REPL_E_NO_QUORUM || ret == REPL_E_TRANSPORT ||
		ret == REPL_E_TIMEDOUT;
}

bool
node_reopen_info(struct node *n, struct node_reopen *out)
{
	bool on;

	pthread_mutex_lock(&n->lock);
	/* (still, once a stop began: the log stays closed) */
	on = node_state_reopening(n->state, n->stop_from);
	if (on)
		*out = n->reopen;
	pthread_mutex_unlock(&n->lock);
	return on;
}

/* to: NODE_ST_REOPENING, or back (the same state: only what it shows) */
static void
reopen_set(struct node *n, enum node_state to, unsigned attempts,
		const char *why)
{
	pthread_mutex_lock(&n->lock);
	node_set_state(n, to);
	n->reopen.attempts = attempts;
	snprintf(n->reopen.error, sizeof(n->reopen.error), "%s", why);
	/* appenders waiting at the gate are refused now */
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

/* wait ms unless a stop begins; false: it did */
static bool
reopen_wait(struct node *n, int ms)
{
	struct timespec until;
	bool stopping;

	until = deadline_after_ms(CLOCK_REALTIME, ms);
	pthread_mutex_lock(&n->lock);
	while (!node_state_stopping(n->state) &&
	       pthread_cond_timedwait(&n->cond, &n->lock, &until) != ETIMEDOUT)
		;
	stopping = node_state_stopping(n->state);
	pthread_mutex_unlock(&n->lock);
	return !stopping;
}

static void *
reopen_main(void *arg)
{
	struct node *n = arg;
	int delay = REOPEN_FIRST_MS;
	char why[512];

	(void)pthread_setname_np(pthread_self(), "repld-reopen");
	while (reopen_wait(n, delay)) {
		struct node_reopen r = { 0 };
		int ret;

		pthread_mutex_lock(&n->change);
		pthread_mutex_lock(&n->lock);
		ret = node_state_stopping(n->state);
		pthread_mutex_unlock(&n->lock);
		if (ret) {
			pthread_mutex_unlock(&n->change);
			break;
		}
		/* before the open: once the log is open the node is not
		 * reopening any more */
		(void)node_reopen_info(n, &r);
		/*
		 * As a restart: should another node have been promoted while
		 * the log was closed, this one must not undo that failover.
		 */
		ret = node_primary_open(n, &(struct open_how){ .restart = true,
			.quiet = true }, why, sizeof(why));
		if (ret == 0) {
			log_notice("the log is reopened under the old membership "
				"after %u failed attempts (%llu s closed): serving "
				"again", r.attempts,
				(unsigned long long)(node_now_ms() - r.since_ms) / 1000);
			node_proposal_withdraw(n, n->reopen_rev, n->reopen_config_epoch);
		} else if (ret == REPL_E_SUPERSEDED) {
			log_warning("not the primary: a newer primary took over while "
				"this node's log was closed; serving as a replica "
				"(promote it explicitly to lead again)");
			if (node_replica_start(n) != 0)
				n->exit_code = REPLD_EXIT_FAILED;
		} else if (!node_reopen_retryable(ret)) {
			log_error("the log stays closed: reopening it under the old "
				"membership failed for good: %s", why);
			n->exit_code = REPLD_EXIT_FAILED;
		} else {
			reopen_set(n, NODE_ST_REOPENING, r.attempts + 1, why);
			log_warning("the log is closed: reopening the log under the old "
				"membership failed (attempt %u, closed for %llu s): %s; "
				"appends are refused meanwhile; next attempt in %d s",
				r.attempts + 1,
				(unsigned long long)(node_now_ms() - r.since_ms) / 1000, why,
				(delay * 2 < REOPEN_MAX_MS ? delay * 2 : REOPEN_MAX_MS) /
					1000);
			pthread_mutex_unlock(&n->change);
			delay = delay * 2 < REOPEN_MAX_MS ? delay * 2 : REOPEN_MAX_MS;
			continue;
		}
		if (n->exit_code < 0) {
			/* serving again, in the state of the log it opened
			 * (every writer of the state holds n->change) */
			reopen_set(n, n->state, 0, "");
			node_gate_open(n);
		}
		pthread_mutex_unlock(&n->change);
		break;
	}
	return NULL;
}

/*
 * Reopen the log in the background: the node stays down with its gate
 * closed, refusing appends, until it serves again.  With n->change held.
 * -1 when the thread cannot be started.
 */
int
node_reopen_start(struct node *n, const char *why, uint64_t closed_ms, int64_t rev,
		uint64_t config_epoch)
{
	/* a thread before this one has ended: it served again */
	if (n->reopen_joinable) {
		pthread_join(n->reopen_thread, NULL);
		n->reopen_joinable = false;
	}
	n->reopen_rev = rev;
	n->reopen_config_epoch = config_epoch;
	pthread_mutex_lock(&n->lock);
	n->reopen.since_ms = closed_ms;
	pthread_mutex_unlock(&n->lock);
	reopen_set(n, NODE_ST_REOPENING, 0, why);
	if (pthread_create(&n->reopen_thread, NULL, reopen_main, n) != 0) {
		reopen_set(n, NODE_ST_SWITCHING, 0, "");
		return -1;
	}
	n->reopen_joinable = true;
	return 0;
}
