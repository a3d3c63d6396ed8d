/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_rules.c -- the leader key's rules, one tick at a time (the table in
 * coordinator.c's header; repld(8), AUTOMATIC FAILOVER, in prose).
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "log.h"
#include "node.h"

/* ---- the leader key ---- */

void
co_resign(struct coordinator *c, const char *why)
{
	if (coord_leader_state(c->leader) == COORD_LEADER_IDLE)
		return;
	log_notice("coordinator: giving the leader key back (%s)", why);
	(void)co_leader_ok(c, coord_leader_resign(c->leader), "resign");
}

void
co_back_off(struct coordinator *c, uint64_t now)
{
	uint64_t ms = c->lease_ms + (uint64_t)rand_r(&c->seed) % (c->lease_ms + 1);

	c->backoff_until = now + ms * MS;
	c->eligible_since = 0;
	log_notice("coordinator: next campaign in %" PRIu64 " ms at the earliest", ms);
}

/* renew the held key when due */
void
co_renew(struct coordinator *c, uint64_t now)
{
	enum etcd_rc rc;

	if (coord_leader_state(c->leader) != COORD_LEADER_HELD || now < c->leader_renew_at)
		return;
	rc = coord_leader_renew(c->leader);
	if (rc == ETCD_E_LEASE_NOT_FOUND) {
		log_warning("coordinator: the leader lease expired in etcd (it was not "
			"renewed in time): taking the key again if it is free");
		(void)co_leader_ok(c, ETCD_OK, NULL);
		return;
	}
	if (co_leader_ok(c, rc, "leader keepalive"))
		c->leader_renew_at = now + c->lease_ms * MS / 3;
}

/* a campaign with value; true when won */
bool
co_campaign(struct coordinator *c, const char *value)
{
	struct coord_campaign out;
	enum etcd_rc rc = coord_leader_campaign(c->leader, value, &out);
	bool won = false;

	if (!co_leader_ok(c, rc, "campaign"))
		return false;
	if (out.outcome == COORD_CAMPAIGN_WON) {
		won = true;
		c->leader_renew_at = co_now_ns() + c->lease_ms * MS / 3;
	} else if (out.outcome == COORD_CAMPAIGN_HELD) {
		struct coord_leader_value h;

		/* an older incarnation of this node: only this node uses its id */
		if (coord_leader_parse(out.holder.value, out.holder.value_len, &h) &&
		    h.node_id == c->node_id && out.holder.lease != 0) {
			log_notice("coordinator: the leader key is held by an earlier run "
				"of this node (lease %" PRIx64 "): revoking it",
				(uint64_t)out.holder.lease);
			(void)co_client_ok(c, etcd_lease_revoke(c->etcd, out.holder.lease),
				"revoke a stale lease");
		}
	}
	coord_holder_free(&out.holder);
	return won;
}

