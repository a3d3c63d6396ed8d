/* SPDX-License-Identifier: BSD-3-Clause */
/* admin_status.c -- STATUS and VERIFY as JSON (see admin_status.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "admin_status.h"

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
	{ NODE_E_WRONG_ROLE, "WRONG_ROLE" },
	{ NODE_E_STOPPING, "STOPPING" },
};

void
admin_error_json(struct json_out *j, const char *name, int code,
		const char *message)
{
	if (name == NULL) {
		name = "ERROR";
		for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
			if (errors[i].code == code)
				name = errors[i].name;
	}
	jo_open(j, NULL);
	jo_bool(j, "ok", false);
	jo_str(j, "error", name);
	/* REPL_E_* codes are repl.h's; the protocol's own names have 0 */
	jo_i64(j, "code", code <= REPL_E_INVAL ? code : 0);
	jo_str(j, "message", message ? message : repl_strerror(code));
	jo_close(j);
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

static void
common_json(struct node *n, struct json_out *j, enum node_role role)
{
	const struct repld_conf *c = &n->conf;
	char listen[REPLD_ADDRESS_MAX + 8], tr[24];

	snprintf(listen, sizeof(listen), "%s:%u", c->listen.address,
		c->listen.control_port);
	jo_bool(j, "ok", true);
	jo_str(j, "role", node_role_name(role));
	jo_u64(j, "node_id", c->node_id);
	jo_str(j, "cluster_uuid", c->cluster_uuid_text);
	jo_str(j, "listen", listen);
	jo_str(j, "transport", transport_name(n->provider, tr, sizeof(tr)));
	jo_str(j, "flush_method", repld_flush_name(c->flush_method));
	jo_str(j, "backend", repld_backend_name(c->log.backend));
	jo_str(j, "path", c->log.path);
}

static void
primary_json(struct node *n, struct repl *repl, struct json_out *j)
{
	struct repl_status st;
	struct members m;
	char tr[24];

	members_get(n, &m);
	repl_status(repl, &st);
	jo_u64(j, "epoch", st.epoch);
	jo_u64(j, "config_epoch", st.config_epoch);
	jo_bool(j, "config_joint", st.config_joint != 0);
	jo_bool(j, "fenced", st.fenced != 0);
	jo_u64(j, "first_lsn", st.first_lsn);
	jo_u64(j, "last_lsn", st.last_lsn);
	jo_u64(j, "durable_lsn", st.durable_lsn);
	jo_u64(j, "commit_lsn", st.commit_lsn);
	jo_u64(j, "used_bytes", st.used_bytes);
	jo_u64(j, "size_bytes", st.size_bytes);
	jo_u64(j, "health", st.health);
	jo_i64(j, "quorum", m.quorum);
	jo_i64(j, "replicas_up", st.replicas_up);
	jo_array(j, "replicas");
	for (int i = 0; i < m.n; i++) {
		struct repl_replica_status rs;

		jo_open(j, NULL);
		jo_str(j, "address", m.peer[i].address);
		if (repl_replica_status(repl, i, &rs) != 0) {
			jo_str(j, "state", "unknown");
			jo_close(j);
			continue;
		}
		jo_str(j, "state", state_name(rs.state));
		jo_bool(j, "member", rs.member != 0);
		jo_u64(j, "flushed_lsn", rs.flushed_lsn);
		jo_u64(j, "lag_records", rs.lag_records);
		jo_u64(j, "lag_bytes", rs.lag_bytes);
		jo_u64(j, "lag_ms", rs.lag_ms);
		jo_str(j, "transport", transport_name(rs.transport, tr, sizeof(tr)));
		jo_str(j, "flush_method", rs.flush_method);
		jo_str(j, "backend", rs.backend);
		jo_u64(j, "reconnects", rs.reconnects);
		jo_str(j, "why", rs.state == REPL_REPLICA_STREAMING ? "" : rs.why);
		jo_u64(j, "config_epoch", rs.config_epoch);
		jo_close(j);
	}
	jo_array_end(j);
}

