/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ha_rules_test.c -- the failover rules (ha/ha_rules.h) without etcd or a
 * node: a table of single steps, one row per transition of ha_step's
 * table, then the documented timelines as sequences of steps in time,
 * then the membership key's rule.
 */
#include <stdio.h>
#include <string.h>

#include "ha_rules.h"

static int failures, checks;

#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define ME 2
#define LEASE 1000
#define DOWN 500

static const struct ha_cfg cfg = {
	.node_id = ME, .candidate = true, .lease_ms = LEASE, .down_ms = DOWN,
};

static void
add_member(struct coord_keys *k, uint32_t id, const char *role, uint64_t lsn,
		bool link_up, bool candidate)
{
	struct coord_member *m = &k->members[k->n_members++];

	memset(m, 0, sizeof(*m));
	m->node_id = id;
	snprintf(m->role, sizeof(m->role), "%s", role);
	m->epoch = m->last_epoch = 7;
	m->last_lsn = lsn;
	m->link_up = link_up;
	m->candidate = candidate;
}

static void
set_leader(struct coord_keys *k, uint32_t id, const char *state)
{
	k->has_leader = true;
	k->leader.node_id = id;
	k->leader.epoch = 7;
	snprintf(k->leader.state, sizeof(k->leader.state), "%s", state);
}

/* ---- single steps ---- */

enum leader_in { NO_LEADER = 0, LEADER_OTHER, LEADER_ME, LEADER_FOREIGN };
enum sw_in { NO_SW = 0, SW_FROM_ME, SW_TO_ME, SW_TO_ME_FAILOVER, SW_TO_OTHER,
	SW_TO_ANY };

struct row {
	const char *name;
	enum ha_role role;
	enum ha_hold hold;
	bool busy, etcd_down, keys_unread, not_candidate, not_member, link_up;
	enum leader_in leader;
	enum sw_in sw;
	bool other_link;	/* another live replica follows a primary */
	bool ahead;		/* another candidate has a longer log: rank 1 */
	bool unpublished;	/* etcd does not list this node */
	bool fresh;		/* just started, has heard from no primary */
	bool keyless_lately;	/* its primary held no key, heard 10 ms ago */
	bool keyless_long;	/* ... heard lease_ms + down_ms ago */
	bool backoff;		/* a refused promotion's back-off runs */
	bool eligible_long;	/* eligible for more than a lease already */
	bool maint;		/* the maintenance key exists */
	enum ha_action_kind want;
	enum ha_wait want_wait;
};

