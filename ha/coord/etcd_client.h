/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_client.h -- a small etcd v3 client over etcd 3.4's JSON gateway
 * (libcurl; the bodies are etcd_msg.h's).  docs/design.md ("Coordinator
 * (etcd) client") says why this shape.
 *
 * Endpoints are tried in order from the last one that answered.  A call
 * moves on to the next endpoint only when its request cannot have been
 * applied: nothing was sent (refused, unresolved, a TLS or connect
 * failure or timeout), or etcd answered Unavailable (gRPC code 14: "no
 * leader", "leader changed"), as Patroni's driver does.  A request sent
 * and then lost (timeout, reset) ends the call: its outcome is unknown, and
 * only the caller knows whether to ask again.
 *
 * Threads: a client is used by one thread at a time (it has one easy
 * handle, one buffer, one last error; no lock).  A watch is its own object
 * with its own handles, run by one thread; etcd_watch_stop() may be called
 * from any thread while it runs.
 */
#ifndef REPL_ETCD_CLIENT_H
#define REPL_ETCD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_msg.h"

enum etcd_rc {
	ETCD_OK = 0,
	ETCD_E_INVAL,		/* a bad argument or configuration */
	ETCD_E_NOMEM,
	ETCD_E_UNREACHABLE,	/* no endpoint took the request */
	ETCD_E_TIMEOUT,		/* sent, no answer in time: outcome unknown */
	ETCD_E_IO,		/* sent, then the connection failed: outcome unknown */
	ETCD_E_PROTO,		/* an answer this side cannot read */
	ETCD_E_LEASE_NOT_FOUND,	/* etcd has no such lease (expired or revoked) */
	ETCD_E_SERVER,		/* another etcd error: etcd_client_server_code() */
	ETCD_E_CANCELED,	/* a watch canceled by etcd (e.g. compacted) */
	ETCD_E_CONTENDED,	/* a compare-and-swap lost every bounded retry */
};

const char *etcd_rc_name(enum etcd_rc rc);

struct etcd_client_cfg {
	const char *const *endpoints;	/* "http://host:port", "https://..." */
	size_t n_endpoints;
	int timeout_ms;		/* one attempt of a unary call; 0: 2000 */
	int connect_timeout_ms;	/* 0: the smaller of timeout_ms and 1000 */
	/* https: PEM files; NULL = the system's CAs, no client certificate */
	const char *ca_file, *cert_file, *key_file;
};

struct etcd_client;

/* NULL on failure, why in err (err_size bytes) */
struct etcd_client *etcd_client_new(const struct etcd_client_cfg *cfg,
	char *err, size_t err_size);
void etcd_client_free(struct etcd_client *c);
/* the last call's failure, naming the endpoint and path ("" after ETCD_OK) */
const char *etcd_client_error(const struct etcd_client *c);
/* the gRPC code of the last ETCD_E_SERVER (0 otherwise) */
int64_t etcd_client_server_code(const struct etcd_client *c);
/* the endpoint the next call tries first */
const char *etcd_client_endpoint(const struct etcd_client *c);
/* the HTTP requests sent so far, every attempt on every endpoint counted */
uint64_t etcd_client_requests(const struct etcd_client *c);

enum etcd_rc etcd_lease_grant(struct etcd_client *c, int64_t ttl_s,
	int64_t *id, int64_t *ttl);
/*
 * *ttl: seconds etcd gives the lease from now, 0 when it has expired.
 * *sent_ns (if not NULL): CLOCK_MONOTONIC when the answered request
 * started; the lease is valid for *ttl seconds from then, not from the
 * answer's arrival (etcd's clock ran from its receipt, later).
 */
enum etcd_rc etcd_lease_keepalive(struct etcd_client *c, int64_t id,
	int64_t *ttl, uint64_t *sent_ns);
enum etcd_rc etcd_lease_revoke(struct etcd_client *c, int64_t id);
/* ETCD_E_LEASE_NOT_FOUND when etcd has no such lease (its TTL -1) */
enum etcd_rc etcd_lease_timetolive(struct etcd_client *c, int64_t id,
	bool keys, struct etcd_lease *out);

/* out is filled on ETCD_OK (free it with etcd_range_free), zeroed otherwise */
enum etcd_rc etcd_get(struct etcd_client *c, const void *key, size_t key_len,
	struct etcd_range *out);
enum etcd_rc etcd_get_prefix(struct etcd_client *c, const void *prefix,
	size_t len, bool count_only, struct etcd_range *out);
/* every key in [key, end), in key order, at one revision */
enum etcd_rc etcd_get_range(struct etcd_client *c, const void *key,
	size_t key_len, const void *end, size_t end_len, struct etcd_range *out);
/* lease 0: none; hdr may be NULL */
enum etcd_rc etcd_put(struct etcd_client *c, const void *key, size_t key_len,
	const void *value, size_t value_len, int64_t lease,
	struct etcd_header *hdr);
/* the key, or every key under it when prefix; deleted may be NULL */
enum etcd_rc etcd_delete(struct etcd_client *c, const void *key,
	size_t key_len, bool prefix, int64_t *deleted);
/* out filled on ETCD_OK (etcd_txn_result_free) */
enum etcd_rc etcd_txn(struct etcd_client *c, const struct etcd_txn *t,
	struct etcd_txn_result *out);

/*
 * A watch of every key under prefix from start_revision (0: from now), with
 * prev_kv.  The callback has each line's answer (creation, events,
 * cancellation; freed after it returns) and returns nonzero to stop.
 */
typedef int (*etcd_watch_cb)(void *arg, const struct etcd_watch_result *r);

struct etcd_watch;

enum etcd_rc etcd_watch_open(struct etcd_client *c, const void *prefix,
	size_t len, int64_t start_revision, etcd_watch_cb cb, void *arg,
	struct etcd_watch **out);
/*
 * Runs the watch until stopped (ETCD_OK: by etcd_watch_stop() or the
 * callback), canceled by etcd (ETCD_E_CANCELED), or failed.  Once.
 */
enum etcd_rc etcd_watch_run(struct etcd_watch *w);
/* from any thread; etcd_watch_run returns soon after */
void etcd_watch_stop(struct etcd_watch *w);
const char *etcd_watch_error(const struct etcd_watch *w);
/* the revision of the last answer delivered (resume from it + 1) */
int64_t etcd_watch_revision(const struct etcd_watch *w);
void etcd_watch_close(struct etcd_watch *w);

#endif
