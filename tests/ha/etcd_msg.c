/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_msg.c -- etcd's JSON gateway answers as etcd 3.4.23 wrote them on
 * loopback (each shape a failover uses, as literals), the fields etcd omits
 * read as 0/false/empty, and every kind of wrong answer refused with the
 * field it names; the requests encoded and read back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "coord/etcd_msg.h"
#include "unit.h"

#define HDR "\"header\":{\"cluster_id\":\"324952591200643719\"," \
	"\"member_id\":\"3319814642761637952\",\"revision\":\"2\",\"raft_term\":\"2\"}"
#define K_LEADER "L3JwbWEtcmVwbC9jMS9sZWFkZXI="	/* /rpma-repl/c1/leader */
#define V_NODE1 "eyJub2RlIjoxfQ=="			/* {"node":1} */
#define LEASE1 "2324035736161171974"

static bool
bytes_are(const struct etcd_bytes *b, const char *s)
{
	return b->len == strlen(s) && (b->len == 0 || memcmp(b->p, s, b->len) == 0);
}

/* --- the shapes etcd answers ----------------------------------------------- */

static void
grant(void)
{
	const char *a = "{" HDR ",\"ID\":\"" LEASE1 "\",\"TTL\":\"4\"}";
	struct etcd_lease l;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_GRANT, &l, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.id, 2324035736161171974LL);
	CU_ASSERT_EQUAL(l.ttl, 4);
	CU_ASSERT_EQUAL(l.header.cluster_id, 324952591200643719ULL);
	CU_ASSERT_EQUAL(l.header.member_id, 3319814642761637952ULL);
	CU_ASSERT_EQUAL(l.header.revision, 2);
	CU_ASSERT_EQUAL(l.header.raft_term, 2);
	etcd_lease_free(&l);
}

static void
txn_taken(void)
{
	const char *a = "{" HDR ",\"succeeded\":true,\"responses\":[{\"response_put\":"
		"{\"header\":{\"revision\":\"2\"}}}]}";
	struct etcd_txn_result t;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_OK);
	CU_ASSERT(t.succeeded);
	CU_ASSERT_EQUAL_FATAL(t.n_responses, 1);
	CU_ASSERT_EQUAL(t.responses[0].kind, ETCD_OP_PUT);
	CU_ASSERT_EQUAL(t.responses[0].r.header.revision, 2);
	/* omitted: the header's other fields */
	CU_ASSERT_EQUAL(t.responses[0].r.header.raft_term, 0);
	CU_ASSERT_EQUAL(t.responses[0].r.n_kvs, 0);
	etcd_txn_result_free(&t);
}

/* a second node's attempt: no "succeeded" (false), the holder returned */
static void
txn_holder(void)
{
	const char *a = "{" HDR ",\"responses\":[{\"response_range\":{\"header\":"
		"{\"revision\":\"2\"},\"kvs\":[{\"key\":\"" K_LEADER "\","
		"\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\","
		"\"value\":\"" V_NODE1 "\",\"lease\":\"" LEASE1 "\"}],\"count\":\"1\"}}]}";
	struct etcd_txn_result t;
	struct etcd_status st;
	const struct etcd_kv *kv;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_OK);
	CU_ASSERT_FALSE(t.succeeded);
	CU_ASSERT_EQUAL_FATAL(t.n_responses, 1);
	CU_ASSERT_EQUAL(t.responses[0].kind, ETCD_OP_RANGE);
	CU_ASSERT_EQUAL(t.responses[0].r.count, 1);
	CU_ASSERT_FALSE(t.responses[0].r.more);
	CU_ASSERT_EQUAL_FATAL(t.responses[0].r.n_kvs, 1);
	kv = &t.responses[0].r.kvs[0];
	CU_ASSERT(bytes_are(&kv->key, "/rpma-repl/c1/leader"));
	CU_ASSERT(bytes_are(&kv->value, "{\"node\":1}"));
	CU_ASSERT_EQUAL(kv->key.p[kv->key.len], '\0');
	CU_ASSERT_EQUAL(kv->create_revision, 2);
	CU_ASSERT_EQUAL(kv->mod_revision, 2);
	CU_ASSERT_EQUAL(kv->version, 1);
	CU_ASSERT_EQUAL(kv->lease, 2324035736161171974LL);
	etcd_txn_result_free(&t);
}

/* a CAS that failed: the header alone */
static void
txn_failed_bare(void)
{
	const char *a = "{" HDR "}";
	struct etcd_txn_result t;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_OK);
	CU_ASSERT_FALSE(t.succeeded);
	CU_ASSERT_EQUAL(t.n_responses, 0);
	CU_ASSERT_PTR_NULL(t.responses);
	CU_ASSERT_EQUAL(t.header.revision, 2);
	etcd_txn_result_free(&t);
}

