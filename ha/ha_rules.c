/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ha_rules.c -- the failover rules (ha_rules.h has the table, and why).
 */
#include "config.h"

#include <string.h>

#include "ha_rules.h"

const char *
ha_wait_name(enum ha_wait w)
{
	switch (w) {
	case HA_WAIT_NONE: return "";
	case HA_WAIT_BUSY: return "busy";
	case HA_WAIT_ETCD: return "etcd";
	case HA_WAIT_NOT_CANDIDATE: return "not_candidate";
	case HA_WAIT_LEADER: return "leader";
	case HA_WAIT_NOT_MEMBER: return "not_member";
	case HA_WAIT_BACKOFF: return "backoff";
	case HA_WAIT_SWITCHOVER: return "switchover";
	case HA_WAIT_LINK: return "link";
	case HA_WAIT_OTHER_LINK: return "other_link";
	case HA_WAIT_KEYLESS: return "keyless";
	case HA_WAIT_UNPUBLISHED: return "unpublished";
	case HA_WAIT_RANK: return "rank";
	case HA_WAIT_MAINTENANCE: return "maintenance";
	}
	return "?";
}

const char *
ha_action_name(enum ha_action_kind k)
{
	switch (k) {
	case HA_NONE: return "none";
	case HA_HOLD: return "hold";
	case HA_KEEP: return "keep";
	case HA_STEP_DOWN: return "step_down";
	case HA_RESIGN: return "resign";
	case HA_CAMPAIGN: return "campaign";
	case HA_REPORT_FOREIGN: return "report_foreign";
	case HA_TAKE_OVER: return "take_over";
	}
	return "?";
}

const char *
ha_role_name(enum ha_role r)
{
	return r == HA_ROLE_PRIMARY ? "primary" : r == HA_ROLE_REPLICA ?
		"replica" : "down";
}

void
ha_state_init(struct ha_state *s, uint64_t now_ms)
{
	memset(s, 0, sizeof(*s));
	s->heard_ms = now_ms;
	s->keyless = true;
}

void
ha_campaign_lost(struct ha_state *s)
{
	s->eligible = false;
}

void
ha_promotion_refused(struct ha_state *s, const struct ha_cfg *cfg,
		uint64_t now_ms, uint64_t jitter_ms)
{
	s->backoff_until_ms = now_ms + cfg->lease_ms + jitter_ms;
	s->eligible = false;
}

static bool
is_replica(const struct coord_member *m)
{
	return strcmp(m->role, "replica") == 0;
}

int
ha_rank(const struct coord_keys *k, uint32_t me_id, uint32_t exclude)
{
	const struct coord_member *me = NULL;
	int r = 0;

	for (int i = 0; i < k->n_members; i++)
		if (k->members[i].node_id == me_id)
			me = &k->members[i];
	if (me == NULL)
		return -1;
	for (int i = 0; i < k->n_members; i++) {
		const struct coord_member *m = &k->members[i];

		if (m == me || !m->candidate || m->node_id == exclude || !is_replica(m))
			continue;
		if (m->last_epoch > me->last_epoch ||
		    (m->last_epoch == me->last_epoch && m->last_lsn > me->last_lsn) ||
		    (m->last_epoch == me->last_epoch && m->last_lsn == me->last_lsn &&
		     m->node_id < me->node_id))
			r++;
	}
	return r;
}

/* a live replica other than me still follows a primary */
static bool
other_link_up(const struct coord_keys *k, uint32_t me)
{
	for (int i = 0; i < k->n_members; i++)
		if (k->members[i].node_id != me && k->members[i].link_up &&
		    is_replica(&k->members[i]))
			return true;
	return false;
}

static struct ha_action
act(enum ha_action_kind kind)
{
	return (struct ha_action){ .kind = kind };
}

static struct ha_action
primary_step(struct ha_state *s, const struct ha_cfg *cfg, const struct ha_input *in)
{
	const struct coord_keys *k = in->keys;

	if (k != NULL && k->has_switchover && k->sw.from == cfg->node_id) {
		struct ha_action a = act(HA_STEP_DOWN);

		a.switchover = true;
		return a;
	}
	if (in->hold == HA_HOLD_HELD)
		return act(HA_KEEP);
	if (k == NULL)
		return act(HA_NONE);
	if (k->has_leader && k->leader.node_id != cfg->node_id) {
		struct ha_action a;

		if (k->leader.node_id != 0) {
			a = act(HA_STEP_DOWN);
			a.leader = k->leader.node_id;
			return a;
		}
		if (s->foreign_reported)
			return act(HA_NONE);
		s->foreign_reported = true;
		return act(HA_REPORT_FOREIGN);
	}
	s->foreign_reported = false;
	return act(HA_HOLD);
}