/* the primary: hold the key, or learn who does */
void
co_primary_tick(struct coordinator *c, const struct local *l)
{
	char value[COORD_VALUE_MAX];
	const struct coord_keys *k = &c->keys;

	/* a switchover names this primary: drain, step down, then resign */
	if (k->has_switchover && k->sw.from == c->node_id &&
	    atomic_load(&c->worker_state) == WORKER_IDLE) {
		log_notice("coordinator: switchover to %s%.0" PRIu32 ": stepping down",
			k->sw.to ? "node " : "the most advanced replica", k->sw.to);
		(void)co_worker_start(c, WORK_STEP_DOWN);
		return;
	}
	if (coord_leader_state(c->leader) == COORD_LEADER_HELD) {
		co_membership_tick(c, co_now_ns());
		return;
	}
	if (!c->keys_valid)
		return;
	/*
	 * Another node won the key: this primary's lease ran out while etcd
	 * answered the others (a pause, a partition from etcd that healed)
	 * and its replicas lost it.  It stops acknowledging now, by stepping
	 * down; fencing made its acknowledgements safe even before it knew.
	 * A value that does not parse names no node: it is reported, not
	 * obeyed.
	 */
	if (k->has_leader && k->leader.node_id != c->node_id) {
		if (k->leader.node_id != 0 &&
		    atomic_load(&c->worker_state) == WORKER_IDLE) {
			log_warning("coordinator: the leader key is held by node %" PRIu32
				" (epoch %" PRIu64 ", %s): this primary (epoch %" PRIu64
				") lost its lease: stepping down", k->leader.node_id,
				k->leader.epoch, k->leader.state, l->epoch);
			(void)co_worker_start(c, WORK_STEP_DOWN);
		} else if (k->leader.node_id == 0 && c->waiting_logged != 1) {
			log_error("coordinator: the leader key holds a value that is not "
				"one of repld's: no failover can take place until it "
				"goes (delete it with etcdctl if no repld wrote it)");
			c->waiting_logged = 1;
		}
		return;
	}
	if (coord_leader_value(c->node_id, l->epoch, "primary", c->ctl_addr, value,
			sizeof(value)) == 0)
		return;
	if (co_campaign(c, value)) {
		log_notice("coordinator: this primary holds the leader key (epoch %"
			PRIu64 ", lease %" PRId64 " s)", l->epoch,
			coord_leader_ttl(c->leader));
		c->waiting_logged = 0;
	}
}

/*
 * This replica's place among the candidates: the live replicas that may
 * campaign, by (last_epoch, last_lsn) descending, then node id (the
 * promotion's own "most advanced log" order); -1 when it is not one.
 */
static int
rank_of(const struct coordinator *c, uint32_t exclude)
{
	const struct coord_keys *k = &c->keys;
	const struct coord_member *me = NULL;
	int r = 0;

	for (int i = 0; i < k->n_members; i++)
		if (k->members[i].node_id == c->node_id)
			me = &k->members[i];
	if (me == NULL)
		return -1;	/* not published (yet): etcd does not know it is live */
	for (int i = 0; i < k->n_members; i++) {
		const struct coord_member *m = &k->members[i];

		if (m == me || !m->candidate || m->node_id == exclude ||
		    strcmp(m->role, "replica") != 0)
			continue;
		if (m->last_epoch > me->last_epoch ||
		    (m->last_epoch == me->last_epoch && m->last_lsn > me->last_lsn) ||
		    (m->last_epoch == me->last_epoch && m->last_lsn == me->last_lsn &&
		     m->node_id < me->node_id))
			r++;
	}
	return r;
}

/* a live replica other than this one still sees a primary */
static bool
other_link_up(const struct coordinator *c)
{
	const struct coord_keys *k = &c->keys;

	for (int i = 0; i < k->n_members; i++)
		if (k->members[i].node_id != c->node_id && k->members[i].link_up &&
		    strcmp(k->members[i].role, "replica") == 0)
			return true;
	return false;
}

