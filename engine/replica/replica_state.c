/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_state.c -- where a replica stands with the primaries (replica.h
 * draws the changes; session_state is their one writer, the replica's
 * thread), and the copy of it a daemon shows.
 */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deadline.h"
#include "common/clock.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fabric.h"
#include "common/membership.h"
#include "replica/replica_internal.h"

static const char *const state_names[REPL_SESSION_STATES] = {
	[REPL_SESSION_IDLE] = "idle",
	[REPL_SESSION_FLOOR] = "floor",
	[REPL_SESSION_FOLLOWING] = "following",
	[REPL_SESSION_FENCED_FOR] = "fenced_for",
	[REPL_SESSION_STOPPED] = "stopped",
};

/* replica.h draws them */
static const bool allowed[REPL_SESSION_STATES][REPL_SESSION_STATES] = {
	[REPL_SESSION_IDLE] = { [REPL_SESSION_FLOOR] = true, [REPL_SESSION_FOLLOWING] = true,
		[REPL_SESSION_FENCED_FOR] = true, [REPL_SESSION_STOPPED] = true },
	[REPL_SESSION_FLOOR] = { [REPL_SESSION_IDLE] = true, [REPL_SESSION_STOPPED] = true },
	[REPL_SESSION_FOLLOWING] = { [REPL_SESSION_IDLE] = true },
	[REPL_SESSION_FENCED_FOR] = { [REPL_SESSION_IDLE] = true },
};

const char *
replica_session_state_name(enum repl_session_state s)
{
	return (unsigned)s < REPL_SESSION_STATES ? state_names[s] : "?";
}

void
session_state(struct replica *r, enum repl_session_state to)
{
	uint64_t now = clock_now_ms();

	/* as a link's: a debug build stops at a change not drawn, a release
	 * build says so and goes on */
	if ((unsigned)to >= REPL_SESSION_STATES || !allowed[r->state][to]) {
		REPL_LOG_ERROR("replica: no change from %s to %s",
			replica_session_state_name(r->state),
			replica_session_state_name(to));
#ifndef NDEBUG
		fprintf(stderr, "replica: no change from %s to %s\n",
			replica_session_state_name(r->state),
			replica_session_state_name(to));
		abort();
#endif
		if ((unsigned)to >= REPL_SESSION_STATES)
			return;
	}
	if (now > r->state_since_ms)
		r->n.state_ms[r->state] += now - r->state_since_ms;
	r->n.entered[to]++;
	r->state_since_ms = now;
	r->state = to;
}

int
replica_state_init(struct replica_state *st)
{
	if (st == NULL)
		return REPL_E_INVAL;
	pthread_condattr_t ca;
	int ret;

	memset(&st->snap, 0, sizeof(st->snap));
	st->commit_lsn = 0;
	memset(st->holding, 0, sizeof(st->holding));
	memset(st->hold_lsn, 0, sizeof(st->hold_lsn));
	st->wants_base = false;
	st->told_hold_next = 0;
	st->told_session = 0;
	if (pthread_mutex_init(&st->lock, NULL))
		return REPL_E_NOMEM;
	/* waits are timed on the monotonic clock, as every timeout here */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	ret = pthread_cond_init(&st->committed, &ca);
	pthread_condattr_destroy(&ca);
	if (ret) {
		pthread_mutex_destroy(&st->lock);
		return REPL_E_NOMEM;
	}
	return 0;
}

void
replica_state_destroy(struct replica_state *st)
{
	if (st) {
		pthread_cond_destroy(&st->committed);
		pthread_mutex_destroy(&st->lock);
	}
}

/* the lowest hold of every reader that holds (under the state's lock) */
static bool
held_locked(const struct replica_state *st, uint64_t *lsn)
{
	bool held = false;

	*lsn = 0;
	for (int i = 0; i < REPL_HOLD_SLOTS; i++)
		if (st->holding[i] && (!held || st->hold_lsn[i] < *lsn)) {
			*lsn = st->hold_lsn[i];
			held = true;
		}
	return held;
}

void
replica_state_get(struct replica_state *st, struct repl_replica_info *out)
{
	pthread_mutex_lock(&st->lock);
	*out = st->snap;
	out->commit_lsn = st->commit_lsn;
	/* a replica catching up may hold less than is committed */
	out->readable_lsn = st->commit_lsn < out->last_lsn ? st->commit_lsn :
		out->last_lsn;
	out->holding = held_locked(st, &out->hold_lsn);
	/* told in this session only: a new primary has heard nothing yet */
	out->hold_told = out->following && st->told_session == out->sessions ?
		st->told_hold_next : 0;
	out->primary_silent_ms = st->heard_at == 0 ? UINT64_MAX :
		clock_now_ms() - st->heard_at;
	pthread_mutex_unlock(&st->lock);
}

void
replica_state_commit(struct replica_state *st, uint64_t commit_lsn)
{
	pthread_mutex_lock(&st->lock);
	if (commit_lsn != st->commit_lsn) {
		st->commit_lsn = commit_lsn;
		pthread_cond_broadcast(&st->committed);
	}
	pthread_mutex_unlock(&st->lock);
}

