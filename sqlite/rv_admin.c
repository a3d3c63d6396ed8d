/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_admin.c -- a replvfs primary's membership and status in SQL (rv_admin.h) */
#include "config.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "repl.h"
#include "repld_conf.h"
#include "conf_read.h"
#include "rv_admin.h"
#include "rv_db.h"
#include "rv_release.h"

/* one change at a time: each reads the membership the last one left */
static pthread_mutex_t change_lock = PTHREAD_MUTEX_INITIALIZER;

/* the membership and this node's address, copied out of the database */
struct members {
	struct repld_peer peer[REPLD_PEERS_MAX];
	char host[REPLD_PEERS_MAX][REPLD_ADDRESS_MAX + 1];
	int n, quorum;
	char self[REPLD_ADDRESS_MAX + 1];
	unsigned self_port;
	bool open;			/* the log is open */
};

static void
members_copy(const struct rv_db_view *v, void *arg)
{
	struct members *m = arg;

	m->open = v->repl != NULL;
	m->n = v->conf->n_peers;
	m->quorum = v->conf->quorum;
	for (int i = 0; i < m->n; i++) {
		snprintf(m->host[i], sizeof(m->host[i]), "%s", v->conf->peers[i].address);
		m->peer[i] = (struct repld_peer){ m->host[i], v->conf->peers[i].control_port };
	}
	snprintf(m->self, sizeof(m->self), "%s", v->conf->listen.address);
	m->self_port = v->conf->listen.control_port;
}

static int
member_index(const struct members *m, const char *host, unsigned port)
{
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->host[i], host) == 0 && m->peer[i].control_port == port)
			return i;
	return -1;
}

/* what a peer's address in repld.conf may be; NULL, or why not */
static const char *
bad_host(const char *host)
{
	static const unsigned char zero[16];
	unsigned char ip[16];
	bool v4 = inet_pton(AF_INET, host, ip) == 1, v6 = !v4 &&
		inet_pton(AF_INET6, host, ip) == 1;

	if (host[0] == '\0' || strlen(host) > REPLD_ADDRESS_MAX)
		return "is not 1 to 55 characters long";
	if ((v4 && memcmp(ip, zero, 4) == 0) || (v6 && memcmp(ip, zero, 16) == 0))
		return "is no address other nodes can reach";
	if (!v4 && !v6 && !conf_is_host_name(host))
		return "is not a host name or an IP address";
	return NULL;
}

int
rv_admin_change(struct rv_db *d, bool add, const char *host, unsigned port,
		int quorum, char *msg, size_t msglen)
{
	struct repl_status st;
	struct members m;
	char addr[REPLD_ADDRESS_MAX + 8], why[768];
	const char *bad;
	int i, n, k, ret;

	if ((bad = bad_host(host)) != NULL) {
		snprintf(msg, msglen, "the host \"%.60s\" %s", host, bad);
		return REPL_E_INVAL;
	}
	if (port == 0 || port > 65535) {
		snprintf(msg, msglen, "the port %u is not 1..65535", port);
		return REPL_E_INVAL;
	}
	repld_host_port(addr, sizeof(addr), host, port);
	pthread_mutex_lock(&change_lock);
	memset(&m, 0, sizeof(m));
	rv_db_inspect(d, members_copy, &m);
	i = member_index(&m, host, port);
	n = m.n;
	ret = REPL_E_INVAL;
	if (!m.open) {
		snprintf(msg, msglen, "the log is closed (a change failed and the old "
			"membership did not open again): close and open the database");
	} else if (add && i >= 0) {
		snprintf(msg, msglen, "%s is a member already", addr);
	} else if (add && strcmp(host, m.self) == 0 && port == m.self_port) {
		snprintf(msg, msglen, "%s is this node", addr);
	} else if (add && n == REPLD_PEERS_MAX) {
		snprintf(msg, msglen, "there are %d replicas already, the most a "
			"membership holds", n);
	} else if (!add && i < 0) {
		snprintf(msg, msglen, "%s is not a member", addr);
	} else {
		if (add) {
			m.peer[n++] = (struct repld_peer){ (char *)host, (uint16_t)port };
			k = quorum >= 0 ? quorum : m.quorum;
		} else {
			memmove(&m.peer[i], &m.peer[i + 1], sizeof(m.peer[0]) *
				(size_t)(n - i - 1));
			n--;
			/* fewer replicas than the quorum: it shrinks with them */
			k = quorum >= 0 ? quorum : m.quorum > n ? n : m.quorum;
		}
		if (k < 0 || k > n) {
			snprintf(msg, msglen, "a quorum of %d with %d replicas: it must "
				"be 0..%d", k, n, n);
		} else if ((ret = rv_db_reconfigure(d, m.peer, n, k, &st, why,
				sizeof(why))) != 0) {
			snprintf(msg, msglen, "%s", why);
		} else if (st.config_joint) {
			/* the primary runs under both configurations meanwhile */
			snprintf(msg, msglen, "the change to %d replicas, quorum %d is "
				"not committed: too few nodes of the old configuration "
				"hold it (configuration epoch %llu, joint); until they "
				"do, a record is acknowledged only once both "
				"configurations' quorums hold it (librepl's log names "
				"the unreachable nodes)", n, k,
				(unsigned long long)st.config_epoch);
			ret = REPL_E_NO_QUORUM;
		} else {
			snprintf(msg, msglen, "membership now %d replicas, quorum %d "
				"(configuration epoch %llu)", n, k,
				(unsigned long long)st.config_epoch);
		}
	}
	pthread_mutex_unlock(&change_lock);
	return ret;
}

