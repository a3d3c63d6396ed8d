/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_msg.c -- a total decoder of etcd v3's gateway answers (etcd_msg.h).
 *
 * jansson parses the bytes (duplicate members refused: two values for one
 * field would be read one way here and maybe another elsewhere); then
 * every field is taken by one of the get_* below, which knows its type
 * (int64 or uint64 as a decimal string, bool, base64 bytes with a bound,
 * object, array with a bound) and defaults it when absent.  The first
 * wrong field ends the decoding, named by its path from the answer's root
 * ("responses[0].response_range.kvs[1].key").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "coord/etcd_msg.h"

/* a decoding: where it is in the answer, and where a fault goes */
struct dctx {
	char path[160];
	size_t plen;
	struct etcd_status *st;
};

static int
bad(struct dctx *c, const char *fmt, ...)
{
	char *m = c->st->message;
	size_t size = sizeof(c->st->message);
	int n;
	va_list ap;

	c->st->code = 0;
	n = snprintf(m, size, "etcd answer: %s%s", c->path, c->plen ? ": " : "");
	if (n < 0 || (size_t)n >= size)
		return -1;
	va_start(ap, fmt);
	vsnprintf(m + n, size - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* into member name (or index i when name is NULL); returns where to pop to */
static size_t
push(struct dctx *c, const char *name, size_t i)
{
	size_t old = c->plen;
	int n;

	if (name != NULL)
		n = snprintf(c->path + old, sizeof(c->path) - old, "%s%s",
			old ? "." : "", name);
	else
		n = snprintf(c->path + old, sizeof(c->path) - old, "[%zu]", i);
	if (n > 0)
		c->plen = old + (size_t)n < sizeof(c->path) ? old + (size_t)n :
			sizeof(c->path) - 1;
	return old;
}

static void
pop(struct dctx *c, size_t old)
{
	c->plen = old;
	c->path[old] = '\0';
}

/*
 * A decimal string in [min, max] (negative only when min < 0): digits, no
 * sign but one '-', no leading zero, no space -- what Go's strconv writes.
 */
static int
parse_dec(struct dctx *c, json_t *v, int64_t min, uint64_t max, uint64_t *mag,
	bool *neg)
{
	const char *s;
	size_t len, i = 0;
	uint64_t acc = 0;

	if (!json_is_string(v))
		return bad(c, "not an integer string");
	s = json_string_value(v);
	len = json_string_length(v);
	*neg = len > 0 && s[0] == '-';
	if (*neg) {
		if (min >= 0)
			return bad(c, "negative");
		i = 1;
	}
	if (i == len)
		return bad(c, "not an integer string");
	if (s[i] == '0' && len - i > 1)
		return bad(c, "not an integer string (leading zero)");
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return bad(c, "not an integer string");
		unsigned d = (unsigned)(s[i] - '0');

		if (acc > (UINT64_MAX - d) / 10)
			return bad(c, "integer out of range");
		acc = acc * 10 + d;
	}
	/* |min| as uint64 without overflow: -(min + 1) + 1 */
	if ((*neg && acc > (uint64_t)(-(min + 1)) + 1) || (!*neg && acc > max))
		return bad(c, "integer out of range");
	*mag = acc;
	return 0;
}

/*
 * Member name of o as a decimal string in [min, max] (parse_dec, the
 * member named in its error): 0 with *mag 0 when absent, -1 when bad.
 */
static int
dec_member(struct dctx *c, json_t *o, const char *name, int64_t min, uint64_t max,
	uint64_t *mag, bool *neg)
{
	json_t *v = json_object_get(o, name);
	size_t at;
	int ret;

	*mag = 0;
	*neg = false;
	if (v == NULL)
		return 0;
	at = push(c, name, 0);
	ret = parse_dec(c, v, min, max, mag, neg);
	pop(c, at);
	return ret;
}

/* member name of o: an int64 string, 0 when absent */
static int
get_i64(struct dctx *c, json_t *o, const char *name, int64_t *out)
{
	uint64_t mag;
	bool neg;

	*out = 0;
	if (dec_member(c, o, name, INT64_MIN, INT64_MAX, &mag, &neg))
		return -1;
	/* mag <= 2^63 when neg: -(int64_t)(mag - 1) - 1 never overflows */
	*out = neg ? -(int64_t)(mag - 1) - 1 : (int64_t)mag;
	return 0;
}

static int
get_u64(struct dctx *c, json_t *o, const char *name, uint64_t *out)
{
	bool neg;

	if (dec_member(c, o, name, 0, UINT64_MAX, out, &neg)) {
		*out = 0;
		return -1;
	}
	return 0;
}

/* a non-negative int64 (revisions, counts, versions) */
static int
get_count(struct dctx *c, json_t *o, const char *name, int64_t *out)
{
	uint64_t mag;
	bool neg;

	*out = 0;
	if (dec_member(c, o, name, 0, INT64_MAX, &mag, &neg))
		return -1;
	*out = (int64_t)mag;
	return 0;
}

/*
 * Member name of o, of the JSON type json_typeof() calls kind: *out, or
 * NULL when absent (etcd omits zero and false members); -1 naming the
 * member when it has another type.
 */
static int
member(struct dctx *c, json_t *o, const char *name, json_type kind,
	const char *what, json_t **out)
{
	json_t *v = json_object_get(o, name);
	size_t at;

	*out = NULL;
	if (v == NULL)
		return 0;
	/* true and false are two types to jansson, one to JSON */
	if (json_typeof(v) != kind &&
	    !(kind == JSON_TRUE && json_is_boolean(v))) {
		at = push(c, name, 0);
		bad(c, "not %s", what);
		pop(c, at);
		return -1;
	}
	*out = v;
	return 0;
}

static int
get_bool(struct dctx *c, json_t *o, const char *name, bool *out)
{
	json_t *v;
	int ret = member(c, o, name, JSON_TRUE, "a boolean", &v);

	*out = v != NULL && json_is_true(v);
	return ret;
}

/* a text member, kept up to the buffer's size ("" when absent) */
static int
get_text(struct dctx *c, json_t *o, const char *name, char *buf, size_t size)
{
	json_t *v;
	int ret = member(c, o, name, JSON_STRING, "a string", &v);

	snprintf(buf, size, "%s", v != NULL ? json_string_value(v) : "");
	return ret;
}

/* the member's object, or *out = NULL when absent */
static int
get_obj(struct dctx *c, json_t *o, const char *name, json_t **out)
{
	return member(c, o, name, JSON_OBJECT, "an object", out);
}

/* the member's array of at most max elements (*out NULL when absent) */
static int
get_arr(struct dctx *c, json_t *o, const char *name, size_t max, json_t **out)
{
	size_t at;

	if (member(c, o, name, JSON_ARRAY, "an array", out))
		return -1;
	if (*out != NULL && json_array_size(*out) > max) {
		at = push(c, name, 0);
		bad(c, "more than %zu elements", max);
		pop(c, at);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* base64 text v decoded into *b, at most max bytes */
static int
take_bytes(struct dctx *c, json_t *v, size_t max, struct etcd_bytes *b)
{
	const char *why = NULL;
	size_t len;
	long n;

	if (!json_is_string(v))
		return bad(c, "not a base64 string");
	len = json_string_length(v);
	if (len / 4 * 3 > max + 2)
		return bad(c, "longer than %zu bytes", max);
	if (len == 0)
		return 0;
	if ((b->p = malloc(len / 4 * 3 + 1)) == NULL)
		return bad(c, "out of memory");
	if ((n = etcd_b64_decode(json_string_value(v), len, b->p, &why)) < 0)
		return bad(c, "%s", why);
	if ((size_t)n > max)
		return bad(c, "longer than %zu bytes", max);
	b->p[n] = '\0';
	b->len = (size_t)n;
	return 0;
}

static int
get_bytes(struct dctx *c, json_t *o, const char *name, size_t max,
	struct etcd_bytes *b)
{
	json_t *v = json_object_get(o, name);
	size_t at;
	int ret;

	if (v == NULL)
		return 0;
	at = push(c, name, 0);
	ret = take_bytes(c, v, max, b);
	pop(c, at);
	return ret;
}

static int
dec_header(struct dctx *c, json_t *o, struct etcd_header *h)
{
	json_t *ho;
	size_t at;
	int ret;

	if (get_obj(c, o, "header", &ho))
		return -1;
	if (ho == NULL)
		return 0;
	at = push(c, "header", 0);
	ret = get_u64(c, ho, "cluster_id", &h->cluster_id) ||
		get_u64(c, ho, "member_id", &h->member_id) ||
		get_count(c, ho, "revision", &h->revision) ||
		get_u64(c, ho, "raft_term", &h->raft_term);
	pop(c, at);
	return ret ? -1 : 0;
}

static int
dec_kv(struct dctx *c, json_t *o, struct etcd_kv *kv)
{
	if (!json_is_object(o))
		return bad(c, "not an object");
	return get_bytes(c, o, "key", ETCD_KEY_MAX, &kv->key) ||
		get_bytes(c, o, "value", ETCD_VALUE_MAX, &kv->value) ||
		get_count(c, o, "create_revision", &kv->create_revision) ||
		get_count(c, o, "mod_revision", &kv->mod_revision) ||
		get_count(c, o, "version", &kv->version) ||
		get_i64(c, o, "lease", &kv->lease) ? -1 : 0;
}

/* one element of an array, into *out (an element of the caller's array) */
typedef int dec_elem_fn(struct dctx *c, json_t *e, void *out);

/*
 * The array member name of o (at most max elements), each element decoded
 * by fn into a fresh array of elem_size bytes each: *arr and *n (NULL and 0
 * when absent or empty).  On a failure *arr and *n hold what was decoded
 * so far, for the caller's free, and the path names the element at fault.
 */
static int
dec_array(struct dctx *c, json_t *o, const char *name, size_t max, size_t elem_size,
	dec_elem_fn *fn, void **arr, size_t *n)
{
	json_t *a, *e;
	size_t at, i;

	*arr = NULL;
	*n = 0;
	if (get_arr(c, o, name, max, &a))
		return -1;
	if (a == NULL || json_array_size(a) == 0)
		return 0;
	if ((*arr = calloc(json_array_size(a), elem_size)) == NULL)
		return bad(c, "%s: out of memory", name);
	at = push(c, name, 0);
	json_array_foreach(a, i, e) {
		size_t at2 = push(c, NULL, i);

		*n = i + 1;
		if (fn(c, e, (char *)*arr + i * elem_size))
			return -1;	/* the path stays: it names the fault */
		pop(c, at2);
	}
	pop(c, at);
	return 0;
}

static int
kv_elem(struct dctx *c, json_t *e, void *out)
{
	return dec_kv(c, e, out);
}

/* array member name of kvs into r->kvs */
static int
dec_kvs(struct dctx *c, json_t *o, const char *name, struct etcd_range *r)
{
	void *arr;
	int ret = dec_array(c, o, name, ETCD_KVS_MAX, sizeof(*r->kvs), kv_elem,
		&arr, &r->n_kvs);

	r->kvs = arr;
	return ret;
}

/* a range's, put's or delete's answer object */
static int
dec_range_obj(struct dctx *c, json_t *o, enum etcd_op_kind op, struct etcd_range *r)
{
	json_t *prev;

	if (dec_header(c, o, &r->header))
		return -1;
	switch (op) {
	case ETCD_OP_RANGE:
		return dec_kvs(c, o, "kvs", r) || get_count(c, o, "count", &r->count) ||
			get_bool(c, o, "more", &r->more) ? -1 : 0;
	case ETCD_OP_DELETE:
		return get_count(c, o, "deleted", &r->deleted) ||
			dec_kvs(c, o, "prev_kvs", r) ? -1 : 0;
	case ETCD_OP_PUT:
		if (get_obj(c, o, "prev_kv", &prev))
			return -1;
		if (prev == NULL)
			return 0;
		if ((r->kvs = calloc(1, sizeof(*r->kvs))) == NULL)
			return bad(c, "out of memory");
		r->n_kvs = 1;
		push(c, "prev_kv", 0);
		return dec_kv(c, prev, &r->kvs[0]);
	}
	return bad(c, "unknown op kind");
}

/*
 * Whether buf has at most ETCD_VALUES_MAX JSON values, counted before
 * parsing (a value begins the text or follows '[', ':' or ',' outside
 * strings): jansson's tree takes some 200 bytes per value, so the count
 * bounds what a hostile answer can make it allocate.
 */
static bool
values_ok(const char *buf, size_t len)
{
	size_t n = 1;
	bool in_str = false;

	for (size_t i = 0; i < len; i++) {
		char ch = buf[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = false;
		} else if (ch == '"') {
			in_str = true;
		} else if ((ch == '[' || ch == ':' || ch == ',') && ++n > ETCD_VALUES_MAX) {
			return false;
		}
	}
	return true;
}

/*
 * The answer's root object.  etcd's errors come as {"error": text,
 * "message": text, "code": n} from a unary call and as {"error": {
 * "grpc_code": n, "message": text, ...}} inside a stream: either is
 * ETCD_DEC_ERROR, with its code and message.
 */
static int
dec_root(struct dctx *c, const char *buf, size_t len, json_t **root)
{
	json_error_t je;
	json_t *err, *code;
	char msg[ETCD_TEXT_MAX];

	memset(c->st, 0, sizeof(*c->st));
	c->plen = 0;
	c->path[0] = '\0';
	*root = NULL;
	if (len > ETCD_ANSWER_MAX)
		return bad(c, "longer than %u bytes", ETCD_ANSWER_MAX);
	if (!values_ok(buf, len))
		return bad(c, "more than %u JSON values", ETCD_VALUES_MAX);
	if ((*root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return bad(c, "not JSON (%s at byte %d)", je.text, je.position);
	if (!json_is_object(*root))
		return bad(c, "not an object");
	if ((err = json_object_get(*root, "error")) == NULL)
		return ETCD_DEC_OK;
	json_t *o = json_is_object(err) ? err : *root;
	const char *code_name = json_is_object(err) ? "grpc_code" : "code";

	if (!json_is_object(err) && !json_is_string(err))
		return bad(c, "error: neither a string nor an object");
	if (json_is_object(err))
		push(c, "error", 0);
	if (get_text(c, o, "message", msg, sizeof(msg)))
		return -1;
	code = json_object_get(o, code_name);
	if (code != NULL && (!json_is_integer(code) || json_integer_value(code) < 0 ||
			json_integer_value(code) > 1000)) {
		push(c, code_name, 0);
		return bad(c, "not a gRPC code");
	}
	/* the unary form's "error" and "message" say the same; keep one */
	if (msg[0] == '\0' && json_is_string(err))
		snprintf(msg, sizeof(msg), "%s", json_string_value(err));
	c->st->code = code != NULL ? json_integer_value(code) : 0;
	snprintf(c->st->message, sizeof(c->st->message), "%s",
		msg[0] ? msg : "an error without a message");
	return ETCD_DEC_ERROR;
}

static enum etcd_dec
finish(json_t *root, int ret)
{
	json_decref(root);
	return ret < 0 ? ETCD_DEC_BAD : ret == ETCD_DEC_ERROR ? ETCD_DEC_ERROR :
		ETCD_DEC_OK;
}

enum etcd_dec
etcd_dec_error(const char *buf, size_t len, struct etcd_status *st)
{
	struct dctx c = { .st = st };
	json_t *root = NULL;
	int ret = dec_root(&c, buf, len, &root);	/* before root is read */

	return finish(root, ret);
}

/* a lease's key: base64 text */
static int
key_elem(struct dctx *c, json_t *e, void *out)
{
	return take_bytes(c, e, ETCD_KEY_MAX, out);
}

enum etcd_dec
etcd_dec_lease(const char *buf, size_t len, enum etcd_lease_call call,
	struct etcd_lease *out, struct etcd_status *st)
{
	struct dctx c = { .st = st };
	json_t *root = NULL, *o;
	void *arr;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = dec_root(&c, buf, len, &root)) != ETCD_DEC_OK)
		return finish(root, ret);
	o = root;
	/* keepalive is a stream on the gateway: each answer in "result" */
	if (call == ETCD_LEASE_KEEPALIVE) {
		if (get_obj(&c, root, "result", &o))
			return finish(root, -1);
		if (o == NULL)
			return finish(root, bad(&c, "result: missing"));
		push(&c, "result", 0);
	}
	if (dec_header(&c, o, &out->header) || get_i64(&c, o, "ID", &out->id))
		return finish(root, -1);
	if (call == ETCD_LEASE_REVOKE)
		return finish(root, 0);
	/* timetolive's TTL is -1 for a lease etcd does not have */
	if (get_i64(&c, o, "TTL", &out->ttl))
		return finish(root, -1);
	if (out->ttl < (call == ETCD_LEASE_TIMETOLIVE ? -1 : 0)) {
		push(&c, "TTL", 0);
		return finish(root, bad(&c, "negative"));
	}
	if (call != ETCD_LEASE_TIMETOLIVE)
		return finish(root, 0);
	if (get_i64(&c, o, "grantedTTL", &out->granted_ttl))
		return finish(root, -1);
	ret = dec_array(&c, o, "keys", ETCD_KVS_MAX, sizeof(*out->keys), key_elem,
		&arr, &out->n_keys);
	out->keys = arr;
	return finish(root, ret ? -1 : 0);
}

enum etcd_dec
etcd_dec_op(const char *buf, size_t len, enum etcd_op_kind op,
	struct etcd_range *out, struct etcd_status *st)
{
	struct dctx c = { .st = st };
	json_t *root = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = dec_root(&c, buf, len, &root)) != ETCD_DEC_OK)
		return finish(root, ret);
	return finish(root, dec_range_obj(&c, root, op, out));
}

static const struct {
	const char *name;
	enum etcd_op_kind kind;
} response_kinds[] = {
	{ "response_range", ETCD_OP_RANGE },
	{ "response_put", ETCD_OP_PUT },
	{ "response_delete_range", ETCD_OP_DELETE },
};

/* one of a txn's responses: exactly one of the kinds above */
static int
dec_response(struct dctx *c, json_t *e, struct etcd_op_result *r)
{
	json_t *o = NULL;
	const char *name = NULL;

	if (!json_is_object(e))
		return bad(c, "not an object");
	for (size_t k = 0; k < sizeof(response_kinds) / sizeof(response_kinds[0]); k++) {
		json_t *v = json_object_get(e, response_kinds[k].name);

		if (v == NULL)
			continue;
		if (o != NULL)
			return bad(c, "both %s and %s", name, response_kinds[k].name);
		o = v;
		name = response_kinds[k].name;
		r->kind = response_kinds[k].kind;
	}
	if (o == NULL)
		return bad(c, "none of response_range, response_put, response_delete_range");
	push(c, name, 0);
	if (!json_is_object(o))
		return bad(c, "not an object");
	return dec_range_obj(c, o, r->kind, &r->r);
}

static int
response_elem(struct dctx *c, json_t *e, void *out)
{
	return dec_response(c, e, out);
}

enum etcd_dec
etcd_dec_txn(const char *buf, size_t len, struct etcd_txn_result *out,
	struct etcd_status *st)
{
	struct dctx c = { .st = st };
	json_t *root = NULL;
	void *arr;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = dec_root(&c, buf, len, &root)) != ETCD_DEC_OK)
		return finish(root, ret);
	if (dec_header(&c, root, &out->header) ||
			get_bool(&c, root, "succeeded", &out->succeeded))
		return finish(root, -1);
	ret = dec_array(&c, root, "responses", ETCD_OPS_MAX, sizeof(*out->responses),
		response_elem, &arr, &out->n_responses);
	out->responses = arr;
	return finish(root, ret ? -1 : 0);
}

