/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_client.c -- etcd v3's unary calls over the JSON gateway
 * (etcd_client.h): one reused easy handle (one kept-alive connection), a
 * timeout per attempt, and the move to the next endpoint when a request
 * cannot have been applied.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "coord/etcd_http.h"

#define GRPC_NOT_FOUND 5
#define GRPC_UNAVAILABLE 14

struct etcd_client {
	struct etcd_http http;
	size_t cur;		/* the endpoint tried first */
	CURL *h;
	/* the answer of the last attempt, NUL-terminated */
	char *body;
	size_t len, cap;
	bool too_long;
	int64_t server_code;
	char url[512];		/* of the last attempt */
	char err[512];
	uint64_t requests;	/* attempts sent, over every endpoint */
};

const char *
etcd_rc_name(enum etcd_rc rc)
{
	static const char *const names[] = {
		[ETCD_OK] = "ok", [ETCD_E_INVAL] = "invalid argument",
		[ETCD_E_NOMEM] = "out of memory",
		[ETCD_E_UNREACHABLE] = "unreachable",
		[ETCD_E_TIMEOUT] = "timed out", [ETCD_E_IO] = "connection failed",
		[ETCD_E_PROTO] = "bad answer",
		[ETCD_E_LEASE_NOT_FOUND] = "lease not found",
		[ETCD_E_SERVER] = "etcd error", [ETCD_E_CANCELED] = "watch canceled",
		[ETCD_E_CONTENDED] = "contended",
	};

	if ((unsigned)rc >= sizeof(names) / sizeof(names[0]) || names[rc] == NULL)
		return "unknown";
	return names[rc];
}

static enum etcd_rc
fail(struct etcd_client *c, enum etcd_rc rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* the answer, kept up to ETCD_ANSWER_MAX bytes: more aborts the transfer */
static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	struct etcd_client *c = arg;
	size_t add = size * n;

	if (add > ETCD_ANSWER_MAX - c->len) {
		c->too_long = true;
		return 0;
	}
	if (c->len + add + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		char *p;

		while (cap < c->len + add + 1)
			cap *= 2;
		if ((p = realloc(c->body, cap)) == NULL)
			return 0;
		c->body = p;
		c->cap = cap;
	}
	memcpy(c->body + c->len, data, add);
	c->len += add;
	c->body[c->len] = '\0';
	return add;
}

struct etcd_client *
etcd_client_new(const struct etcd_client_cfg *cfg, char *err, size_t err_size)
{
	struct etcd_client *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		snprintf(err, err_size, "etcd: out of memory");
		return NULL;
	}
	if (etcd_http_init(&c->http, cfg, err, err_size)) {
		free(c);
		return NULL;
	}
	if ((c->h = curl_easy_init()) == NULL || etcd_http_setup(c->h, &c->http) ||
			curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body) ||
			curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c) ||
			curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS,
				(long)c->http.timeout_ms)) {
		snprintf(err, err_size, "etcd: curl_easy_init or setopt failed");
		etcd_client_free(c);
		return NULL;
	}
	return c;
}

void
etcd_client_free(struct etcd_client *c)
{
	if (c == NULL)
		return;
	if (c->h != NULL)
		curl_easy_cleanup(c->h);
	etcd_http_fini(&c->http);
	free(c->body);
	free(c);
}

const char *
etcd_client_error(const struct etcd_client *c)
{
	return c->err;
}

int64_t
etcd_client_server_code(const struct etcd_client *c)
{
	return c->server_code;
}

const char *
etcd_client_endpoint(const struct etcd_client *c)
{
	return c->http.endpoints[c->cur];
}

uint64_t
etcd_client_requests(const struct etcd_client *c)
{
	return c->requests;
}

const struct etcd_http *
etcd_client_http(const struct etcd_client *c)
{
	return &c->http;
}

size_t
etcd_client_first(const struct etcd_client *c)
{
	return c->cur;
}

/*
 * POSTs body (freed here; NULL: the encoder's refusal in why) to path on
 * the endpoints from c->cur on.  ETCD_OK: an answer in c->body (any HTTP
 * status; the caller's decoder reads it), *sent_ns when its attempt began.
 */