#define R(...) { __VA_ARGS__ }
static const struct row rows[] = {
	/* any role */
	R("primary, busy", HA_ROLE_PRIMARY, .busy = true, .want = HA_NONE),
	R("primary, etcd down", HA_ROLE_PRIMARY, .etcd_down = true, .want = HA_NONE),
	R("replica, busy", HA_ROLE_REPLICA, .busy = true, .want = HA_NONE,
		.want_wait = HA_WAIT_BUSY),
	R("replica, etcd down", HA_ROLE_REPLICA, .etcd_down = true, .want = HA_NONE,
		.want_wait = HA_WAIT_ETCD),
	R("closed node", HA_ROLE_OTHER, .want = HA_NONE),
	R("closed node, key free", HA_ROLE_OTHER, .fresh = false, .want = HA_NONE),
	/* primary */
	R("primary named by a switchover", HA_ROLE_PRIMARY, .hold = HA_HOLD_HELD,
		.sw = SW_FROM_ME, .want = HA_STEP_DOWN),
	R("primary named by a switchover, key not held", HA_ROLE_PRIMARY,
		.sw = SW_FROM_ME, .want = HA_STEP_DOWN),
	R("primary holding the key", HA_ROLE_PRIMARY, .hold = HA_HOLD_HELD,
		.leader = LEADER_ME, .want = HA_KEEP),
	R("primary holding the key, keys unread", HA_ROLE_PRIMARY,
		.hold = HA_HOLD_HELD, .keys_unread = true, .want = HA_KEEP),
	R("primary, keys unread", HA_ROLE_PRIMARY, .keys_unread = true,
		.want = HA_NONE),
	R("primary, another node holds the key", HA_ROLE_PRIMARY,
		.leader = LEADER_OTHER, .want = HA_STEP_DOWN),
	R("primary that lost its lease, another holds the key", HA_ROLE_PRIMARY,
		.hold = HA_HOLD_LOST, .leader = LEADER_OTHER, .want = HA_STEP_DOWN),
	R("primary, a foreign value in the key", HA_ROLE_PRIMARY,
		.leader = LEADER_FOREIGN, .want = HA_REPORT_FOREIGN),
	R("primary, key free", HA_ROLE_PRIMARY, .want = HA_HOLD),
	R("primary, key held by an earlier run of it", HA_ROLE_PRIMARY,
		.leader = LEADER_ME, .want = HA_HOLD),
	R("primary that lost its lease, key free", HA_ROLE_PRIMARY,
		.hold = HA_HOLD_LOST, .want = HA_HOLD),
	/* replica */
	R("replica holding the key", HA_ROLE_REPLICA, .hold = HA_HOLD_HELD,
		.want = HA_RESIGN),
	R("replica whose lease was lost", HA_ROLE_REPLICA, .hold = HA_HOLD_LOST,
		.want = HA_RESIGN),
	R("replica, keys unread", HA_ROLE_REPLICA, .keys_unread = true,
		.want = HA_NONE, .want_wait = HA_WAIT_ETCD),
	R("replica, not a candidate", HA_ROLE_REPLICA, .not_candidate = true,
		.want = HA_NONE, .want_wait = HA_WAIT_NOT_CANDIDATE),
	R("replica, a primary holds the key", HA_ROLE_REPLICA, .leader = LEADER_OTHER,
		.want = HA_NONE, .want_wait = HA_WAIT_LEADER),
	R("replica, a foreign value in the key", HA_ROLE_REPLICA,
		.leader = LEADER_FOREIGN, .want = HA_NONE, .want_wait = HA_WAIT_LEADER),
	R("replica, log not a member", HA_ROLE_REPLICA, .not_member = true,
		.want = HA_NONE, .want_wait = HA_WAIT_NOT_MEMBER),
	R("replica, backing off", HA_ROLE_REPLICA, .backoff = true, .want = HA_NONE,
		.want_wait = HA_WAIT_BACKOFF),
	R("replica, a switchover names another", HA_ROLE_REPLICA, .sw = SW_TO_OTHER,
		.want = HA_NONE, .want_wait = HA_WAIT_SWITCHOVER),
	R("replica, following", HA_ROLE_REPLICA, .link_up = true, .want = HA_NONE,
		.want_wait = HA_WAIT_LINK),
	R("replica, another replica follows", HA_ROLE_REPLICA, .other_link = true,
		.want = HA_NONE, .want_wait = HA_WAIT_OTHER_LINK),
	R("replica, just started, heard no primary", HA_ROLE_REPLICA, .fresh = true,
		.want = HA_NONE, .want_wait = HA_WAIT_KEYLESS),
	R("replica, its keyless primary heard lately", HA_ROLE_REPLICA,
		.keyless_lately = true, .want = HA_NONE, .want_wait = HA_WAIT_KEYLESS),
	R("replica, its keyless primary silent long enough", HA_ROLE_REPLICA,
		.keyless_long = true, .want = HA_CAMPAIGN),
	R("replica, unpublished", HA_ROLE_REPLICA, .unpublished = true,
		.want = HA_NONE, .want_wait = HA_WAIT_UNPUBLISHED),
	R("replica, second in rank", HA_ROLE_REPLICA, .ahead = true, .want = HA_NONE,
		.want_wait = HA_WAIT_RANK),
	R("replica, second in rank, its delay over", HA_ROLE_REPLICA, .ahead = true,
		.eligible_long = true, .want = HA_CAMPAIGN),
	R("replica, first in rank", HA_ROLE_REPLICA, .want = HA_CAMPAIGN),
	R("replica, a switchover to the most advanced", HA_ROLE_REPLICA,
		.sw = SW_TO_ANY, .want = HA_CAMPAIGN),
	/* a switchover naming this node: no start or rank wait; a failover
	   naming it: no link rule either */
	R("replica named by a switchover, second in rank", HA_ROLE_REPLICA,
		.sw = SW_TO_ME, .ahead = true, .want = HA_CAMPAIGN),
	R("replica named by a switchover, just started", HA_ROLE_REPLICA,
		.sw = SW_TO_ME, .fresh = true, .want = HA_CAMPAIGN),
	R("replica named by a switchover, following", HA_ROLE_REPLICA,
		.sw = SW_TO_ME, .link_up = true, .want = HA_NONE,
		.want_wait = HA_WAIT_LINK),
	R("replica named by a failover, following", HA_ROLE_REPLICA,
		.sw = SW_TO_ME_FAILOVER, .link_up = true, .want = HA_CAMPAIGN),
	R("replica named by a failover, another follows", HA_ROLE_REPLICA,
		.sw = SW_TO_ME_FAILOVER, .other_link = true, .want = HA_CAMPAIGN),
	R("replica named as leaving by a switchover", HA_ROLE_REPLICA,
		.sw = SW_FROM_ME, .want = HA_NONE, .want_wait = HA_WAIT_SWITCHOVER),
	/* maintenance: a replica's own campaign held back, nothing else */
	R("maintenance: replica, first in rank", HA_ROLE_REPLICA, .maint = true,
		.want = HA_NONE, .want_wait = HA_WAIT_MAINTENANCE),
	R("maintenance: replica, second in rank", HA_ROLE_REPLICA, .maint = true,
		.ahead = true, .want = HA_NONE, .want_wait = HA_WAIT_MAINTENANCE),
	R("maintenance: replica, second in rank, its delay over", HA_ROLE_REPLICA,
		.maint = true, .ahead = true, .eligible_long = true, .want = HA_NONE,
		.want_wait = HA_WAIT_MAINTENANCE),
	R("maintenance: replica, keyless primary silent long enough",
		HA_ROLE_REPLICA, .maint = true, .keyless_long = true, .want = HA_NONE,
		.want_wait = HA_WAIT_MAINTENANCE),
	R("maintenance: replica named by a switchover", HA_ROLE_REPLICA,
		.maint = true, .sw = SW_TO_ME, .want = HA_CAMPAIGN),
	R("maintenance: replica named by a failover, following", HA_ROLE_REPLICA,
		.maint = true, .sw = SW_TO_ME_FAILOVER, .link_up = true,
		.want = HA_CAMPAIGN),
	R("maintenance: a switchover to the most advanced", HA_ROLE_REPLICA,
		.maint = true, .sw = SW_TO_ANY, .want = HA_CAMPAIGN),
	R("maintenance: replica, a switchover names another", HA_ROLE_REPLICA,
		.maint = true, .sw = SW_TO_OTHER, .want = HA_NONE,
		.want_wait = HA_WAIT_SWITCHOVER),
	R("maintenance: replica, following", HA_ROLE_REPLICA, .maint = true,
		.link_up = true, .want = HA_NONE, .want_wait = HA_WAIT_LINK),
	R("maintenance: replica, a primary holds the key", HA_ROLE_REPLICA,
		.maint = true, .leader = LEADER_OTHER, .want = HA_NONE,
		.want_wait = HA_WAIT_LEADER),
	R("maintenance: replica holding the key", HA_ROLE_REPLICA, .maint = true,
		.hold = HA_HOLD_HELD, .want = HA_RESIGN),
	R("maintenance: primary holding the key", HA_ROLE_PRIMARY, .maint = true,
		.hold = HA_HOLD_HELD, .leader = LEADER_ME, .want = HA_KEEP),
	R("maintenance: primary, key free", HA_ROLE_PRIMARY, .maint = true,
		.want = HA_HOLD),
	R("maintenance: primary named by a switchover", HA_ROLE_PRIMARY,
		.maint = true, .hold = HA_HOLD_HELD, .sw = SW_FROM_ME,
		.want = HA_STEP_DOWN),
	R("maintenance: primary, another node holds the key", HA_ROLE_PRIMARY,
		.maint = true, .leader = LEADER_OTHER, .want = HA_STEP_DOWN),
};

