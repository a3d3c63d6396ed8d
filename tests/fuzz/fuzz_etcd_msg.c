/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the etcd client's decoders (ha/coord/etcd_msg.c)
 * and its strict base64 on arbitrary bytes, as a broken or hostile etcd
 * (or what stands in its place) might answer.  Besides "no crash, no
 * over-read, no leak": a refusal names the answer ("etcd answer: ..."), an
 * error object has a message, and what is accepted keeps the bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coord/etcd_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static void
verdict(enum etcd_dec d, const struct etcd_status *st)
{
	CHECK(d == ETCD_DEC_OK || d == ETCD_DEC_ERROR || d == ETCD_DEC_BAD);
	CHECK(memchr(st->message, '\0', sizeof(st->message)) != NULL);
	if (d == ETCD_DEC_BAD)
		CHECK(strncmp(st->message, "etcd answer: ", 13) == 0);
	if (d == ETCD_DEC_ERROR)
		CHECK(st->message[0] != '\0');
}

static void
kv_ok(const struct etcd_kv *kv)
{
	CHECK(kv->key.len <= ETCD_KEY_MAX && kv->value.len <= ETCD_VALUE_MAX);
	CHECK(kv->key.len == 0 || kv->key.p[kv->key.len] == '\0');
	CHECK(kv->value.len == 0 || kv->value.p[kv->value.len] == '\0');
	CHECK(kv->create_revision >= 0 && kv->mod_revision >= 0 && kv->version >= 0);
}

static void
range_ok(const struct etcd_range *r)
{
	CHECK(r->n_kvs <= ETCD_KVS_MAX && r->count >= 0 && r->deleted >= 0);
	CHECK(r->header.revision >= 0);
	for (size_t i = 0; i < r->n_kvs; i++)
		kv_ok(&r->kvs[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct etcd_status st;
	enum etcd_dec d;

	for (int call = ETCD_LEASE_GRANT; call <= ETCD_LEASE_TIMETOLIVE; call++) {
		struct etcd_lease l;

		d = etcd_dec_lease(buf, size, call, &l, &st);
		verdict(d, &st);
		if (d == ETCD_DEC_OK) {
			CHECK(l.ttl >= (call == ETCD_LEASE_TIMETOLIVE ? -1 : 0));
			CHECK(l.n_keys <= ETCD_KVS_MAX);
		}
		etcd_lease_free(&l);
	}
	for (int op = ETCD_OP_RANGE; op <= ETCD_OP_DELETE; op++) {
		struct etcd_range r;

		d = etcd_dec_op(buf, size, op, &r, &st);
		verdict(d, &st);
		if (d == ETCD_DEC_OK)
			range_ok(&r);
		etcd_range_free(&r);
	}

	struct etcd_txn_result t;

	d = etcd_dec_txn(buf, size, &t, &st);
	verdict(d, &st);
	if (d == ETCD_DEC_OK) {
		CHECK(t.n_responses <= ETCD_OPS_MAX);
		for (size_t i = 0; i < t.n_responses; i++)
			range_ok(&t.responses[i].r);
	}
	etcd_txn_result_free(&t);

	struct etcd_watch_result w;

	d = etcd_dec_watch(buf, size, &w, &st);
	verdict(d, &st);
	if (d == ETCD_DEC_OK) {
		CHECK(w.n_events <= ETCD_EVENTS_MAX);
		for (size_t i = 0; i < w.n_events; i++) {
			kv_ok(&w.events[i].kv);
			kv_ok(&w.events[i].prev_kv);
		}
	}
	etcd_watch_result_free(&w);
	verdict(etcd_dec_error(buf, size, &st), &st);

	/* base64: what decodes encodes back to the same text */
	uint8_t *out = malloc(size / 4 * 3 + 1);
	const char *why = NULL;
	long n;

	CHECK(out != NULL);
	n = etcd_b64_decode(buf, size, out, &why);
	if (n >= 0) {
		char *again = malloc(etcd_b64_len((size_t)n) + 1);

		CHECK(again != NULL);
		etcd_b64_encode(out, (size_t)n, again);
		CHECK(strlen(again) == size && memcmp(again, buf, size) == 0);
		free(again);
	} else {
		CHECK(why != NULL);
	}
	free(out);
	return 0;
}