static enum etcd_rc
post(struct etcd_client *c, const char *path, char *body, const char *why,
	uint64_t *sent_ns)
{
	enum etcd_rc rc = ETCD_E_UNREACHABLE;
	char last[256] = "";

	c->err[0] = '\0';
	c->server_code = 0;
	if (body == NULL)
		return fail(c, why != NULL ? ETCD_E_INVAL : ETCD_E_NOMEM, "%s",
			why != NULL ? why : "etcd request: out of memory");
	for (size_t k = 0; k < c->http.n_endpoints; k++) {
		size_t e = (c->cur + k) % c->http.n_endpoints;
		struct etcd_status st;
		CURLcode cc;

		etcd_text(c->url, sizeof(c->url), "%s%s", c->http.endpoints[e], path);
		c->len = 0;
		c->too_long = false;
		if (curl_easy_setopt(c->h, CURLOPT_URL, c->url) ||
				curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body)) {
			rc = fail(c, ETCD_E_NOMEM, "etcd %s: setopt failed", c->url);
			break;
		}
		if (sent_ns != NULL)
			*sent_ns = clock_now_ns();
		c->requests++;
		cc = curl_easy_perform(c->h);
		if (cc == CURLE_OK) {
			/* Unavailable (no leader, leader changed): not applied */
			if (etcd_http_status(c->h) == 503 &&
					etcd_dec_error(c->body ? c->body : "", c->len, &st) ==
					ETCD_DEC_ERROR && st.code == GRPC_UNAVAILABLE) {
				etcd_text(last, sizeof(last), "%s: unavailable: %s", c->url,
					st.message);
				continue;
			}
			c->cur = e;
			rc = ETCD_OK;
			break;
		}
		if (c->too_long) {
			rc = fail(c, ETCD_E_PROTO, "etcd %s: etcd answer: longer than %u bytes",
				c->url, ETCD_ANSWER_MAX);
			break;
		}
		if (etcd_http_unsent(c->h, cc)) {
			etcd_text(last, sizeof(last), "%s: %s", c->url, curl_easy_strerror(cc));
			continue;
		}
		/* sent, maybe applied: not for another endpoint to do again */
		c->cur = e;
		rc = fail(c, cc == CURLE_OPERATION_TIMEDOUT ? ETCD_E_TIMEOUT : ETCD_E_IO,
			"etcd %s: %s after the request was sent (its outcome is unknown)",
			c->url, curl_easy_strerror(cc));
		break;
	}
	free(body);
	if (rc == ETCD_E_UNREACHABLE)
		fail(c, rc, "etcd: no endpoint of %zu took the request; the last: %s",
			c->http.n_endpoints, last);
	return rc;
}

/* a decoder's verdict as the call's */
static enum etcd_rc
verdict(struct etcd_client *c, enum etcd_dec d, const struct etcd_status *st)
{
	long status = etcd_http_status(c->h);

	switch (d) {
	case ETCD_DEC_OK:
		if (status != 200)
			return fail(c, ETCD_E_PROTO,
				"etcd %s: HTTP %ld with an answer that is no error", c->url,
				status);
		return ETCD_OK;
	case ETCD_DEC_ERROR:
		c->server_code = st->code;
		if (st->code == GRPC_NOT_FOUND && strstr(st->message, "lease not found"))
			return fail(c, ETCD_E_LEASE_NOT_FOUND, "etcd %s: %s", c->url,
				st->message);
		return fail(c, ETCD_E_SERVER, "etcd %s: code %lld: %s", c->url,
			(long long)st->code, st->message);
	case ETCD_DEC_BAD:
		break;
	}
	return fail(c, ETCD_E_PROTO, "etcd %s (HTTP %ld): %s", c->url, status,
		st->message);
}

