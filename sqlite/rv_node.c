/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_node.c -- where the primary is and how far this node has applied, in
 * SQL, on any connection of a process that loaded the extension (rv_node.h
 * has the functions).  On a database the repl VFS opened (the primary)
 * the answers are its own; on a replica's copy opened with
 * repl_conf=FILE in its URI they are that node's repld's, asked through
 * the admin socket FILE names (one STATUS per call; repl_wait asks every
 * RV_NODE_POLL_MS).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "admin_proto.h"
#include "repl.h"
#include "repld_conf.h"
#include "replvfs.h"
#include "rv_admin.h"
#include "rv_db.h"
#include "rv_ha.h"
#include "rv_node.h"

#define RV_NODE_POLL_MS 10
#define RV_NODE_WAIT_MS 5000		/* repl_wait's default timeout */
#define RV_NODE_ASK_MS 2000		/* one STATUS's bound */

/* what the functions answer, from either source */
struct node_view {
	char role[16];			/* "primary", "replica", ... */
	bool has_primary;
	uint32_t primary_id;
	char primary_addr[REPLD_ADDRESS_MAX + 10];
	uint64_t lsn;			/* primary: committed; copy: applied */
};

static uint64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ---- the primary: its own database ---- */

static void
primary_view(const struct rv_db_view *v, void *arg)
{
	struct node_view *nv = arg;
	const struct repld_conf *c = v->conf;

	snprintf(nv->role, sizeof(nv->role), "primary");
	nv->has_primary = true;
	nv->primary_id = c->node_id;
	snprintf(nv->primary_addr, sizeof(nv->primary_addr),
		strchr(c->listen.address, ':') ? "[%s]:%u" : "%s:%u",
		c->listen.address, (unsigned)c->listen.control_port);
	nv->lsn = v->durable_lsn;
}

/* ---- a replica's copy: its repld, through the admin socket ---- */

/* one request line, one reply line: the reply (malloc'd) or NULL with why */
static char *
ask(const char *path, const char *req, char *why, size_t whylen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[ADMIN_REPLY_MAX + 1];
	uint64_t until = now_ms() + RV_NODE_ASK_MS;
	size_t have = 0;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(why, whylen, "the admin socket path %s is too long", path);
		return NULL;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		snprintf(why, whylen, "repld at %s: %s (is it running?)", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		snprintf(why, whylen, "repld at %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		char *lf;
		ssize_t r;

		if (have > 0 && (lf = memchr(buf, '\n', have)) != NULL) {
			*lf = '\0';
			close(fd);
			return strdup(buf);
		}
		if (have == ADMIN_REPLY_MAX || now >= until ||
		    poll(&p, 1, (int)(until - now)) <= 0 ||
		    (r = read(fd, buf + have, ADMIN_REPLY_MAX - have)) <= 0) {
			snprintf(why, whylen, "repld at %s: no whole answer to %.*s within "
				"%d ms", path, (int)strcspn(req, "\n"), req, RV_NODE_ASK_MS);
			close(fd);
			return NULL;
		}
		have += (size_t)r;
	}
}

/* the copy's node, from its repld's STATUS at sock; 0, or -1 with why */
static int
copy_view(const char *sock, struct node_view *nv, char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *o, *copy, *v;
	char *reply;

	if ((reply = ask(sock, "STATUS\n", why, whylen)) == NULL)
		return -1;
	o = json_loads(reply, 0, &jerr);
	free(reply);
	if (!json_is_object(o) || !json_is_true(json_object_get(o, "ok"))) {
		snprintf(why, whylen, "repld's STATUS answer %s", o == NULL ?
			"is no JSON" : "is no success");
		json_decref(o);
		return -1;
	}
	snprintf(nv->role, sizeof(nv->role), "%s",
		json_is_string(v = json_object_get(o, "role")) ? json_string_value(v) : "?");
	nv->has_primary = json_is_true(json_object_get(o, "following")) &&
		json_is_integer(json_object_get(o, "primary_node")) &&
		json_is_string(json_object_get(o, "primary_address"));
	if (nv->has_primary) {
		nv->primary_id = (uint32_t)json_integer_value(json_object_get(o,
			"primary_node"));
		snprintf(nv->primary_addr, sizeof(nv->primary_addr), "%s",
			json_string_value(json_object_get(o, "primary_address")));
	}
	copy = json_object_get(o, "sqlite_copy");
	v = json_object_get(copy, "applied_lsn");
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(why, whylen, "repld at %.200s keeps no copy of the database "
			"(sqlite_copy in its file)", sock);
		json_decref(o);
		return -1;
	}
	nv->lsn = (uint64_t)json_integer_value(v);
	json_decref(o);
	return 0;
}