static void
keepalive(void)
{
	const char *a = "{\"result\":{" HDR ",\"ID\":\"" LEASE1 "\",\"TTL\":\"4\"}}";
	struct etcd_lease l;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_KEEPALIVE, &l, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.id, 2324035736161171974LL);
	CU_ASSERT_EQUAL(l.ttl, 4);
	CU_ASSERT_EQUAL(l.header.revision, 2);
	etcd_lease_free(&l);
}

/* an expired lease's keepalive: HTTP 200, no TTL */
static void
keepalive_expired(void)
{
	const char *a = "{\"result\":{" HDR ",\"ID\":\"" LEASE1 "\"}}";
	struct etcd_lease l;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_KEEPALIVE, &l, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.ttl, 0);
	CU_ASSERT_EQUAL(l.id, 2324035736161171974LL);
	etcd_lease_free(&l);
}

static void
keepalive_without_result(void)
{
	const char *a = "{" HDR ",\"ID\":\"" LEASE1 "\",\"TTL\":\"4\"}";
	struct etcd_lease l;
	struct etcd_status st;

	CU_ASSERT_EQUAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_KEEPALIVE, &l, &st),
		ETCD_DEC_BAD);
	CU_ASSERT_STRING_EQUAL(st.message, "etcd answer: result: missing");
	etcd_lease_free(&l);
}

static void
timetolive(void)
{
	const char *a = "{" HDR ",\"ID\":\"" LEASE1 "\",\"TTL\":\"3\",\"grantedTTL\":\"4\","
		"\"keys\":[\"" K_LEADER "\"]}";
	const char *gone = "{" HDR ",\"ID\":\"" LEASE1 "\",\"TTL\":\"-1\"}";
	struct etcd_lease l;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_TIMETOLIVE, &l, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.ttl, 3);
	CU_ASSERT_EQUAL(l.granted_ttl, 4);
	CU_ASSERT_EQUAL_FATAL(l.n_keys, 1);
	CU_ASSERT(bytes_are(&l.keys[0], "/rpma-repl/c1/leader"));
	etcd_lease_free(&l);
	CU_ASSERT_EQUAL_FATAL(etcd_dec_lease(gone, strlen(gone), ETCD_LEASE_TIMETOLIVE,
		&l, &st), ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.ttl, -1);
	etcd_lease_free(&l);
	/* -1 is timetolive's alone */
	CU_ASSERT_EQUAL(etcd_dec_lease(gone, strlen(gone), ETCD_LEASE_GRANT, &l, &st),
		ETCD_DEC_BAD);
	CU_ASSERT_STRING_EQUAL(st.message, "etcd answer: TTL: negative");
	etcd_lease_free(&l);
}

static void
revoke_and_count(void)
{
	const char *a = "{" HDR "}";
	struct etcd_lease l;
	struct etcd_range r;
	struct etcd_status st;

	CU_ASSERT_EQUAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_REVOKE, &l, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.header.revision, 2);
	etcd_lease_free(&l);
	/* count_only on a deleted key: no "count", so 0 */
	CU_ASSERT_EQUAL_FATAL(etcd_dec_op(a, strlen(a), ETCD_OP_RANGE, &r, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(r.count, 0);
	CU_ASSERT_EQUAL(r.n_kvs, 0);
	etcd_range_free(&r);
}

static void
delete_answer(void)
{
	const char *a = "{" HDR ",\"deleted\":\"3\"}";
	struct etcd_range r;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_op(a, strlen(a), ETCD_OP_DELETE, &r, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(r.deleted, 3);
	etcd_range_free(&r);
}

static void
error_lease_not_found(void)
{
	const char *a = "{\"error\":\"etcdserver: requested lease not found\","
		"\"message\":\"etcdserver: requested lease not found\",\"code\":5}";
	struct etcd_range r;
	struct etcd_status st;

	CU_ASSERT_EQUAL(etcd_dec_op(a, strlen(a), ETCD_OP_PUT, &r, &st), ETCD_DEC_ERROR);
	CU_ASSERT_EQUAL(st.code, 5);
	CU_ASSERT_STRING_EQUAL(st.message, "etcdserver: requested lease not found");
	etcd_range_free(&r);
	CU_ASSERT_EQUAL(etcd_dec_error(a, strlen(a), &st), ETCD_DEC_ERROR);
	CU_ASSERT_EQUAL(etcd_dec_error("{" HDR "}", strlen("{" HDR "}"), &st), ETCD_DEC_OK);
}

static void
error_bad_request(void)
{
	const char *a = "{\"error\":\"unknown value \\\"NOPE\\\" for enum "
		"etcdserverpb.Compare_CompareTarget\",\"code\":3}";
	struct etcd_txn_result t;
	struct etcd_status st;

	CU_ASSERT_EQUAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_ERROR);
	CU_ASSERT_EQUAL(st.code, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(st.message, "Compare_CompareTarget"));
	etcd_txn_result_free(&t);
}

/* a stream's error: wrapped, grpc_code */
static void
error_in_stream(void)
{
	const char *a = "{\"error\":{\"grpc_code\":14,\"http_code\":503,"
		"\"message\":\"etcdserver: no leader\",\"http_status\":\"Service Unavailable\"}}";
	struct etcd_watch_result w;
	struct etcd_status st;

	CU_ASSERT_EQUAL(etcd_dec_watch(a, strlen(a), &w, &st), ETCD_DEC_ERROR);
	CU_ASSERT_EQUAL(st.code, 14);
	CU_ASSERT_STRING_EQUAL(st.message, "etcdserver: no leader");
	etcd_watch_result_free(&w);
}

static void
watch_created(void)
{
	const char *a = "{\"result\":{" HDR ",\"created\":true}}";
	struct etcd_watch_result w;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_watch(a, strlen(a), &w, &st), ETCD_DEC_OK);
	CU_ASSERT(w.created);
	CU_ASSERT_FALSE(w.canceled);
	CU_ASSERT_EQUAL(w.watch_id, 0);
	CU_ASSERT_EQUAL(w.n_events, 0);
	etcd_watch_result_free(&w);
}