static void
run_row(const struct row *r)
{
	struct ha_cfg c = cfg;
	struct coord_keys k;
	struct ha_state s;
	struct ha_action a;
	uint64_t t0 = 100000, now = t0 + 10 * LEASE;

	memset(&k, 0, sizeof(k));
	c.candidate = !r->not_candidate;
	ha_state_init(&s, r->fresh ? now - 10 : t0);
	/* a primary that held the key was followed, unless the row says not */
	s.keyless = r->fresh || r->keyless_lately || r->keyless_long;
	if (r->keyless_lately)
		s.heard_ms = now - 10;
	if (r->keyless_long)
		s.heard_ms = now - LEASE - DOWN;
	if (r->backoff)
		s.backoff_until_ms = now + 1;
	if (r->eligible_long) {
		s.eligible = true;
		s.eligible_since_ms = now - LEASE;
	}
	if (r->role == HA_ROLE_PRIMARY)
		add_member(&k, ME, "primary", 100, r->link_up, true);
	else if (!r->unpublished)
		add_member(&k, ME, "replica", 100, r->link_up, !r->not_candidate);
	add_member(&k, 3, "replica", r->ahead ? 101 : 99, r->other_link, true);
	if (r->leader == LEADER_OTHER)
		set_leader(&k, 1, "primary");
	else if (r->leader == LEADER_ME)
		set_leader(&k, ME, "primary");
	else if (r->leader == LEADER_FOREIGN)
		set_leader(&k, 0, "?");
	if (r->maint) {
		k.has_maintenance = true;
		k.maint.node_id = 1;
	}
	if (r->sw != NO_SW) {
		k.has_switchover = true;
		k.sw.from = r->sw == SW_FROM_ME ? ME : 1;
		k.sw.to = r->sw == SW_TO_ME || r->sw == SW_TO_ME_FAILOVER ? ME :
			r->sw == SW_TO_OTHER ? 3 : 0;
		k.sw.failover = r->sw == SW_TO_ME_FAILOVER;
	}
	a = ha_step(&s, &c, &(struct ha_input){
		.now_ms = now,
		.local = { .role = r->role, .epoch = 7, .last_lsn = 100,
			.link_up = r->link_up, .member = !r->not_member,
			.config_epoch = r->not_member ? 0 : 3 },
		.etcd_ok = !r->etcd_down, .keys = r->keys_unread ? NULL : &k,
		.hold = r->hold, .busy = r->busy });
	CHECK(a.kind == r->want, "%s: %s, want %s", r->name, ha_action_name(a.kind),
		ha_action_name(r->want));
	CHECK(s.wait == r->want_wait, "%s: waits for \"%s\", want \"%s\"", r->name,
		ha_wait_name(s.wait), ha_wait_name(r->want_wait));
	if (a.kind == HA_CAMPAIGN)
		CHECK(a.named == (r->sw == SW_TO_ME || r->sw == SW_TO_ME_FAILOVER) &&
			a.rank == (r->ahead ? 1 : 0), "%s: rank %d named %d", r->name,
			a.rank, a.named);
	if (a.kind == HA_STEP_DOWN)
		CHECK(a.switchover == (r->sw == SW_FROM_ME) &&
			a.leader == (r->sw == SW_FROM_ME ? 0u : 1u), "%s: why %d %u",
			r->name, a.switchover, a.leader);
}

/* ---- timelines: a node's steps, one tick apart ---- */

#define TICK 100

struct node_sim {
	struct ha_state s;
	struct ha_cfg c;
	struct ha_local l;
	enum ha_hold hold;
};

