/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coordinator.c -- automatic failover on etcd: the thread that publishes
 * this node, holds or campaigns for the leader key, and starts the node's
 * promotion or step-down (coordinator.h says what and why; coord_keys.c
 * how the keys' values are written and read).
 *
 * One tick (TICK_MS): renew what is due, read the cluster's keys, then act
 * by role:
 *
 *   primary  leader not held --> campaign (CREATE == 0); held by an older
 *            incarnation of this node --> revoke that lease; held by
 *            another --> wait to be fenced.  A switchover naming it -->
 *            step down (worker), then resign.
 *   replica  holds the key (it stepped down, or was fenced) --> resign.
 *            leader absent, link down, no live member's link up (or a
 *            switchover naming it) --> campaign after its rank's delay;
 *            won --> promote (worker); promoted --> leader "primary",
 *            epochs, history; refused --> resign, back off.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coord/etcd_client.h"
#include "coord/leader.h"
#include "coord_keys.h"
#include "coordinator.h"
#include "log.h"
#include "node.h"

#define TICK_MS 100
#define MS UINT64_C(1000000)

enum worker_state { WORKER_IDLE = 0, WORKER_RUNNING, WORKER_DONE };
enum worker_kind { WORK_PROMOTE = 1, WORK_STEP_DOWN };

struct coordinator {
	struct node *n;
	uint32_t node_id;
	uint64_t lease_ms;		/* configured */
	char ctl_addr[80];
	char *prefix;			/* PREFIX<uuid>/ */
	char *k_members, *k_me, *k_switchover, *k_history;
	struct coord_leader *leader;
	struct etcd_client *etcd;	/* the leader's: this thread's only */

	pthread_t thread;
	pthread_mutex_t lock;		/* guards view, stop, req */
	pthread_cond_t cond;
	bool stop;
	struct coord_view view;
	struct {
		bool pending, done;
		uint32_t to;
		bool failover;
		struct coord_answer *ans;
	} req;

	/* the worker: one change of the node at a time */
	pthread_t worker;
	atomic_int worker_state;
	enum worker_kind work;
	int worker_ret;
	char worker_msg[512];

	/* the member key's lease */
	int64_t member_lease;
	uint64_t member_renew_at;
	struct coord_member published;	/* node_id 0: nothing yet */
	uint64_t published_at;

	uint64_t leader_renew_at;
	/* the cluster as last read */
	struct coord_keys keys;
	bool keys_valid;
	uint64_t keys_at;

