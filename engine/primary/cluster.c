/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster.c -- the primary's side of replication: the quorum, waiting for
 * durability, releasing space, and the links' lifetime (link.c runs them).
 *
 * Each replica's ring is identical in geometry to the local one, so a
 * record goes to the same offset there.  An LSN is durable when the local
 * log persisted it and the membership's rule holds (cluster_ms.c): k
 * member links of its configuration have flushed it, and while a change
 * is in progress k_old of the old configuration too.  The commit point
 * (that LSN) goes to the replicas in COMMIT messages together with each
 * one's flushed position, which is its tail hint: it is sent only after
 * the flush completed.  While a link is up, space in the local ring is
 * reused only below what it has flushed, and only after its replica's
 * checkpoint moved past it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <semaphore.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "primary/primary.h"
#include "ctl/ctl_chan.h"
#include "common/fabric.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fault.h"

/* ------------------------------------------------------------------ */
/* release                                                            */

/*
 * lsn, or less, for the replicas whose readers hold records (a retired
 * one holds nothing).  Before the SET_HEAD round (asked false): below the
 * first record each holds, as its last ACK or heartbeat said (a hold taken
 * between rounds counts from the next heartbeat on), so that no replica's
 * checkpoint passes what another one holds (each may be promoted, and
 * then its log is everybody's); and below the checkpoint of one that is
 * not streaming (not asked).  After the round: below every holder's
 * checkpoint, where its ACK said it stopped.  A hold that begins before
 * first, the log's first record, counts for nothing: what it would keep
 * is gone already, so its reader cannot go on from it (a copy with no
 * base over a released log, or one released past while it held nothing,
 * is remade: docs/sqlite.md), and counted it would only stop every
 * release, also while its replica is down.  past_down: the holds of
 * replicas that are not streaming count for nothing either (the caller's
 * bound on what a replica that is away may keep: its catch-up then finds
 * the release, and its readers the gap).  Under c->lock.
 */
static uint64_t
held_limit(struct cluster *c, uint64_t lsn, bool asked, uint64_t first,
		bool past_down)
{
	for (int i = 0; i < c->n_links; i++) {
		const struct link *l = &c->links[i];

		if (!l->holds || l->state == REPL_LINK_RETIRED || l->hold_next < first)
			continue;
		if (past_down && l->state != REPL_LINK_STREAMING)
			continue;
		if (!asked && lsn >= l->hold_next)
			lsn = l->hold_next - 1;
		if ((asked || l->state != REPL_LINK_STREAMING) && lsn >= l->replica_head)
			lsn = l->replica_head - 1;
	}
	return lsn;
}

int
cluster_release(struct cluster *c, uint64_t lsn, bool past_down)
{
	struct log_pos head, at;
	uint64_t want[CLUSTER_PEERS_MAX];
	struct timespec until;
	int ret = 0;

	rank_lock(&c->release_lock, LOCK_RANK_RELEASE);
	cluster_lock(c);
	cluster_quorum_update(c);
	if (lsn >= c->durable_lsn)
		lsn = c->durable_lsn - 1;
	for (int i = 0; i < c->n_links; i++)
		if (c->links[i].state == REPL_LINK_STREAMING &&
		    lsn >= c->links[i].flushed_lsn)
			lsn = c->links[i].flushed_lsn - 1;
	wal_positions(c->wal, &head, NULL, NULL);
	if (lsn < head.lsn) {
		cluster_unlock(c);
		goto out;	/* nothing to release */
	}
	/*
	 * A hold may keep everything: the round then moves nothing, and its
	 * ACKs say how far the holders hold now (for the next release)
	 */
	lsn = held_limit(c, lsn, false, head.lsn, past_down);
	if (lsn + 1 < head.lsn)
		lsn = head.lsn - 1;
	cluster_unlock(c);
	if (wal_pos_after(c->wal, lsn, &at))
		goto out;

	/* every live replica's checkpoint first */
	cluster_lock(c);
	for (int i = 0; i < c->n_links; i++) {
		struct link *l = &c->links[i];

		want[i] = 0;
		if (l->state != REPL_LINK_STREAMING)
			continue;
		l->head_req = at;
		want[i] = ++l->head_req_seq;
		link_kick(l);
	}
	until = clock_deadline(c->cfg.down_timeout_ms);
	for (int i = 0; i < c->n_links; i++) {
		struct link *l = &c->links[i];

		/*
		 * Only a streaming link serves the request.  One that left
		 * streaming meanwhile and came back to catch up waits for
		 * release_lock (held here) and then moves its replica's
		 * checkpoint to the new one itself: waiting for it would
		 * deadlock.
		 */
		while (want[i] && l->state == REPL_LINK_STREAMING &&
		       l->head_done_seq < want[i]) {
			c->waiters++;
			ret = pthread_cond_timedwait(&c->cond, &c->lock, &until);
			c->waiters--;
			if (ret == ETIMEDOUT) {
				/* it must not keep a checkpoint we overwrite */
				l->force_down = true;
				link_kick(l);
				until = clock_deadline(c->cfg.down_timeout_ms);
			}
		}
	}
	/* a holder's checkpoint may have stopped short of at */
	lsn = held_limit(c, lsn, true, head.lsn, past_down);
	cluster_unlock(c);
	if (lsn < head.lsn)
		goto out;
	ret = wal_release(c->wal, lsn);
out:
	rank_unlock(&c->release_lock, LOCK_RANK_RELEASE);
	return ret;
}