static struct ha_action
step(struct node_sim *n, const struct coord_keys *k, uint64_t now)
{
	return ha_step(&n->s, &n->c, &(struct ha_input){ .now_ms = now,
		.local = n->l, .etcd_ok = true, .keys = k, .hold = n->hold });
}

static void
replica_sim(struct node_sim *n, uint32_t id, uint64_t lsn, uint64_t now)
{
	memset(n, 0, sizeof(*n));
	n->c = cfg;
	n->c.node_id = id;
	n->l = (struct ha_local){ .role = HA_ROLE_REPLICA, .epoch = 7,
		.last_lsn = lsn, .member = true, .config_epoch = 3 };
	ha_state_init(&n->s, now);
}

/*
 * The coordinator turned on in a running cluster, a replica first: the
 * primary holds no key (it runs without a coordinator), the other replica
 * publishes nothing.  The restarted replica's link comes up 300 ms after
 * its start; it must never campaign.  Before the start rule it campaigned
 * at its first tick and fenced the healthy primary.
 */
static void
timeline_rolling_enable(void)
{
	struct node_sim n;
	struct coord_keys k;
	uint64_t t0 = 50000;
	int campaigns = 0;

	memset(&k, 0, sizeof(k));
	add_member(&k, ME, "replica", 100, false, true);
	replica_sim(&n, ME, 100, t0);
	for (uint64_t t = t0; t < t0 + 20 * LEASE; t += TICK) {
		n.l.link_up = t >= t0 + 300;
		k.members[0].link_up = n.l.link_up;
		campaigns += step(&n, &k, t).kind == HA_CAMPAIGN;
	}
	CHECK(campaigns == 0, "rolling enable: %d campaigns against a live primary",
		campaigns);
	/* the same node whose link never comes up waits lease + down_ms */
	replica_sim(&n, ME, 100, t0);
	k.members[0].link_up = false;
	uint64_t first = 0;

	for (uint64_t t = t0; t < t0 + 20 * LEASE && first == 0; t += TICK)
		if (step(&n, &k, t).kind == HA_CAMPAIGN)
			first = t;
	CHECK(first == t0 + LEASE + DOWN, "no primary at start: campaign %llu ms "
		"after start, want %d", (unsigned long long)(first - t0), LEASE + DOWN);
}

/*
 * The other order: the replicas run the coordinator, the primary not yet
 * (it holds no key), and it is restarted to take its coordinator up: down
 * 800 ms, back (the link up again), the key taken 200 ms later.  No
 * campaign.  A keyless primary that does not come back is replaced
 * lease_ms + down_ms after it was last heard.
 */
static void
timeline_primary_restart(void)
{
	struct node_sim n;
	struct coord_keys k;
	uint64_t t0 = 40000, down = t0 + 3 * LEASE, first = 0;
	int campaigns = 0;

	memset(&k, 0, sizeof(k));
	add_member(&k, ME, "replica", 100, true, true);
	replica_sim(&n, ME, 100, t0);
	for (uint64_t t = t0; t < t0 + 20 * LEASE; t += TICK) {
		n.l.link_up = t < down || t >= down + 800;
		k.members[0].link_up = n.l.link_up;
		if (t >= down + 1000)
			set_leader(&k, 1, "primary");
		campaigns += step(&n, &k, t).kind == HA_CAMPAIGN;
	}
	CHECK(campaigns == 0, "a keyless primary's restart: %d campaigns", campaigns);

	memset(&k, 0, sizeof(k));
	add_member(&k, ME, "replica", 100, true, true);
	replica_sim(&n, ME, 100, t0);
	for (uint64_t t = t0; t < t0 + 20 * LEASE && first == 0; t += TICK) {
		n.l.link_up = t < down;
		k.members[0].link_up = n.l.link_up;
		if (step(&n, &k, t).kind == HA_CAMPAIGN)
			first = t;
	}
	/* last heard at the tick before down */
	CHECK(first == down - TICK + LEASE + DOWN, "a keyless primary gone: campaign "
		"%lld ms after it went, want %d", (long long)(first - down),
		LEASE + DOWN - TICK);
}

/*
 * The primary dies: two replicas, the one with the longer log campaigns
 * at the first tick after both links are down, the other only rank *
 * lease / 2 later, and not at all once a leader key appears.
 */
static void
timeline_primary_dies(void)
{
	struct node_sim a, b;
	struct coord_keys k;
	uint64_t t0 = 90000, dead = t0 + 5 * TICK, first_a = 0, first_b = 0;

	memset(&k, 0, sizeof(k));
	add_member(&k, 2, "replica", 120, true, true);
	add_member(&k, 3, "replica", 110, true, true);
	set_leader(&k, 1, "primary");
	replica_sim(&a, 2, 120, t0);
	replica_sim(&b, 3, 110, t0);
	for (uint64_t t = t0; t < t0 + 10 * LEASE; t += TICK) {
		bool up = t < dead;

		/* the key goes with the dead primary's lease */
		k.has_leader = t < dead + LEASE;
		a.l.link_up = b.l.link_up = up;
		k.members[0].link_up = k.members[1].link_up = up;
		if (step(&a, &k, t).kind == HA_CAMPAIGN && first_a == 0)
			first_a = t;
		if (step(&b, &k, t).kind == HA_CAMPAIGN && first_b == 0)
			first_b = t;
	}
	CHECK(first_a == dead + LEASE, "the most advanced campaigns %llu ms after "
		"the death, want %d", (unsigned long long)(first_a - dead), LEASE);
	CHECK(first_b == first_a + LEASE / 2, "the second campaigns %llu ms after "
		"the first, want %d", (unsigned long long)(first_b - first_a), LEASE / 2);

	/* the first wins: the key is back, the second stops */
	replica_sim(&b, 3, 110, t0);
	b.s.keyless = false;
	k.has_leader = false;
	CHECK(step(&b, &k, t0).kind == HA_NONE && b.s.wait == HA_WAIT_RANK,
		"second in rank waits");
	set_leader(&k, 2, "promoting");
	CHECK(step(&b, &k, t0 + LEASE).kind == HA_NONE && b.s.wait == HA_WAIT_LEADER,
		"a promoting leader stops the second");
	CHECK(!b.s.eligible, "eligibility ends with the key taken");
}