static void
watch_put_and_delete(void)
{
	const char *put = "{\"result\":{" HDR ",\"events\":[{\"kv\":{\"key\":\"" K_LEADER
		"\",\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\","
		"\"value\":\"" V_NODE1 "\",\"lease\":\"" LEASE1 "\"}}]}}";
	const char *del = "{\"result\":{" HDR ",\"events\":[{\"type\":\"DELETE\",\"kv\":"
		"{\"key\":\"" K_LEADER "\",\"mod_revision\":\"6\"},\"prev_kv\":{\"key\":\""
		K_LEADER "\",\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\","
		"\"value\":\"" V_NODE1 "\",\"lease\":\"" LEASE1 "\"}}]}}";
	struct etcd_watch_result w;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_watch(put, strlen(put), &w, &st), ETCD_DEC_OK);
	CU_ASSERT_EQUAL_FATAL(w.n_events, 1);
	CU_ASSERT_EQUAL(w.events[0].type, ETCD_EV_PUT);	/* no "type": PUT */
	CU_ASSERT(bytes_are(&w.events[0].kv.value, "{\"node\":1}"));
	CU_ASSERT_FALSE(w.events[0].has_prev_kv);
	etcd_watch_result_free(&w);

	CU_ASSERT_EQUAL_FATAL(etcd_dec_watch(del, strlen(del), &w, &st), ETCD_DEC_OK);
	CU_ASSERT_EQUAL_FATAL(w.n_events, 1);
	CU_ASSERT_EQUAL(w.events[0].type, ETCD_EV_DELETE);
	CU_ASSERT(bytes_are(&w.events[0].kv.key, "/rpma-repl/c1/leader"));
	CU_ASSERT_EQUAL(w.events[0].kv.mod_revision, 6);
	CU_ASSERT_EQUAL(w.events[0].kv.value.len, 0);
	CU_ASSERT(w.events[0].has_prev_kv);
	CU_ASSERT_EQUAL(w.events[0].prev_kv.lease, 2324035736161171974LL);
	CU_ASSERT(bytes_are(&w.events[0].prev_kv.value, "{\"node\":1}"));
	etcd_watch_result_free(&w);
}

static void
watch_canceled(void)
{
	const char *a = "{\"result\":{" HDR ",\"canceled\":true,\"compact_revision\":\"9\","
		"\"cancel_reason\":\"mvcc: required revision has been compacted\"}}";
	struct etcd_watch_result w;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_watch(a, strlen(a), &w, &st), ETCD_DEC_OK);
	CU_ASSERT(w.canceled);
	CU_ASSERT_EQUAL(w.compact_revision, 9);
	CU_ASSERT_STRING_EQUAL(w.cancel_reason, "mvcc: required revision has been compacted");
	etcd_watch_result_free(&w);
}

/* --- wrong answers: each refused, naming its field ------------------------- */

static void
txn_bad(const char *a, const char *want)
{
	struct etcd_txn_result t;
	struct etcd_status st;

	CU_ASSERT_EQUAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_BAD);
	if (strcmp(st.message, want) != 0)
		printf("\n  answer %s\n  want   %s\n  got    %s\n", a, want, st.message);
	CU_ASSERT_STRING_EQUAL(st.message, want);
	etcd_txn_result_free(&t);
}

#define KV_WITH(f) "{\"responses\":[{\"response_range\":{\"kvs\":[{\"key\":\"" \
	K_LEADER "\"}," f "]}}]}"