void
replica_state_hold(struct replica_state *st, int slot, uint64_t lsn)
{
	pthread_mutex_lock(&st->lock);
	st->holding[slot] = true;
	st->hold_lsn[slot] = lsn;
	pthread_mutex_unlock(&st->lock);
}

void
replica_state_unhold(struct replica_state *st, int slot)
{
	pthread_mutex_lock(&st->lock);
	st->holding[slot] = false;
	st->hold_lsn[slot] = 0;
	pthread_mutex_unlock(&st->lock);
}

bool
replica_state_held(struct replica_state *st, uint64_t *lsn)
{
	bool held;

	pthread_mutex_lock(&st->lock);
	held = held_locked(st, lsn);
	pthread_mutex_unlock(&st->lock);
	return held;
}

uint64_t
replica_state_tell_hold(struct replica_state *st, uint64_t session)
{
	uint64_t held, next;

	pthread_mutex_lock(&st->lock);
	next = held_locked(st, &held) ? held + 1 : 0;
	st->told_hold_next = next;
	st->told_session = session;
	pthread_mutex_unlock(&st->lock);
	return next;
}

void
replica_state_want_base(struct replica_state *st, bool want)
{
	pthread_mutex_lock(&st->lock);
	st->wants_base = want;
	pthread_mutex_unlock(&st->lock);
}

bool
replica_state_wants_base(struct replica_state *st)
{
	bool want;

	pthread_mutex_lock(&st->lock);
	want = st->wants_base;
	pthread_mutex_unlock(&st->lock);
	return want;
}

int
replica_state_wait(struct replica_state *st, uint64_t lsn, int timeout_ms)
{
	struct timespec until;
	int ret = 0;

	until = deadline_after_ms(CLOCK_MONOTONIC, timeout_ms);
	pthread_mutex_lock(&st->lock);
	while (st->commit_lsn < lsn && ret == 0)
		ret = pthread_cond_timedwait(&st->committed, &st->lock, &until);
	ret = st->commit_lsn >= lsn ? 0 : REPL_E_TIMEDOUT;
	pthread_mutex_unlock(&st->lock);
	return ret;
}

/* take a fresh copy, outside the state's lock, then swap it in */
void
publish_state(struct replica *r)
{
	struct replica_state *st = r->cfg->state;
	struct repl_replica_info s = { 0 };
	enum rpma_ext_mem_backend b;
	struct membership ms;
	struct wal_status ws;
	uint64_t now = clock_now_ms();

	if (st == NULL || r->wal == NULL)
		return;
	wal_status(r->wal, &ws);
	membership_load(r->mem, &ms);
	s.epoch = r->id.epoch;
	s.config_epoch = ms.config_epoch;
	s.config_joint = (ms.flags & MEMBERSHIP_F_JOINT) != 0;
	s.config_removed = membership_leaves_out(&ms, r->id.node_id);
	if (r->s.ch) {
		int at = membership_find(&ms, r->s.primary, NULL, 0);

		s.following = 1;
		s.primary_id = r->s.primary;
		/*
		 * Where clients and peers reach it: its control address as the
		 * membership names it.  The connection's own peer address is
		 * the primary's ephemeral source port, reachable by nobody.
		 */
		if (at >= 0 && ms.m[at].port != 0 && ms.m[at].host[0] != '\0')
			snprintf(s.primary_addr, sizeof(s.primary_addr),
				strchr(ms.m[at].host, ':') ? "[%s]:%u" : "%s:%u",
				ms.m[at].host, (unsigned)ms.m[at].port);
		else
			snprintf(s.primary_addr, sizeof(s.primary_addr), "%s",
				ctl_chan_peer(r->s.ch));
	}
	s.first_lsn = ws.first_lsn;
	s.last_lsn = ws.last_lsn;
	s.durable_lsn = ws.durable_lsn;
	s.used_bytes = ws.used;
	s.size_bytes = ws.size;
	if (rpma_ext_mem_get_backend(r->mem, &b) == 0)
		snprintf(s.backend, sizeof(s.backend), "%s", fabric_backend_name(b));
	s.session = r->state;
	for (int i = 0; i < REPL_SESSION_STATES; i++) {
		s.state_ms[i] = r->n.state_ms[i];
		s.state_entries[i] = r->n.entered[i];
	}
	if (now > r->state_since_ms)
		s.state_ms[r->state] += now - r->state_since_ms;
	s.sessions = r->n.sessions;
	s.fences = r->n.fences;
	s.silent_drops = r->n.silent_drops;
	s.queries = r->n.queries;
	s.truncates = r->n.truncates;
	s.head_moves = r->n.head_moves;
	s.commits = r->n.commits;
	{
		struct rpma_ext_mem_stats mst;

		if (rpma_ext_mem_get_stats(r->mem, &mst) == 0) {
			s.persist_ranges = mst.ranges;
			s.persist_barriers = mst.barriers;
		}
	}
	if (r->floor) {
		s.floor_pending = 1;
		s.floor_needed = promise_floor_needed(r->floor);
		s.floor_answered = promise_floor_answered(r->floor);
	}
	pthread_mutex_lock(&st->lock);
	st->snap = s;
	st->heard_at = r->heard_at;
	pthread_mutex_unlock(&st->lock);
}