/*
 * A refused promotion: the winner resigns and backs off a lease plus its
 * jitter; a lost campaign only restarts eligibility.
 */
static void
timeline_refused(void)
{
	struct node_sim n;
	struct coord_keys k;
	uint64_t t0 = 70000;

	memset(&k, 0, sizeof(k));
	add_member(&k, ME, "replica", 100, false, true);
	replica_sim(&n, ME, 100, t0);
	n.s.keyless = false;
	CHECK(step(&n, &k, t0).kind == HA_CAMPAIGN, "campaigns");
	ha_promotion_refused(&n.s, &n.c, t0 + 50, 300);
	CHECK(step(&n, &k, t0 + 50 + LEASE + 299).kind == HA_NONE &&
		n.s.wait == HA_WAIT_BACKOFF, "backs off");
	CHECK(step(&n, &k, t0 + 50 + LEASE + 300).kind == HA_CAMPAIGN,
		"campaigns again once the back-off is over");
	ha_campaign_lost(&n.s);
	CHECK(!n.s.eligible, "a lost campaign ends eligibility");

	/* the worker holds the key after a step-down: resign at once */
	n.hold = HA_HOLD_HELD;
	CHECK(step(&n, &k, t0 + 5 * LEASE).kind == HA_RESIGN, "resigns");
}

/*
 * A primary paused past its lease: the others took the key.  Resumed, it
 * steps down (and the step-down's resign follows as a replica), never
 * campaigns with "primary" while another holds the key.
 */
static void
timeline_paused_primary(void)
{
	struct node_sim p;
	struct coord_keys k;
	struct ha_action a;
	uint64_t t0 = 30000;

	memset(&k, 0, sizeof(k));
	memset(&p, 0, sizeof(p));
	p.c = cfg;
	p.c.node_id = 1;
	p.l = (struct ha_local){ .role = HA_ROLE_PRIMARY, .epoch = 7, .last_lsn = 100,
		.link_up = true, .member = true, .config_epoch = 3 };
	ha_state_init(&p.s, t0);
	p.hold = HA_HOLD_HELD;
	set_leader(&k, 1, "primary");
	CHECK(step(&p, &k, t0).kind == HA_KEEP, "holds");
	/* resumed: keepalive says the lease is gone, node 2 holds the key */
	p.hold = HA_HOLD_LOST;
	set_leader(&k, 2, "primary");
	a = step(&p, &k, t0 + 5 * LEASE);
	CHECK(a.kind == HA_STEP_DOWN && a.leader == 2, "steps down for node 2");
	/* as a replica now, still holding a lost hold: resign, never campaign */
	p.l.role = HA_ROLE_REPLICA;
	p.l.link_up = false;
	CHECK(step(&p, &k, t0 + 5 * LEASE + TICK).kind == HA_RESIGN, "resigns");
	p.hold = HA_HOLD_NONE;
	for (int i = 0; i < 30; i++)
		CHECK(step(&p, &k, t0 + 6 * LEASE + (uint64_t)i * TICK).kind == HA_NONE,
			"a replica does not campaign while node 2 holds the key");
}

/* a foreign value is reported once, then again only after it went */
static void
timeline_foreign(void)
{
	struct node_sim p;
	struct coord_keys k;

	memset(&k, 0, sizeof(k));
	memset(&p, 0, sizeof(p));
	p.c = cfg;
	p.l.role = HA_ROLE_PRIMARY;
	ha_state_init(&p.s, 0);
	set_leader(&k, 0, "?");
	CHECK(step(&p, &k, 100).kind == HA_REPORT_FOREIGN, "reported");
	CHECK(step(&p, &k, 200).kind == HA_NONE, "once");
	k.has_leader = false;
	CHECK(step(&p, &k, 300).kind == HA_HOLD, "held once it went");
	set_leader(&k, 0, "?");
	CHECK(step(&p, &k, 400).kind == HA_REPORT_FOREIGN, "reported anew");
}

/* ---- the takeover rule ---- */

/* a membership of n nodes (1 .. 3): the primary 1, replicas 2 and 3 */
static void
set_membership(struct coord_keys *k, int n)
{
	k->has_membership = true;
	k->membership.config_epoch = 3;
	k->membership.quorum = 1;
	k->membership.n = n;
	for (int i = 0; i < n; i++) {
		k->membership.nodes[i].node_id = (uint32_t)i + 1;
		snprintf(k->membership.nodes[i].ctl_addr,
			sizeof(k->membership.nodes[i].ctl_addr), "127.0.0.1:%d", 7400 + i);
	}
}

