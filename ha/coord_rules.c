/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_rules.c -- the failover rules' actions: the decision is ha_step's
 * (ha/ha_rules.h, a pure function with the table), the etcd calls and the
 * node's changes it asks for are done here, and what came of them goes
 * back into the rules' state.  repld(8), AUTOMATIC FAILOVER, in prose.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"

/* ---- the leader key ---- */

void
co_resign(struct coordinator *c, const char *why)
{
	if (coord_leader_state(c->leader) == COORD_LEADER_IDLE)
		return;
	co_notice(c, "coordinator: giving the leader key back (%s)", why);
	atomic_store(&c->lease_until, 0);
	(void)co_leader_ok(c, coord_leader_resign(c->leader), "resign");
}

void
co_back_off(struct coordinator *c, uint64_t now)
{
	uint64_t jitter = (uint64_t)rand_r(&c->seed) % (c->lease_ms + 1);

	ha_promotion_refused(&c->ha, &c->ha_cfg, now / MS, jitter);
	co_notice(c, "coordinator: next campaign in %" PRIu64 " ms at the earliest",
		c->lease_ms + jitter);
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
		co_warning(c, "coordinator: the leader lease expired in etcd (it was not "
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
		co_lease_publish(c);
	} else if (out.outcome == COORD_CAMPAIGN_HELD) {
		struct coord_leader_value h;

		/* an older incarnation of this node: only this node uses its id */
		if (coord_leader_parse(out.holder.value, out.holder.value_len, &h) &&
		    h.node_id == c->node_id && out.holder.lease != 0) {
			co_notice(c, "coordinator: the leader key is held by an earlier run "
				"of this node (lease %" PRIx64 "): revoking it",
				(uint64_t)out.holder.lease);
			(void)co_client_ok(c, etcd_lease_revoke(c->etcd, out.holder.lease),
				"revoke a stale lease");
		}
	}
	coord_holder_free(&out.holder);
	return won;
}

/* ---- the worker's jobs ---- */

static void
promote_job(struct coordinator *c)
{
	if (c->promote_ms)
		co_take_peers(c);
	c->worker_ret = c->ops.promote(c->node, c->worker_msg, sizeof(c->worker_msg));
}

static void
step_down_job(struct coordinator *c)
{
	c->worker_ret = c->ops.step_down(c->node, c->worker_msg, sizeof(c->worker_msg));
}

/* ---- what ha_step says, done ---- */

static void
hold(struct coordinator *c, const struct ha_local *l)
{
	char value[COORD_VALUE_MAX];

	if (coord_leader_value(c->node_id, l->epoch, "primary", c->ctl_addr, value,
			sizeof(value)) == 0)
		return;
	if (co_campaign(c, value))
		co_notice(c, "coordinator: this primary holds the leader key (epoch %"
			PRIu64 ", lease %" PRId64 " s)", l->epoch,
			coord_leader_ttl(c->leader));
}

static void
step_down(struct coordinator *c, const struct ha_local *l, const struct ha_action *a)
{
	const struct coord_keys *k = &c->keys;

	if (a->switchover)
		co_notice(c, "coordinator: switchover to %s%.0" PRIu32 ": stepping down",
			k->sw.to ? "node " : "the most advanced replica", k->sw.to);
	else
		/*
		 * This primary's lease ran out while etcd answered the others
		 * (a pause, a partition from etcd that healed) and another
		 * node won the key.  It stops acknowledging now; fencing made
		 * its acknowledgements safe even before it knew.
		 */
		co_warning(c, "coordinator: the leader key is held by node %" PRIu32
			" (epoch %" PRIu64 ", %s): this primary (epoch %" PRIu64
			") lost its lease: stepping down", a->leader, k->leader.epoch,
			k->leader.state, l->epoch);
	(void)co_worker_start(c, WORK_STEP_DOWN, step_down_job);
}

static void
campaign(struct coordinator *c, const struct ha_local *l, const struct ha_action *a,
		uint64_t now)
{
	const struct coord_keys *k = &c->keys;
	char value[COORD_VALUE_MAX];

	if (coord_leader_value(c->node_id, l->epoch, "promoting", c->ctl_addr, value,
			sizeof(value)) == 0)
		return;
	pthread_mutex_lock(&c->lock);
	c->view.campaigns++;
	pthread_mutex_unlock(&c->lock);
	co_notice(c, "coordinator: no primary holds the leader key and %s: campaigning "
		"(rank %d, log at epoch %" PRIu64 " LSN %" PRIu64 ")",
		a->named ? "a switchover names this node" :
		"no replica sees the primary", a->rank, l->epoch, l->last_lsn);
	if (!co_campaign(c, value)) {
		ha_campaign_lost(&c->ha);
		return;
	}
	co_notice(c, "coordinator: won the leader key: promoting this replica");
	/* the key's membership, once this log holds it, names the peers */
	c->promote_ms = k->has_membership && l->config_epoch != 0 &&
		k->membership.config_epoch == l->config_epoch;
	if (c->promote_ms)
		c->carry = k->membership;
	if (!co_worker_start(c, WORK_PROMOTE, promote_job)) {
		co_resign(c, "the promotion could not start");
		co_back_off(c, now);
	}
}

