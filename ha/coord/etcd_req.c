/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_req.c -- the JSON bodies of etcd v3's gateway requests (etcd_msg.h).
 *
 * int64 fields go as JSON strings, as etcd writes them (the gateway takes
 * both; strings keep values past 2^53 exact whatever reads them on the
 * way).  Keys and values go as base64.  An encoder refuses what breaks the
 * bounds the decoders hold etcd's answers to, so a request never makes an
 * answer this side would refuse.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "coord/etcd_msg.h"

static int
set_i64(json_t *o, const char *name, int64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRId64, v);
	return json_object_set_new(o, name, json_string(s));
}

static int
set_bytes(json_t *o, const char *name, const uint8_t *p, size_t len)
{
	char *s = malloc(etcd_b64_len(len) + 1);
	int ret;

	if (s == NULL)
		return -1;
	etcd_b64_encode(p, len, s);
	ret = json_object_set_new(o, name, json_string(s));
	free(s);
	return ret;
}

/* the body as text; root is released (NULL with *err unset: no memory) */
static char *
dump(json_t *root, int failed, const char **err)
{
	char *s = NULL;

	(void)err;
	if (root != NULL && !failed)
		s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

static bool
refuse(const char **err, const char *why)
{
	if (err != NULL)
		*err = why;
	return false;
}

static bool
key_ok(const uint8_t *key, size_t len, const char **err)
{
	if (key == NULL || len == 0)
		return refuse(err, "etcd request: empty key");
	if (len > ETCD_KEY_MAX)
		return refuse(err, "etcd request: key longer than ETCD_KEY_MAX");
	return true;
}

char *
etcd_enc_lease_grant(int64_t ttl_s, const char **err)
{
	json_t *o;

	if (err != NULL)
		*err = NULL;
	if (ttl_s <= 0) {
		refuse(err, "etcd request: lease TTL not positive");
		return NULL;
	}
	o = json_object();
	return dump(o, o == NULL || set_i64(o, "TTL", ttl_s), err);
}

char *
etcd_enc_lease_id(int64_t id, const char **err)
{
	json_t *o = json_object();

	if (err != NULL)
		*err = NULL;
	return dump(o, o == NULL || set_i64(o, "ID", id), err);
}

char *
etcd_enc_lease_timetolive(int64_t id, bool keys, const char **err)
{
	json_t *o = json_object();

	if (err != NULL)
		*err = NULL;
	return dump(o, o == NULL || set_i64(o, "ID", id) ||
		(keys && json_object_set_new(o, "keys", json_true())), err);
}

/* op's fields into a new object (NULL: refused or out of memory) */
static json_t *
op_object(const struct etcd_op *op, const char **err)
{
	json_t *o;
	int f = 0;

	if (!key_ok(op->key, op->key_len, err))
		return NULL;
	if (op->range_end != NULL &&
			(op->range_end_len == 0 || op->range_end_len > ETCD_KEY_MAX)) {
		refuse(err, "etcd request: range_end empty or longer than ETCD_KEY_MAX");
		return NULL;
	}
	if (op->kind == ETCD_OP_PUT && op->value_len > ETCD_VALUE_MAX) {
		refuse(err, "etcd request: value longer than ETCD_VALUE_MAX");
		return NULL;
	}
	if (op->kind != ETCD_OP_RANGE && op->kind != ETCD_OP_PUT &&
			op->kind != ETCD_OP_DELETE) {
		refuse(err, "etcd request: unknown op kind");
		return NULL;
	}
	if ((o = json_object()) == NULL)
		return NULL;
	f |= set_bytes(o, "key", op->key, op->key_len);
	if (op->kind != ETCD_OP_PUT && op->range_end != NULL)
		f |= set_bytes(o, "range_end", op->range_end, op->range_end_len);
	if (op->kind == ETCD_OP_PUT) {
		f |= set_bytes(o, "value", op->value, op->value_len);
		if (op->lease != 0)
			f |= set_i64(o, "lease", op->lease);
	}
	if (op->kind == ETCD_OP_RANGE) {
		if (op->limit > 0)
			f |= set_i64(o, "limit", op->limit);
		if (op->count_only)
			f |= json_object_set_new(o, "count_only", json_true());
	}
	if (f) {
		json_decref(o);
		return NULL;
	}
	return o;
}

char *
etcd_enc_op(const struct etcd_op *op, const char **err)
{
	if (err != NULL)
		*err = NULL;
	json_t *o = op_object(op, err);

	return dump(o, o == NULL, err);
}

static const char *const target_name[] = {
	[ETCD_CMP_VERSION] = "VERSION", [ETCD_CMP_CREATE] = "CREATE",
	[ETCD_CMP_MOD] = "MOD", [ETCD_CMP_VALUE] = "VALUE",
	[ETCD_CMP_LEASE] = "LEASE",
};
/* the compare's field that holds what the target is compared with */
static const char *const target_field[] = {
	[ETCD_CMP_VERSION] = "version", [ETCD_CMP_CREATE] = "create_revision",
	[ETCD_CMP_MOD] = "mod_revision", [ETCD_CMP_VALUE] = "value",
	[ETCD_CMP_LEASE] = "lease",
};
static const char *const result_name[] = {
	[ETCD_CMP_EQUAL] = "EQUAL", [ETCD_CMP_GREATER] = "GREATER",
	[ETCD_CMP_LESS] = "LESS", [ETCD_CMP_NOT_EQUAL] = "NOT_EQUAL",
};

static json_t *
compare_object(const struct etcd_compare *c, const char **err)
{
	json_t *o;
	int f = 0;

	if (!key_ok(c->key, c->key_len, err))
		return NULL;
	if ((unsigned)c->target > ETCD_CMP_LEASE ||
			(unsigned)c->result > ETCD_CMP_NOT_EQUAL) {
		refuse(err, "etcd request: unknown compare target or result");
		return NULL;
	}
	if (c->target == ETCD_CMP_VALUE && c->value_len > ETCD_VALUE_MAX) {
		refuse(err, "etcd request: compared value longer than ETCD_VALUE_MAX");
		return NULL;
	}
	if ((o = json_object()) == NULL)
		return NULL;
	f |= set_bytes(o, "key", c->key, c->key_len);
	f |= json_object_set_new(o, "target", json_string(target_name[c->target]));
	f |= json_object_set_new(o, "result", json_string(result_name[c->result]));
	if (c->target == ETCD_CMP_VALUE)
		f |= set_bytes(o, "value", c->value, c->value_len);
	else
		f |= set_i64(o, target_field[c->target], c->number);
	if (f) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static const char *const request_name[] = {
	[ETCD_OP_RANGE] = "request_range", [ETCD_OP_PUT] = "request_put",
	[ETCD_OP_DELETE] = "request_delete_range",
};

/* ops as a txn's list under name in root; nonzero when refused */
static int
add_ops(json_t *root, const char *name, const struct etcd_op *ops, size_t n,
	const char **err)
{
	json_t *a = json_array();

	if (a == NULL || json_object_set_new(root, name, a))
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *o = op_object(&ops[i], err);
		json_t *w = o != NULL ? json_object() : NULL;

		if (w == NULL || json_object_set_new(w, request_name[ops[i].kind], o) ||
				json_array_append_new(a, w)) {
			if (w == NULL)
				json_decref(o);
			return -1;
		}
	}
	return 0;
}

char *
etcd_enc_txn(const struct etcd_txn *t, const char **err)
{
	json_t *root, *cmp;
	int f = 0;

	if (err != NULL)
		*err = NULL;
	if (t->n_compare > ETCD_OPS_MAX || t->n_success > ETCD_OPS_MAX ||
			t->n_failure > ETCD_OPS_MAX) {
		refuse(err, "etcd request: txn with more than ETCD_OPS_MAX compares or ops");
		return NULL;
	}
	if ((root = json_object()) == NULL)
		return dump(NULL, 1, err);
	if ((cmp = json_array()) == NULL || json_object_set_new(root, "compare", cmp))
		return dump(root, 1, err);
	for (size_t i = 0; i < t->n_compare && !f; i++) {
		json_t *c = compare_object(&t->compare[i], err);

		f = c == NULL || json_array_append_new(cmp, c);
	}
	f = f || add_ops(root, "success", t->success, t->n_success, err) ||
		add_ops(root, "failure", t->failure, t->n_failure, err);
	return dump(root, f, err);
}

char *
etcd_enc_watch_create(const uint8_t *key, size_t key_len,
	const uint8_t *range_end, size_t range_end_len,
	int64_t start_revision, bool prev_kv, const char **err)
{
	json_t *root, *o;
	int f = 0;

	if (err != NULL)
		*err = NULL;
	if (!key_ok(key, key_len, err))
		return NULL;
	if (range_end != NULL && (range_end_len == 0 || range_end_len > ETCD_KEY_MAX)) {
		refuse(err, "etcd request: range_end empty or longer than ETCD_KEY_MAX");
		return NULL;
	}
	if (start_revision < 0) {
		refuse(err, "etcd request: negative start_revision");
		return NULL;
	}
	if ((root = json_object()) == NULL || (o = json_object()) == NULL ||
			json_object_set_new(root, "create_request", o))
		return dump(root, 1, err);
	f |= set_bytes(o, "key", key, key_len);
	if (range_end != NULL)
		f |= set_bytes(o, "range_end", range_end, range_end_len);
	if (start_revision > 0)
		f |= set_i64(o, "start_revision", start_revision);
	if (prev_kv)
		f |= json_object_set_new(o, "prev_kv", json_true());
	return dump(root, f, err);
}

size_t
etcd_prefix_end(const uint8_t *prefix, size_t len, uint8_t *out)
{
	/* the last byte that can be incremented; the 0xff bytes after it go */
	for (size_t i = len; i > 0; i--) {
		if (prefix[i - 1] != 0xff) {
			for (size_t k = 0; k + 1 < i; k++)
				out[k] = prefix[k];
			out[i - 1] = (uint8_t)(prefix[i - 1] + 1);
			return i;
		}
	}
	out[0] = 0;
	return 1;
}