static void
bad_integers(void)
{
	txn_bad("{\"header\":{\"revision\":2}}",
		"etcd answer: header.revision: not an integer string");
	txn_bad("{\"header\":{\"revision\":\"abc\"}}",
		"etcd answer: header.revision: not an integer string");
	txn_bad("{\"header\":{\"revision\":\"\"}}",
		"etcd answer: header.revision: not an integer string");
	txn_bad("{\"header\":{\"revision\":\"+1\"}}",
		"etcd answer: header.revision: not an integer string");
	txn_bad("{\"header\":{\"revision\":\" 1\"}}",
		"etcd answer: header.revision: not an integer string");
	txn_bad("{\"header\":{\"revision\":\"01\"}}",
		"etcd answer: header.revision: not an integer string (leading zero)");
	txn_bad("{\"header\":{\"revision\":\"-1\"}}",
		"etcd answer: header.revision: negative");
	txn_bad("{\"header\":{\"revision\":\"9223372036854775808\"}}",
		"etcd answer: header.revision: integer out of range");
	txn_bad("{\"header\":{\"raft_term\":\"18446744073709551616\"}}",
		"etcd answer: header.raft_term: integer out of range");
	txn_bad("{\"header\":{\"member_id\":\"99999999999999999999999999\"}}",
		"etcd answer: header.member_id: integer out of range");
	txn_bad(KV_WITH("{\"key\":\"" K_LEADER "\",\"lease\":\"-9223372036854775809\"}"),
		"etcd answer: responses[0].response_range.kvs[1].lease: integer out of range");
	txn_bad(KV_WITH("{\"key\":\"" K_LEADER "\",\"version\":1.5}"),
		"etcd answer: responses[0].response_range.kvs[1].version: not an integer string");
}

static void
int64_limits(void)
{
	const char *a = "{\"header\":{\"raft_term\":\"18446744073709551615\","
		"\"revision\":\"9223372036854775807\"},\"ID\":\"-9223372036854775808\","
		"\"TTL\":\"0\"}";
	struct etcd_lease l;
	struct etcd_status st;

	CU_ASSERT_EQUAL_FATAL(etcd_dec_lease(a, strlen(a), ETCD_LEASE_GRANT, &l, &st),
		ETCD_DEC_OK);
	CU_ASSERT_EQUAL(l.header.raft_term, UINT64_MAX);
	CU_ASSERT_EQUAL(l.header.revision, INT64_MAX);
	CU_ASSERT_EQUAL(l.id, INT64_MIN);
	etcd_lease_free(&l);
}