/*
 * The holder is silent to a majority of the replicas: its lease goes now
 * rather than when it runs out.  A holder still alive finds its lease gone
 * at its next keepalive and steps down; the promotion's fencing has made
 * that safe before it knows (ha_rules.c, takeover()).
 */
static void
take_over(struct coordinator *c, const struct ha_local *l, const struct ha_action *a)
{
	enum etcd_rc rc;

	co_notice(c, "coordinator: the primary node %" PRIu32 " (epoch %" PRIu64
		") is silent: nothing heard from it for %" PRIu64 " ms here, and %d "
		"of the %d replicas have no link to it: revoking its lease %" PRIx64
		" to take over", a->leader, l->epoch, l->silent_ms, a->votes,
		a->replicas, (uint64_t)a->lease);
	pthread_mutex_lock(&c->lock);
	c->view.takeovers++;
	pthread_mutex_unlock(&c->lock);
	rc = etcd_lease_revoke(c->etcd, a->lease);
	/* gone already (it ran out meanwhile): what the revoke was for */
	if (rc == ETCD_E_LEASE_NOT_FOUND)
		rc = ETCD_OK;
	(void)co_client_ok(c, rc, "revoke the silent primary's lease");
	/* the key is gone (or the lease was already): read it again now */
	co_wake(c);
}

static enum ha_hold
ha_hold_of(enum coord_leader_state s)
{
	return s == COORD_LEADER_HELD ? HA_HOLD_HELD : s == COORD_LEADER_LOST ?
		HA_HOLD_LOST : HA_HOLD_NONE;
}

void
co_rules_tick(struct coordinator *c, const struct ha_local *l, uint64_t now)
{
	struct ha_input in = {
		.now_ms = now / MS,
		.local = *l,
		.etcd_ok = c->reachable,
		.keys = c->keys_valid ? &c->keys : NULL,
		.hold = ha_hold_of(coord_leader_state(c->leader)),
		.busy = atomic_load(&c->worker_state) != WORKER_IDLE,
	};
	struct ha_action a = ha_step(&c->ha, &c->ha_cfg, &in);

	switch (a.kind) {
	case HA_NONE:
		break;
	case HA_HOLD:
		hold(c, l);
		break;
	case HA_KEEP:
		co_membership_tick(c, now, in.busy);
		break;
	case HA_STEP_DOWN:
		step_down(c, l, &a);
		break;
	case HA_RESIGN:
		co_resign(c, "this node is a replica now");
		break;
	case HA_CAMPAIGN:
		campaign(c, l, &a, now);
		break;
	case HA_TAKE_OVER:
		take_over(c, l, &a);
		break;
	case HA_REPORT_FOREIGN:
		co_error(c, "coordinator: the leader key holds a value that is not "
			"one of repld's: no failover can take place until it "
			"goes (delete it with etcdctl if no repld wrote it)");
		break;
	}
}

/* a promotion done: publish it, or give the key back */
void
co_promoted(struct coordinator *c, uint64_t now)
{
	char value[COORD_VALUE_MAX];
	struct ha_local l = { 0 };
	bool ours = false;
	uint64_t stored;

	if (c->worker_ret != 0) {
		co_warning(c, "coordinator: promotion refused: %s", c->worker_msg);
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
		co_warning(c, "coordinator: the leader key was lost during the promotion "
			"(its lease ran out): taking it again if it is free");
	co_notice(c, "coordinator: promoted: node %" PRIu32 " is the primary of epoch %"
		PRIu64, c->node_id, l.epoch);
	if (co_leader_ok(c, coord_epoch_raise(c->leader, l.epoch, &stored), "epochs") &&
	    stored != l.epoch)
		co_warning(c, "coordinator: etcd's epochs counter holds %" PRIu64 ", above "
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
		co_warning(c, "coordinator: the step-down failed: %s", c->worker_msg);
	co_resign(c, "this node stepped down");
}