struct to_row {
	const char *name;
	uint64_t silent_ms;	/* this node's silence (its link is down) */
	bool link_up;		/* ... or its link is up all the same */
	bool other_up;		/* the other replica follows the primary */
	bool other_epoch;	/* the other replica is at another epoch */
	bool other_gone;	/* the other replica publishes nothing */
	bool holder_replica;	/* the key's holder restarted: a replica
				   member with no link, its old key on */
	int nodes;		/* the membership's (0: no membership key) */
	const char *state;	/* the holder's */
	bool holder_epoch;	/* the holder is at another epoch than this log */
	bool no_lease, switchover, not_member, not_candidate, backoff, lately;
	bool maint;		/* the maintenance key exists */
	bool want;		/* TAKE_OVER, or NONE waiting for the leader */
};

static const struct to_row to_rows[] = {
	R("silent down_ms to both replicas", DOWN, .nodes = 3, .want = true),
	R("silent long", 60000, .nodes = 3, .want = true),
	R("silent less than down_ms", DOWN - 1, .nodes = 3),
	R("silent, yet its link is up", DOWN, .link_up = true, .nodes = 3),
	R("silent here, the other replica follows", DOWN, .other_up = true, .nodes = 3),
	R("the other replica at another epoch: one vote of two", DOWN,
		.other_epoch = true, .nodes = 3),
	R("the other replica gone: one vote of two", DOWN, .other_gone = true,
		.nodes = 3),
	R("the holder back as a replica, the other replica gone: one vote of two",
		DOWN, .other_gone = true, .holder_replica = true, .nodes = 3),
	R("one replica in the membership: its vote is a majority", DOWN,
		.other_gone = true, .nodes = 2, .want = true),
	R("no membership key", DOWN, .nodes = 0),
	R("the holder is promoting", DOWN, .nodes = 3, .state = "promoting"),
	R("the holder at another epoch", DOWN, .nodes = 3, .holder_epoch = true),
	R("the key under no lease", DOWN, .nodes = 3, .no_lease = true),
	R("a switchover under way", DOWN, .nodes = 3, .switchover = true),
	R("not a member", DOWN, .nodes = 3, .not_member = true),
	R("not a candidate", DOWN, .nodes = 3, .not_candidate = true),
	R("backing off", DOWN, .nodes = 3, .backoff = true),
	R("took over less than a lease ago", DOWN, .nodes = 3, .lately = true),
	R("maintenance", DOWN, .nodes = 3, .maint = true),
	R("maintenance, the holder silent long", 60000, .nodes = 3, .maint = true),
};

static void
run_to_row(const struct to_row *r)
{
	struct ha_cfg c = cfg;
	struct coord_keys k;
	struct ha_state s;
	struct ha_action a;
	uint64_t now = 200000;

	memset(&k, 0, sizeof(k));
	c.candidate = !r->not_candidate;
	ha_state_init(&s, 100000);
	s.keyless = false;
	if (r->backoff)
		s.backoff_until_ms = now + 1;
	if (r->lately) {
		s.took_over = true;
		s.took_over_ms = now - LEASE + 1;
	}
	add_member(&k, 1, r->holder_replica ? "replica" : "primary", 100,
		!r->holder_replica, true);
	add_member(&k, ME, "replica", 100, r->link_up, true);
	if (!r->other_gone) {
		add_member(&k, 3, "replica", 99, r->other_up, true);
		if (r->other_epoch)
			k.members[2].epoch = 5;
	}
	set_leader(&k, 1, r->state ? r->state : "primary");
	if (r->holder_epoch)
		k.leader.epoch = 9;
	if (!r->no_lease)
		k.leader_lease = 0x42;
	if (r->nodes)
		set_membership(&k, r->nodes);
	if (r->switchover) {
		k.has_switchover = true;
		k.sw.from = 1;
	}
	k.has_maintenance = r->maint;
	a = ha_step(&s, &c, &(struct ha_input){
		.now_ms = now,
		.local = { .role = HA_ROLE_REPLICA, .epoch = 7, .last_lsn = 100,
			.link_up = r->link_up, .member = !r->not_member,
			.config_epoch = r->not_member ? 0 : 3, .silent_ms = r->silent_ms },
		.etcd_ok = true, .keys = &k });
	CHECK((a.kind == HA_TAKE_OVER) == r->want, "takeover, %s: %s", r->name,
		ha_action_name(a.kind));
	if (r->want)
		CHECK(a.leader == 1 && a.lease == 0x42 && a.replicas == r->nodes - 1 &&
			a.votes == (r->other_gone ? 1 : 2), "takeover, %s: leader %u "
			"lease %llx votes %d of %d", r->name, a.leader,
			(unsigned long long)a.lease, a.votes, a.replicas);
	else if (r->not_candidate)
		CHECK(s.wait == HA_WAIT_NOT_CANDIDATE, "takeover, %s: waits for %s",
			r->name, ha_wait_name(s.wait));
	else if (r->maint)
		/* held back: no takeover time noted either */
		CHECK(a.kind == HA_NONE && s.wait == HA_WAIT_MAINTENANCE &&
			!s.took_over, "takeover, %s: %s, waits for %s", r->name,
			ha_action_name(a.kind), ha_wait_name(s.wait));
	else
		CHECK(a.kind == HA_NONE && s.wait == HA_WAIT_LEADER, "takeover, %s: "
			"%s, waits for %s", r->name, ha_action_name(a.kind),
			ha_wait_name(s.wait));
}