enum etcd_rc
etcd_lease_grant(struct etcd_client *c, int64_t ttl_s, int64_t *id, int64_t *ttl)
{
	const char *why = NULL;
	char *body;
	struct etcd_lease l;
	struct etcd_status st;
	enum etcd_rc rc;

	*id = *ttl = 0;
	body = etcd_enc_lease_grant(ttl_s, &why);
	rc = post(c, "/v3/lease/grant", body, why, NULL);
	if (rc != ETCD_OK)
		return rc;
	rc = verdict(c, etcd_dec_lease(c->body, c->len, ETCD_LEASE_GRANT, &l, &st), &st);
	if (rc == ETCD_OK && (l.id == 0 || l.ttl <= 0))
		rc = fail(c, ETCD_E_PROTO, "etcd %s: etcd answer: %s", c->url,
			l.id == 0 ? "ID: missing or 0" : "TTL: missing or 0");
	if (rc == ETCD_OK) {
		*id = l.id;
		*ttl = l.ttl;
	}
	etcd_lease_free(&l);
	return rc;
}

enum etcd_rc
etcd_lease_keepalive(struct etcd_client *c, int64_t id, int64_t *ttl,
	uint64_t *sent_ns)
{
	const char *why = NULL;
	char *body;
	struct etcd_lease l;
	struct etcd_status st;
	uint64_t t0 = 0;
	enum etcd_rc rc;

	*ttl = 0;
	body = etcd_enc_lease_id(id, &why);
	rc = post(c, "/v3/lease/keepalive", body, why, &t0);
	if (rc != ETCD_OK)
		return rc;
	rc = verdict(c, etcd_dec_lease(c->body, c->len, ETCD_LEASE_KEEPALIVE, &l, &st),
		&st);
	/* an expired lease's answer has no TTL (0) and maybe the ID */
	if (rc == ETCD_OK && l.id != 0 && l.id != id)
		rc = fail(c, ETCD_E_PROTO, "etcd %s: etcd answer: result.ID: another lease's",
			c->url);
	if (rc == ETCD_OK) {
		*ttl = l.ttl;
		if (sent_ns != NULL)
			*sent_ns = t0;
	}
	etcd_lease_free(&l);
	return rc;
}

enum etcd_rc
etcd_lease_revoke(struct etcd_client *c, int64_t id)
{
	const char *why = NULL;
	char *body;
	struct etcd_lease l;
	struct etcd_status st;
	enum etcd_rc rc;

	body = etcd_enc_lease_id(id, &why);
	rc = post(c, "/v3/lease/revoke", body, why, NULL);
	if (rc != ETCD_OK)
		return rc;
	rc = verdict(c, etcd_dec_lease(c->body, c->len, ETCD_LEASE_REVOKE, &l, &st), &st);
	etcd_lease_free(&l);
	return rc;
}

enum etcd_rc
etcd_lease_timetolive(struct etcd_client *c, int64_t id, bool keys,
	struct etcd_lease *out)
{
	const char *why = NULL;
	char *body;
	struct etcd_status st;
	enum etcd_rc rc;

	memset(out, 0, sizeof(*out));
	body = etcd_enc_lease_timetolive(id, keys, &why);
	rc = post(c, "/v3/lease/timetolive", body, why, NULL);
	if (rc != ETCD_OK)
		return rc;
	rc = verdict(c, etcd_dec_lease(c->body, c->len, ETCD_LEASE_TIMETOLIVE, out, &st),
		&st);
	if (rc == ETCD_OK && out->ttl == -1)
		rc = fail(c, ETCD_E_LEASE_NOT_FOUND, "etcd %s: lease %lld: TTL -1", c->url,
			(long long)id);
	if (rc != ETCD_OK)
		etcd_lease_free(out);
	return rc;
}

/* a range, put or delete, its answer into *out (freed unless ETCD_OK) */
static enum etcd_rc
unary_op(struct etcd_client *c, const char *path, const struct etcd_op *op,
	struct etcd_range *out)
{
	const char *why = NULL;
	char *body;
	struct etcd_status st;
	enum etcd_rc rc;

	memset(out, 0, sizeof(*out));
	body = etcd_enc_op(op, &why);
	rc = post(c, path, body, why, NULL);
	if (rc != ETCD_OK)
		return rc;
	rc = verdict(c, etcd_dec_op(c->body, c->len, op->kind, out, &st), &st);
	if (rc != ETCD_OK)
		etcd_range_free(out);
	return rc;
}

