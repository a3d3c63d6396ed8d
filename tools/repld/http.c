/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http.c -- the HTTP endpoints (http.h): routing, the health answers.
 *
 * One polling thread of libmicrohttpd's serves every connection: each
 * answer reads the node's status without blocking (node_try_enter), so a
 * slow client cannot hold a scrape or the node up.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "archiver.h"
#include "coordinator.h"
#include "health_query.h"
#include "http.h"
#include "json_out.h"
#include "metrics.h"

#define HTTP_CONNECTIONS_MAX 32
#define HTTP_TIMEOUT_S 10	/* an idle or slow client's connection */
#define HTTP_BACKLOG 16

struct http {
	struct node *node;
	struct MHD_Daemon *mhd;
	int fd;
};

/* what a load balancer asks of the node, read at once */
struct health {
	enum node_role role;
	bool stopping;
	bool can_acknowledge;	/* the primary, its quorum met, room in its log */
	bool log_full;		/* appends refused: REPL_E_FULL */
	uint64_t used_bytes, size_bytes;
	bool following;		/* a replica serving a primary's session */
	bool fenced;
	int quorum, replicas_streaming;
	uint64_t epoch;
	/* the log, primary or replica (not when down) */
	uint64_t last_lsn, durable_lsn, commit_lsn;
	/* a replica's view of its primary */
	struct health_lag lag;
	uint32_t primary_node;		/* while following; 0: none */
	char primary_address[sizeof(((struct repl_replica_info *)0)->primary_addr)];
	bool maintenance;	/* its coordinator sees the maintenance key */
	bool has_archive;	/* an archive group: its archiver's state */
	struct archiver_info archive;
};

static void
health_get(struct node *n, struct health *h)
{
	struct repl_replica_info info;
	struct repl_status st;
	struct repl *repl;
	bool changing;

	memset(h, 0, sizeof(*h));
	pthread_mutex_lock(&n->lock);
	h->quorum = n->conf.quorum;
	h->stopping = node_state_stopping(n->state);
	pthread_mutex_unlock(&n->lock);
	if (atomic_load(&n->coord) != NULL) {
		struct coord_view cv;

		coordinator_view(atomic_load(&n->coord), &cv);
		h->maintenance = cv.maintenance;
	}
	if (atomic_load(&n->archiver) != NULL) {
		h->has_archive = true;
		archiver_get(atomic_load(&n->archiver), &h->archive);
	}
	if ((repl = node_try_enter(n, &changing)) != NULL) {
		repl_status(repl, &st);
		node_leave(n);
		h->role = NODE_PRIMARY;
		h->epoch = st.epoch;
		h->fenced = st.fenced != 0;
		h->replicas_streaming = st.replicas_up;
		h->log_full = st.log_full != 0;
		h->used_bytes = st.used_bytes;
		h->size_bytes = st.size_bytes;
		h->can_acknowledge = !h->fenced && st.replicas_up >= h->quorum &&
			!h->log_full;
		h->last_lsn = st.last_lsn;
		h->durable_lsn = st.durable_lsn;
		h->commit_lsn = st.commit_lsn;
		return;
	}
	h->role = node_role(n);
	if (h->role == NODE_PRIMARY)	/* changing state: not serving now */
		h->role = NODE_DOWN;
	if (h->role == NODE_REPLICA) {
		node_replica_info(n, &info);
		h->following = info.following != 0;
		h->epoch = info.epoch;
		h->last_lsn = info.last_lsn;
		h->durable_lsn = info.durable_lsn;
		h->commit_lsn = info.commit_lsn;	/* 0 until the first COMMIT */
		/* a replica holding records not yet committed is not behind */
		h->lag.lag_records = info.commit_lsn > info.durable_lsn ?
			info.commit_lsn - info.durable_lsn : 0;
		h->lag.contact_known = info.primary_silent_ms != UINT64_MAX;
		h->lag.last_contact_ms = info.primary_silent_ms;
		if (h->following) {
			h->primary_node = info.primary_id;
			snprintf(h->primary_address, sizeof(h->primary_address),
				"%s", info.primary_addr);
		}
	}
}

