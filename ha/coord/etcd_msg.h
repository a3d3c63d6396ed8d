/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_msg.h -- etcd v3's JSON gateway (etcd 3.4, /v3/...): requests
 * encoded and answers decoded, no I/O.  docs/design.md ("Coordinator (etcd)
 * client") has the rules; in short:
 *
 *   - keys and values are base64 (decoded strictly: etcd_b64_decode);
 *   - int64 and uint64 fields are JSON strings of decimal digits, checked
 *     against their type's range;
 *   - zero, false and empty fields are omitted by etcd, so a missing field
 *     is 0, false or empty; a present one of the wrong type is an error;
 *   - members this file does not know are ignored (a newer etcd may add);
 *   - sizes are bounded (ETCD_*_MAX): an answer's bytes and its count of
 *     JSON values before jansson parses it (4 MiB of "{}," would otherwise
 *     be a tree of 300 MB), then each array, key and value.
 *
 * A decoder takes any bytes and returns ETCD_DEC_OK with its struct filled,
 * ETCD_DEC_ERROR when the answer is etcd's error object (code and message
 * in *st), or ETCD_DEC_BAD with st->message naming the field that was
 * wrong ("etcd answer: header.revision: not an integer string").  On any
 * return the struct owns its allocations: free it with its _free().
 */
#ifndef REPL_ETCD_MSG_H
#define REPL_ETCD_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETCD_KEY_MAX 4096		/* bytes of a decoded key */
#define ETCD_VALUE_MAX (1u << 20)	/* bytes of a decoded value */
#define ETCD_KVS_MAX 1024		/* kvs of one range, keys of a lease */
#define ETCD_EVENTS_MAX 1024		/* events of one watch answer */
#define ETCD_OPS_MAX 64			/* compares, ops, responses of a txn */
#define ETCD_ANSWER_MAX (4u << 20)	/* bytes of one answer (or line) */
#define ETCD_VALUES_MAX (1u << 16)	/* JSON values of one answer */
#define ETCD_TEXT_MAX 256		/* an error's message, kept */

enum etcd_dec {
	ETCD_DEC_BAD = -1,	/* not an answer of this kind: st->message */
	ETCD_DEC_OK = 0,
	ETCD_DEC_ERROR = 1,	/* etcd's error object: st->code, st->message */
};

struct etcd_status {
	int64_t code;		/* gRPC code of etcd's error (0: none) */
	char message[ETCD_TEXT_MAX];
};

struct etcd_bytes {
	uint8_t *p;		/* malloc'd, NUL after len bytes; NULL if empty */
	size_t len;
};

struct etcd_header {
	uint64_t cluster_id;
	uint64_t member_id;
	int64_t revision;
	uint64_t raft_term;
};

struct etcd_kv {
	struct etcd_bytes key, value;
	int64_t create_revision, mod_revision, version, lease;
};

/* a range's answer; also a delete's (deleted) and a put's (header only) */
struct etcd_range {
	struct etcd_header header;
	struct etcd_kv *kvs;
	size_t n_kvs;
	int64_t count;		/* range: keys in the range (count_only too) */
	bool more;
	int64_t deleted;	/* delete: keys deleted */
};

/* grant, keepalive, revoke, timetolive */
struct etcd_lease {
	struct etcd_header header;
	int64_t id;
	int64_t ttl;		/* seconds left; keepalive: 0 = expired */
	int64_t granted_ttl;	/* timetolive */
	struct etcd_bytes *keys;	/* timetolive with keys */
	size_t n_keys;
};

enum etcd_op_kind { ETCD_OP_RANGE = 1, ETCD_OP_PUT, ETCD_OP_DELETE };

struct etcd_txn_result {
	struct etcd_header header;
	bool succeeded;
	struct etcd_op_result {
		enum etcd_op_kind kind;
		struct etcd_range r;	/* the kind's answer */
	} *responses;
	size_t n_responses;
};

enum etcd_event_type { ETCD_EV_PUT = 0, ETCD_EV_DELETE = 1 };

struct etcd_event {
	enum etcd_event_type type;
	struct etcd_kv kv;
	bool has_prev_kv;
	struct etcd_kv prev_kv;
};

/* one line of a watch's stream */
struct etcd_watch_result {
	struct etcd_header header;
	int64_t watch_id;
	bool created, canceled;
	int64_t compact_revision;
	char cancel_reason[ETCD_TEXT_MAX];
	struct etcd_event *events;
	size_t n_events;
};

/* --- requests ------------------------------------------------------------ */