enum etcd_rc
etcd_get(struct etcd_client *c, const void *key, size_t key_len,
	struct etcd_range *out)
{
	struct etcd_op op = { .kind = ETCD_OP_RANGE, .key = key, .key_len = key_len };

	return unary_op(c, "/v3/kv/range", &op, out);
}

enum etcd_rc
etcd_get_prefix(struct etcd_client *c, const void *prefix, size_t len,
	bool count_only, struct etcd_range *out)
{
	uint8_t end[ETCD_KEY_MAX];
	struct etcd_op op = {
		.kind = ETCD_OP_RANGE, .key = prefix, .key_len = len,
		.range_end = end, .count_only = count_only,
	};

	memset(out, 0, sizeof(*out));
	if (len == 0 || len > ETCD_KEY_MAX)
		return fail(c, ETCD_E_INVAL, "etcd request: prefix empty or too long");
	op.range_end_len = etcd_prefix_end(prefix, len, end);
	return unary_op(c, "/v3/kv/range", &op, out);
}

enum etcd_rc
etcd_get_range(struct etcd_client *c, const void *key, size_t key_len,
	const void *end, size_t end_len, struct etcd_range *out)
{
	struct etcd_op op = {
		.kind = ETCD_OP_RANGE, .key = key, .key_len = key_len,
		.range_end = end, .range_end_len = end_len,
	};

	memset(out, 0, sizeof(*out));
	if (key_len == 0 || end_len == 0)
		return fail(c, ETCD_E_INVAL, "etcd request: a range needs a key and an end");
	return unary_op(c, "/v3/kv/range", &op, out);
}

enum etcd_rc
etcd_put(struct etcd_client *c, const void *key, size_t key_len,
	const void *value, size_t value_len, int64_t lease, struct etcd_header *hdr)
{
	struct etcd_op op = {
		.kind = ETCD_OP_PUT, .key = key, .key_len = key_len,
		.value = value, .value_len = value_len, .lease = lease,
	};
	struct etcd_range r;
	enum etcd_rc rc = unary_op(c, "/v3/kv/put", &op, &r);

	if (rc == ETCD_OK && hdr != NULL)
		*hdr = r.header;
	etcd_range_free(&r);
	return rc;
}

enum etcd_rc
etcd_delete(struct etcd_client *c, const void *key, size_t key_len, bool prefix,
	int64_t *deleted)
{
	uint8_t end[ETCD_KEY_MAX];
	struct etcd_op op = { .kind = ETCD_OP_DELETE, .key = key, .key_len = key_len };
	struct etcd_range r;
	enum etcd_rc rc;

	if (deleted != NULL)
		*deleted = 0;
	if (key_len == 0 || key_len > ETCD_KEY_MAX)
		return fail(c, ETCD_E_INVAL, "etcd request: key empty or too long");
	if (prefix) {
		op.range_end = end;
		op.range_end_len = etcd_prefix_end(key, key_len, end);
	}
	rc = unary_op(c, "/v3/kv/deleterange", &op, &r);
	if (rc == ETCD_OK && deleted != NULL)
		*deleted = r.deleted;
	etcd_range_free(&r);
	return rc;
}

enum etcd_rc
etcd_txn(struct etcd_client *c, const struct etcd_txn *t, struct etcd_txn_result *out)
{
	const char *why = NULL;
	char *body;
	struct etcd_status st;
	enum etcd_rc rc;

	memset(out, 0, sizeof(*out));
	body = etcd_enc_txn(t, &why);
	rc = post(c, "/v3/kv/txn", body, why, NULL);
	if (rc != ETCD_OK)
		return rc;
	rc = verdict(c, etcd_dec_txn(c->body, c->len, out, &st), &st);
	/* etcd answers one response per op of the branch it took */
	if (rc == ETCD_OK && out->n_responses !=
			(out->succeeded ? t->n_success : t->n_failure))
		rc = fail(c, ETCD_E_PROTO, "etcd %s: etcd answer: responses: %zu, not one per op",
			c->url, out->n_responses);
	if (rc != ETCD_OK)
		etcd_txn_result_free(out);
	return rc;
}