/* why a path answers 503; NULL: it answers 200 */
static const char *
refusal(const char *path, const struct health *h,
		const struct health_limits *limits, char *buf, size_t len)
{
	bool primary = h->role == NODE_PRIMARY, replica = h->role == NODE_REPLICA;

	if (h->stopping)
		return "the daemon is stopping";
	if (strcmp(path, "/health") == 0)
		return primary || replica ? NULL : "the node is down (starting, "
			"changing its role, or failed)";
	if (strcmp(path, "/primary") == 0 ||
	    (strcmp(path, "/ready") == 0 && !replica)) {
		if (!primary)
			return replica ? "this node is a replica" :
				"the node is down (starting, changing its role, "
				"or failed)";
		if (h->fenced)
			return "a newer primary took over";
		if (h->log_full) {
			snprintf(buf, len, "the log is full: appends fail until records "
				"are released (%" PRIu64 " of %" PRIu64 " bytes used)",
				h->used_bytes, h->size_bytes);
			return buf;
		}
		if (!h->can_acknowledge) {
			snprintf(buf, len, "%d of %d replicas needed for the "
				"quorum are streaming", h->replicas_streaming,
				h->quorum);
			return buf;
		}
		return NULL;
	}
	/* /replica, and /ready of a replica */
	if (!replica)
		return primary ? "this node is the primary" :
			"the node is down (starting, changing its role, or failed)";
	if (!h->following)
		return "this replica is connected to no primary";
	return health_limits_refusal(limits, &h->lag, buf, len);
}

static enum MHD_Result
respond(struct MHD_Connection *conn, unsigned code, const char *type,
		char *body, size_t len, bool body_owned)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, body_owned ?
		MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (r == NULL) {
		if (body_owned)
			free(body);
		return MHD_NO;
	}
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result
respond_text(struct MHD_Connection *conn, unsigned code, const char *text)
{
	return respond(conn, code, "text/plain; charset=utf-8", (char *)text,
		strlen(text), false);
}

/* the query string's limits, read whole: the first bad argument stops it */
struct query {
	struct health_limits limits;
	bool bad;
	char why[256];
};

static enum MHD_Result
query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
		const char *value)
{
	struct query *q = cls;

	(void)kind;
	if (health_limits_add(&q->limits, key, value, q->why,
			sizeof(q->why)) != 0) {
		q->bad = true;
		return MHD_NO;
	}
	return MHD_YES;
}

/* a number, or null where the node's role has none */
static json_t *
u64_or_null(bool has, uint64_t v)
{
	return has ? jo_u64(v) : json_null();
}

static json_t *
health_json(const struct health *h, const char *why)
{
	bool up = h->role != NODE_DOWN, replica = h->role == NODE_REPLICA;
	json_t *o;

	o = json_pack("{s:s, s:b, s:b, s:b, s:i, s:i, s:I, s:o, s:o, s:o, s:o, "
		"s:o, s:o, s:o, s:b}",
		"role", node_role_name(h->role),
		"can_acknowledge", h->can_acknowledge,
		"log_full", h->log_full,
		"following", h->following,
		"quorum", h->quorum,
		"replicas_streaming", h->replicas_streaming,
		"epoch", (json_int_t)h->epoch,
		"last_lsn", u64_or_null(up, h->last_lsn),
		"durable_lsn", u64_or_null(up, h->durable_lsn),
		"commit_lsn", u64_or_null(up, h->commit_lsn),
		"lag_records", u64_or_null(replica, h->lag.lag_records),
		"primary_node", u64_or_null(h->primary_node != 0, h->primary_node),
		"primary_address", h->primary_node != 0 ?
			jo_str(h->primary_address) : json_null(),
		"last_contact_ms", u64_or_null(replica && h->lag.contact_known,
			h->lag.last_contact_ms),
		"maintenance", h->maintenance);
	/* the archiver in brief: a monitor's alert on lag, gap or failures */
	if (o != NULL && json_object_set_new(o, "archive", !h->has_archive ?
			json_null() : json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}",
			"state", archiver_state_name(h->archive.state),
			"archived_lsn", jo_u64(h->archive.archived_lsn),
			"lag_records", jo_u64(h->archive.lag_records),
			"lag_ms", jo_u64(h->archive.lag_ms),
			"failures", jo_u64(h->archive.failures),
			"gap_at", h->archive.gap_at ? jo_u64(h->archive.gap_at) :
				json_null())) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (o != NULL && why != NULL &&
	    json_object_set_new(o, "reason", json_string(why)) != 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static enum MHD_Result
health_answer(struct MHD_Connection *conn, struct node *n, const char *path)
{
	struct query q = { .bad = false };
	struct health h;
	char buf[256], *body;
	const char *why;
	json_t *o;

	(void)MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.bad) {
		size_t len = strlen(q.why);

		if ((body = malloc(len + 2)) == NULL)
			return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				"out of memory\n");
		memcpy(body, q.why, len);
		memcpy(body + len, "\n", 2);
		return respond(conn, MHD_HTTP_BAD_REQUEST,
			"text/plain; charset=utf-8", body, len + 1, true);
	}
	health_get(n, &h);
	why = refusal(path, &h, &q.limits, buf, sizeof(buf));
	o = health_json(&h, why);
	body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (body == NULL)
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			"out of memory\n");
	/* a line: curl and shells read it as one */
	char *line = realloc(body, strlen(body) + 2);

	if (line == NULL) {
		free(body);
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			"out of memory\n");
	}
	strcat(line, "\n");
	return respond(conn, why ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
		"application/json", line, strlen(line), true);
}

