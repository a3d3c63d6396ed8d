/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coordinator.c -- automatic failover on etcd: the coordinator's thread,
 * this node's member key and the view status reads (coordinator.h says
 * what and why; coord_rules.c the leader key's rules, coord_keys.c how
 * the keys' values are written and read).
 *
 * One tick (a tenth of the lease, 100..500 ms): renew what is due, read
 * the cluster's keys, then do what the rules say (ha/ha_rules.h: ha_step
 * has the table; coord_rules.c does its actions): a promotion or a
 * step-down runs in the worker, and its end is taken up at the next tick
 * (promoted --> leader "primary", epochs, history; refused --> resign,
 * back off).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deadline.h"
#include "coord_internal.h"

/* ---- this node's member key ---- */

static void
member_publish(struct coordinator *c, const struct ha_local *l, uint64_t now)
{
	char value[COORD_VALUE_MAX];
	struct coord_member m = {
		.node_id = c->node_id, .epoch = l->epoch, .last_lsn = l->last_lsn,
		.last_epoch = l->epoch, .link_up = l->link_up,
		.candidate = c->ha_cfg.candidate,
	};
	size_t len;
	int64_t ttl;
	enum etcd_rc rc;

	snprintf(m.role, sizeof(m.role), "%s", ha_role_name(l->role));
	if (c->member_lease == 0 || now >= c->member_renew_at) {
		if (c->member_lease != 0) {
			rc = etcd_lease_keepalive(c->etcd, c->member_lease, &ttl, NULL);
			if (rc == ETCD_OK && ttl > 0) {
				c->member_renew_at = now + c->lease_ms * MS / 3;
			} else if (rc == ETCD_OK || rc == ETCD_E_LEASE_NOT_FOUND) {
				c->member_lease = 0;	/* expired: grant anew */
				c->published.node_id = 0;
			} else {
				(void)co_client_ok(c, rc, "member lease keepalive");
				return;
			}
			(void)co_client_ok(c, ETCD_OK, NULL);
		}
		if (c->member_lease == 0) {
			int64_t id;

			rc = etcd_lease_grant(c->etcd, (int64_t)(c->lease_ms / 1000), &id, &ttl);
			if (!co_client_ok(c, rc, "member lease grant"))
				return;
			c->member_lease = id;
			c->member_renew_at = now + c->lease_ms * MS / 3;
			c->published.node_id = 0;
		}
	}
	/*
	 * Role and link at once (the campaign rule reads them); the position
	 * at most every lease/3: it only orders the candidates.
	 */
	if (c->published.node_id != 0 && coord_member_same(&m, &c->published) &&
	    (m.last_lsn == c->published.last_lsn ||
	     now - c->published_at < c->lease_ms * MS / 3))
		return;
	if ((len = coord_member_value(&m, c->ctl_addr, value, sizeof(value))) == 0)
		return;
	rc = etcd_put(c->etcd, c->k_me, strlen(c->k_me), value, len, c->member_lease,
		NULL);
	if (!co_client_ok(c, rc, "member put"))
		return;
	c->published = m;
	c->published_at = now;
}

/* ---- the loop ---- */

static void
read_keys(struct coordinator *c, uint64_t now)
{
	struct coord_keys k;
	char why[256];
	enum etcd_rc rc = coord_keys_read(c->etcd, c->prefix, &k, why,
		sizeof(why));

	if (!co_etcd_ok(c, rc, "read", why)) {
		c->keys_valid = false;
		return;
	}
	c->keys = k;
	c->keys_valid = true;
	c->keys_at = now;
}

