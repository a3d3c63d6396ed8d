/* SPDX-License-Identifier: BSD-3-Clause */
/* admin_status.c -- STATUS and VERIFY as JSON (see admin_status.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "admin_status.h"
#include "archiver.h"
#include "archiver_base.h"
#include "coordinator.h"
#include "member_seen.h"

/* as the configuration names it: "verbs", or "ofi:" and the provider */
static const char *
transport_name(const char *provider, char *out, size_t len)
{
	if (provider == NULL || provider[0] == '\0')
		return "";
	if (strcmp(provider, "verbs") == 0)
		return "verbs";
	snprintf(out, len, "ofi:%s", provider);
	return out;
}

static const char *
state_name(enum repl_replica_state s)
{
	return s == REPL_REPLICA_STREAMING ? "streaming" :
		s == REPL_REPLICA_CATCHING_UP ? "catching up" : "down";
}


static const char *
link_state_key(int s)
{
	return repl_link_state_name((enum repl_link_state)s);
}

static const char *const session_states[REPL_SESSION_STATES] = {
	[REPL_SESSION_IDLE] = "idle",
	[REPL_SESSION_FLOOR] = "floor",
	[REPL_SESSION_FOLLOWING] = "following",
	[REPL_SESSION_FENCED_FOR] = "fenced_for",
	[REPL_SESSION_STOPPED] = "stopped",
};

static const char *
replica_state_key(int s)
{
	return (unsigned)s < REPL_SESSION_STATES ? session_states[s] : "unknown";
}

/* {"state": value, ...} of n states; NULL when it cannot be made */
static json_t *
by_state(int n, const char *(*key)(int), const uint64_t *v)
{
	json_t *o = json_object();

	for (int s = 0; o != NULL && s < n; s++)
		if (json_object_set_new(o, key(s), jo_u64(v[s])) != 0) {
			json_decref(o);
			o = NULL;
		}
	return o;
}

static const struct {
	int code;
	const char *name;
} errors[] = {
	{ REPL_E_INVAL, "REPL_E_INVAL" },
	{ REPL_E_NOMEM, "REPL_E_NOMEM" },
	{ REPL_E_IO, "REPL_E_IO" },
	{ REPL_E_CORRUPT, "REPL_E_CORRUPT" },
	{ REPL_E_FULL, "REPL_E_FULL" },
	{ REPL_E_TOO_BIG, "REPL_E_TOO_BIG" },
	{ REPL_E_NOT_FOUND, "REPL_E_NOT_FOUND" },
	{ REPL_E_TIMEDOUT, "REPL_E_TIMEDOUT" },
	{ REPL_E_FENCED, "REPL_E_FENCED" },
	{ REPL_E_UNKNOWN, "REPL_E_UNKNOWN" },
	{ REPL_E_NO_QUORUM, "REPL_E_NO_QUORUM" },
	{ REPL_E_MEMBERSHIP, "REPL_E_MEMBERSHIP" },
	{ REPL_E_LOCKED, "REPL_E_LOCKED" },
	{ REPL_E_NOT_MEMBER, "REPL_E_NOT_MEMBER" },
	{ REPL_E_SUPERSEDED, "REPL_E_SUPERSEDED" },
	{ REPL_E_TRANSPORT, "REPL_E_TRANSPORT" },
	{ REPL_E_BLANK, "REPL_E_BLANK" },
	{ REPL_E_NO_PEERS, "REPL_E_NO_PEERS" },
	{ REPL_E_OTHER_CLUSTER, "REPL_E_OTHER_CLUSTER" },
	{ NODE_E_WRONG_ROLE, "WRONG_ROLE" },
	{ NODE_E_STOPPING, "STOPPING" },
	{ NODE_E_COORD_UNREACHABLE, "COORDINATOR_UNREACHABLE" },
	{ NODE_E_NOT_LEADER, "NOT_LEADER" },
	{ NODE_E_CHANGE_PENDING, "CHANGE_PENDING" },
	{ NODE_E_CONFLICT, "CONFLICT" },
	{ NODE_E_REOPENING, "REOPENING" },
};