void
co_replica_tick(struct coordinator *c, const struct local *l, uint64_t now)
{
	const struct coord_keys *k = &c->keys;
	char value[COORD_VALUE_MAX];
	bool named = false, urgent = false;
	int rank;

	/* it stepped down or was fenced: the key goes at once */
	if (coord_leader_state(c->leader) != COORD_LEADER_IDLE) {
		co_resign(c, "this node is a replica now");
		c->eligible_since = 0;
		return;
	}
	if (!c->keys_valid || !c->n->conf.coordinator.candidate || k->has_leader ||
	    !l->member || now < c->backoff_until) {
		c->eligible_since = 0;
		return;
	}
	if (k->has_switchover) {
		named = k->sw.to == c->node_id;
		/* another is named, or this node is the one stepping down */
		if ((k->sw.to != 0 && !named) || k->sw.from == c->node_id) {
			c->eligible_since = 0;
			return;
		}
		urgent = named;
	}
	/* the link rule: a primary some replica still sees is not replaced */
	if (!(named && k->sw.failover) && (l->link_up || other_link_up(c))) {
		c->eligible_since = 0;
		return;
	}
	rank = rank_of(c, k->has_switchover ? k->sw.from : 0);
	if (rank < 0) {
		c->eligible_since = 0;
		return;
	}
	if (c->eligible_since == 0)
		c->eligible_since = now;
	if (!urgent && now - c->eligible_since < (uint64_t)rank * c->lease_ms * MS / 2)
		return;
	if (coord_leader_value(c->node_id, l->epoch, "promoting", c->ctl_addr, value,
			sizeof(value)) == 0)
		return;
	pthread_mutex_lock(&c->lock);
	c->view.campaigns++;
	pthread_mutex_unlock(&c->lock);
	log_notice("coordinator: no primary holds the leader key and %s: campaigning "
		"(rank %d, log at epoch %" PRIu64 " LSN %" PRIu64 ")",
		named ? "a switchover names this node" :
		"no replica sees the primary", rank, l->epoch, l->last_lsn);
	if (!co_campaign(c, value)) {
		c->eligible_since = 0;
		return;
	}
	log_notice("coordinator: won the leader key: promoting this replica");
	/* the key's membership, once this log holds it, names the peers */
	c->promote_ms = k->has_membership && l->config_epoch != 0 &&
		k->membership.config_epoch == l->config_epoch;
	if (c->promote_ms)
		c->carry = k->membership;
	if (!co_worker_start(c, WORK_PROMOTE)) {
		co_resign(c, "the promotion could not start");
		co_back_off(c, now);
	}
}

/* a promotion done: publish it, or give the key back */
void
co_promoted(struct coordinator *c, uint64_t now)
{
	char value[COORD_VALUE_MAX];
	struct local l = { 0 };
	bool ours = false;
	uint64_t stored;

	if (c->worker_ret != 0) {
		log_warning("coordinator: promotion refused: %s", c->worker_msg);
		co_resign(c, "the promotion was refused");
		co_back_off(c, now);
		return;
	}
	co_local_read(c, &l);
	pthread_mutex_lock(&c->lock);
	c->view.promotions++;
	pthread_mutex_unlock(&c->lock);
	if (coord_leader_value(c->node_id, l.epoch, "primary", c->ctl_addr, value,
			sizeof(value)) != 0 &&
	    co_leader_ok(c, coord_leader_update(c->leader, value, &ours), "leader update") &&
	    !ours)
		log_warning("coordinator: the leader key was lost during the promotion "
			"(its lease ran out): taking it again if it is free");
	log_notice("coordinator: promoted: node %" PRIu32 " is the primary of epoch %"
		PRIu64, c->node_id, l.epoch);
	if (co_leader_ok(c, coord_epoch_raise(c->leader, l.epoch, &stored), "epochs") &&
	    stored != l.epoch)
		log_warning("coordinator: etcd's epochs counter holds %" PRIu64 ", above "
			"this promotion's epoch %" PRIu64 " (etcd restored from "
			"elsewhere?): the epochs the logs hold decide", stored, l.epoch);
	if (coord_history_value(c->node_id, l.epoch, l.last_lsn, value, sizeof(value))) {
		char key[256];

		snprintf(key, sizeof(key), "%s%" PRIu64, c->k_history, l.epoch);
		(void)co_client_ok(c, etcd_put(c->etcd, key, strlen(key), value,
			strlen(value), 0, NULL), "history put");
	}
	if (c->keys.has_switchover)
		(void)co_client_ok(c, etcd_delete(c->etcd, c->k_switchover,
			strlen(c->k_switchover), false, NULL), "switchover delete");
}

void
co_stepped_down(struct coordinator *c)
{
	if (c->worker_ret != 0)
		log_warning("coordinator: the step-down failed: %s", c->worker_msg);
	co_resign(c, "this node stepped down");
}