static void
view_update(struct coordinator *c, uint64_t now)
{
	struct coord_view *v = &c->view;

	pthread_mutex_lock(&c->lock);
	snprintf(v->endpoint, sizeof(v->endpoint), "%s", etcd_client_endpoint(c->etcd));
	v->reachable = c->reachable;
	v->unreachable_ms = c->reachable ? 0 : (now - c->unreachable_since) / MS;
	v->candidate = c->ha_cfg.candidate;
	snprintf(v->waiting, sizeof(v->waiting), "%s", ha_wait_name(c->ha.wait));
	v->etcd_requests = etcd_client_requests(c->etcd);
	v->holds_leader = coord_leader_state(c->leader) == COORD_LEADER_HELD;
	if (v->holds_leader)
		v->lease_ms = (uint64_t)coord_leader_ttl(c->leader) * 1000;
	else if (v->lease_ms == 0)
		v->lease_ms = c->lease_ms;
	if (c->keys_at != 0) {
		const struct coord_keys *k = &c->keys;

		v->has_leader = k->has_leader;
		v->leader_id = k->leader.node_id;
		v->leader_epoch = k->leader.epoch;
		snprintf(v->leader_state, sizeof(v->leader_state), "%s", k->leader.state);
		snprintf(v->leader_addr, sizeof(v->leader_addr), "%s", k->leader.ctl_addr);
		v->leader_ttl_s = k->leader_ttl_s;
		v->leader_age_ms = (now - c->keys_at) / MS;
		v->has_switchover = k->has_switchover;
		v->sw_from = k->sw.from;
		v->sw_to = k->sw.to;
		v->sw_failover = k->sw.failover;
		v->maintenance = k->has_maintenance;
		v->maint = k->maint;
		v->n_members = k->n_members;
		memcpy(v->members, k->members, sizeof(v->members));
	}
	pthread_mutex_unlock(&c->lock);
}

static void
tick(struct coordinator *c)
{
	uint64_t now = co_now_ns();
	struct ha_local l = { 0 };
	int ws = atomic_load(&c->worker_state);

	if (ws == WORKER_DONE) {
		pthread_join(c->worker, NULL);
		atomic_store(&c->worker_state, WORKER_IDLE);
		if (c->work == WORK_PROMOTE)
			co_promoted(c, now);
		else if (c->work == WORK_CARRY)
			co_carried(c, now);
		else
			co_stepped_down(c);
	}
	co_local_read(c, &l);
	member_publish(c, &l, now);
	co_renew(c, now);
	co_lease_publish(c);
	/*
	 * The keys as they are: at once when the watch saw a change, every
	 * tick while it is down, and every half lease in any case.
	 */
	if (!atomic_load(&c->watch_up) || atomic_exchange(&c->keys_dirty, false) ||
	    !c->keys_valid || now - c->keys_at >= c->lease_ms * MS / 2)
		read_keys(c, now);

	pthread_mutex_lock(&c->lock);
	if (c->req.pending && !c->req.done) {
		/* the asker waits until done: r is its, and ours meanwhile */
		struct coord_req *r = c->req.r;

		pthread_mutex_unlock(&c->lock);
		if (r->kind == REQ_SWITCHOVER)
			co_serve_request(c, r->to, r->failover, r->ans);
		else if (r->kind == REQ_MAINTENANCE)
			co_serve_maintenance(c, r->on, r->reason, r->maint);
		else if (r->kind == REQ_HISTORY)
			co_serve_history(c, r->history);
		else
			r->ret = co_serve_membership(c, r->kind == REQ_WITHDRAW, r->ms,
				r->rev, &r->rev, r->msg, r->msglen);
		read_keys(c, now);
		pthread_mutex_lock(&c->lock);
		c->req.done = true;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);

	if (c->keys_valid)
		co_maintenance_seen(c);
	if (l.role == HA_ROLE_REPLICA && c->keys_valid)
		co_membership_view(c, l.config_epoch, false);
	co_rules_tick(c, &l, now);
	co_archiver_tick(c);
	co_lease_publish(c);
	view_update(c, now);
}