static int
dec_event(struct dctx *c, json_t *e, struct etcd_event *ev)
{
	char type[16];
	json_t *kv, *prev;
	size_t at;

	if (!json_is_object(e))
		return bad(c, "not an object");
	/* PUT is etcd's 0: omitted */
	if (get_text(c, e, "type", type, sizeof(type)))
		return -1;
	if (type[0] == '\0' || strcmp(type, "PUT") == 0) {
		ev->type = ETCD_EV_PUT;
	} else if (strcmp(type, "DELETE") == 0) {
		ev->type = ETCD_EV_DELETE;
	} else {
		push(c, "type", 0);
		return bad(c, "neither PUT nor DELETE");
	}
	if (get_obj(c, e, "kv", &kv) || get_obj(c, e, "prev_kv", &prev))
		return -1;
	if (kv == NULL)
		return bad(c, "kv: missing");
	at = push(c, "kv", 0);
	if (dec_kv(c, kv, &ev->kv))
		return -1;
	pop(c, at);
	if (prev == NULL)
		return 0;
	ev->has_prev_kv = true;
	push(c, "prev_kv", 0);
	return dec_kv(c, prev, &ev->prev_kv);
}

static int
event_elem(struct dctx *c, json_t *e, void *out)
{
	return dec_event(c, e, out);
}