static void
replica_json(struct node *n, struct json_out *j)
{
	struct repl_replica_info rs;
	struct members m;

	members_get(n, &m);
	node_replica_info(n, &rs);
	jo_u64(j, "epoch", rs.epoch);
	jo_u64(j, "config_epoch", rs.config_epoch);
	jo_bool(j, "config_joint", rs.config_joint != 0);
	jo_u64(j, "first_lsn", rs.first_lsn);
	jo_u64(j, "last_lsn", rs.last_lsn);
	jo_u64(j, "durable_lsn", rs.durable_lsn);
	jo_u64(j, "used_bytes", rs.used_bytes);
	jo_u64(j, "size_bytes", rs.size_bytes);
	jo_bool(j, "following", rs.following != 0);
	jo_u64(j, "primary_node", rs.primary_id);
	jo_str(j, "primary_address", rs.following ? rs.primary_addr : "");
	jo_bool(j, "floor_pending", rs.floor_pending != 0);
	jo_i64(j, "floor_needed", rs.floor_needed);
	jo_i64(j, "floor_answered", rs.floor_answered);
	jo_i64(j, "quorum", m.quorum);
	jo_array(j, "peers");
	for (int i = 0; i < m.n; i++) {
		jo_open(j, NULL);
		jo_str(j, "address", m.peer[i].address);
		jo_close(j);
	}
	jo_array_end(j);
}

void
admin_status_json(struct node *n, struct json_out *j)
{
	struct repl *repl;
	enum node_role role;
	bool changing;

	/* as an appender would: the primary's handle cannot go meanwhile */
	repl = node_try_enter(n, &changing);
	role = repl ? NODE_PRIMARY : node_role(n);
	jo_open(j, NULL);
	common_json(n, j, role);
	jo_bool(j, "changing", changing);
	if (repl) {
		primary_json(n, repl, j);
		node_leave(n);
	} else {
		replica_json(n, j);
	}
	jo_close(j);
}

void
admin_verify_json(struct node *n, uint64_t from, uint64_t to, struct json_out *j)
{
	struct repl_status st;
	struct repl *repl;
	struct members m;
	bool changing;

	if ((repl = node_try_enter(n, &changing)) == NULL) {
		admin_error_json(j, changing ? "BUSY" : "WRONG_ROLE", 0, changing ?
			"the node is changing state: retry" :
			"verify runs on the primary: this node is not it");
		return;
	}
	members_get(n, &m);
	repl_status(repl, &st);
	if (from == 0)
		from = st.first_lsn;
	if (to == 0 || to > st.commit_lsn)
		to = st.commit_lsn;
	jo_open(j, NULL);
	jo_bool(j, "ok", true);
	jo_u64(j, "from", from);
	jo_u64(j, "to", to);
	jo_u64(j, "range_records", REPL_VERIFY_RANGE);
	jo_array(j, "replicas");
	for (int i = 0; i < m.n; i++) {
		struct repl_verify_result res;
		int ret = from && from <= to ?
			repl_verify(repl, i, from, to, &res) : REPL_E_NOT_FOUND;

		jo_open(j, NULL);
		jo_str(j, "address", m.peer[i].address);
		if (ret == REPL_E_NOT_FOUND && !(from && from <= to)) {
			/* nothing committed: nothing to differ */
			jo_bool(j, "checked", true);
			jo_u64(j, "ranges", 0);
			jo_u64(j, "mismatches", 0);
		} else if (ret != 0) {
			jo_bool(j, "checked", false);
			jo_str(j, "why", res.why[0] ? res.why : repl_strerror(ret));
		} else {
			jo_bool(j, "checked", true);
			jo_u64(j, "from", res.from);
			jo_u64(j, "to", res.to);
			jo_u64(j, "ranges", res.ranges);
			jo_u64(j, "mismatches", res.mismatches);
			jo_array(j, "bad");
			for (uint64_t b = 0; b < res.mismatches && b < REPL_VERIFY_SHOW; b++) {
				jo_open(j, NULL);
				jo_u64(j, "from", res.bad[b].from);
				jo_u64(j, "to", res.bad[b].to);
				jo_close(j);
			}
			jo_array_end(j);
		}
		jo_close(j);
	}
	jo_array_end(j);
	jo_close(j);
	node_leave(n);
}