	uint64_t eligible_since;	/* 0: not eligible to campaign */
	uint64_t backoff_until;
	uint64_t waiting_logged;	/* the holder epoch last logged */
	bool reachable;
	uint64_t unreachable_since;
	unsigned seed;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *
coord_view_failover(const struct coord_view *v)
{
	return !v->candidate ? "off" : v->reachable ? "armed" : "paused";
}

/* ---- what the node is now ---- */

struct local {
	enum node_role role;
	uint64_t epoch, last_lsn;
	bool link_up;
	bool member;		/* its log holds a membership, and a floor */
};

static void
local_read(struct coordinator *c, struct local *l)
{
	struct node *n = c->n;

	l->role = node_role(n);
	if (l->role == NODE_PRIMARY) {
		struct repl_status st;
		bool changing;
		struct repl *repl = node_try_enter(n, &changing);

		if (repl != NULL) {
			repl_status(repl, &st);
			node_leave(n);
			l->epoch = st.epoch;
			l->last_lsn = st.last_lsn;
			l->link_up = !st.fenced && st.replicas_up > 0;
		}
	} else if (l->role == NODE_REPLICA) {
		struct repl_replica_info info;

		node_replica_info(n, &info);
		l->epoch = info.epoch;
		l->last_lsn = info.last_lsn;
		l->link_up = info.following != 0;
		/*
		 * A log that never joined a cluster (a new node before the
		 * bootstrap, one made anew before its floor) has nothing to
		 * lead with: the promotion would refuse it anyway.
		 */
		l->member = info.config_epoch != 0 && !info.floor_pending;
	}
}

/* ---- etcd's answers ---- */

/* a call's outcome: reachability, and the last failure for status */
static bool
etcd_ok(struct coordinator *c, enum etcd_rc rc, const char *what,
		const char *detail)
{
	uint64_t now = now_ns();

	if (rc == ETCD_OK) {
		if (!c->reachable) {
			log_notice("coordinator: etcd answers again (%s), after %" PRIu64
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
		log_warning("coordinator: etcd unreachable (%s: %s): automatic failover "
			"paused; a primary goes on acknowledging while its replicas "
			"answer", what, detail && *detail ? detail : etcd_rc_name(rc));
	}
	return false;
}

static bool
client_ok(struct coordinator *c, enum etcd_rc rc, const char *what)
{
	return etcd_ok(c, rc, what, etcd_client_error(c->etcd));
}

static bool
leader_ok(struct coordinator *c, enum etcd_rc rc, const char *what)
{
	return etcd_ok(c, rc, what, coord_leader_error(c->leader));
}

/* ---- this node's member key ---- */

static void
member_publish(struct coordinator *c, const struct local *l, uint64_t now)
{
	char value[COORD_VALUE_MAX];
	struct coord_member m = {
		.node_id = c->node_id, .epoch = l->epoch, .last_lsn = l->last_lsn,
		.last_epoch = l->epoch, .link_up = l->link_up,
		.candidate = c->n->conf.coordinator.candidate != 0,
	};
	size_t len;
	int64_t ttl;
	enum etcd_rc rc;

	snprintf(m.role, sizeof(m.role), "%s", node_role_name(l->role));
	if (c->member_lease == 0 || now >= c->member_renew_at) {
		if (c->member_lease != 0) {
			rc = etcd_lease_keepalive(c->etcd, c->member_lease, &ttl, NULL);
			if (rc == ETCD_OK && ttl > 0) {
				c->member_renew_at = now + c->lease_ms * MS / 3;
			} else if (rc == ETCD_OK || rc == ETCD_E_LEASE_NOT_FOUND) {
				c->member_lease = 0;	/* expired: grant anew */
				c->published.node_id = 0;
			} else {
				(void)client_ok(c, rc, "member lease keepalive");
				return;
			}
			(void)client_ok(c, ETCD_OK, NULL);
		}
		if (c->member_lease == 0) {
			int64_t id;

			rc = etcd_lease_grant(c->etcd, (int64_t)(c->lease_ms / 1000), &id, &ttl);
			if (!client_ok(c, rc, "member lease grant"))
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
	if (!client_ok(c, rc, "member put"))
		return;
	c->published = m;
	c->published_at = now;
}

/* ---- the worker: a promotion or a step-down, off this thread ---- */

static void *
worker_main(void *arg)
{
	struct coordinator *c = arg;

	(void)pthread_setname_np(pthread_self(), "repld-coord-w");
	if (c->work == WORK_PROMOTE)
		c->worker_ret = node_promote(c->n, false, c->worker_msg,
			sizeof(c->worker_msg));
	else
		c->worker_ret = node_fence(c->n, c->worker_msg, sizeof(c->worker_msg));
	atomic_store(&c->worker_state, WORKER_DONE);
	return NULL;
}

static bool
worker_start(struct coordinator *c, enum worker_kind kind)
{
	c->work = kind;
	c->worker_msg[0] = '\0';
	atomic_store(&c->worker_state, WORKER_RUNNING);
	if (pthread_create(&c->worker, NULL, worker_main, c) != 0) {
		atomic_store(&c->worker_state, WORKER_IDLE);
		log_error("coordinator: cannot start a thread for the %s",
			kind == WORK_PROMOTE ? "promotion" : "step-down");
		return false;
	}
	return true;
}

/* ---- the leader key ---- */

static void
resign(struct coordinator *c, const char *why)
{
	if (coord_leader_state(c->leader) == COORD_LEADER_IDLE)
		return;
	log_notice("coordinator: giving the leader key back (%s)", why);
	(void)leader_ok(c, coord_leader_resign(c->leader), "resign");
}

static void
back_off(struct coordinator *c, uint64_t now)
{
	uint64_t ms = c->lease_ms + (uint64_t)rand_r(&c->seed) % (c->lease_ms + 1);

	c->backoff_until = now + ms * MS;
	c->eligible_since = 0;
	log_notice("coordinator: next campaign in %" PRIu64 " ms at the earliest", ms);
}

/* renew the held key when due */
static void
leader_renew(struct coordinator *c, uint64_t now)
{
	enum etcd_rc rc;

	if (coord_leader_state(c->leader) != COORD_LEADER_HELD || now < c->leader_renew_at)
		return;
	rc = coord_leader_renew(c->leader);
	if (rc == ETCD_E_LEASE_NOT_FOUND) {
		log_warning("coordinator: the leader lease expired in etcd (it was not "
			"renewed in time): taking the key again if it is free");
		(void)leader_ok(c, ETCD_OK, NULL);
		return;
	}
	if (leader_ok(c, rc, "leader keepalive"))
		c->leader_renew_at = now + c->lease_ms * MS / 3;
}

/* a campaign with value; true when won */
static bool
campaign(struct coordinator *c, const char *value)
{
	struct coord_campaign out;
	enum etcd_rc rc = coord_leader_campaign(c->leader, value, &out);
	bool won = false;

	if (!leader_ok(c, rc, "campaign"))
		return false;
	if (out.outcome == COORD_CAMPAIGN_WON) {
		won = true;
		c->leader_renew_at = now_ns() + c->lease_ms * MS / 3;
	} else if (out.outcome == COORD_CAMPAIGN_HELD) {
		struct coord_leader_value h;

		/* an older incarnation of this node: only this node uses its id */
		if (coord_leader_parse(out.holder.value, out.holder.value_len, &h) &&
		    h.node_id == c->node_id && out.holder.lease != 0) {
			log_notice("coordinator: the leader key is held by an earlier run "
				"of this node (lease %" PRIx64 "): revoking it",
				(uint64_t)out.holder.lease);
			(void)client_ok(c, etcd_lease_revoke(c->etcd, out.holder.lease),
				"revoke a stale lease");
		}
	}
	coord_holder_free(&out.holder);
	return won;
}

/* the primary: hold the key, or learn who does */
static void
primary_tick(struct coordinator *c, const struct local *l)
{
	char value[COORD_VALUE_MAX];
	const struct coord_keys *k = &c->keys;

	/* a switchover names this primary: drain, step down, then resign */
	if (k->has_switchover && k->sw.from == c->node_id &&
	    atomic_load(&c->worker_state) == WORKER_IDLE) {
		log_notice("coordinator: switchover to %s%.0" PRIu32 ": stepping down",
			k->sw.to ? "node " : "the most advanced replica", k->sw.to);
		(void)worker_start(c, WORK_STEP_DOWN);
		return;
	}
	if (coord_leader_state(c->leader) == COORD_LEADER_HELD)
		return;
	if (!c->keys_valid)
		return;
	if (k->has_leader && k->leader.node_id != c->node_id) {
		if (c->waiting_logged != k->leader.epoch + 1) {
			log_warning("coordinator: the leader key is held by node %" PRIu32
				" (epoch %" PRIu64 ", %s): this primary (epoch %" PRIu64
				") expects to be fenced", k->leader.node_id,
				k->leader.epoch, k->leader.state, l->epoch);
			c->waiting_logged = k->leader.epoch + 1;
		}
		return;
	}
	if (coord_leader_value(c->node_id, l->epoch, "primary", c->ctl_addr, value,
			sizeof(value)) == 0)
		return;
	if (campaign(c, value)) {
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

static void
replica_tick(struct coordinator *c, const struct local *l, uint64_t now)
{
	const struct coord_keys *k = &c->keys;
	char value[COORD_VALUE_MAX];
	bool named = false, urgent = false;
	int rank;

	/* it stepped down or was fenced: the key goes at once */
	if (coord_leader_state(c->leader) != COORD_LEADER_IDLE) {
		resign(c, "this node is a replica now");
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
	if (!campaign(c, value)) {
		c->eligible_since = 0;
		return;
	}
	log_notice("coordinator: won the leader key: promoting this replica");
	if (!worker_start(c, WORK_PROMOTE)) {
		resign(c, "the promotion could not start");
		back_off(c, now);
	}
}

/* a promotion done: publish it, or give the key back */
static void
promoted(struct coordinator *c, uint64_t now)
{
	char value[COORD_VALUE_MAX];
	struct local l = { 0 };
	bool ours = false;
	uint64_t stored;

	if (c->worker_ret != 0) {
		log_warning("coordinator: promotion refused: %s", c->worker_msg);
		resign(c, "the promotion was refused");
		back_off(c, now);
		return;
	}
	local_read(c, &l);
	pthread_mutex_lock(&c->lock);
	c->view.promotions++;
	pthread_mutex_unlock(&c->lock);
	if (coord_leader_value(c->node_id, l.epoch, "primary", c->ctl_addr, value,
			sizeof(value)) != 0 &&
	    leader_ok(c, coord_leader_update(c->leader, value, &ours), "leader update") &&
	    !ours)
		log_warning("coordinator: the leader key was lost during the promotion "
			"(its lease ran out): taking it again if it is free");
	log_notice("coordinator: promoted: node %" PRIu32 " is the primary of epoch %"
		PRIu64, c->node_id, l.epoch);
	if (leader_ok(c, coord_epoch_raise(c->leader, l.epoch, &stored), "epochs") &&
	    stored != l.epoch)
		log_warning("coordinator: etcd's epochs counter holds %" PRIu64 ", above "
			"this promotion's epoch %" PRIu64 " (etcd restored from "
			"elsewhere?): the epochs the logs hold decide", stored, l.epoch);
	if (coord_history_value(c->node_id, l.epoch, l.last_lsn, value, sizeof(value))) {
		char key[256];

		snprintf(key, sizeof(key), "%s%" PRIu64, c->k_history, l.epoch);
		(void)client_ok(c, etcd_put(c->etcd, key, strlen(key), value,
			strlen(value), 0, NULL), "history put");
	}
	if (c->keys.has_switchover)
		(void)client_ok(c, etcd_delete(c->etcd, c->k_switchover,
			strlen(c->k_switchover), false, NULL), "switchover delete");
}

static void
stepped_down(struct coordinator *c)
{
	if (c->worker_ret != 0)
		log_warning("coordinator: the step-down failed: %s", c->worker_msg);
	resign(c, "this node stepped down for a switchover");
}

/* ---- a switchover request (from the admin socket) ---- */

static void
serve_request(struct coordinator *c, uint32_t to, bool failover,
		struct coord_answer *a)
{
	const struct coord_keys *k = &c->keys;
	char value[COORD_VALUE_MAX];
	const struct coord_member *target = NULL;
	int64_t lease, ttl, sw_ttl;
	enum etcd_rc rc;

	memset(a, 0, sizeof(*a));
	if (!c->reachable || !c->keys_valid) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "etcd does not answer (%s)",
			c->view.last_error);
		return;
	}
	if (k->has_switchover) {
		a->error = "PENDING";
		snprintf(a->message, sizeof(a->message), "a switchover from node %" PRIu32
			" to %s%.0" PRIu32 " is pending", k->sw.from,
			k->sw.to ? "node " : "the most advanced replica", k->sw.to);
		return;
	}
	if (k->has_leader && strcmp(k->leader.state, "primary") == 0) {
		a->from = k->leader.node_id;
		a->epoch = k->leader.epoch;
	} else if (!failover) {
		a->error = "NO_PRIMARY";
		snprintf(a->message, sizeof(a->message), "no primary holds the leader key%s:"
			" name the node to take over with failover --to NODE",
			k->has_leader ? " (a promotion is under way)" : "");
		return;
	}
	for (int i = 0; i < k->n_members; i++)
		if (strcmp(k->members[i].role, "replica") == 0 &&
		    k->members[i].node_id != a->from &&
		    (to == 0 ? target == NULL : k->members[i].node_id == to))
			target = &k->members[i];
	if (target == NULL) {
		a->error = "BAD_TARGET";
		if (to != 0 && to == a->from)
			snprintf(a->message, sizeof(a->message), "node %" PRIu32 " is the "
				"primary already", to);
		else if (to != 0)
			snprintf(a->message, sizeof(a->message), "node %" PRIu32 " is not a "
				"live replica of this cluster (no members/%" PRIu32
				" key says so)", to, to);
		else
			snprintf(a->message, sizeof(a->message), "no live replica to take "
				"over");
		return;
	}
	a->to = to;
	/* it goes by itself if nobody acts on it: max(10 s, 10 leases) */
	sw_ttl = (int64_t)(c->lease_ms / 1000) * 10;
	if (sw_ttl < 10)
		sw_ttl = 10;
	if (!client_ok(c, etcd_lease_grant(c->etcd, sw_ttl, &lease, &ttl),
			"switchover lease grant")) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "%s", c->view.last_error);
		return;
	}
	if (!coord_switchover_value(a->from, to, failover, value, sizeof(value))) {
		a->error = "BAD_TARGET";
		snprintf(a->message, sizeof(a->message), "out of memory");
		(void)etcd_lease_revoke(c->etcd, lease);
		return;
	}
	struct etcd_compare cmp = {
		.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
		.key = (const uint8_t *)c->k_switchover, .key_len = strlen(c->k_switchover),
		.number = 0,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = cmp.key, .key_len = cmp.key_len,
		.value = (const uint8_t *)value, .value_len = strlen(value), .lease = lease,
	};
	struct etcd_txn t = { &cmp, 1, &put, 1, NULL, 0 };
	struct etcd_txn_result res;

	rc = etcd_txn(c->etcd, &t, &res);
	if (!client_ok(c, rc, "switchover txn")) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "%s", c->view.last_error);
		return;
	}
	if (!res.succeeded) {
		etcd_txn_result_free(&res);
		(void)etcd_lease_revoke(c->etcd, lease);
		a->error = "PENDING";
		snprintf(a->message, sizeof(a->message), "another switchover was "
			"requested meanwhile");
		return;
	}
	etcd_txn_result_free(&res);
	log_notice("coordinator: %s requested: node %" PRIu32 " steps down, %s%.0"
		PRIu32 " takes over", failover ? "failover" : "switchover", a->from,
		to ? "node " : "the most advanced replica", to);
	snprintf(a->message, sizeof(a->message), "%s requested: %s%.0" PRIu32
		"%s, %s%.0" PRIu32 " takes over", failover ? "failover" : "switchover",
		a->from ? "node " : "no primary", a->from, a->from ? " steps down" : "",
		to ? "node " : "the most advanced replica", to);
}

/* ---- the loop ---- */

static void
read_keys(struct coordinator *c, uint64_t now)
{
	struct coord_keys k;
	char why[256];
	enum etcd_rc rc = coord_keys_read(c->etcd, c->leader, c->prefix, &k, why,
		sizeof(why));

	if (!etcd_ok(c, rc, "read", why)) {
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
	v->candidate = c->n->conf.coordinator.candidate != 0;
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
		v->leader_ttl_s = k->leader_ttl_s;
		v->leader_age_ms = (now - c->keys_at) / MS;
		v->has_switchover = k->has_switchover;
		v->sw_from = k->sw.from;
		v->sw_to = k->sw.to;
		v->sw_failover = k->sw.failover;
		v->n_members = k->n_members;
		memcpy(v->members, k->members, sizeof(v->members));
	}
	pthread_mutex_unlock(&c->lock);
}

static void
tick(struct coordinator *c)
{
	uint64_t now = now_ns();
	struct local l = { 0 };
	int ws = atomic_load(&c->worker_state);

	if (ws == WORKER_DONE) {
		pthread_join(c->worker, NULL);
		atomic_store(&c->worker_state, WORKER_IDLE);
		if (c->work == WORK_PROMOTE)
			promoted(c, now);
		else
			stepped_down(c);
	}
	local_read(c, &l);
	member_publish(c, &l, now);
	leader_renew(c, now);
	read_keys(c, now);

	pthread_mutex_lock(&c->lock);
	if (c->req.pending && !c->req.done) {
		uint32_t to = c->req.to;
		bool failover = c->req.failover;
		struct coord_answer *a = c->req.ans;

		pthread_mutex_unlock(&c->lock);
		serve_request(c, to, failover, a);
		read_keys(c, now);
		pthread_mutex_lock(&c->lock);
		c->req.done = true;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);

	if (atomic_load(&c->worker_state) == WORKER_IDLE && c->reachable) {
		if (l.role == NODE_PRIMARY)
			primary_tick(c, &l);
		else if (l.role == NODE_REPLICA)
			replica_tick(c, &l, now);
	}
	view_update(c, now);
}

static void *
coord_main(void *arg)
{
	struct coordinator *c = arg;
	struct timespec until;

	(void)pthread_setname_np(pthread_self(), "repld-coord");
	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		pthread_mutex_unlock(&c->lock);
		tick(c);
		pthread_mutex_lock(&c->lock);
		if (c->stop || (c->req.pending && !c->req.done))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&c->cond, &c->lock, &until);
	}
	if (c->req.pending && !c->req.done) {
		c->req.ans->error = "COORDINATOR_UNREACHABLE";
		snprintf(c->req.ans->message, sizeof(c->req.ans->message),
			"the daemon is stopping");
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
	coord_leader_free(c->leader);
	free(c->prefix);
	free(c->k_members);
	free(c->k_me);
	free(c->k_switchover);
	free(c->k_history);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int
coordinator_start(struct node *n, struct coordinator **out, char *err,
		size_t errlen)
{
	const struct repld_conf *conf = &n->conf;
	struct coordinator *c;
	struct etcd_client_cfg ecfg = {
		.endpoints = (const char *const *)conf->coordinator.endpoints,
		.n_endpoints = (size_t)conf->coordinator.n_endpoints,
		.timeout_ms = conf->coordinator.timeout_ms,
		.ca_file = conf->coordinator.ca,
		.cert_file = conf->coordinator.cert,
		.key_file = conf->coordinator.key,
	};
	struct coord_leader_cfg lcfg = {
		.etcd = &ecfg, .ttl_s = conf->coordinator.lease_ms / 1000,
		.node_id = conf->node_id,
	};
	char me[16];

	*out = NULL;
	if (conf->coordinator.n_endpoints == 0)
		return 0;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "coordinator: out of memory");
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	c->n = n;
	c->node_id = conf->node_id;
	c->lease_ms = (uint64_t)conf->coordinator.lease_ms;
	c->reachable = true;	/* until a call says otherwise */
	c->seed = (unsigned)(now_ns() ^ (uint64_t)getpid() ^ conf->node_id);
	snprintf(c->ctl_addr, sizeof(c->ctl_addr),
		strchr(conf->listen.address, ':') ? "[%s]:%u" : "%s:%u",
		conf->listen.address, conf->listen.control_port);
	snprintf(me, sizeof(me), "%u", conf->node_id);
	if (asprintf(&c->prefix, "%s%s/", conf->coordinator.prefix,
			conf->cluster_uuid_text) < 0)
		c->prefix = NULL;
	if (c->prefix == NULL ||
	    (c->k_members = cat(c->prefix, "members/")) == NULL ||
	    (c->k_me = cat(c->k_members, me)) == NULL ||
	    (c->k_switchover = cat(c->prefix, "switchover")) == NULL ||
	    (c->k_history = cat(c->prefix, "history/")) == NULL) {
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
	c->view.candidate = conf->coordinator.candidate != 0;
	c->view.lease_ms = c->lease_ms;
	c->view.leader_ttl_s = -1;
	if (pthread_create(&c->thread, NULL, coord_main, c) != 0) {
		snprintf(err, errlen, "coordinator: cannot start its thread: %s",
			strerror(errno));
		coordinator_free(c);
		return -1;
	}
	log_notice("coordinator: etcd %s%s, keys under %s, lease %" PRIu64 " ms%s",
		conf->coordinator.endpoints[0],
		conf->coordinator.n_endpoints > 1 ? " (and others)" : "", c->prefix,
		c->lease_ms, conf->coordinator.candidate ? "" :
		", never a candidate");
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
	pthread_join(c->thread, NULL);
	if (atomic_load(&c->worker_state) != WORKER_IDLE)
		pthread_join(c->worker, NULL);
	/* a stopping primary's key goes now, not a lease later */
	resign(c, "the daemon stops");
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

void
coordinator_switchover(struct coordinator *c, uint32_t to, bool failover,
		struct coord_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (c == NULL) {
		a->error = "NO_COORDINATOR";
		snprintf(a->message, sizeof(a->message), "this node has no coordinator: "
			"repld.conf names none (coordinator.etcd); promote by hand "
			"(replctl promote)");
		return;
	}
	pthread_mutex_lock(&c->lock);
	/* one request at a time: the slot is free once the last was answered */
	while (c->req.pending && !c->stop)
		pthread_cond_wait(&c->cond, &c->lock);
	if (c->stop) {
		pthread_mutex_unlock(&c->lock);
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "the daemon is stopping");
		return;
	}
	c->req.pending = true;
	c->req.done = false;
	c->req.to = to;
	c->req.failover = failover;
	c->req.ans = a;
	pthread_cond_broadcast(&c->cond);
	/* the thread answers it, or does on its way out (coord_main) */
	while (!c->req.done)
		pthread_cond_wait(&c->cond, &c->lock);
	c->req.pending = false;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}