static enum MHD_Result
metrics_answer(struct MHD_Connection *conn, struct node *n)
{
	struct mtext t;

	mtext_init(&t);
	metrics_render(n, &t);
	if (t.failed) {
		mtext_free(&t);
		return respond_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			"out of memory\n");
	}
	/* the response frees it */
	return respond(conn, MHD_HTTP_OK, METRICS_CONTENT_TYPE, t.p, t.len, true);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
		const char *method, const char *version, const char *upload_data,
		size_t *upload_size, void **req_cls)
{
	static const char *const health_paths[] = {
		"/health", "/primary", "/replica", "/ready", NULL
	};
	struct http *h = cls;
	bool known = strcmp(url, "/metrics") == 0;

	(void)version;
	(void)upload_data;
	/* the first call only announces the request's headers */
	if (*req_cls == NULL) {
		*req_cls = h;
		return MHD_YES;
	}
	if (*upload_size != 0) {	/* a body: ignored, then the answer */
		*upload_size = 0;
		return MHD_YES;
	}
	for (int i = 0; !known && health_paths[i]; i++)
		known = strcmp(url, health_paths[i]) == 0;
	if (!known)
		return respond_text(conn, MHD_HTTP_NOT_FOUND, "not found: the "
			"paths are /metrics, /health, /primary, /replica, /ready\n");
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			"method not allowed: GET or HEAD\n");
	if (strcmp(url, "/metrics") == 0)
		return metrics_answer(conn, h->node);
	return health_answer(conn, h->node, url);
}

/* the listening socket, made here so that a failure says why */
static int
listen_on(const char *host, uint16_t port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	char service[8];
	int fd = -1, gai, e = 0, one = 1;

	snprintf(service, sizeof(service), "%u", port);
	if ((gai = getaddrinfo(host, service, &hints, &res)) != 0) {
		snprintf(err, errlen, "metrics_listen %s:%u: %s", host, port,
			gai_strerror(gai));
		return -1;
	}
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		if ((fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				ai->ai_protocol)) < 0) {
			e = errno;
			continue;
		}
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ||
		    listen(fd, HTTP_BACKLOG) != 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "metrics_listen %s:%u: cannot listen: %s",
			host, port, strerror(e));
	return fd;
}

int
http_start(struct node *n, struct http **http_ptr, char *err, size_t errlen)
{
	struct http *h;

	*http_ptr = NULL;
	if (n->conf.metrics.host == NULL)
		return 0;
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errlen, "metrics_listen: out of memory");
		return -1;
	}
	h->node = n;
	if ((h->fd = listen_on(n->conf.metrics.host, n->conf.metrics.port, err,
			errlen)) < 0) {
		free(h);
		return -1;
	}
	h->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_AUTO | MHD_USE_ERROR_LOG, 0, NULL, NULL,
			on_request, h,
			MHD_OPTION_LISTEN_SOCKET, h->fd,
			MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTIONS_MAX,
			MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_TIMEOUT_S,
			MHD_OPTION_END);
	if (h->mhd == NULL) {
		snprintf(err, errlen, "metrics_listen %s:%u: the HTTP server "
			"did not start", n->conf.metrics.host, n->conf.metrics.port);
		close(h->fd);
		free(h);
		return -1;
	}
	*http_ptr = h;
	return 0;
}

void
http_stop(struct http **http_ptr)
{
	struct http *h = *http_ptr;

	if (h == NULL)
		return;
	MHD_stop_daemon(h->mhd);	/* joins its thread, closes h->fd */
	free(h);
	*http_ptr = NULL;
}
