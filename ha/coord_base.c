/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_base.c -- what every part of the coordinator uses (coordinator.c
 * the loop, coord_rules.c, coord_membership.c, coord_switchover.c,
 * coord_watch.c), so that none of them calls back up into another: its
 * log and clock, the watch's wake-up, the gate's lease, the node's state,
 * etcd's answers, the worker thread (which runs the job its starter
 * gives) and a request handed to the loop.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coord_internal.h"

void
co_log(struct coordinator *c, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (c->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->log(c->log_arg, level, msg);
}

uint64_t
co_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *
coord_view_failover(const struct coord_view *v)
{
	return !v->candidate ? "off" : !v->reachable ? "paused" :
		v->maintenance ? "maintenance" : "armed";
}

/* ---- the watch's wake-up ---- */

void
co_wake(struct coordinator *c)
{
	atomic_store(&c->keys_dirty, true);
	pthread_mutex_lock(&c->lock);
	c->woken = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* ---- the promotion's gate ---- */

void
co_lease_publish(struct coordinator *c)
{
	atomic_store(&c->lease_until,
		coord_leader_state(c->leader) == COORD_LEADER_HELD ?
		coord_leader_valid_until(c->leader) : 0);
}

int
coordinator_promote_gate(void *arg)
{
	struct coordinator *c = arg;

	return co_now_ns() >= atomic_load(&c->lease_until);
}

/* ---- what the node is now ---- */

void
co_local_read(struct coordinator *c, struct ha_local *l)
{
	memset(l, 0, sizeof(*l));
	c->ops.local(c->node, l);
}

/* ---- etcd's answers ---- */

/* a call's outcome: reachability, and the last failure for status */
bool
co_etcd_ok(struct coordinator *c, enum etcd_rc rc, const char *what,
		const char *detail)
{
	uint64_t now = co_now_ns();

	if (rc == ETCD_OK) {
		if (!c->reachable) {
			co_notice(c, "coordinator: etcd answers again (%s), after %" PRIu64
				" ms: automatic failover armed", etcd_client_endpoint(c->etcd),
				(now - c->unreachable_since) / MS);
			c->reachable = true;
		}
		return true;
	}
	pthread_mutex_lock(&c->lock);
	snprintf(c->view.last_error, sizeof(c->view.last_error), "%s: %s", what,
		detail && *detail ? detail : etcd_rc_name(rc));
	pthread_mutex_unlock(&c->lock);
	if ((rc == ETCD_E_UNREACHABLE || rc == ETCD_E_TIMEOUT || rc == ETCD_E_IO) &&
	    c->reachable) {
		c->reachable = false;
		c->unreachable_since = now;
		co_warning(c, "coordinator: etcd unreachable (%s: %s): automatic failover "
			"paused; a primary goes on acknowledging while its replicas "
			"answer", what, detail && *detail ? detail : etcd_rc_name(rc));
	}
	return false;
}

bool
co_client_ok(struct coordinator *c, enum etcd_rc rc, const char *what)
{
	return co_etcd_ok(c, rc, what, etcd_client_error(c->etcd));
}

bool
co_leader_ok(struct coordinator *c, enum etcd_rc rc, const char *what)
{
	return co_etcd_ok(c, rc, what, coord_leader_error(c->leader));
}

/* ---- the worker: a promotion or a step-down, off this thread ---- */

static void *
worker_main(void *arg)
{
	struct coordinator *c = arg;

	(void)pthread_setname_np(pthread_self(), "ha-coord-work");
	c->job(c);
	atomic_store(&c->worker_state, WORKER_DONE);
	return NULL;
}

bool
co_worker_start(struct coordinator *c, enum worker_kind kind,
		void (*job)(struct coordinator *c))
{
	c->work = kind;
	c->job = job;
	c->worker_msg[0] = '\0';
	atomic_store(&c->worker_state, WORKER_RUNNING);
	if (pthread_create(&c->worker, NULL, worker_main, c) != 0) {
		atomic_store(&c->worker_state, WORKER_IDLE);
		co_error(c, "coordinator: cannot start a thread for the %s",
			kind == WORK_PROMOTE ? "promotion" : kind == WORK_CARRY ?
			"membership change" : "step-down");
		return false;
	}
	return true;
}

bool
co_request(struct coordinator *c, struct coord_req *r)
{
	pthread_mutex_lock(&c->lock);
	/* one request at a time: the slot is free once the last was answered */
	while (c->req.pending && !c->stop)
		pthread_cond_wait(&c->cond, &c->lock);
	if (c->stop) {
		pthread_mutex_unlock(&c->lock);
		return false;
	}
	c->req.pending = true;
	c->req.done = false;
	c->req.r = r;
	pthread_cond_broadcast(&c->cond);
	/* the thread answers it, or does on its way out (coord_main) */
	while (!c->req.done)
		pthread_cond_wait(&c->cond, &c->lock);
	c->req.pending = false;
	c->req.r = NULL;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	return true;
}