/* ------------------------------------------------------------------ */

int
cluster_link_status(struct cluster *c, int i, struct cluster_link_status *st)
{
	struct log_pos pub;
	bool known, streaming;
	uint64_t left;

	if (c == NULL || st == NULL || i < 0 || i >= c->cfg.n_replicas)
		return REPL_E_INVAL;
	cluster_lock(c);
	/* under c->lock: no flush completes meanwhile, so flushed <= pub */
	wal_positions(c->wal, NULL, &pub, NULL);
	st->state = c->links[i].state;
	/*
	 * A replica that is not streaming lags by what it had flushed when it
	 * left (the last known), not by nothing; one never reached under this
	 * primary reports 0 (its why says so).
	 */
	known = c->links[i].flushed_lsn > 0;
	streaming = c->links[i].state == REPL_LINK_STREAMING;
	st->flushed_lsn = known ? c->links[i].flushed_lsn - 1 : 0;
	st->lag_records = known ? pub.lsn - c->links[i].flushed_lsn : 0;
	st->reconnects = c->links[i].reconnects;
	st->member = c->links[i].member;
	st->config_epoch = c->links[i].held;
	st->holds = c->links[i].holds;
	st->hold_lsn = c->links[i].holds ? c->links[i].replica_head - 1 : 0;
	st->hold_from = c->links[i].holds ? c->links[i].hold_next : 0;
	/* a link not streaming hears no heartbeat: what it said is old */
	st->wants_base = streaming && c->links[i].wants_base;
	snprintf(st->why, sizeof(st->why), "%s", c->links[i].why);
	st->lag_bytes = known ? wal_pos_distance(c->ring_size,
			&c->links[i].flushed_pos, &pub) : 0;
	memcpy(st->transport, c->links[i].transport, sizeof(st->transport));
	memcpy(st->flush_method, c->links[i].flush_method, sizeof(st->flush_method));
	memcpy(st->backend, c->links[i].backend, sizeof(st->backend));
	left = c->links[i].left_ms;
	{
		const struct link *l = &c->links[i];
		uint64_t now = clock_now_ms();

		for (int s = 0; s < REPL_LINK_STATES; s++) {
			st->n.state_ms[s] = atomic_load_explicit(&l->n.state_ms[s],
				memory_order_relaxed);
			st->n.entered[s] = atomic_load_explicit(&l->n.entered[s],
				memory_order_relaxed);
		}
		link_progress_get(l, now, &st->catchup_total_bytes,
			&st->catchup_done_bytes, &st->catchup_eta_ms);
		/* the current state's time: up to now */
		if (l->state_since_ms && now > l->state_since_ms)
			st->n.state_ms[l->state] += now - l->state_since_ms;
		st->n.batches = atomic_load_explicit(&l->n.batches, memory_order_relaxed);
		st->n.flushes = atomic_load_explicit(&l->n.flushes, memory_order_relaxed);
		st->n.spins = atomic_load_explicit(&l->n.spins, memory_order_relaxed);
		st->n.sleeps = atomic_load_explicit(&l->n.sleeps, memory_order_relaxed);
		st->n.catch_ups = atomic_load_explicit(&l->n.catch_ups,
			memory_order_relaxed);
		st->n.full_resyncs = atomic_load_explicit(&l->n.full_resyncs,
			memory_order_relaxed);
	}
	cluster_unlock(c);
	{
		uint64_t since = streaming ?
			atomic_load(&c->links[i].waiting_since_ms) : left;
		uint64_t now = clock_now_ms();

		st->lag_ms = st->lag_records && since && now > since ? now - since : 0;
	}
	return 0;
}