/*
 * The takeover rule (ha_rules.h): the holder of the key is a primary this
 * node followed, silent for down_ms to this node, and the pre-vote finds
 * a majority of the membership's replicas without a link to it and none
 * with one.  Revoking its lease is safe whether or not it is alive: the
 * promotion that follows fences n - k + 1 nodes before it acknowledges,
 * so the old primary can no longer make a quorum (docs/replication.md,
 * "Taking over before the lease ends").  The pre-vote keeps one replica's
 * broken link from failing over a primary the others still hear.
 */
static bool
takeover(struct ha_state *s, const struct ha_cfg *cfg, const struct ha_input *in,
		struct ha_action *a)
{
	const struct coord_keys *k = in->keys;
	int replicas, votes = 1;

	if (!cfg->candidate || !in->local.member || in->now_ms < s->backoff_until_ms ||
	    k->has_switchover || !k->has_membership || k->leader_lease == 0)
		return false;
	if (k->leader.node_id == 0 || k->leader.node_id == cfg->node_id ||
	    strcmp(k->leader.state, "primary") != 0 ||
	    k->leader.epoch != in->local.epoch)
		return false;
	if (in->local.link_up || in->local.silent_ms < cfg->down_ms)
		return false;
	if (s->took_over && in->now_ms - s->took_over_ms < cfg->lease_ms)
		return false;
	for (int i = 0; i < k->n_members; i++) {
		const struct coord_member *m = &k->members[i];

		/* the key's holder, restarted as a replica, is no replica of
		   the count below (the membership's n - 1) */
		if (m->node_id == cfg->node_id || m->node_id == k->leader.node_id ||
		    !is_replica(m) || m->epoch != k->leader.epoch)
			continue;
		if (m->link_up)
			return false;
		votes++;
	}
	replicas = k->membership.n - 1;
	if (replicas < 1 || votes < replicas / 2 + 1)
		return false;
	*a = act(HA_TAKE_OVER);
	a->leader = k->leader.node_id;
	a->lease = k->leader_lease;
	a->votes = votes;
	a->replicas = replicas;
	s->took_over = true;
	s->took_over_ms = in->now_ms;
	return true;
}

/* a replica's NONE: not eligible, and why */
static struct ha_action
waiting(struct ha_state *s, enum ha_wait why)
{
	s->eligible = false;
	s->wait = why;
	return act(HA_NONE);
}

static struct ha_action
replica_step(struct ha_state *s, const struct ha_cfg *cfg, const struct ha_input *in)
{
	const struct coord_keys *k = in->keys;
	bool named = false, failover = false;
	struct ha_action a;
	int rank;

	if (in->hold != HA_HOLD_NONE)
		return s->eligible = false, act(HA_RESIGN);
	if (k == NULL)
		return waiting(s, HA_WAIT_ETCD);
	if (!cfg->candidate)
		return waiting(s, HA_WAIT_NOT_CANDIDATE);
	if (k->has_leader) {
		if (takeover(s, cfg, in, &a)) {
			s->eligible = false;
			return a;
		}
		return waiting(s, HA_WAIT_LEADER);
	}
	if (!in->local.member)
		return waiting(s, HA_WAIT_NOT_MEMBER);
	if (in->now_ms < s->backoff_until_ms)
		return waiting(s, HA_WAIT_BACKOFF);
	if (k->has_switchover) {
		named = k->sw.to == cfg->node_id;
		failover = named && k->sw.failover;
		/* another node is named, or this one is the one leaving */
		if ((k->sw.to != 0 && !named) || k->sw.from == cfg->node_id)
			return waiting(s, HA_WAIT_SWITCHOVER);
	}
	/* the link rule: a primary some replica still follows is not replaced */
	if (!failover && in->local.link_up)
		return waiting(s, HA_WAIT_LINK);
	if (!failover && other_link_up(k, cfg->node_id))
		return waiting(s, HA_WAIT_OTHER_LINK);
	/* the keyless rule: a primary without a key gets a lease and down_ms */
	if (!named && s->keyless &&
	    in->now_ms - s->heard_ms < cfg->lease_ms + cfg->down_ms)
		return waiting(s, HA_WAIT_KEYLESS);
	rank = ha_rank(k, cfg->node_id, k->has_switchover ? k->sw.from : 0);
	if (rank < 0)
		return waiting(s, HA_WAIT_UNPUBLISHED);
	if (!s->eligible) {
		s->eligible = true;
		s->eligible_since_ms = in->now_ms;
	}
	if (!named &&
	    in->now_ms - s->eligible_since_ms < (uint64_t)rank * cfg->lease_ms / 2) {
		s->wait = HA_WAIT_RANK;
		return act(HA_NONE);
	}
	s->wait = HA_WAIT_NONE;
	a = act(HA_CAMPAIGN);
	a.rank = rank;
	a.named = named;
	return a;
}