/*
 * Two replicas; the primary at epoch 7 holds the key under a lease, and
 * the membership key names three nodes.  kill: its links drop at once,
 * the silence starts then.  pause: the links stay up until the replicas
 * drop a primary silent for down_ms.  Either way the most advanced
 * replica revokes the lease at down_ms and campaigns at the same step,
 * not a lease later.  A primary restarted within down_ms is not taken
 * over; nor is one that only one replica cannot hear.
 */
static uint64_t
takeover_run(bool pause, uint64_t gone_ms, bool one_link, int *takeovers)
{
	struct node_sim a, b;
	struct coord_keys k;
	uint64_t t0 = 90000, dead = t0 + 5 * TICK, first = 0;

	memset(&k, 0, sizeof(k));
	add_member(&k, 1, "primary", 120, true, true);
	add_member(&k, 2, "replica", 120, true, true);
	add_member(&k, 3, "replica", 110, true, true);
	set_membership(&k, 3);
	set_leader(&k, 1, "primary");
	k.leader_lease = 0x42;
	replica_sim(&a, 2, 120, t0);
	replica_sim(&b, 3, 110, t0);
	*takeovers = 0;
	for (uint64_t t = t0; t < t0 + 20 * LEASE && first == 0; t += TICK) {
		bool gone = t >= dead && t < dead + gone_ms;
		uint64_t silent = gone ? t - dead : t % TICK;
		struct ha_action x;

		a.l.silent_ms = silent;
		b.l.silent_ms = one_link ? t % TICK : silent;
		a.l.link_up = pause ? silent < DOWN : !gone;
		b.l.link_up = one_link || (pause ? silent < DOWN : !gone);
		k.members[1].link_up = a.l.link_up;
		k.members[2].link_up = b.l.link_up;
		x = step(&a, &k, t);
		if (x.kind == HA_TAKE_OVER) {
			(*takeovers)++;
			k.has_leader = false;	/* the revoke deletes the key */
			x = step(&a, &k, t);
		}
		if (x.kind == HA_CAMPAIGN)
			first = t;
		(void)step(&b, &k, t);
	}
	return first ? first - dead : 0;
}

static void
timeline_takeover(void)
{
	int n;
	uint64_t at;

	at = takeover_run(false, 60000, false, &n);
	CHECK(at == DOWN && n == 1, "a killed primary: campaign %llu ms after, want "
		"%d (%d takeovers)", (unsigned long long)at, DOWN, n);
	at = takeover_run(true, 60000, false, &n);
	CHECK(at == DOWN && n == 1, "a paused primary: campaign %llu ms after, want "
		"%d (%d takeovers)", (unsigned long long)at, DOWN, n);
	at = takeover_run(false, DOWN - TICK, false, &n);
	CHECK(at == 0 && n == 0, "a primary back within down_ms: campaign %llu ms "
		"after, %d takeovers", (unsigned long long)at, n);
	at = takeover_run(false, 60000, true, &n);
	CHECK(at == 0 && n == 0, "one replica's link down: campaign %llu ms after, "
		"%d takeovers", (unsigned long long)at, n);
}

/*
 * Maintenance on, then the primary killed: for 20 leases neither replica
 * takes over or campaigns, while the key is held and once its lease has
 * gone; from down_ms on each says it waits for maintenance (the second in
 * rank too: its wait would end in a campaign).  Maintenance off: the most
 * advanced campaigns at its next step (its eligibility starts then, so
 * the rank's delay holds the other), as without maintenance.  With the
 * key still held, off brings the takeover back at the next step.
 */
static void
timeline_maintenance(void)
{
	struct node_sim a, b;
	struct coord_keys k;
	uint64_t t0 = 90000, dead = t0 + 5 * TICK, off = dead + 20 * LEASE, t;
	int held = 0, waited = 0;
	struct ha_action x, y;

	memset(&k, 0, sizeof(k));
	add_member(&k, 1, "primary", 120, true, true);
	add_member(&k, 2, "replica", 120, true, true);
	add_member(&k, 3, "replica", 110, true, true);
	set_membership(&k, 3);
	set_leader(&k, 1, "primary");
	k.leader_lease = 0x42;
	k.has_maintenance = true;
	k.maint.node_id = 1;
	replica_sim(&a, 2, 120, t0);
	replica_sim(&b, 3, 110, t0);
	for (t = t0; t < off; t += TICK) {
		bool gone = t >= dead;

		/* the dead primary's key goes with its lease */
		k.has_leader = t < dead + LEASE;
		a.l.link_up = b.l.link_up = !gone;
		a.l.silent_ms = b.l.silent_ms = gone ? t - dead : 0;
		k.members[1].link_up = k.members[2].link_up = !gone;
		x = step(&a, &k, t);
		y = step(&b, &k, t);
		held += x.kind != HA_NONE || y.kind != HA_NONE;
		waited += t >= dead + DOWN && a.s.wait == HA_WAIT_MAINTENANCE &&
			b.s.wait == HA_WAIT_MAINTENANCE;
	}
	CHECK(held == 0, "maintenance: %d steps that were not NONE", held);
	CHECK(waited == (int)((off - dead - DOWN) / TICK), "maintenance: both "
		"waited for it in %d of %d steps", waited,
		(int)((off - dead - DOWN) / TICK));
	CHECK(!a.s.eligible && !a.s.took_over, "maintenance: no eligibility or "
		"takeover kept");

	k.has_maintenance = false;
	x = step(&a, &k, off);
	y = step(&b, &k, off);
	CHECK(x.kind == HA_CAMPAIGN && x.rank == 0, "off: the most advanced "
		"campaigns at once (%s)", ha_action_name(x.kind));
	CHECK(y.kind == HA_NONE && b.s.wait == HA_WAIT_RANK, "off: the second "
		"waits its rank (%s, %s)", ha_action_name(y.kind),
		ha_wait_name(b.s.wait));
	CHECK(step(&b, &k, off + LEASE / 2).kind == HA_CAMPAIGN, "off: the second "
		"campaigns lease / 2 later");

	/* the key still held by the silent primary: off brings the takeover */
	set_leader(&k, 1, "primary");
	k.has_maintenance = true;
	CHECK(step(&a, &k, off + LEASE).kind == HA_NONE &&
		a.s.wait == HA_WAIT_MAINTENANCE, "a silent holder: held back");
	k.has_maintenance = false;
	x = step(&a, &k, off + LEASE + TICK);
	CHECK(x.kind == HA_TAKE_OVER && x.leader == 1, "off: takes over at once (%s)",
		ha_action_name(x.kind));
}