/* ---- which one, for a call ---- */

static void
fail(sqlite3_context *ctx, const char *fn, const char *msg)
{
	char *e = sqlite3_mprintf("%s: %s", fn, msg);

	sqlite3_result_error(ctx, e != NULL ? e : msg, -1);
	sqlite3_free(e);
}

/* where a call's answers come from: the primary's database, or a repld */
struct node_source {
	struct rv_ha *ha;		/* a node with failover: its answers */
	struct rv_db *d;		/* NULL: a copy's node */
	char sock[PATH_MAX];		/* its admin socket (ask() checks its length) */
};

/* the source for ctx's connection (repl_conf read once); -1, error set */
static int
source_of(sqlite3_context *ctx, const char *fn, struct node_source *src)
{
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	struct repld_conf conf;
	const char *file, *path;
	char err[512], why[600];

	src->d = NULL;
	if ((src->ha = replvfs_ha_of(db, "main")) != NULL ||
	    (src->d = replvfs_db_of(db, "main")) != NULL)
		return 0;
	file = sqlite3_db_filename(db, "main");
	path = file != NULL ? sqlite3_uri_parameter(file, "repl_conf") : NULL;
	if (path == NULL) {
		fail(ctx, fn, "this connection's main database is neither one the repl "
			"VFS opened nor a copy opened with repl_conf=FILE in its URI");
		return -1;
	}
	if (repld_conf_load(path, &conf, err, sizeof(err)) != 0) {
		snprintf(why, sizeof(why), "repl_conf: %s", err);
		fail(ctx, fn, why);
		return -1;
	}
	snprintf(src->sock, sizeof(src->sock), "%s", conf.admin_socket);
	repld_conf_free(&conf);
	return 0;
}

/* what src says now; -1 with the error set */
static int
view_from(sqlite3_context *ctx, const char *fn, const struct node_source *src,
		struct node_view *nv)
{
	char why[600];

	memset(nv, 0, sizeof(*nv));
	if (src->ha != NULL) {
		struct rv_ha_view hv;

		rv_ha_view(src->ha, &hv);
		snprintf(nv->role, sizeof(nv->role), "%s", rv_ha_role_name(hv.role));
		nv->has_primary = hv.has_primary;
		nv->primary_id = hv.primary_id;
		snprintf(nv->primary_addr, sizeof(nv->primary_addr), "%.*s",
			(int)sizeof(nv->primary_addr) - 1, hv.primary_addr);
		nv->lsn = hv.lsn;
		return 0;
	}
	if (src->d != NULL) {
		rv_db_inspect(src->d, primary_view, nv);
		return 0;
	}
	if (copy_view(src->sock, nv, why, sizeof(why)) != 0) {
		fail(ctx, fn, why);
		return -1;
	}
	return 0;
}

static int
view_of(sqlite3_context *ctx, const char *fn, struct node_view *nv)
{
	struct node_source src;

	return source_of(ctx, fn, &src) != 0 ? -1 : view_from(ctx, fn, &src, nv);
}

/* repl_role(): "primary" or what the copy's repld is */
static void
fn_role(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct node_view nv;

	(void)argc;
	(void)argv;
	if (view_of(ctx, "repl_role", &nv) == 0)
		sqlite3_result_text(ctx, nv.role, -1, SQLITE_TRANSIENT);
}

/* repl_primary(): {"node_id":N,"address":"HOST:PORT"}, or NULL */
static void
fn_primary(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct node_view nv;
	char *s;

	(void)argc;
	(void)argv;
	if (view_of(ctx, "repl_primary", &nv) != 0)
		return;
	if (!nv.has_primary) {
		sqlite3_result_null(ctx);
		return;
	}
	/* an address is "host:port" or "[v6]:port": nothing to escape */
	s = sqlite3_mprintf("{\"node_id\":%u,\"address\":\"%s\"}",
		(unsigned)nv.primary_id, nv.primary_addr);
	if (s == NULL)
		sqlite3_result_error_nomem(ctx);
	else
		sqlite3_result_text(ctx, s, -1, sqlite3_free);
}