/* ---- repl_status(): JSON, its keys as replctl status --json's ---- */

static const char *
state_name(enum repl_replica_state s)
{
	return s == REPL_REPLICA_STREAMING ? "streaming" :
		s == REPL_REPLICA_CATCHING_UP ? "catching up" : "down";
}

void
rv_admin_json_text(struct sqlite3_str *s, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p != '\0'; p++)
		if (*p == '"' || *p == '\\')
			sqlite3_str_appendf(s, "\\%c", *p);
		else if (*p < 0x20)
			sqlite3_str_appendf(s, "\\u%04x", *p);
		else
			sqlite3_str_appendchar(s, 1, (char)*p);
}

/* a JSON string */
static void
put_str(sqlite3_str *s, const char *v)
{
	sqlite3_str_appendchar(s, 1, '"');
	rv_admin_json_text(s, v);
	sqlite3_str_appendchar(s, 1, '"');
}

static void
put_u64(sqlite3_str *s, const char *key, uint64_t v)
{
	sqlite3_str_appendf(s, ",\"%s\":%llu", key, (unsigned long long)v);
}

static void
put_bool(sqlite3_str *s, const char *key, bool v)
{
	sqlite3_str_appendf(s, ",\"%s\":%s", key, v ? "true" : "false");
}

static void
put_key_str(sqlite3_str *s, const char *key, const char *v)
{
	sqlite3_str_appendf(s, ",\"%s\":", key);
	put_str(s, v);
}

/* replica i: as repld's status names it, and whether it was seen */
static void
put_replica(sqlite3_str *s, struct repl *repl, int i, const struct repld_peer *p)
{
	struct repl_replica_status rs;
	char addr[REPLD_ADDRESS_MAX + 8];

	repld_host_port(addr, sizeof(addr), p->address, p->control_port);
	sqlite3_str_appendf(s, "%s{\"index\":%d", i > 0 ? "," : "", i);
	put_key_str(s, "address", addr);
	if (repl_replica_status(repl, i, &rs) != 0) {
		put_key_str(s, "state", "unknown");
		sqlite3_str_appendchar(s, 1, '}');
		return;
	}
	put_key_str(s, "state", state_name(rs.state));
	put_bool(s, "member", rs.member != 0);
	put_key_str(s, "link_state", repl_link_state_name(rs.link_state));
	put_u64(s, "flushed_lsn", rs.flushed_lsn);
	put_u64(s, "lag_records", rs.lag_records);
	put_u64(s, "lag_bytes", rs.lag_bytes);
	put_u64(s, "lag_ms", rs.lag_ms);
	put_key_str(s, "why", rs.state == REPL_REPLICA_STREAMING ? "" : rs.why);
	put_u64(s, "config_epoch", rs.config_epoch);
	/* as the configuration names it: "verbs", or "ofi:" and the provider */
	if (rs.transport[0] == '\0' || strcmp(rs.transport, "verbs") == 0)
		put_key_str(s, "transport", rs.transport);
	else
		sqlite3_str_appendf(s, ",\"transport\":\"ofi:%s\"", rs.transport);
	put_key_str(s, "flush_method", rs.flush_method);
	put_key_str(s, "backend", rs.backend);
	put_u64(s, "batches", rs.batches);
	put_u64(s, "flushes", rs.flushes);
	put_u64(s, "spins", rs.spins);
	put_u64(s, "sleeps", rs.sleeps);
	put_u64(s, "catch_ups", rs.catch_ups);
	put_u64(s, "full_resyncs", rs.full_resyncs);
	put_u64(s, "reconnects", rs.reconnects);
	/* rv_release.c's rule: until then nothing is released */
	put_bool(s, "seen", rs.catch_ups > 0 || rs.state == REPL_REPLICA_STREAMING ||
		rs.link_state == REPL_LINK_RETIRED);
	put_bool(s, "wants_base", rs.wants_base != 0);
	put_bool(s, "holds", rs.holds != 0);
	if (rs.holds) {
		put_u64(s, "hold_lsn", rs.hold_lsn);
		put_u64(s, "hold_from", rs.hold_from);
	} else {
		sqlite3_str_appendall(s, ",\"hold_lsn\":null,\"hold_from\":null");
	}
	/* a catch-up's progress while one is on, as repld's status */
	if (rs.catchup_total_bytes > 0) {
		put_u64(s, "catchup_total_bytes", rs.catchup_total_bytes);
		put_u64(s, "catchup_done_bytes", rs.catchup_done_bytes);
		if (rs.catchup_eta_ms != UINT64_MAX)
			put_u64(s, "catchup_eta_ms", rs.catchup_eta_ms);
		else
			sqlite3_str_appendall(s, ",\"catchup_eta_ms\":null");
	} else {
		sqlite3_str_appendall(s, ",\"catchup_total_bytes\":null,"
			"\"catchup_done_bytes\":null,\"catchup_eta_ms\":null");
	}
	sqlite3_str_appendchar(s, 1, '}');
}