/* what a txn compares: the key's target against a value (etcd's names) */
enum etcd_target {
	ETCD_CMP_VERSION = 0, ETCD_CMP_CREATE, ETCD_CMP_MOD, ETCD_CMP_VALUE,
	ETCD_CMP_LEASE,
};
enum etcd_cmp_result {
	ETCD_CMP_EQUAL = 0, ETCD_CMP_GREATER, ETCD_CMP_LESS, ETCD_CMP_NOT_EQUAL,
};

struct etcd_compare {
	enum etcd_target target;
	enum etcd_cmp_result result;
	const uint8_t *key;
	size_t key_len;
	int64_t number;		/* VERSION, CREATE, MOD, LEASE */
	const uint8_t *value;	/* VALUE */
	size_t value_len;
};

/* a txn's op, or a single request of that kind */
struct etcd_op {
	enum etcd_op_kind kind;
	const uint8_t *key;
	size_t key_len;
	const uint8_t *range_end;	/* range, delete: NULL = the key alone */
	size_t range_end_len;
	const uint8_t *value;		/* put */
	size_t value_len;
	int64_t lease;			/* put: 0 = none */
	bool count_only;		/* range */
	int64_t limit;			/* range: 0 = none */
};

struct etcd_txn {
	const struct etcd_compare *compare;
	size_t n_compare;
	const struct etcd_op *success;
	size_t n_success;
	const struct etcd_op *failure;
	size_t n_failure;
};

/*
 * Each encoder returns a malloc'd NUL-terminated JSON body, or NULL when
 * out of memory (*err NULL) or when the request breaks a bound above (why
 * in *err when err is not NULL).
 */
char *etcd_enc_lease_grant(int64_t ttl_s, const char **err);
char *etcd_enc_lease_id(int64_t id, const char **err);	/* keepalive, revoke */
char *etcd_enc_lease_timetolive(int64_t id, bool keys, const char **err);
char *etcd_enc_op(const struct etcd_op *op, const char **err);	/* range, put, delete */
char *etcd_enc_txn(const struct etcd_txn *t, const char **err);
char *etcd_enc_watch_create(const uint8_t *key, size_t key_len,
	const uint8_t *range_end, size_t range_end_len,
	int64_t start_revision, bool prev_kv, const char **err);

/*
 * The range_end that makes [prefix, range_end) every key starting with
 * prefix: the prefix with its last byte below 0xff incremented and what
 * follows dropped; for a prefix of only 0xff bytes (or empty), the single
 * byte 0 (etcd: every key from the key on).  out has room for len bytes
 * (at least 1); returns the length written.
 */
size_t etcd_prefix_end(const uint8_t *prefix, size_t len, uint8_t *out);

/* standard base64 with padding; out has room for etcd_b64_len(len) + 1 */
size_t etcd_b64_len(size_t len);
void etcd_b64_encode(const uint8_t *in, size_t len, char *out);
/*
 * Strict: only the standard alphabet, a length that is a multiple of 4,
 * '=' only as the last one or two, and zero unused bits (so one string per
 * byte sequence).  out has room for len / 4 * 3 bytes.  Returns the
 * length decoded, or -1 (why in *why).
 */
long etcd_b64_decode(const char *in, size_t len, uint8_t *out,
	const char **why);

/* --- answers ------------------------------------------------------------- */

enum etcd_lease_call {
	ETCD_LEASE_GRANT, ETCD_LEASE_KEEPALIVE, ETCD_LEASE_REVOKE,
	ETCD_LEASE_TIMETOLIVE,
};

enum etcd_dec etcd_dec_lease(const char *buf, size_t len,
	enum etcd_lease_call call, struct etcd_lease *out, struct etcd_status *st);
/* a range's, put's or delete's answer (op says which) */
enum etcd_dec etcd_dec_op(const char *buf, size_t len, enum etcd_op_kind op,
	struct etcd_range *out, struct etcd_status *st);
enum etcd_dec etcd_dec_txn(const char *buf, size_t len,
	struct etcd_txn_result *out, struct etcd_status *st);
/*
 * Whether the answer is etcd's error object (ETCD_DEC_ERROR, with *st), some
 * other JSON object (ETCD_DEC_OK) or neither (ETCD_DEC_BAD): what a caller
 * asks before it knows which answer it has, e.g. of an HTTP 503.
 */
enum etcd_dec etcd_dec_error(const char *buf, size_t len, struct etcd_status *st);
/* one line of a watch stream ({"result":{...}} or {"error":...}) */
enum etcd_dec etcd_dec_watch(const char *buf, size_t len,
	struct etcd_watch_result *out, struct etcd_status *st);

void etcd_lease_free(struct etcd_lease *l);
void etcd_range_free(struct etcd_range *r);
void etcd_txn_result_free(struct etcd_txn_result *t);
void etcd_watch_result_free(struct etcd_watch_result *w);

#endif