/* ---- the membership key ---- */

static void
ms(struct coord_membership *m, uint64_t ce, uint32_t ids_from, int n)
{
	memset(m, 0, sizeof(*m));
	m->config_epoch = ce;
	m->quorum = 1;
	m->n = n;
	for (int i = 0; i < n; i++) {
		m->nodes[i].node_id = ids_from ? ids_from + (uint32_t)i : 0;
		snprintf(m->nodes[i].ctl_addr, sizeof(m->nodes[i].ctl_addr),
			"127.0.0.1:%d", 7400 + i);
	}
}

static void
membership(void)
{
	struct coord_keys k;
	struct coord_membership log;
	struct ha_ms_input in = { .now_ms = 1000, .node_id = 1,
		.ctl_addr = "127.0.0.1:7400", .log = &log, .keys = &k };

	memset(&k, 0, sizeof(k));
	ms(&log, 5, 1, 3);
	CHECK(ha_membership_step(&in) == HA_MS_PUBLISH, "absent: published");
	CHECK(strcmp(ha_membership_state(&k, 5, false), "absent") == 0, "absent");
	k.bad_membership = true;
	CHECK(ha_membership_step(&in) == HA_MS_PUBLISH, "unreadable: published");
	CHECK(strcmp(ha_membership_state(&k, 5, false), "invalid") == 0, "invalid");
	k.bad_membership = false;
	k.has_membership = true;
	ms(&k.membership, 5, 1, 3);
	CHECK(ha_membership_step(&in) == HA_MS_NONE, "the same: nothing");
	CHECK(strcmp(ha_membership_state(&k, 5, false), "applied") == 0, "applied");
	CHECK(strcmp(ha_membership_state(&k, 5, true), "changing") == 0, "changing");
	ms(&k.membership, 5, 0, 3);
	CHECK(ha_membership_step(&in) == HA_MS_PUBLISH, "node ids learned: published");
	ms(&k.membership, 3, 1, 3);
	CHECK(ha_membership_step(&in) == HA_MS_PUBLISH, "behind: published");
	CHECK(strcmp(ha_membership_state(&k, 5, false), "behind") == 0, "behind");
	ms(&k.membership, 7, 1, 4);
	CHECK(ha_membership_step(&in) == HA_MS_CARRY, "the next change: carried");
	CHECK(strcmp(ha_membership_state(&k, 5, false), "pending") == 0, "pending");
	in.busy = true;
	CHECK(ha_membership_step(&in) == HA_MS_NONE, "busy: later");
	in.busy = false;
	in.carry_backoff_until_ms = 1001;
	CHECK(ha_membership_step(&in) == HA_MS_NONE, "backing off: later");
	in.carry_backoff_until_ms = 0;
	ms(&k.membership, 9, 1, 4);
	CHECK(ha_membership_step(&in) == HA_MS_NOT_NEXT, "two changes ahead");
	ms(&k.membership, 7, 2, 3);	/* nodes 2..4: without node 1 */
	CHECK(ha_membership_step(&in) == HA_MS_REMOVES_ME, "removes this primary");
	in.log = NULL;
	CHECK(ha_membership_step(&in) == HA_MS_NONE, "a joint log: the key waits");
}

int
main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i]);
	timeline_rolling_enable();
	timeline_primary_restart();
	timeline_primary_dies();
	timeline_refused();
	timeline_paused_primary();
	timeline_foreign();
	for (size_t i = 0; i < sizeof(to_rows) / sizeof(to_rows[0]); i++)
		run_to_row(&to_rows[i]);
	timeline_takeover();
	timeline_maintenance();
	membership();
	if (failures) {
		fprintf(stderr, "ha_rules_test: %d of %d checks failed\n", failures, checks);
		return 1;
	}
	printf("ha_rules_test: %d checks, %zu transitions passed\n", checks,
		sizeof(rows) / sizeof(rows[0]) + sizeof(to_rows) / sizeof(to_rows[0]));
	return 0;
}