struct status_out {
	sqlite3_str *s;
	bool reply;			/* the admin socket's: ok, version first */
	bool open;
};

static void
status_of(const struct rv_db_view *v, void *arg)
{
	struct status_out *o = arg;
	const struct repld_conf *c = v->conf;
	sqlite3_str *s = o->s;
	struct repl_status st;
	uint64_t base = 0, released = 0, alarms = 0;
	struct rv_image_status im = { 0 };
	bool alarm = false;
	char listen[REPLD_ADDRESS_MAX + 8];

	if (!(o->open = v->repl != NULL && repl_status(v->repl, &st) == 0))
		return;
	repld_host_port(listen, sizeof(listen), c->listen.address,
		c->listen.control_port);
	if (o->reply)
		sqlite3_str_appendf(s, "{\"ok\":true,\"version\":\"%s\",\"changing\":"
			"false,\"flush_method\":\"%s\",\"backend\":\"%s\",", PACKAGE_VERSION,
			repld_flush_name(c->flush_method),
			repld_backend_name(c->log.backend));
	else
		sqlite3_str_appendchar(s, 1, '{');
	sqlite3_str_appendall(s, "\"role\":\"primary\"");
	put_u64(s, "node_id", c->node_id);
	put_key_str(s, "cluster_uuid", c->cluster_uuid_text);
	put_key_str(s, "listen", listen);
	put_key_str(s, "path", c->log.path);
	put_u64(s, "epoch", st.epoch);
	put_u64(s, "config_epoch", st.config_epoch);
	put_bool(s, "config_joint", st.config_joint != 0);
	put_bool(s, "fenced", st.fenced != 0);
	put_u64(s, "first_lsn", st.first_lsn);
	put_u64(s, "last_lsn", st.last_lsn);
	put_u64(s, "durable_lsn", st.durable_lsn);
	put_u64(s, "commit_lsn", st.commit_lsn);
	put_u64(s, "used_bytes", st.used_bytes);
	put_u64(s, "size_bytes", st.size_bytes);
	put_u64(s, "quorum", (uint64_t)c->quorum);
	put_u64(s, "replicas_up", (uint64_t)st.replicas_up);
	if (v->rel != NULL) {
		rv_release_get(v->rel, &base, &released);
		rv_release_space(v->rel, &alarm, &alarms);
		rv_release_image(v->rel, &im);
	}
	sqlite3_str_appendall(s, ",\"sqlite\":{\"path\":");
	put_str(s, v->path);
	put_u64(s, "base_lsn", base);
	put_u64(s, "released_lsn", released);
	put_u64(s, "appended_lsn", v->appended_lsn);
	put_u64(s, "durable_lsn", v->durable_lsn);
	put_bool(s, "space_alarm", alarm);
	put_u64(s, "space_alarms", alarms);
	put_u64(s, "images", im.images);
	put_bool(s, "image_active", im.active);
	put_u64(s, "image_pin_lsn", im.pin_lsn);
	sqlite3_str_appendall(s, "},\"replicas\":[");
	for (int i = 0; i < c->n_peers; i++)
		put_replica(s, v->repl, i, &c->peers[i]);
	sqlite3_str_appendall(s, "]}");
}

/* ---- the SQL functions ---- */