static void *
coord_main(void *arg)
{
	struct coordinator *c = arg;
	struct timespec until;

	(void)pthread_setname_np(pthread_self(), "ha-coord");
	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		pthread_mutex_unlock(&c->lock);
		tick(c);
		pthread_mutex_lock(&c->lock);
		if (c->stop || (c->req.pending && !c->req.done))
			continue;
		if (c->woken) {
			c->woken = false;
			continue;
		}
		until = deadline_after_ms(CLOCK_MONOTONIC, (long)c->tick_ms);
		(void)pthread_cond_timedwait(&c->cond, &c->lock, &until);
		c->woken = false;
	}
	if (c->req.pending && !c->req.done) {
		co_request_stopping(c->req.r);
		c->req.done = true;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* ---- start, stop, the admin's calls ---- */

static char *
cat(const char *a, const char *b)
{
	char *s;

	return asprintf(&s, "%s%s", a, b) < 0 ? NULL : s;
}

void
coordinator_free(struct coordinator *c)
{
	if (c == NULL)
		return;
	co_watch_stop(c->watch);	/* it wakes c: gone before c goes */
	coord_leader_free(c->leader);
	free(c->prefix);
	free(c->k_members);
	free(c->k_me);
	free(c->k_switchover);
	free(c->k_history);
	free(c->k_leader);
	free(c->k_membership);
	free(c->k_maintenance);
	free(c->k_archiver);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int
coordinator_start(const struct coord_cfg *cfg, const struct coord_node_ops *ops,
		void *node, struct coordinator **out, char *err, size_t errlen)
{
	struct coordinator *c;
	struct etcd_client_cfg ecfg = {
		.endpoints = cfg->endpoints, .n_endpoints = cfg->n_endpoints,
		.timeout_ms = cfg->timeout_ms, .ca_file = cfg->ca,
		.cert_file = cfg->cert, .key_file = cfg->key,
	};
	struct coord_leader_cfg lcfg = {
		.etcd = &ecfg, .ttl_s = (int64_t)(cfg->lease_ms / 1000),
		.node_id = cfg->node_id,
	};
	char me[16];

	*out = NULL;
	if (cfg->n_endpoints == 0 || cfg->lease_ms < 1000 || ops->local == NULL ||
	    ops->membership == NULL || ops->promote == NULL ||
	    ops->step_down == NULL || ops->carry == NULL || ops->take_peers == NULL) {
		snprintf(err, errlen, "coordinator: no etcd endpoint, a lease under "
			"1 s, or a node operation missing");
		return -1;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "coordinator: out of memory");
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	atomic_store(&c->archiver_holder, -1);	/* not read yet */
	/* the loop's deadlines are CLOCK_MONOTONIC: so must the cond's be */
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	c->node = node;
	c->ops = *ops;
	c->log = cfg->log;
	c->log_arg = cfg->log_arg;
	c->node_id = cfg->node_id;
	c->lease_ms = cfg->lease_ms;
	c->tick_ms = c->lease_ms / 10 < TICK_MS_MIN ? TICK_MS_MIN :
		c->lease_ms / 10 > TICK_MS_MAX ? TICK_MS_MAX : c->lease_ms / 10;
	c->reachable = true;	/* until a call says otherwise */
	c->ha_cfg = (struct ha_cfg){
		.node_id = cfg->node_id, .candidate = cfg->candidate,
		.lease_ms = c->lease_ms, .down_ms = cfg->down_ms,
	};
	ha_state_init(&c->ha, co_now_ns() / MS);
	c->seed = (unsigned)(co_now_ns() ^ (uint64_t)getpid() ^ cfg->node_id);
	snprintf(c->ctl_addr, sizeof(c->ctl_addr), "%s", cfg->ctl_addr ?
		cfg->ctl_addr : "");
	snprintf(me, sizeof(me), "%u", cfg->node_id);
	if (asprintf(&c->prefix, "%s%s/", cfg->prefix, cfg->cluster_uuid) < 0)
		c->prefix = NULL;
	if (c->prefix == NULL ||
	    (c->k_members = cat(c->prefix, "members/")) == NULL ||
	    (c->k_me = cat(c->k_members, me)) == NULL ||
	    (c->k_switchover = cat(c->prefix, "switchover")) == NULL ||
	    (c->k_history = cat(c->prefix, "history/")) == NULL ||
	    (c->k_leader = cat(c->prefix, "leader")) == NULL ||
	    (c->k_membership = cat(c->prefix, "membership")) == NULL ||
	    (c->k_maintenance = cat(c->prefix, "maintenance")) == NULL ||
	    (c->k_archiver = cat(c->prefix, "log-archiver")) == NULL) {
		snprintf(err, errlen, "coordinator: out of memory");
		coordinator_free(c);
		return -1;
	}
	lcfg.prefix = c->prefix;
	if ((c->leader = coord_leader_new(&lcfg, err, errlen)) == NULL) {
		coordinator_free(c);
		return -1;
	}
	c->etcd = coord_leader_client(c->leader);
	c->view.candidate = cfg->candidate;
	c->view.lease_ms = c->lease_ms;
	c->view.leader_ttl_s = -1;
	if (pthread_create(&c->thread, NULL, coord_main, c) != 0) {
		snprintf(err, errlen, "coordinator: cannot start its thread: %s",
			strerror(errno));
		coordinator_free(c);
		return -1;
	}
	/* without a watch the loop reads the keys every tick, as before */
	c->watch = co_watch_start(c, &ecfg);
	co_notice(c, "coordinator: etcd %s%s, keys under %s, lease %" PRIu64 " ms%s",
		cfg->endpoints[0], cfg->n_endpoints > 1 ? " (and others)" : "",
		c->prefix, c->lease_ms, cfg->candidate ? "" : ", never a candidate");
	*out = c;
	return 0;
}

void
coordinator_stop(struct coordinator *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->stop) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	co_watch_stop(c->watch);
	c->watch = NULL;
	pthread_join(c->thread, NULL);
	if (atomic_load(&c->worker_state) != WORKER_IDLE)
		pthread_join(c->worker, NULL);
	/* a stopping primary's key goes now, not a lease later */
	co_resign(c, "the daemon stops");
	if (c->member_lease != 0)
		(void)etcd_lease_revoke(c->etcd, c->member_lease);
}

void
coordinator_view(struct coordinator *c, struct coord_view *v)
{
	pthread_mutex_lock(&c->lock);
	*v = c->view;
	pthread_mutex_unlock(&c->lock);
}

/* one value of the cluster's, at start (its own short-lived client) */
static bool
get_at_start(const struct coord_cfg *cfg, const char *name, char *buf,
		size_t size, size_t *len)
{
	struct etcd_client_cfg ecfg = {
		.endpoints = cfg->endpoints, .n_endpoints = cfg->n_endpoints,
		.timeout_ms = cfg->timeout_ms, .ca_file = cfg->ca,
		.cert_file = cfg->cert, .key_file = cfg->key,
	};
	struct etcd_client *etcd;
	struct etcd_range r;
	char key[512], err[256];
	bool found = false;

	if (cfg->n_endpoints == 0 ||
	    (etcd = etcd_client_new(&ecfg, err, sizeof(err))) == NULL)
		return false;
	snprintf(key, sizeof(key), "%s%s/%s", cfg->prefix, cfg->cluster_uuid, name);
	if (etcd_get(etcd, key, strlen(key), &r) == ETCD_OK) {
		if (r.n_kvs > 0 && r.kvs[0].value.len < size) {
			memcpy(buf, r.kvs[0].value.p, r.kvs[0].value.len);
			*len = r.kvs[0].value.len;
			found = true;
		}
		etcd_range_free(&r);
	}
	etcd_client_free(etcd);
	return found;
}

bool
coordinator_membership_at_start(const struct coord_cfg *cfg,
		struct coord_membership *out)
{
	char v[COORD_MEMBERSHIP_VALUE_MAX];
	size_t len;

	return get_at_start(cfg, "membership", v, sizeof(v), &len) &&
		coord_membership_parse(v, len, out);
}

uint32_t
coordinator_leader_at_start(const struct coord_cfg *cfg, uint64_t *epoch)
{
	struct coord_leader_value v = { 0 };
	char value[COORD_VALUE_MAX];
	size_t len;

	*epoch = 0;
	if (get_at_start(cfg, "leader", value, sizeof(value), &len))
		(void)coord_leader_parse(value, len, &v);
	if (v.node_id == cfg->node_id)
		return 0;
	*epoch = v.epoch;
	return v.node_id;
}

void
coordinator_local_primary(struct ha_local *l, const struct repl_status *st)
{
	l->role = HA_ROLE_PRIMARY;
	l->epoch = st->epoch;
	l->last_lsn = st->last_lsn;
	l->link_up = !st->fenced && st->replicas_up > 0;
}

void
coordinator_local_replica(struct ha_local *l, const struct repl_replica_info *info)
{
	l->role = HA_ROLE_REPLICA;
	l->epoch = info->epoch;
	l->last_lsn = info->last_lsn;
	l->link_up = info->following != 0;
	l->silent_ms = info->primary_silent_ms;
	l->member = info->config_epoch != 0 && !info->floor_pending;
	l->config_epoch = info->config_epoch;
}