int
cluster_links_up(struct cluster *c)
{
	int n = 0;

	cluster_lock(c);
	for (int i = 0; i < c->cfg.n_replicas; i++)
		n += c->links[i].state == REPL_LINK_STREAMING;
	cluster_unlock(c);
	return n;
}

uint64_t
cluster_config_epoch(struct cluster *c)
{
	uint64_t e;

	cluster_lock(c);
	e = c->ms.config_epoch;
	cluster_unlock(c);
	return e;
}

bool
cluster_config_joint(struct cluster *c)
{
	bool joint;

	cluster_lock(c);
	joint = (c->ms.flags & MEMBERSHIP_F_JOINT) != 0;
	cluster_unlock(c);
	return joint;
}

void
cluster_membership(struct cluster *c, struct membership *out)
{
	cluster_lock(c);
	*out = c->ms;
	cluster_unlock(c);
}

/* what start made, once no link thread runs */
static void
cluster_free(struct cluster *c)
{
	/*
	 * A promotion's leftover asks hold a share of the TLS context and
	 * end within their connect timeout (or at once, shut down): none
	 * outlives the cluster, whose end may be the process's.
	 */
	cluster_asks_drain(c->cfg.down_timeout_ms + 1000);
	if (c->src)
		rpma_mr_dereg(&c->src);
	if (c->peer)
		rpma_peer_delete(&c->peer);
	ctl_tls_delete(&c->tls);
	ctl_tls_delete(&c->fence_tls);
	free(c->links);
	free(c->replicas);
	free(c->names);
	if (c->lead_fd >= 0)
		close(c->lead_fd);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->release_lock);
	pthread_mutex_destroy(&c->verify_lock);
	pthread_mutex_destroy(&c->floor_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int
cluster_start(const struct cluster_cfg *cfg, struct rpma_ext_mem *mem,
		struct wal *wal, struct cluster **c_ptr)
{
	struct cluster *c;
	struct log_pos head, durable;
	pthread_condattr_t ca;
	int ret;

	if (cfg == NULL || mem == NULL || wal == NULL || c_ptr == NULL ||
	    cfg->n_replicas < 0 || cfg->n_replicas > 64 || cfg->quorum < 0 ||
	    cfg->quorum > cfg->n_replicas || cfg->provider == NULL)
		return REPL_E_INVAL;
	REPL_FAULT(REPL_E_NOMEM, {});
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return REPL_E_NOMEM;
	c->cfg = *cfg;
	c->replicas = calloc((size_t)(cfg->n_replicas ? cfg->n_replicas : 1),
		sizeof(*c->replicas));
	c->names = calloc((size_t)(cfg->n_replicas ? cfg->n_replicas : 1),
		sizeof(*c->names));
	if (REPL_FAULTED() || c->replicas == NULL || c->names == NULL) {
		free(c->replicas);
		free(c->names);
		free(c);
		return REPL_E_NOMEM;
	}
	for (int i = 0; i < cfg->n_replicas; i++) {
		const struct cluster_replica *r = &cfg->replicas[i];

		if (r->host == NULL || r->ctl_port == NULL ||
		    strlen(r->host) > MEMBER_HOST_MAX ||
		    strlen(r->ctl_port) >= sizeof(c->names[i][1])) {
			REPL_LOG_ERROR("replica %d: a host of at most %d characters and "
				"a port are needed", i, MEMBER_HOST_MAX);
			free(c->replicas);
			free(c->names);
			free(c);
			return REPL_E_INVAL;
		}
		strcpy(c->names[i][0], r->host);
		strcpy(c->names[i][1], r->ctl_port);
		c->replicas[i] = (struct cluster_replica){ c->names[i][0], c->names[i][1] };
	}
	c->cfg.replicas = c->replicas;
	if (cfg->listen_port) {
		/* no address: fence_listen.c listens on every one */
		snprintf(c->listen_names[0], sizeof(c->listen_names[0]), "%s",
			cfg->listen_addr ? cfg->listen_addr : "");
		snprintf(c->listen_names[1], sizeof(c->listen_names[1]), "%s",
			cfg->listen_port);
		c->cfg.listen_addr = cfg->listen_addr ? c->listen_names[0] : NULL;
		c->cfg.listen_port = c->listen_names[1];
	}
	snprintf(c->provider, sizeof(c->provider), "%s", cfg->provider);
	c->cfg.provider = c->provider;
	if (c->cfg.heartbeat_ms <= 0)
		c->cfg.heartbeat_ms = 100;
	if (c->cfg.down_timeout_ms <= 0)
		c->cfg.down_timeout_ms = 2000;
	if (c->cfg.promote_wait_ms <= 0)
		c->cfg.promote_wait_ms = 2 * c->cfg.down_timeout_ms;
	c->mem = mem;
	c->wal = wal;
	c->poll_auto = cfg->busy_poll_us < 0;
	c->poll_cap_ns = 1000 * (uint64_t)(cfg->busy_poll_us < 0 ? POLL_AUTO_CAP_US :
		cfg->busy_poll_us);
	{
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		c->ncpu = n > 0 ? (unsigned)n : 1;
	}
	atomic_init(&c->n_waiting, 0);
	wal_identity(wal, &c->id, &c->ring_size);
	atomic_init(&c->stopping, false);
	atomic_init(&c->spinning, false);
	c->lead_wanted = true;
	c->lead_fd = -1;
	atomic_init(&c->fenced, false);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->release_lock, NULL);
	pthread_mutex_init(&c->verify_lock, NULL);
	pthread_mutex_init(&c->floor_lock, NULL);
	/* what this node saw its peers' logs hold (cluster_floor.c) */
	peer_floors_load(mem, &c->floors);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((c->lead_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		ret = REPL_E_NOMEM;	/* no fd: resources */
		goto err;
	}

	if (cfg->tls_ca || cfg->tls_cert || cfg->tls_key) {
		const char *why = "";

		if (!cfg->tls_ca || !cfg->tls_cert || !cfg->tls_key) {
			REPL_LOG_ERROR("TLS needs a CA, a certificate and a key");
			ret = REPL_E_INVAL;
			goto err;
		}
		if (ctl_tls_new(cfg->tls_ca, cfg->tls_cert, cfg->tls_key, 0, &c->tls,
				&why) ||
		    (cfg->listen_port && ctl_tls_new(cfg->tls_ca, cfg->tls_cert,
				cfg->tls_key, 1, &c->fence_tls, &why))) {
			REPL_LOG_ERROR("%s", why);
			ret = REPL_E_INVAL;
			goto err;
		}
	} else {
		REPL_LOG_WARNING("the control channel to the replicas is plain TCP: "
			"anyone on the network can read and forge it (configure TLS)");
	}
	if ((ret = fabric_peer_new(cfg->provider, cfg->n_replicas ?
			cfg->replicas[0].host : NULL, false, &c->peer)) ||
	    (ret = rpma_ext_mr_reg_mem(c->peer, mem, RPMA_MR_USAGE_WRITE_SRC |
			RPMA_MR_USAGE_READ_DST, &c->src))) {
		REPL_LOG_ERROR("cannot prepare the %s fabric for replication",
			cfg->provider);
		goto err;
	}
	{
		enum rpma_ext_transport t = RPMA_EXT_TRANSPORT_VERBS;

		/* libfabric's sockets: each look at the completions is a syscall */
		(void)rpma_ext_peer_get_transport(c->peer, &t);
		c->poll_is_syscall = t != RPMA_EXT_TRANSPORT_VERBS;
	}
	if (c->id.node_id > 0xffff) {
		/* epochs carry it in 16 bits (promote.c) */
		REPL_LOG_ERROR("node id %u is above 65535", c->id.node_id);
		ret = REPL_E_INVAL;
		goto err;
	}
	if ((ret = cluster_ms_choose(c)))
		goto err;
	c->links = calloc((size_t)(c->n_links ? c->n_links : 1), sizeof(*c->links));
	if (REPL_FAULTED() || c->links == NULL) {
		ret = REPL_E_NOMEM;
		goto err;
	}
	for (int i = 0; i < c->n_links; i++) {
		c->links[i].c = c;
		c->links[i].idx = i;
		c->links[i].host = c->peers[i].host;
		c->links[i].ctl_port = c->peers[i].port;
	}
	if ((ret = cluster_promote(c)) || (ret = cluster_ms_adopt(c))) {
		if (ret == REPL_E_MEMBERSHIP || ret == REPL_E_NO_QUORUM)
			goto err;
		REPL_LOG_ERROR("cannot become the primary (%d)", ret);
		goto err;
	}
	wal_positions(wal, &head, NULL, &durable);
	/*
	 * With replicas to wait for, a record the local log holds is not
	 * committed until they confirm it again: it may never have been
	 * acknowledged.
	 */
	if (c->ms.k > 0 || c->ms.k_old > 0 || !(c->self_flags & MEMBER_F_NEW))
		durable = head;
	c->durable_lsn = durable.lsn;
	atomic_init(&c->durable_atomic, durable.lsn);
	for (int i = 0; i < c->n_links; i++) {
		struct link *l = &c->links[i];

		l->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_mutex_init(&l->io_lock, NULL);
		snprintf(l->why, sizeof(l->why), "not connected yet");
		l->state_since_ms = clock_now_ms();
		atomic_store(&l->n.entered[REPL_LINK_DOWN], 1);
		if (l->kick_fd < 0 || REPL_FAULTED() ||
		    pthread_create(&l->thread, NULL, link_main, l)) {
			if (l->kick_fd >= 0)
				close(l->kick_fd);
			pthread_mutex_destroy(&l->io_lock);
			c->n_links = i;
			cluster_stop(&c);
			return REPL_E_NOMEM;	/* no thread or fd: resources */
		}
	}
	/* not fatal: without it a promotion elsewhere cannot fence this one */
	(void)fence_listen_start(c);
	/* the links run: c->ms is read under c->lock from here on */
	if (!cluster_ms_wait_final(c, c->cfg.promote_wait_ms))
		REPL_LOG_WARNING("membership: the change is not committed within "
			"%d ms: too few nodes of the old configuration hold it; "
			"nothing is acknowledged without both configurations' "
			"quorums until it is", c->cfg.promote_wait_ms);
	*c_ptr = c;
	return 0;
err:
	cluster_free(c);
	return ret;
}

/*
 * Wait for the stopping link threads, each at most twice the down timeout
 * (every wait of theirs is bounded by it): a stop always ends.  A thread
 * that is still running then is logged and left to the process's exit;
 * false if one was.
 */
static bool
links_join(struct cluster *c)
{
	int ms = 2 * c->cfg.down_timeout_ms;
	struct timespec until;
	bool all = true;
	long ns;

	clock_gettime(CLOCK_REALTIME, &until);	/* pthread_timedjoin_np's */
	ns = until.tv_nsec + (long)(ms % 1000) * 1000000L;
	until.tv_sec += ms / 1000 + ns / 1000000000L;
	until.tv_nsec = ns % 1000000000L;
	for (int i = 0; i < c->n_links; i++) {
		struct link *l = &c->links[i];

		if (pthread_timedjoin_np(l->thread, NULL, &until) == 0)
			continue;
		REPL_LOG_ERROR("stopping: the link of replica %s:%s did not end "
			"within %d ms: left running", l->host, l->ctl_port, ms);
		pthread_detach(l->thread);
		all = false;
	}
	return all;
}

void
cluster_stop(struct cluster **c_ptr)
{
	struct cluster *c;

	if (c_ptr == NULL || (c = *c_ptr) == NULL)
		return;
	{
		/*
		 * A clean close: give streaming replicas what was published
		 * (bounded by the down timeout), so no flush is cut off.
		 */
		struct timespec until = clock_deadline(c->cfg.down_timeout_ms);
		struct log_pos pub;
		bool pending = true, late = false;

		wal_positions(c->wal, NULL, &pub, NULL);
		cluster_lock(c);
		while (pending && !late) {
			pending = false;
			for (int i = 0; i < c->n_links; i++) {
				struct link *l = &c->links[i];

				if (l->state == REPL_LINK_STREAMING && l->flushed_lsn < pub.lsn) {
					pending = true;
					link_kick(l);
				}
			}
			if (pending) {
				c->waiters++;
				late = pthread_cond_timedwait(&c->cond, &c->lock,
					&until) == ETIMEDOUT;
				c->waiters--;
			}
		}
		for (int i = 0; late && i < c->n_links; i++)
			if (c->links[i].state == REPL_LINK_STREAMING &&
			    c->links[i].flushed_lsn < pub.lsn)
				REPL_LOG_WARNING("stopping: replica %s:%s flushed up to "
					"LSN %llu, not %llu, within %d ms: its copy ends "
					"there", c->links[i].host, c->links[i].ctl_port,
					(unsigned long long)c->links[i].flushed_lsn - 1,
					(unsigned long long)pub.lsn - 1,
					c->cfg.down_timeout_ms);
		cluster_unlock(c);
	}
	atomic_store(&c->stopping, true);
	cluster_lead_wake(c);
	fence_listen_stop(c);
	for (int i = 0; i < c->n_links; i++) {
		uint64_t one = 1;

		(void)!write(c->links[i].kick_fd, &one, sizeof(one));
	}
	if (!links_join(c)) {
		/* a thread may still use all of it: nothing is freed */
		*c_ptr = NULL;
		return;
	}
	for (int i = 0; i < c->n_links; i++) {
		close(c->links[i].kick_fd);
		pthread_mutex_destroy(&c->links[i].io_lock);
	}
	cluster_free(c);
	*c_ptr = NULL;
}