/* repl_lsn(): committed (primary) or applied (copy) */
static void
fn_lsn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct node_view nv;

	(void)argc;
	(void)argv;
	if (view_of(ctx, "repl_lsn", &nv) == 0)
		sqlite3_result_int64(ctx, (sqlite3_int64)nv.lsn);
}

/*
 * repl_last_commit_lsn(): the LSN of the record of the last transaction
 * this thread committed through the repl VFS, NULL before its first: what
 * names that transaction to replctl restore --to-lsn
 */
static void
fn_last_commit_lsn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	uint64_t lsn = rv_db_thread_last_commit_lsn();

	(void)argc;
	(void)argv;
	if (lsn == 0)
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, (sqlite3_int64)lsn);
}

/* repl_wait(lsn [, timeout_ms]): 1 once repl_lsn() >= lsn, 0 at the timeout */
static void
fn_wait(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3_int64 lsn, ms = RV_NODE_WAIT_MS;
	struct node_source src;
	struct node_view nv;
	uint64_t until;

	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER ||
	    (lsn = sqlite3_value_int64(argv[0])) < 0 ||
	    (argc == 2 && (sqlite3_value_type(argv[1]) != SQLITE_INTEGER ||
	     (ms = sqlite3_value_int64(argv[1])) < 0 || ms > 3600000))) {
		fail(ctx, "repl_wait", "takes an LSN (an integer >= 0) and an optional "
			"timeout in ms (0..3600000, default 5000)");
		return;
	}
	if (source_of(ctx, "repl_wait", &src) != 0)
		return;
	until = now_ms() + (uint64_t)ms;
	for (;;) {
		if (view_from(ctx, "repl_wait", &src, &nv) != 0)
			return;
		if (nv.lsn >= (uint64_t)lsn) {
			sqlite3_result_int(ctx, 1);
			return;
		}
		if (now_ms() >= until) {
			sqlite3_result_int(ctx, 0);
			return;
		}
		(void)poll(NULL, 0, RV_NODE_POLL_MS);
	}
}

/* repl_switchover([node_id]): a node with failover hands the primary over */
static void
fn_switchover(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct rv_ha *ha = replvfs_ha_of(sqlite3_context_db_handle(ctx), "main");
	sqlite3_int64 to = 0;
	char out[400];

	if (argc == 1 && (sqlite3_value_type(argv[0]) != SQLITE_INTEGER ||
	    (to = sqlite3_value_int64(argv[0])) < 1 || to > 65535)) {
		fail(ctx, "repl_switchover", "takes the node id to hand the primary "
			"to (1..65535), or nothing: the most advanced replica");
		return;
	}
	if (ha == NULL) {
		fail(ctx, "repl_switchover", "this connection's main database has no "
			"automatic failover (a coordinator in its repl_conf)");
		return;
	}
	if (rv_ha_switchover(ha, (uint32_t)to, out, sizeof(out)) != 0) {
		fail(ctx, "repl_switchover", out);
		return;
	}
	sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

int
rv_node_register(sqlite3 *db)
{
	int rc = sqlite3_create_function_v2(db, "repl_role", 0, SQLITE_UTF8, NULL,
			fn_role, NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_primary", 0, SQLITE_UTF8,
			NULL, fn_primary, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_lsn", 0, SQLITE_UTF8, NULL,
			fn_lsn, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_last_commit_lsn", 0,
			SQLITE_UTF8, NULL, fn_last_commit_lsn, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_wait", 1, SQLITE_UTF8, NULL,
			fn_wait, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "repl_wait", 2, SQLITE_UTF8, NULL,
			fn_wait, NULL, NULL, NULL);
	for (int n = 0; n <= 1 && rc == SQLITE_OK; n++)
		rc = sqlite3_create_function_v2(db, "repl_switchover", n, SQLITE_UTF8,
			NULL, fn_switchover, NULL, NULL, NULL);
	return rc;
}