enum etcd_dec
etcd_dec_watch(const char *buf, size_t len, struct etcd_watch_result *out,
	struct etcd_status *st)
{
	struct dctx c = { .st = st };
	json_t *root = NULL, *o;
	void *arr;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = dec_root(&c, buf, len, &root)) != ETCD_DEC_OK)
		return finish(root, ret);
	if (get_obj(&c, root, "result", &o))
		return finish(root, -1);
	if (o == NULL)
		return finish(root, bad(&c, "result: missing"));
	push(&c, "result", 0);
	if (dec_header(&c, o, &out->header) ||
			get_i64(&c, o, "watch_id", &out->watch_id) ||
			get_bool(&c, o, "created", &out->created) ||
			get_bool(&c, o, "canceled", &out->canceled) ||
			get_count(&c, o, "compact_revision", &out->compact_revision) ||
			get_text(&c, o, "cancel_reason", out->cancel_reason,
				sizeof(out->cancel_reason)))
		return finish(root, -1);
	ret = dec_array(&c, o, "events", ETCD_EVENTS_MAX, sizeof(*out->events),
		event_elem, &arr, &out->n_events);
	out->events = arr;
	return finish(root, ret ? -1 : 0);
}

static void
kv_free(struct etcd_kv *kv)
{
	free(kv->key.p);
	free(kv->value.p);
}

void
etcd_lease_free(struct etcd_lease *l)
{
	for (size_t i = 0; i < l->n_keys; i++)
		free(l->keys[i].p);
	free(l->keys);
	memset(l, 0, sizeof(*l));
}

void
etcd_range_free(struct etcd_range *r)
{
	for (size_t i = 0; i < r->n_kvs; i++)
		kv_free(&r->kvs[i]);
	free(r->kvs);
	memset(r, 0, sizeof(*r));
}

void
etcd_txn_result_free(struct etcd_txn_result *t)
{
	for (size_t i = 0; i < t->n_responses; i++)
		etcd_range_free(&t->responses[i].r);
	free(t->responses);
	memset(t, 0, sizeof(*t));
}

void
etcd_watch_result_free(struct etcd_watch_result *w)
{
	for (size_t i = 0; i < w->n_events; i++) {
		kv_free(&w->events[i].kv);
		kv_free(&w->events[i].prev_kv);
	}
	free(w->events);
	memset(w, 0, sizeof(*w));
}