json_t *
admin_error_json(const char *name, int code, const char *message)
{
	if (name == NULL) {
		name = "ERROR";
		for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
			if (errors[i].code == code)
				name = errors[i].name;
	}
	/* REPL_E_* codes are repl.h's; the protocol's own names have 0 */
	return json_pack("{s:b, s:s, s:i, s:o}", "ok", false, "error", name,
		"code", code <= REPL_E_INVAL ? code : 0,
		"message", jo_str(message ? message : repl_strerror(code)));
}

/*
 * Where the primary is, as this node knows it now: the one it follows as
 * a replica, or else the leader key's holder as its coordinator last read
 * it (a deposed primary between its fence and its step-down follows
 * nobody yet).  false when it knows of none but itself.
 */
static bool
primary_where(struct node *n, uint32_t *id, char *addr, size_t len)
{
	struct coordinator *coord = atomic_load(&n->coord);
	struct repl_replica_info info;
	struct coord_view v;

	if (node_role(n) == NODE_REPLICA) {
		node_replica_info(n, &info);
		if (info.following && info.primary_id != 0) {
			*id = info.primary_id;
			snprintf(addr, len, "%s", info.primary_addr);
			return true;
		}
	}
	if (coord == NULL)
		return false;
	coordinator_view(coord, &v);
	if (!v.has_leader || v.leader_id == 0 || v.leader_id == n->conf.node_id ||
	    v.leader_addr[0] == '\0')
		return false;
	*id = v.leader_id;
	snprintf(addr, len, "%s", v.leader_addr);
	return true;
}

json_t *
admin_error_where(struct node *n, json_t *err)
{
	const char *e = json_string_value(json_object_get(err, "error"));
	const char *m = json_string_value(json_object_get(err, "message"));
	char msg[512], addr[REPLD_ADDRESS_MAX + 10];
	uint32_t id;

	if (err == NULL || e == NULL || (strcmp(e, "WRONG_ROLE") != 0 &&
	    strcmp(e, "REPL_E_FENCED") != 0))
		return err;
	if (!primary_where(n, &id, addr, sizeof(addr)))
		return err;
	snprintf(msg, sizeof(msg), "%s (the primary is node %" PRIu32 " at %s)",
		m ? m : "", id, addr);
	if (json_object_set_new(err, "primary_node", jo_u64(id)) ||
	    json_object_set_new(err, "primary_address", jo_str(addr)) ||
	    json_object_set_new(err, "message", jo_str(msg))) {
		json_decref(err);
		return NULL;
	}
	return err;
}

/* the membership as the node holds it now, copied under its lock */
struct members {
	struct {
		char address[REPLD_ADDRESS_MAX + 8];
	} peer[REPLD_PEERS_MAX];
	int n, quorum;
};

static void
members_get(struct node *n, struct members *m)
{
	pthread_mutex_lock(&n->lock);
	m->n = n->conf.n_peers;
	m->quorum = n->conf.quorum;
	for (int i = 0; i < m->n; i++)
		snprintf(m->peer[i].address, sizeof(m->peer[i].address), "%s:%u",
			n->conf.peers[i].address, n->conf.peers[i].control_port);
	pthread_mutex_unlock(&n->lock);
}

static json_t *
common_json(struct node *n, enum node_role role, bool changing)
{
	const struct repld_conf *c = &n->conf;
	char listen[REPLD_ADDRESS_MAX + 8], tr[24];

	snprintf(listen, sizeof(listen), "%s:%u", c->listen.address,
		c->listen.control_port);
	return json_pack("{s:b, s:s, s:s, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:b}",
		"ok", true,
		"version", PACKAGE_VERSION,
		"role", node_role_name(role),
		"node_id", jo_u64(c->node_id),
		"cluster_uuid", jo_str(c->cluster_uuid_text),
		"listen", jo_str(listen),
		"transport", jo_str(transport_name(n->provider, tr, sizeof(tr))),
		"flush_method", repld_flush_name(c->flush_method),
		"backend", repld_backend_name(c->log.backend),
		"path", jo_str(c->log.path),
		"changing", changing);
}