static struct rv_db *
db_of_ctx(sqlite3_context *ctx, const char *fn)
{
	struct rv_db *d = replvfs_db_of(sqlite3_context_db_handle(ctx), "main");

	if (d == NULL) {
		char *e = sqlite3_mprintf("%s: this connection's main database is not "
			"one the repl VFS opened", fn);

		sqlite3_result_error(ctx, e != NULL ? e : fn, -1);
		sqlite3_free(e);
	}
	return d;
}

static void
fail(sqlite3_context *ctx, const char *fn, const char *msg)
{
	char *e = sqlite3_mprintf("%s: %s", fn, msg);

	if (e == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_error(ctx, e, -1);
	sqlite3_free(e);
}

/* repl_member_add / repl_member_remove (host, port [, quorum]) */
static void
fn_member(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	bool add = sqlite3_user_data(ctx) != NULL;
	const char *fn = add ? "repl_member_add" : "repl_member_remove";
	sqlite3_int64 port, quorum = -1;
	const char *host;
	char msg[1024];
	struct rv_db *d;
	int ret;

	if (argc < 2 || argc > 3) {
		snprintf(msg, sizeof(msg), "it takes 2 or 3 arguments (host, port "
			"[, quorum]), not %d", argc);
		fail(ctx, fn, msg);
		return;
	}
	if (sqlite3_value_type(argv[0]) != SQLITE_TEXT ||
	    (host = (const char *)sqlite3_value_text(argv[0])) == NULL) {
		fail(ctx, fn, "the host (argument 1) is text: a host name or an IP "
			"address, as the replica's repld.conf listen.address says");
		return;
	}
	if (sqlite3_value_numeric_type(argv[1]) != SQLITE_INTEGER ||
	    (port = sqlite3_value_int64(argv[1])) < 1 || port > 65535) {
		fail(ctx, fn, "the port (argument 2) is an integer 1..65535: the "
			"replica's listen.control_port");
		return;
	}
	if (argc == 3 && sqlite3_value_type(argv[2]) != SQLITE_NULL &&
	    (sqlite3_value_numeric_type(argv[2]) != SQLITE_INTEGER ||
	     (quorum = sqlite3_value_int64(argv[2])) < 0 || quorum > REPLD_PEERS_MAX)) {
		fail(ctx, fn, "the quorum (argument 3) is NULL (unchanged) or an "
			"integer 0..8");
		return;
	}
	if ((d = db_of_ctx(ctx, fn)) == NULL)
		return;
	ret = rv_admin_change(d, add, host, (unsigned)port, (int)quorum, msg,
		sizeof(msg));
	sqlite3_log(ret == 0 ? SQLITE_NOTICE : SQLITE_WARNING, "replvfs: %s('%s', %lld): "
		"%s", fn, host, (long long)port, msg);
	if (ret == REPL_E_NOMEM)
		sqlite3_result_error_nomem(ctx);
	else if (ret != 0)
		fail(ctx, fn, msg);
	else
		sqlite3_result_text(ctx, msg, -1, SQLITE_TRANSIENT);
}

char *
rv_admin_status(struct rv_db *d, bool reply, char *why, size_t whylen)
{
	struct status_out o = { .s = sqlite3_str_new(NULL), .reply = reply };
	char *json;

	rv_db_inspect(d, status_of, &o);
	if (sqlite3_str_errcode(o.s) != SQLITE_OK) {
		sqlite3_free(sqlite3_str_finish(o.s));
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	json = sqlite3_str_finish(o.s);
	if (!o.open || json == NULL) {
		sqlite3_free(json);
		snprintf(why, whylen, "the log is closed (a membership change failed "
			"and the old membership did not open again): close and open "
			"the database");
		return NULL;
	}
	return json;
}

/* repl_status(): the primary's state as a JSON object */
static void
fn_status(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct rv_db *d;
	char why[200], *json;

	(void)argv;
	if (argc != 0) {
		fail(ctx, "repl_status", "it takes no arguments");
		return;
	}
	if ((d = db_of_ctx(ctx, "repl_status")) == NULL)
		return;
	if ((json = rv_admin_status(d, false, why, sizeof(why))) == NULL)
		fail(ctx, "repl_status", why);
	else
		sqlite3_result_text(ctx, json, -1, sqlite3_free);
}

int
rv_admin_register(struct sqlite3 *db)
{
	/*
	 * DIRECTONLY: a change of the membership is the application's own
	 * statement, never a side effect of a trigger or view in the schema
	 */
	int rc = sqlite3_create_function_v2(db, "repl_member_add", -1,
			SQLITE_UTF8 | SQLITE_DIRECTONLY, (void *)1, fn_member, NULL,
			NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_member_remove", -1,
			SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, fn_member, NULL,
			NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_status", -1, SQLITE_UTF8,
			NULL, fn_status, NULL, NULL, NULL);
	return rc;
}