/*
 * Maintenance removes the steps a replica takes on its own: a takeover, a
 * campaign, and the rank's wait for one (which would end in a campaign);
 * an operator's switchover or failover is still carried out (the takeover
 * rule never runs while one is pending).
 */
static bool
held_by_maintenance(const struct ha_input *in, const struct ha_state *s,
		const struct ha_action *a)
{
	const struct coord_keys *k = in->keys;

	return k != NULL && k->has_maintenance &&
		(a->kind == HA_TAKE_OVER ||
		 ((a->kind == HA_CAMPAIGN ||
		   (a->kind == HA_NONE && s->wait == HA_WAIT_RANK)) &&
		  !k->has_switchover));
}

struct ha_action
ha_step(struct ha_state *s, const struct ha_cfg *cfg, const struct ha_input *in)
{
	struct ha_state before;
	struct ha_action a;

	/* heard: a primary is followed (did it hold the key?), or this is one */
	if (in->local.role == HA_ROLE_REPLICA && in->local.link_up) {
		s->heard_ms = in->now_ms;
		if (in->keys != NULL)
			s->keyless = !in->keys->has_leader;
	} else if (in->local.role == HA_ROLE_PRIMARY) {
		s->heard_ms = in->now_ms;
		s->keyless = in->hold != HA_HOLD_HELD;
	}
	s->wait = HA_WAIT_NONE;
	if (in->busy) {
		s->wait = in->local.role == HA_ROLE_REPLICA ? HA_WAIT_BUSY : HA_WAIT_NONE;
		return act(HA_NONE);
	}
	if (!in->etcd_ok) {
		if (in->local.role == HA_ROLE_REPLICA)
			return waiting(s, HA_WAIT_ETCD);
		return act(HA_NONE);
	}
	switch (in->local.role) {
	case HA_ROLE_PRIMARY:
		s->eligible = false;
		return primary_step(s, cfg, in);
	case HA_ROLE_REPLICA:
		before = *s;
		a = replica_step(s, cfg, in);
		if (held_by_maintenance(in, s, &a)) {
			/* as if the step had not been: no takeover time noted */
			*s = before;
			return waiting(s, HA_WAIT_MAINTENANCE);
		}
		return a;
	case HA_ROLE_OTHER:
		break;
	}
	s->eligible = false;
	return act(HA_NONE);
}

/* ---- the membership key ---- */

static bool
is_me(const struct ha_ms_input *in, const struct coord_ms_node *nd)
{
	return nd->node_id == in->node_id ||
		(nd->node_id == 0 && strcmp(nd->ctl_addr, in->ctl_addr) == 0);
}

/* the same nodes with the same node ids, quorum and epoch */
static bool
same_exactly(const struct coord_membership *a, const struct coord_membership *b)
{
	if (!coord_membership_same(a, b))
		return false;
	for (int i = 0; i < a->n; i++) {
		bool found = false;

		for (int j = 0; j < b->n && !found; j++)
			found = strcmp(a->nodes[i].ctl_addr, b->nodes[j].ctl_addr) == 0 &&
				a->nodes[i].node_id == b->nodes[j].node_id;
		if (!found)
			return false;
	}
	return true;
}

enum ha_ms_action_kind
ha_membership_step(const struct ha_ms_input *in)
{
	const struct coord_keys *k = in->keys;
	const struct coord_membership *log = in->log;

	/* a change under way: the engine commits it, the key waits */
	if (k == NULL || log == NULL)
		return HA_MS_NONE;
	if (k->has_membership && k->membership.config_epoch > log->config_epoch) {
		bool named = false;

		for (int i = 0; i < k->membership.n; i++)
			named |= is_me(in, &k->membership.nodes[i]);
		if (!named)
			return HA_MS_REMOVES_ME;
		if (k->membership.config_epoch != log->config_epoch + 2)
			return HA_MS_NOT_NEXT;
		if (in->now_ms < in->carry_backoff_until_ms || in->busy)
			return HA_MS_NONE;
		return HA_MS_CARRY;
	}
	if (k->has_membership && same_exactly(&k->membership, log))
		return HA_MS_NONE;
	return HA_MS_PUBLISH;
}

const char *
ha_membership_state(const struct coord_keys *k, uint64_t log_ce, bool joint)
{
	if (k->bad_membership)
		return "invalid";
	if (!k->has_membership)
		return "absent";
	if (joint)
		return "changing";
	if (k->membership.config_epoch == log_ce)
		return "applied";
	return k->membership.config_epoch > log_ce ? "pending" : "behind";
}