static json_t *
replica_entry(struct repl *repl, int i, const char *address)
{
	struct repl_replica_status rs;
	char tr[24];
	json_t *o;
	int bad = 0;
	bool catching_up;

	if (repl_replica_status(repl, i, &rs) != 0)
		return json_pack("{s:o, s:s}", "address", jo_str(address),
			"state", "unknown");
	o = json_pack("{s:o, s:s, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
			"s:o, s:o}",
		"address", jo_str(address),
		"state", state_name(rs.state),
		"member", rs.member != 0,
		"flushed_lsn", jo_u64(rs.flushed_lsn),
		"lag_records", jo_u64(rs.lag_records),
		"lag_bytes", jo_u64(rs.lag_bytes),
		"lag_ms", jo_u64(rs.lag_ms),
		"transport", jo_str(transport_name(rs.transport, tr, sizeof(tr))),
		"flush_method", jo_str(rs.flush_method),
		"backend", jo_str(rs.backend),
		"reconnects", jo_u64(rs.reconnects),
		"why", jo_str(rs.state == REPL_REPLICA_STREAMING ? "" : rs.why),
		"config_epoch", jo_u64(rs.config_epoch));
	if (o == NULL)
		return NULL;
	bad |= json_object_set_new(o, "link_state",
		jo_str(repl_link_state_name(rs.link_state)));
	bad |= json_object_set_new(o, "state_ms", by_state(REPL_LINK_STATES,
		link_state_key, rs.state_ms));
	bad |= json_object_set_new(o, "state_entries", by_state(REPL_LINK_STATES,
		link_state_key, rs.state_entries));
	bad |= json_object_set_new(o, "batches", jo_u64(rs.batches));
	bad |= json_object_set_new(o, "flushes", jo_u64(rs.flushes));
	bad |= json_object_set_new(o, "spins", jo_u64(rs.spins));
	bad |= json_object_set_new(o, "sleeps", jo_u64(rs.sleeps));
	bad |= json_object_set_new(o, "catch_ups", jo_u64(rs.catch_ups));
	bad |= json_object_set_new(o, "full_resyncs", jo_u64(rs.full_resyncs));
	bad |= json_object_set_new(o, "hold_lsn", rs.holds ? jo_u64(rs.hold_lsn) :
		json_null());
	bad |= json_object_set_new(o, "hold_from", rs.holds ? jo_u64(rs.hold_from) :
		json_null());
	bad |= json_object_set_new(o, "wants_base", json_boolean(rs.wants_base));
	/* a catch-up's progress while one is on, else null */
	catching_up = rs.catchup_total_bytes > 0;
	bad |= json_object_set_new(o, "catchup_total_bytes", catching_up ?
		jo_u64(rs.catchup_total_bytes) : json_null());
	bad |= json_object_set_new(o, "catchup_done_bytes", catching_up ?
		jo_u64(rs.catchup_done_bytes) : json_null());
	bad |= json_object_set_new(o, "catchup_eta_ms", catching_up &&
		rs.catchup_eta_ms != UINT64_MAX ? jo_u64(rs.catchup_eta_ms) :
		json_null());
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* as retention.c stamps its readers */
static uint64_t
monotonic_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* the primary's retention: what it keeps, what holds it, the alarm */
static json_t *
retention_json(struct node *n, const struct repl_status *st)
{
	const struct repld_conf *c = &n->conf;
	struct retention_info ri;
	json_t *readers = json_array(), *o;
	uint64_t now = monotonic_ms();

	retention_get(&n->retention, &ri);
	for (int i = 0; i < RETENTION_READERS_MAX; i++) {
		const struct retention_reader *rd = &ri.readers[i];

		if (!rd->used)
			continue;
		json_array_append_new(readers, json_pack("{s:o, s:o, s:o, s:b, s:o}",
			"id", jo_u64(rd->id), "next_lsn", jo_u64(rd->next),
			"lag_records", jo_u64(st->commit_lsn >= rd->next ?
				st->commit_lsn - rd->next + 1 : 0),
			"lost", rd->lost,
			"seconds", jo_u64((now - rd->since_ms) / 1000)));
	}
	o = json_pack("{s:s, s:o, s:o, s:i, s:i, s:o, s:o, s:s, s:o, s:i, s:b, "
			"s:o, s:i}",
		"mode", c->retention.mode == REPLD_RETENTION_CHECKPOINTER ?
			"checkpointer" : "auto",
		"keep_bytes", jo_u64(c->retention.keep),
		"keep_records", jo_u64(c->retention.keep_records),
		"keep_seconds", c->retention.keep_seconds,
		"alarm_percent", c->retention.alarm_percent,
		"release_lsn", jo_u64(ri.release_lsn),
		"checkpoint_lsn", jo_u64(ri.checkpoint_lsn),
		"held_by", retention_hold_name(ri.held_by),
		"releases", jo_u64(ri.releases),
		"used_percent", ri.used_percent,
		"space_alarm", ri.alarm,
		"alarms", jo_u64(ri.alarms),
		"last_error", ri.last_error);
	if (o == NULL || json_object_set_new(o, "reader_max_lag_bytes",
			jo_u64(c->retention.reader_max_lag)) ||
	    json_object_set_new(o, "readers_lost", jo_u64(ri.readers_lost)) ||
	    json_object_set_new(o, "held_by_replica", ri.held_by_replica[0] ?
			json_string(ri.held_by_replica) : json_null()) ||
	    json_object_set_new(o, "replica_max_hold_bytes",
			jo_u64(c->retention.replica_max_hold)) ||
	    json_object_set_new(o, "unseen_replicas", json_integer(ri.unseen_replicas)) ||
	    json_object_set_new(o, "replica_holds_dropped",
			jo_u64(ri.replica_holds_dropped)) ||
	    json_object_set_new(o, "readers", readers)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* the primary's fields after the common ones; -1 when one cannot be made */
static int
primary_json(struct node *n, struct repl *repl, json_t *o)
{
	struct repl_status st;
	struct members m;
	json_t *list = json_array();
	int bad = 0;

	members_get(n, &m);
	repl_status(repl, &st);
	for (int i = 0; i < m.n; i++)
		bad |= json_array_append_new(list, replica_entry(repl, i,
			m.peer[i].address));
	bad |= json_object_set_new(o, "epoch", jo_u64(st.epoch));
	bad |= json_object_set_new(o, "config_epoch", jo_u64(st.config_epoch));
	bad |= json_object_set_new(o, "config_joint", json_boolean(st.config_joint));
	bad |= json_object_set_new(o, "fenced", json_boolean(st.fenced));
	bad |= json_object_set_new(o, "first_lsn", jo_u64(st.first_lsn));
	bad |= json_object_set_new(o, "last_lsn", jo_u64(st.last_lsn));
	bad |= json_object_set_new(o, "durable_lsn", jo_u64(st.durable_lsn));
	bad |= json_object_set_new(o, "commit_lsn", jo_u64(st.commit_lsn));
	bad |= json_object_set_new(o, "used_bytes", jo_u64(st.used_bytes));
	bad |= json_object_set_new(o, "size_bytes", jo_u64(st.size_bytes));
	bad |= json_object_set_new(o, "log_full", json_boolean(st.log_full));
	bad |= json_object_set_new(o, "appends_full", jo_u64(st.appends_full));
	bad |= json_object_set_new(o, "health", jo_u64(st.health));
	bad |= json_object_set_new(o, "persist_ranges", jo_u64(st.persist_ranges));
	bad |= json_object_set_new(o, "persist_barriers", jo_u64(st.persist_barriers));
	bad |= json_object_set_new(o, "quorum", json_integer(m.quorum));
	bad |= json_object_set_new(o, "replicas_up", json_integer(st.replicas_up));
	bad |= json_object_set_new(o, "retention", retention_json(n, &st));
	bad |= json_object_set_new(o, "replicas", list);
	return bad;
}

/* sqlite_copy's state, or null without one */
static json_t *
copy_json(struct node *n)
{
	struct rv_copy_status st;

	if (!node_copy_status(n, &st))
		return json_null();
	return json_pack("{s:s, s:s, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:s, "
		"s:o, s:o, s:o, s:o}",
		"path", n->conf.sqlite_copy, "state", rv_copy_state_name(st.state),
		"applied_lsn", jo_u64(st.applied_lsn), "base_lsn", jo_u64(st.base_lsn),
		"holding", st.holding, "hold_lsn", jo_u64(st.hold_lsn),
		"transactions", jo_u64(st.transactions),
		"batches", jo_u64(st.batches), "lock_wait_ms", jo_u64(st.lock_wait_ms),
		"page_size", jo_u64(st.page_size), "pages", jo_u64(st.pages),
		"error", st.error, "remakes", jo_u64(st.remakes),
		"image_lsn", jo_u64(st.image_lsn), "image_bytes", jo_u64(st.image_bytes),
		"image_total_bytes", jo_u64(st.image_total_bytes));
}

/* a failed change's reopen of the primary's log, or null */
static json_t *
reopen_json(struct node *n)
{
	struct node_reopen r = { 0 };

	if (!node_reopen_info(n, &r))
		return json_null();
	return json_pack("{s:o, s:o, s:o}", "attempts", jo_u64(r.attempts),
		"closed_ms", jo_u64(monotonic_ms() - r.since_ms),
		"error", jo_str(r.error));
}

static int
replica_json(struct node *n, json_t *o)
{
	struct repl_replica_info rs;
	struct members m;
	json_t *list = json_array();
	int bad = 0;

	members_get(n, &m);
	node_replica_info(n, &rs);
	for (int i = 0; i < m.n; i++)
		bad |= json_array_append_new(list, json_pack("{s:o}", "address",
			jo_str(m.peer[i].address)));
	bad |= json_object_set_new(o, "epoch", jo_u64(rs.epoch));
	bad |= json_object_set_new(o, "config_epoch", jo_u64(rs.config_epoch));
	bad |= json_object_set_new(o, "config_joint", json_boolean(rs.config_joint));
	bad |= json_object_set_new(o, "removed", json_boolean(rs.config_removed));
	bad |= json_object_set_new(o, "first_lsn", jo_u64(rs.first_lsn));
	bad |= json_object_set_new(o, "last_lsn", jo_u64(rs.last_lsn));
	bad |= json_object_set_new(o, "durable_lsn", jo_u64(rs.durable_lsn));
	bad |= json_object_set_new(o, "used_bytes", jo_u64(rs.used_bytes));
	bad |= json_object_set_new(o, "size_bytes", jo_u64(rs.size_bytes));
	bad |= json_object_set_new(o, "following", json_boolean(rs.following));
	bad |= json_object_set_new(o, "primary_node", jo_u64(rs.primary_id));
	bad |= json_object_set_new(o, "primary_address",
		jo_str(rs.following ? rs.primary_addr : ""));
	bad |= json_object_set_new(o, "floor_pending", json_boolean(rs.floor_pending));
	bad |= json_object_set_new(o, "floor_needed", json_integer(rs.floor_needed));
	bad |= json_object_set_new(o, "floor_answered", json_integer(rs.floor_answered));
	bad |= json_object_set_new(o, "session_state",
		jo_str(replica_state_key(rs.session)));
	bad |= json_object_set_new(o, "state_ms", by_state(REPL_SESSION_STATES,
		replica_state_key, rs.state_ms));
	bad |= json_object_set_new(o, "state_entries", by_state(REPL_SESSION_STATES,
		replica_state_key, rs.state_entries));
	bad |= json_object_set_new(o, "sessions", jo_u64(rs.sessions));
	bad |= json_object_set_new(o, "fences", jo_u64(rs.fences));
	bad |= json_object_set_new(o, "silent_drops", jo_u64(rs.silent_drops));
	bad |= json_object_set_new(o, "queries", jo_u64(rs.queries));
	bad |= json_object_set_new(o, "truncates", jo_u64(rs.truncates));
	bad |= json_object_set_new(o, "head_moves", jo_u64(rs.head_moves));
	bad |= json_object_set_new(o, "commits", jo_u64(rs.commits));
	bad |= json_object_set_new(o, "persist_ranges", jo_u64(rs.persist_ranges));
	bad |= json_object_set_new(o, "persist_barriers", jo_u64(rs.persist_barriers));
	bad |= json_object_set_new(o, "quorum", json_integer(m.quorum));
	bad |= json_object_set_new(o, "peers", list);
	bad |= json_object_set_new(o, "commit_lsn", jo_u64(rs.commit_lsn));
	/* a node not serving as a replica now has only a stale snapshot */
	bad |= json_object_set_new(o, "last_contact_ms",
		node_role(n) == NODE_REPLICA && rs.primary_silent_ms != UINT64_MAX ?
		jo_u64(rs.primary_silent_ms) : json_null());
	bad |= json_object_set_new(o, "readable_lsn", jo_u64(rs.readable_lsn));
	bad |= json_object_set_new(o, "hold_lsn", rs.holding ? jo_u64(rs.hold_lsn) :
		json_null());
	bad |= json_object_set_new(o, "sqlite_copy", copy_json(n));
	bad |= json_object_set_new(o, "reopen", reopen_json(n));
	return bad;
}

/* the coordinator's view (coordinator.h), or NULL when out of memory */
static json_t *
coordinator_json(struct coordinator *coord, const struct member_seen_map *seen)
{
	struct coord_view v;
	json_t *members = json_array(), *leader, *sw, *ms, *nodes = json_array(), *mt;

	coordinator_view(coord, &v);
	for (int i = 0; nodes != NULL && v.has_ms && i < v.ms.n; i++)
		if (json_array_append_new(nodes, json_pack("{s:o, s:s}", "node_id",
				jo_u64(v.ms.nodes[i].node_id), "ctl_addr",
				v.ms.nodes[i].ctl_addr)) != 0) {
			json_decref(nodes);
			nodes = NULL;
		}
	ms = v.ms_state[0] == '\0' ? (json_decref(nodes), json_null()) :
		json_pack("{s:s, s:o, s:o, s:o}", "state", v.ms_state,
			"config_epoch", jo_u64(v.has_ms ? v.ms.config_epoch : 0),
			"quorum", jo_u64(v.has_ms ? v.ms.quorum : 0), "nodes", nodes);
	for (int i = 0; members != NULL && i < v.n_members; i++) {
		const struct coord_member *m = &v.members[i];
		uint64_t silent;
		enum member_seen sn = member_seen_of(seen, m->node_id, m->role, &silent);

		if (json_array_append_new(members, json_pack("{s:o, s:s, s:o, s:o, s:o, "
				"s:b, s:b, s:s, s:o}", "node_id", jo_u64(m->node_id),
				"role", m->role,
				"epoch", jo_u64(m->epoch), "last_lsn", jo_u64(m->last_lsn),
				"last_epoch", jo_u64(m->last_epoch), "link_up", m->link_up,
				"candidate", m->candidate, "seen", member_seen_name(sn),
				"silent_ms", silent == UINT64_MAX ? json_null() :
				jo_u64(silent))) != 0) {
			json_decref(members);
			members = NULL;
		}
	}
	leader = !v.has_leader ? json_null() : json_pack("{s:o, s:o, s:s, s:o, s:I, s:o}",
		"node_id", jo_u64(v.leader_id), "epoch", jo_u64(v.leader_epoch),
		"state", v.leader_state, "ctl_addr", jo_str(v.leader_addr),
		"lease_ttl_s", (json_int_t)v.leader_ttl_s,
		"age_ms", jo_u64(v.leader_age_ms));
	sw = !v.has_switchover ? json_null() : json_pack("{s:o, s:o, s:b}",
		"from", jo_u64(v.sw_from), "to", jo_u64(v.sw_to),
		"failover", v.sw_failover);
	/* node_id 0: a value that does not parse, maintenance all the same */
	mt = !v.maintenance ? json_null() : json_pack("{s:o, s:o, s:o}",
		"node_id", jo_u64(v.maint.node_id), "at_ms", jo_u64(v.maint.at_ms),
		"reason", jo_str(v.maint.reason));
	return json_pack("{s:o, s:b, s:o, s:s, s:b, s:o, s:b, s:o, s:o, s:o, s:o, "
		"s:o, s:o, s:o, s:o, s:o, s:s, s:o}",
		"endpoint", jo_str(v.endpoint),
		"reachable", v.reachable,
		"unreachable_ms", jo_u64(v.unreachable_ms),
		"failover", coord_view_failover(&v),
		"candidate", v.candidate,
		"lease_ms", jo_u64(v.lease_ms),
		"holds_leader", v.holds_leader,
		"leader", leader,
		"switchover", sw,
		"members", members,
		"campaigns", jo_u64(v.campaigns),
		"promotions", jo_u64(v.promotions),
		"takeovers", jo_u64(v.takeovers),
		"etcd_requests", jo_u64(v.etcd_requests),
		"last_error", jo_str(v.last_error),
		"membership", ms,
		"waiting", v.waiting,
		"maintenance", mt);
}

/* the archiver's state (archiver.h), or null without an archive group */
static json_t *
archive_json(struct archiver *a)
{
	struct archiver_info ai;
	struct archiver_base_info bi;

	if (a == NULL)
		return json_null();
	archiver_get(a, &ai);
	archiver_base_get(&bi);
	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, "
			"s:b, s:o, s:s, s:o, s:o}",
		"target", archiver_target(a),
		"on", archiver_on(a),
		"state", archiver_state_name(ai.state),
		"archived_lsn", jo_u64(ai.archived_lsn),
		"commit_lsn", jo_u64(ai.commit_lsn),
		"lag_records", jo_u64(ai.lag_records),
		"lag_ms", jo_u64(ai.lag_ms),
		"last_success_ms", ai.last_success_ms ? jo_u64(ai.last_success_ms) :
			json_null(),
		"failures", jo_u64(ai.failures),
		"holding", ai.holding,
		"hold_lsn", ai.holding ? jo_u64(ai.hold_lsn) : json_null(),
		"hold_dropped", ai.hold_dropped,
		"gap_at", ai.gap_at ? jo_u64(ai.gap_at) : json_null(),
		"last_error", ai.last_error,
		"last_base_lsn", bi.last_base_lsn ? jo_u64(bi.last_base_lsn) :
			json_null(),
		"last_base_ms", bi.last_base_ms ? jo_u64(bi.last_base_ms) :
			json_null());
}

/*
 * Does etcd's membership key, as new as the log's or newer, leave this
 * node out (by node id, or by control address where it names a node
 * whose id is not known yet)?  A change reaches a removed replica's log
 * only if its joint membership did; the key says so either way.
 */
static bool
removed_in_etcd(struct node *n, struct coordinator *coord)
{
	struct repl_replica_info info;
	struct coord_view v;
	char self[REPLD_ADDRESS_MAX + 8];
	uint32_t id;

	coordinator_view(coord, &v);
	if (!v.has_ms)
		return false;
	node_replica_info(n, &info);
	pthread_mutex_lock(&n->lock);
	id = n->conf.node_id;
	snprintf(self, sizeof(self), "%s:%u", n->conf.listen.address,
		n->conf.listen.control_port);
	pthread_mutex_unlock(&n->lock);
	if (v.ms.config_epoch < info.config_epoch)
		return false;
	for (int i = 0; i < v.ms.n; i++)
		if (v.ms.nodes[i].node_id == id || (v.ms.nodes[i].node_id == 0 &&
				strcmp(v.ms.nodes[i].ctl_addr, self) == 0))
			return false;
	return true;
}

json_t *
admin_status_json(struct node *n)
{
	struct repl *repl;
	bool changing;
	json_t *o;
	int bad;

	/* as an appender would: the primary's handle cannot go meanwhile */
	struct member_seen_map seen;

	repl = node_try_enter(n, &changing);
	o = common_json(n, repl ? NODE_PRIMARY : node_role(n), changing);
	if (repl) {
		bad = primary_json(n, repl, o);
		member_seen_primary(n, repl, &seen);
		node_leave(n);
	} else {
		bad = replica_json(n, o);
		member_seen_replica(n, &seen);
	}
	struct coordinator *coord = atomic_load(&n->coord);

	if (!bad)
		bad = json_object_set_new(o, "archive",
			archive_json(atomic_load(&n->archiver)));
	if (!bad && coord != NULL && !repl && removed_in_etcd(n, coord))
		bad = json_object_set_new(o, "removed", json_true());
	if (!bad && coord != NULL)
		bad = json_object_set_new(o, "coordinator",
			coordinator_json(coord, &seen));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* one replica's comparison */
static json_t *
verify_entry(struct repl *repl, int i, const char *address, uint64_t from,
		uint64_t to)
{
	struct repl_verify_result res;
	json_t *bad;
	int ret;

	if (!(from && from <= to))	/* nothing committed: nothing to differ */
		return json_pack("{s:o, s:b, s:i, s:i}", "address", jo_str(address),
			"checked", true, "ranges", 0, "mismatches", 0);
	if ((ret = repl_verify(repl, i, from, to, &res)) != 0)
		return json_pack("{s:o, s:b, s:o}", "address", jo_str(address),
			"checked", false,
			"why", jo_str(res.why[0] ? res.why : repl_strerror(ret)));
	bad = json_array();
	for (uint64_t b = 0; b < res.mismatches && b < REPL_VERIFY_SHOW; b++)
		if (json_array_append_new(bad, json_pack("{s:o, s:o}",
				"from", jo_u64(res.bad[b].from),
				"to", jo_u64(res.bad[b].to))) != 0) {
			json_decref(bad);
			return NULL;
		}
	return json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o}",
		"address", jo_str(address),
		"checked", true,
		"from", jo_u64(res.from),
		"to", jo_u64(res.to),
		"ranges", jo_u64(res.ranges),
		"mismatches", jo_u64(res.mismatches),
		"bad", bad);
}

json_t *
admin_verify_json(struct node *n, uint64_t from, uint64_t to)
{
	struct repl_status st;
	struct repl *repl;
	struct members m;
	bool changing;
	json_t *list;

	if ((repl = node_try_enter(n, &changing)) == NULL)
		return admin_error_where(n, admin_error_json(changing ? "BUSY" :
			"WRONG_ROLE", 0,
			changing ? "the node is changing state: retry" :
			"verify runs on the primary: this node is not it"));
	members_get(n, &m);
	repl_status(repl, &st);
	if (from == 0)
		from = st.first_lsn;
	if (to == 0 || to > st.commit_lsn)
		to = st.commit_lsn;
	list = json_array();
	for (int i = 0; i < m.n; i++)
		if (json_array_append_new(list, verify_entry(repl, i,
				m.peer[i].address, from, to)) != 0) {
			json_decref(list);
			list = NULL;
			break;
		}
	node_leave(n);
	return json_pack("{s:b, s:o, s:o, s:i, s:o}", "ok", true,
		"from", jo_u64(from), "to", jo_u64(to),
		"range_records", REPL_VERIFY_RANGE, "replicas", list);
}