static void
bad_base64(void)
{
	txn_bad(KV_WITH("{\"key\":\"L3Jw!A==\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: a byte outside the alphabet");
	txn_bad(KV_WITH("{\"key\":\"L3J\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: length not a multiple of 4");
	txn_bad(KV_WITH("{\"key\":\"QR==\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: nonzero bits under the padding");
	txn_bad(KV_WITH("{\"key\":\"QQ==QUFB\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: padding before the end");
	txn_bad(KV_WITH("{\"key\":\"QUE=QQ==\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: padding before the end");
	txn_bad(KV_WITH("{\"key\":\"Q=Q=\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: padding before the end");
	txn_bad(KV_WITH("{\"key\":\"QUFB\\nQUFB\"}"),
		"etcd answer: responses[0].response_range.kvs[1].key: base64: length not a multiple of 4");
	txn_bad(KV_WITH("{\"value\":7}"),
		"etcd answer: responses[0].response_range.kvs[1].value: not a base64 string");
}

/*
 * What OpenSSL's EVP_DecodeBlock alone would take, and etcd_b64_decode must
 * not: whitespace around a text of whole quanta, '=' read as a zero
 * sextet, bits under one '=' (the byte it would count as decoded).
 */
static void
b64_strict_where_openssl_is_lenient(void)
{
	const struct {
		const char *text;
		size_t len;
		const char *why;
	} cases[] = {
		{ "  QUFB  ", 8, "base64: a byte outside the alphabet" },
		{ "QUFB    ", 8, "base64: a byte outside the alphabet" },
		{ "\tQUFBQU=", 8, "base64: a byte outside the alphabet" },
		{ "QU\0B", 4, "base64: a byte outside the alphabet" },
		{ "====", 4, "base64: padding before the end" },
		{ "A===", 4, "base64: padding before the end" },
		{ "QUFBA===", 8, "base64: padding before the end" },
		{ "QUJ=", 4, "base64: nonzero bits under the padding" },
		{ "QUFBQUF=", 8, "base64: nonzero bits under the padding" },
	};
	uint8_t out[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;

		CU_ASSERT_EQUAL(etcd_b64_decode(cases[i].text, cases[i].len, out,
			&why), -1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(why);
		CU_ASSERT_STRING_EQUAL(why, cases[i].why);
	}
}

/* the padded last quantum writes only its decoded bytes into out */
static void
b64_writes_only_what_it_decodes(void)
{
	const char *texts[] = { "QQ==", "QUE=", "QUFBQQ==" };
	long want[] = { 1, 2, 4 };

	for (size_t i = 0; i < 3; i++) {
		uint8_t out[8];
		const char *why = NULL;

		memset(out, 0xa5, sizeof(out));
		CU_ASSERT_EQUAL_FATAL(etcd_b64_decode(texts[i], strlen(texts[i]),
			out, &why), want[i]);
		CU_ASSERT(memcmp(out, "AAAA", (size_t)want[i]) == 0);
		for (size_t k = (size_t)want[i]; k < sizeof(out); k++)
			CU_ASSERT_EQUAL(out[k], 0xa5);
	}
}

static void
b64_both_ways(void)
{
	uint8_t in[40], out[40];
	char text[64];
	const char *why = NULL;

	for (size_t n = 0; n <= sizeof(in); n++) {
		for (size_t i = 0; i < n; i++)
			in[i] = (uint8_t)(i * 37 + n);
		etcd_b64_encode(in, n, text);
		CU_ASSERT_EQUAL(strlen(text), etcd_b64_len(n));
		CU_ASSERT_EQUAL(etcd_b64_decode(text, strlen(text), out, &why), (long)n);
		CU_ASSERT(memcmp(in, out, n) == 0);
	}
	etcd_b64_encode((const uint8_t *)"/rpma-repl/c1/leader", 20, text);
	CU_ASSERT_STRING_EQUAL(text, K_LEADER);
}

static void
wrong_types(void)
{
	txn_bad("{\"succeeded\":\"true\"}", "etcd answer: succeeded: not a boolean");
	txn_bad("{\"header\":[]}", "etcd answer: header: not an object");
	txn_bad("{\"responses\":{}}", "etcd answer: responses: not an array");
	txn_bad("{\"responses\":[7]}", "etcd answer: responses[0]: not an object");
	txn_bad("{\"responses\":[{}]}", "etcd answer: responses[0]: none of "
		"response_range, response_put, response_delete_range");
	txn_bad("{\"responses\":[{\"response_put\":{},\"response_range\":{}}]}",
		"etcd answer: responses[0]: both response_range and response_put");
	txn_bad("{\"responses\":[{\"response_put\":[]}]}",
		"etcd answer: responses[0].response_put: not an object");
	txn_bad(KV_WITH("3"), "etcd answer: responses[0].response_range.kvs[1]: not an object");
	txn_bad("{\"responses\":[{\"response_range\":{\"kvs\":{}}}]}",
		"etcd answer: responses[0].response_range.kvs: not an array");
	txn_bad("{\"responses\":[{\"response_range\":{\"more\":1}}]}",
		"etcd answer: responses[0].response_range.more: not a boolean");
	txn_bad("{\"error\":[]}", "etcd answer: error: neither a string nor an object");
	txn_bad("{\"error\":\"x\",\"code\":\"5\"}", "etcd answer: code: not a gRPC code");
	txn_bad("{\"error\":\"x\",\"code\":1e30}", "etcd answer: code: not a gRPC code");
	txn_bad("{\"error\":{\"grpc_code\":-1}}",
		"etcd answer: error.grpc_code: not a gRPC code");
	txn_bad("{\"error\":{\"message\":5}}", "etcd answer: error.message: not a string");
}

static void
watch_bad(void)
{
	const char *cases[][2] = {
		{ "{\"result\":{\"events\":[{\"type\":\"NOPE\",\"kv\":{}}]}}",
		  "etcd answer: result.events[0].type: neither PUT nor DELETE" },
		{ "{\"result\":{\"events\":[{}]}}",
		  "etcd answer: result.events[0]: kv: missing" },
		{ "{\"result\":{\"events\":[{\"kv\":{},\"prev_kv\":{\"key\":\"%\"}}]}}",
		  "etcd answer: result.events[0].prev_kv.key: base64: length not a multiple of 4" },
		{ "{\"result\":{\"created\":\"yes\"}}",
		  "etcd answer: result.created: not a boolean" },
		{ "{\"result\":{\"cancel_reason\":1}}",
		  "etcd answer: result.cancel_reason: not a string" },
		{ "{\"header\":{}}", "etcd answer: result: missing" },
		{ "{\"result\":[]}", "etcd answer: result: not an object" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct etcd_watch_result w;
		struct etcd_status st;

		CU_ASSERT_EQUAL(etcd_dec_watch(cases[i][0], strlen(cases[i][0]), &w, &st),
			ETCD_DEC_BAD);
		if (strcmp(st.message, cases[i][1]) != 0)
			printf("\n  want %s\n  got  %s\n", cases[i][1], st.message);
		CU_ASSERT_STRING_EQUAL(st.message, cases[i][1]);
		etcd_watch_result_free(&w);
	}
}

/* not JSON, or not an object: "etcd answer: not ..." */
static void
not_json(void)
{
	const char *cases[] = {
		"", "{", "{\"header\":{\"revision\":\"2\"", "{\"succeeded\":tru}",
		"{\"a\":1,\"a\":2}", "{} {}", "\xff\xfe", "\"x\"", "7",
	};
	struct etcd_txn_result t;
	struct etcd_status st;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL(etcd_dec_txn(cases[i], strlen(cases[i]), &t, &st),
			ETCD_DEC_BAD);
		CU_ASSERT(strncmp(st.message, "etcd answer: not JSON (", 23) == 0);
		etcd_txn_result_free(&t);
	}
	txn_bad("[1]", "etcd answer: not an object");
	/* a NUL inside is not JSON either */
	CU_ASSERT_EQUAL(etcd_dec_txn("{\"a\":\"\0\"}", 9, &t, &st), ETCD_DEC_BAD);
	etcd_txn_result_free(&t);
}

/* bounds: a hostile answer cannot make the decoder take all memory */
static void
bounds(void)
{
	size_t n = ETCD_KVS_MAX + 1, cap = 32 + n * 4;
	char *a = malloc(cap), *p;
	struct etcd_txn_result t;
	struct etcd_status st;

	CU_ASSERT_FATAL(a != NULL);
	p = a + sprintf(a, "{\"responses\":[{\"response_range\":{\"kvs\":[");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s{}", i ? "," : "");
	sprintf(p, "]}}]}");
	CU_ASSERT_EQUAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_BAD);
	CU_ASSERT_STRING_EQUAL(st.message,
		"etcd answer: responses[0].response_range.kvs: more than 1024 elements");
	etcd_txn_result_free(&t);
	free(a);

	/* a value of ETCD_VALUE_MAX + 3 bytes */
	size_t vlen = ETCD_VALUE_MAX + 3;
	uint8_t *v = calloc(1, vlen);
	char *b64 = malloc(etcd_b64_len(vlen) + 1);

	CU_ASSERT_FATAL(v != NULL && b64 != NULL);
	etcd_b64_encode(v, vlen, b64);
	a = malloc(strlen(b64) + 64);
	CU_ASSERT_FATAL(a != NULL);
	sprintf(a, "{\"prev_kv\":{\"value\":\"%s\"}}", b64);
	struct etcd_range r;

	CU_ASSERT_EQUAL(etcd_dec_op(a, strlen(a), ETCD_OP_PUT, &r, &st), ETCD_DEC_BAD);
	CU_ASSERT_STRING_EQUAL(st.message,
		"etcd answer: prev_kv.value: longer than 1048576 bytes");
	etcd_range_free(&r);
	free(a);
	free(b64);
	free(v);

	/* many small values: refused before jansson builds their tree */
	a = malloc(ETCD_VALUES_MAX * 3 + 16);
	CU_ASSERT_FATAL(a != NULL);
	p = a + sprintf(a, "{\"x\":[");
	for (size_t i = 0; i < ETCD_VALUES_MAX; i++)
		p += sprintf(p, "%s{}", i ? "," : "");
	sprintf(p, "]}");
	CU_ASSERT_EQUAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_BAD);
	CU_ASSERT_STRING_EQUAL(st.message, "etcd answer: more than 65536 JSON values");
	/* the same inside a string is one value */
	a[5] = '"';
	p[0] = '"';
	p[1] = '}';
	CU_ASSERT_EQUAL(etcd_dec_txn(a, strlen(a), &t, &st), ETCD_DEC_OK);
	etcd_txn_result_free(&t);
	free(a);

	/* the answer itself */
	a = malloc(ETCD_ANSWER_MAX + 1);
	CU_ASSERT_FATAL(a != NULL);
	memset(a, ' ', ETCD_ANSWER_MAX + 1);
	CU_ASSERT_EQUAL(etcd_dec_txn(a, ETCD_ANSWER_MAX + 1, &t, &st), ETCD_DEC_BAD);
	CU_ASSERT_STRING_EQUAL(st.message, "etcd answer: longer than 4194304 bytes");
	free(a);
}

/* --- requests -------------------------------------------------------------- */

static json_t *
parsed(char *body)
{
	json_error_t je;
	json_t *j;

	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	j = json_loads(body, JSON_REJECT_DUPLICATES, &je);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	free(body);
	return j;
}

/* base64 member name of o, decoded, equals s */
static bool
b64_is(json_t *o, const char *name, const void *s, size_t len)
{
	const char *t = json_string_value(json_object_get(o, name));
	uint8_t buf[256];
	const char *why;
	long n;

	if (t == NULL || strlen(t) / 4 * 3 > sizeof(buf))
		return false;
	n = etcd_b64_decode(t, strlen(t), buf, &why);
	return n == (long)len && memcmp(buf, s, len) == 0;
}

static const char *
str(json_t *o, const char *name)
{
	const char *s = json_string_value(json_object_get(o, name));

	return s != NULL ? s : "(absent)";
}

static void
enc_lease(void)
{
	json_t *j = parsed(etcd_enc_lease_grant(4, NULL));

	CU_ASSERT_STRING_EQUAL(str(j, "TTL"), "4");
	json_decref(j);
	j = parsed(etcd_enc_lease_id(2324035736161171974LL, NULL));
	CU_ASSERT_STRING_EQUAL(str(j, "ID"), LEASE1);
	json_decref(j);
	j = parsed(etcd_enc_lease_timetolive(-5, true, NULL));
	CU_ASSERT_STRING_EQUAL(str(j, "ID"), "-5");
	CU_ASSERT(json_is_true(json_object_get(j, "keys")));
	json_decref(j);
}

static void
enc_txn(void)
{
	const char *k = "/rpma-repl/c1/leader";
	struct etcd_compare cmp[] = {
		{ .target = ETCD_CMP_CREATE, .key = (const uint8_t *)k, .key_len = strlen(k) },
		{ .target = ETCD_CMP_MOD, .result = ETCD_CMP_NOT_EQUAL,
		  .key = (const uint8_t *)k, .key_len = strlen(k), .number = 7 },
		{ .target = ETCD_CMP_VALUE, .result = ETCD_CMP_GREATER,
		  .key = (const uint8_t *)k, .key_len = strlen(k),
		  .value = (const uint8_t *)"n1", .value_len = 2 },
		{ .target = ETCD_CMP_LEASE, .result = ETCD_CMP_LESS,
		  .key = (const uint8_t *)k, .key_len = strlen(k), .number = 42 },
		{ .target = ETCD_CMP_VERSION, .key = (const uint8_t *)k,
		  .key_len = strlen(k), .number = 0 },
	};
	struct etcd_op ok[] = {
		{ .kind = ETCD_OP_PUT, .key = (const uint8_t *)k, .key_len = strlen(k),
		  .value = (const uint8_t *)"{\"node\":1}", .value_len = 10,
		  .lease = 2324035736161171974LL },
		{ .kind = ETCD_OP_DELETE, .key = (const uint8_t *)"/a/", .key_len = 3,
		  .range_end = (const uint8_t *)"/a0", .range_end_len = 3 },
	};
	struct etcd_op no[] = {
		{ .kind = ETCD_OP_RANGE, .key = (const uint8_t *)k, .key_len = strlen(k),
		  .count_only = true, .limit = 3 },
	};
	struct etcd_txn t = { cmp, 5, ok, 2, no, 1 };
	json_t *j = parsed(etcd_enc_txn(&t, NULL)), *c, *o;

	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(j, "compare")), 5);
	c = json_array_get(json_object_get(j, "compare"), 0);
	CU_ASSERT(b64_is(c, "key", k, strlen(k)));
	CU_ASSERT_STRING_EQUAL(str(c, "target"), "CREATE");
	CU_ASSERT_STRING_EQUAL(str(c, "result"), "EQUAL");
	CU_ASSERT_STRING_EQUAL(str(c, "create_revision"), "0");
	c = json_array_get(json_object_get(j, "compare"), 1);
	CU_ASSERT_STRING_EQUAL(str(c, "target"), "MOD");
	CU_ASSERT_STRING_EQUAL(str(c, "result"), "NOT_EQUAL");
	CU_ASSERT_STRING_EQUAL(str(c, "mod_revision"), "7");
	c = json_array_get(json_object_get(j, "compare"), 2);
	CU_ASSERT_STRING_EQUAL(str(c, "result"), "GREATER");
	CU_ASSERT(b64_is(c, "value", "n1", 2));
	c = json_array_get(json_object_get(j, "compare"), 3);
	CU_ASSERT_STRING_EQUAL(str(c, "target"), "LEASE");
	CU_ASSERT_STRING_EQUAL(str(c, "result"), "LESS");
	CU_ASSERT_STRING_EQUAL(str(c, "lease"), "42");
	c = json_array_get(json_object_get(j, "compare"), 4);
	CU_ASSERT_STRING_EQUAL(str(c, "version"), "0");
	o = json_object_get(json_array_get(json_object_get(j, "success"), 0), "request_put");
	CU_ASSERT(b64_is(o, "value", "{\"node\":1}", 10));
	CU_ASSERT_STRING_EQUAL(str(o, "lease"), LEASE1);
	o = json_object_get(json_array_get(json_object_get(j, "success"), 1),
		"request_delete_range");
	CU_ASSERT(b64_is(o, "range_end", "/a0", 3));
	o = json_object_get(json_array_get(json_object_get(j, "failure"), 0), "request_range");
	CU_ASSERT(json_is_true(json_object_get(o, "count_only")));
	CU_ASSERT_STRING_EQUAL(str(o, "limit"), "3");
	CU_ASSERT_PTR_NULL(json_object_get(o, "range_end"));
	json_decref(j);
}

static void
enc_watch(void)
{
	uint8_t end[16];
	size_t n = etcd_prefix_end((const uint8_t *)"/rpma-repl/c1/", 14, end);
	json_t *j = parsed(etcd_enc_watch_create((const uint8_t *)"/rpma-repl/c1/", 14,
		end, n, 12, true, NULL)), *o;

	o = json_object_get(j, "create_request");
	CU_ASSERT_STRING_EQUAL(str(o, "key"), "L3JwbWEtcmVwbC9jMS8=");
	CU_ASSERT_STRING_EQUAL(str(o, "range_end"), "L3JwbWEtcmVwbC9jMTA=");
	CU_ASSERT_STRING_EQUAL(str(o, "start_revision"), "12");
	CU_ASSERT(json_is_true(json_object_get(o, "prev_kv")));
	json_decref(j);
}

static void
prefix_end(void)
{
	uint8_t out[4];

	CU_ASSERT_EQUAL(etcd_prefix_end((const uint8_t *)"/a/", 3, out), 3);
	CU_ASSERT(memcmp(out, "/a0", 3) == 0);
	CU_ASSERT_EQUAL(etcd_prefix_end((const uint8_t *)"a\xff\xff", 3, out), 1);
	CU_ASSERT_EQUAL(out[0], 'b');
	CU_ASSERT_EQUAL(etcd_prefix_end((const uint8_t *)"\xff\xff", 2, out), 1);
	CU_ASSERT_EQUAL(out[0], 0);
	CU_ASSERT_EQUAL(etcd_prefix_end((const uint8_t *)"", 0, out), 1);
	CU_ASSERT_EQUAL(out[0], 0);
}

static void
enc_refusals(void)
{
	static uint8_t big[ETCD_VALUE_MAX + 1];
	struct etcd_op put = { .kind = ETCD_OP_PUT, .key = (const uint8_t *)"k",
		.key_len = 1, .value = big, .value_len = sizeof(big) };
	struct etcd_op empty = { .kind = ETCD_OP_RANGE };
	struct etcd_op longkey = { .kind = ETCD_OP_RANGE, .key = big,
		.key_len = ETCD_KEY_MAX + 1 };
	static struct etcd_op many[ETCD_OPS_MAX + 1];
	struct etcd_txn t = { NULL, 0, many, ETCD_OPS_MAX + 1, NULL, 0 };
	const char *err;

	CU_ASSERT_PTR_NULL(etcd_enc_op(&put, &err));
	CU_ASSERT_STRING_EQUAL(err, "etcd request: value longer than ETCD_VALUE_MAX");
	CU_ASSERT_PTR_NULL(etcd_enc_op(&empty, &err));
	CU_ASSERT_STRING_EQUAL(err, "etcd request: empty key");
	CU_ASSERT_PTR_NULL(etcd_enc_op(&longkey, &err));
	CU_ASSERT_STRING_EQUAL(err, "etcd request: key longer than ETCD_KEY_MAX");
	CU_ASSERT_PTR_NULL(etcd_enc_txn(&t, &err));
	CU_ASSERT_PTR_NOT_NULL(err);
	CU_ASSERT_PTR_NULL(etcd_enc_lease_grant(0, &err));
	CU_ASSERT_STRING_EQUAL(err, "etcd request: lease TTL not positive");
	/* a txn whose op is refused is refused whole */
	t.n_success = 1;
	many[0] = empty;
	CU_ASSERT_PTR_NULL(etcd_enc_txn(&t, &err));
	CU_ASSERT_STRING_EQUAL(err, "etcd request: empty key");
}

UNIT_MAIN("etcd_msg",
	UNIT_CASE(grant), UNIT_CASE(txn_taken), UNIT_CASE(txn_holder),
	UNIT_CASE(txn_failed_bare), UNIT_CASE(keepalive), UNIT_CASE(keepalive_expired),
	UNIT_CASE(keepalive_without_result), UNIT_CASE(timetolive),
	UNIT_CASE(revoke_and_count), UNIT_CASE(delete_answer),
	UNIT_CASE(error_lease_not_found), UNIT_CASE(error_bad_request),
	UNIT_CASE(error_in_stream), UNIT_CASE(watch_created),
	UNIT_CASE(watch_put_and_delete), UNIT_CASE(watch_canceled),
	UNIT_CASE(bad_integers), UNIT_CASE(int64_limits), UNIT_CASE(bad_base64),
	UNIT_CASE(b64_both_ways), UNIT_CASE(b64_strict_where_openssl_is_lenient),
	UNIT_CASE(b64_writes_only_what_it_decodes), UNIT_CASE(wrong_types),
	UNIT_CASE(watch_bad),
	UNIT_CASE(not_json), UNIT_CASE(bounds), UNIT_CASE(enc_lease),
	UNIT_CASE(enc_txn), UNIT_CASE(enc_watch), UNIT_CASE(prefix_end),
	UNIT_CASE(enc_refusals))
