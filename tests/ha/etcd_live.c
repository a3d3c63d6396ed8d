/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_live.c -- the etcd client against a real etcd (started by
 * etcd_live.sh): a leader key taken once by a create-if-absent txn and
 * refused to a second lease (which learns the holder), keepalive, a
 * lease-guarded put, revoke deleting the key, expiry seen by keepalive and
 * by a watch, a put with a dead lease refused as such, a CAS on
 * mod_revision, and the move to a second endpoint past a closed port.
 *
 *   etcd_live URL CLOSED_URL
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "coord/etcd_client.h"
#include "unit.h"

static const char *url, *closed_url;

#define PFX "/etcd_live/"
#define LEADER PFX "leader"

static struct etcd_client *
client(const char *const *eps, size_t n)
{
	struct etcd_client_cfg cfg = {
		.endpoints = eps, .n_endpoints = n, .timeout_ms = 2000,
	};
	char err[256];
	struct etcd_client *c = etcd_client_new(&cfg, err, sizeof(err));

	if (c == NULL)
		printf("etcd_client_new: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	return c;
}

static struct etcd_client *
one(void)
{
	return client(&url, 1);
}

#define OK(call) do { \
		enum etcd_rc rc_ = (call); \
		if (rc_ != ETCD_OK) \
			printf("\n  %s: %s: %s\n", #call, etcd_rc_name(rc_), \
				etcd_client_error(c)); \
		CU_ASSERT_EQUAL_FATAL(rc_, ETCD_OK); \
	} while (0)

/* create-if-absent: compare CREATE == 0, put with lease; else read it */
static enum etcd_rc
campaign(struct etcd_client *c, const char *key, const char *val, int64_t lease,
	struct etcd_txn_result *out)
{
	struct etcd_compare cmp = {
		.target = ETCD_CMP_CREATE, .result = ETCD_CMP_EQUAL,
		.key = (const uint8_t *)key, .key_len = strlen(key), .number = 0,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = (const uint8_t *)key, .key_len = strlen(key),
		.value = (const uint8_t *)val, .value_len = strlen(val), .lease = lease,
	};
	struct etcd_op get = {
		.kind = ETCD_OP_RANGE, .key = (const uint8_t *)key, .key_len = strlen(key),
	};
	struct etcd_txn t = { &cmp, 1, &put, 1, &get, 1 };

	return etcd_txn(c, &t, out);
}

static void
leader_once(void)
{
	struct etcd_client *c = one();
	struct etcd_txn_result t;
	int64_t l1, l2, ttl;
	uint64_t before, sent;
	struct etcd_range r;

	OK(etcd_lease_grant(c, 10, &l1, &ttl));
	CU_ASSERT(l1 != 0);
	CU_ASSERT_EQUAL(ttl, 10);
	OK(etcd_lease_grant(c, 10, &l2, &ttl));
	CU_ASSERT(l2 != l1);

	OK(campaign(c, LEADER, "node-1", l1, &t));
	CU_ASSERT(t.succeeded);
	CU_ASSERT_EQUAL(t.n_responses, 1);
	CU_ASSERT_EQUAL(t.responses[0].kind, ETCD_OP_PUT);
	etcd_txn_result_free(&t);

	/* the second lease fails and learns the holder */
	OK(campaign(c, LEADER, "node-2", l2, &t));
	CU_ASSERT_FALSE(t.succeeded);
	CU_ASSERT_EQUAL_FATAL(t.n_responses, 1);
	CU_ASSERT_EQUAL(t.responses[0].kind, ETCD_OP_RANGE);
	CU_ASSERT_EQUAL_FATAL(t.responses[0].r.n_kvs, 1);
	CU_ASSERT_STRING_EQUAL((char *)t.responses[0].r.kvs[0].value.p, "node-1");
	CU_ASSERT_EQUAL(t.responses[0].r.kvs[0].lease, l1);
	CU_ASSERT_EQUAL(t.responses[0].r.kvs[0].version, 1);
	etcd_txn_result_free(&t);

	/* keepalive: the TTL, and when its request began */
	before = clock_now_ns();
	OK(etcd_lease_keepalive(c, l1, &ttl, &sent));
	CU_ASSERT_EQUAL(ttl, 10);
	CU_ASSERT(sent >= before && sent <= clock_now_ns());

	/* a put guarded by holding the lease (compare LEASE) */
	struct etcd_compare held = {
		.target = ETCD_CMP_LEASE, .key = (const uint8_t *)LEADER,
		.key_len = strlen(LEADER), .number = l1,
	};
	struct etcd_op status = {
		.kind = ETCD_OP_PUT, .key = (const uint8_t *)PFX "status",
		.key_len = strlen(PFX "status"), .value = (const uint8_t *)"up",
		.value_len = 2,
	};
	struct etcd_txn g = { &held, 1, &status, 1, NULL, 0 };

	OK(etcd_txn(c, &g, &t));
	CU_ASSERT(t.succeeded);
	etcd_txn_result_free(&t);
	held.number = l2;
	OK(etcd_txn(c, &g, &t));
	CU_ASSERT_FALSE(t.succeeded);
	etcd_txn_result_free(&t);

	/* timetolive names the key; revoke deletes it at once */
	struct etcd_lease tl;

	OK(etcd_lease_timetolive(c, l1, true, &tl));
	CU_ASSERT_EQUAL(tl.granted_ttl, 10);
	CU_ASSERT_EQUAL_FATAL(tl.n_keys, 1);
	CU_ASSERT_STRING_EQUAL((char *)tl.keys[0].p, LEADER);
	etcd_lease_free(&tl);
	OK(etcd_lease_revoke(c, l1));
	OK(etcd_get(c, LEADER, strlen(LEADER), &r));
	CU_ASSERT_EQUAL(r.n_kvs, 0);
	CU_ASSERT_EQUAL(r.count, 0);
	etcd_range_free(&r);
	CU_ASSERT_EQUAL(etcd_lease_timetolive(c, l1, false, &tl), ETCD_E_LEASE_NOT_FOUND);
	CU_ASSERT_EQUAL(etcd_lease_revoke(c, l1), ETCD_E_LEASE_NOT_FOUND);

	/* free now: the second lease takes it */
	OK(campaign(c, LEADER, "node-2", l2, &t));
	CU_ASSERT(t.succeeded);
	etcd_txn_result_free(&t);
	OK(etcd_lease_revoke(c, l2));
	etcd_client_free(c);
}

/* the watch's thread: every event seen, in order */
struct seen {
	struct etcd_watch *w;
	atomic_int created, puts, deletes;
	char last_put[64];
	bool delete_had_prev;
	enum etcd_rc rc;
};

static int
on_watch(void *arg, const struct etcd_watch_result *r)
{
	struct seen *s = arg;

	if (r->created)
		atomic_fetch_add(&s->created, 1);
	for (size_t i = 0; i < r->n_events; i++) {
		const struct etcd_event *e = &r->events[i];

		if (e->type == ETCD_EV_PUT) {
			snprintf(s->last_put, sizeof(s->last_put), "%s=%s",
				(char *)e->kv.key.p, e->kv.value.p ? (char *)e->kv.value.p : "");
			atomic_fetch_add(&s->puts, 1);
		} else {
			s->delete_had_prev = e->has_prev_kv && e->prev_kv.value.len > 0;
			atomic_fetch_add(&s->deletes, 1);
		}
	}
	return 0;
}

static void *
watch_thread(void *arg)
{
	struct seen *s = arg;

	s->rc = etcd_watch_run(s->w);
	return NULL;
}

/* waits up to ms for *v to reach want */
static bool
wait_for(atomic_int *v, int want, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (atomic_load(v) >= want)
			return true;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	return atomic_load(v) >= want;
}

/*
 * TTL 1 and no keepalive: the key goes (a watch sees its PUT and the
 * expiry's DELETE), keepalive then answers 0, and a put with the lease is
 * refused as lease not found.
 */
static void
expiry(void)
{
	struct etcd_client *c = one();
	struct seen s = { 0 };
	struct etcd_txn_result t;
	struct etcd_range r;
	pthread_t th;
	int64_t l, ttl;
	uint64_t t0;

	OK(etcd_watch_open(c, PFX "exp/", strlen(PFX "exp/"), 0, on_watch, &s, &s.w));
	CU_ASSERT_FATAL(pthread_create(&th, NULL, watch_thread, &s) == 0);
	CU_ASSERT_FATAL(wait_for(&s.created, 1, 3000));

	OK(etcd_lease_grant(c, 1, &l, &ttl));
	OK(campaign(c, PFX "exp/leader", "node-1", l, &t));
	CU_ASSERT(t.succeeded);
	etcd_txn_result_free(&t);
	CU_ASSERT(wait_for(&s.puts, 1, 3000));
	CU_ASSERT_STRING_EQUAL(s.last_put, PFX "exp/leader=node-1");

	/* etcd's minimum TTL may lift 1 s; its expiry is checked every 500 ms */
	t0 = clock_now_ms();
	for (;;) {
		OK(etcd_get(c, PFX "exp/leader", strlen(PFX "exp/leader"), &r));
		size_t n = r.n_kvs;

		etcd_range_free(&r);
		if (n == 0 || clock_now_ms() - t0 > 8000)
			break;
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	CU_ASSERT(clock_now_ms() - t0 <= 8000);
	CU_ASSERT(wait_for(&s.deletes, 1, 3000));
	CU_ASSERT(s.delete_had_prev);

	OK(etcd_lease_keepalive(c, l, &ttl, NULL));
	CU_ASSERT_EQUAL(ttl, 0);
	CU_ASSERT_EQUAL(etcd_put(c, PFX "exp/x", strlen(PFX "exp/x"), "v", 1, l, NULL),
		ETCD_E_LEASE_NOT_FOUND);
	CU_ASSERT_EQUAL(etcd_client_server_code(c), 5);
	CU_ASSERT_PTR_NOT_NULL(strstr(etcd_client_error(c), "lease not found"));

	/* stopped from this thread, the watch's run returns at once */
	t0 = clock_now_ms();
	etcd_watch_stop(s.w);
	CU_ASSERT(pthread_join(th, NULL) == 0);
	CU_ASSERT(clock_now_ms() - t0 < 500);
	CU_ASSERT_EQUAL(s.rc, ETCD_OK);
	etcd_watch_close(s.w);
	etcd_client_free(c);
}

/* a config key changed only by compare-and-swap on its mod_revision */
static void
cas(void)
{
	struct etcd_client *c = one();
	const char *k = PFX "config";
	struct etcd_header h;
	struct etcd_txn_result t;
	struct etcd_range r;
	int64_t rev;

	OK(etcd_put(c, k, strlen(k), "epoch-1", 7, 0, &h));
	CU_ASSERT(h.revision > 0);
	OK(etcd_get(c, k, strlen(k), &r));
	CU_ASSERT_EQUAL_FATAL(r.n_kvs, 1);
	rev = r.kvs[0].mod_revision;
	CU_ASSERT_EQUAL(rev, h.revision);
	etcd_range_free(&r);

	struct etcd_compare cmp = {
		.target = ETCD_CMP_MOD, .key = (const uint8_t *)k, .key_len = strlen(k),
		.number = rev,
	};
	struct etcd_op put = {
		.kind = ETCD_OP_PUT, .key = (const uint8_t *)k, .key_len = strlen(k),
		.value = (const uint8_t *)"epoch-2", .value_len = 7,
	};
	struct etcd_txn tx = { &cmp, 1, &put, 1, NULL, 0 };

	OK(etcd_txn(c, &tx, &t));
	CU_ASSERT(t.succeeded);
	CU_ASSERT(t.header.revision > rev);
	etcd_txn_result_free(&t);
	/* the same again: the revision moved, so it fails */
	OK(etcd_txn(c, &tx, &t));
	CU_ASSERT_FALSE(t.succeeded);
	CU_ASSERT_EQUAL(t.n_responses, 0);
	etcd_txn_result_free(&t);

	/* a prefix: count_only, then deleted whole */
	OK(etcd_put(c, PFX "m/1", strlen(PFX "m/1"), "a", 1, 0, NULL));
	OK(etcd_put(c, PFX "m/2", strlen(PFX "m/2"), "", 0, 0, NULL));
	OK(etcd_put(c, PFX "m0", strlen(PFX "m0"), "outside", 7, 0, NULL));
	OK(etcd_get_prefix(c, PFX "m/", strlen(PFX "m/"), true, &r));
	CU_ASSERT_EQUAL(r.count, 2);
	CU_ASSERT_EQUAL(r.n_kvs, 0);
	etcd_range_free(&r);
	OK(etcd_get_prefix(c, PFX "m/", strlen(PFX "m/"), false, &r));
	CU_ASSERT_EQUAL_FATAL(r.n_kvs, 2);
	CU_ASSERT_EQUAL(r.kvs[1].value.len, 0);	/* an empty value: omitted */
	etcd_range_free(&r);
	/* a range [m/2, m0\0): m/2 and m0, in key order, not m/1 */
	OK(etcd_get_range(c, PFX "m/2", strlen(PFX "m/2"), PFX "m0", strlen(PFX "m0") + 1,
		&r));
	CU_ASSERT_EQUAL_FATAL(r.n_kvs, 2);
	CU_ASSERT(r.kvs[0].key.len == strlen(PFX "m/2") &&
		memcmp(r.kvs[0].key.p, PFX "m/2", r.kvs[0].key.len) == 0);
	CU_ASSERT(r.kvs[1].value.len == 7 && memcmp(r.kvs[1].value.p, "outside", 7) == 0);
	etcd_range_free(&r);
	CU_ASSERT_EQUAL(etcd_get_range(c, PFX "m/2", strlen(PFX "m/2"), "", 0, &r),
		ETCD_E_INVAL);
	int64_t deleted;

	OK(etcd_delete(c, PFX "m/", strlen(PFX "m/"), true, &deleted));
	CU_ASSERT_EQUAL(deleted, 2);
	OK(etcd_delete(c, PFX "m0", strlen(PFX "m0"), false, &deleted));
	CU_ASSERT_EQUAL(deleted, 1);
	etcd_client_free(c);
}

/* a closed port first: the call moves on to the second endpoint */
static void
failover(void)
{
	const char *eps[] = { closed_url, url };
	struct etcd_client *c = client(eps, 2);
	int64_t l, ttl;

	CU_ASSERT_STRING_EQUAL(etcd_client_endpoint(c), closed_url);
	OK(etcd_lease_grant(c, 5, &l, &ttl));
	CU_ASSERT_STRING_EQUAL(etcd_client_endpoint(c), url);
	OK(etcd_lease_revoke(c, l));
	etcd_client_free(c);

	/* the closed port alone: unreachable, and the error says where */
	c = client(&closed_url, 1);
	CU_ASSERT_EQUAL(etcd_lease_grant(c, 5, &l, &ttl), ETCD_E_UNREACHABLE);
	CU_ASSERT_PTR_NOT_NULL(strstr(etcd_client_error(c), closed_url));
	etcd_client_free(c);
}

static void
bad_requests(void)
{
	struct etcd_client *c = one();
	struct etcd_range r;
	int64_t l, ttl;

	CU_ASSERT_EQUAL(etcd_lease_grant(c, 0, &l, &ttl), ETCD_E_INVAL);
	CU_ASSERT_EQUAL(etcd_get(c, "", 0, &r), ETCD_E_INVAL);
	/* a keepalive of a lease never granted: 0, as for an expired one */
	OK(etcd_lease_keepalive(c, 12345, &ttl, NULL));
	CU_ASSERT_EQUAL(ttl, 0);
	etcd_client_free(c);
}

int
main(int argc, char **argv)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(leader_once), UNIT_CASE(expiry), UNIT_CASE(cas),
		UNIT_CASE(failover), UNIT_CASE(bad_requests), CU_TEST_INFO_NULL,
	};

	if (argc != 3) {
		fprintf(stderr, "usage: etcd_live URL CLOSED_URL (run by etcd_live.sh)\n");
		return 99;
	}
	url = argv[1];
	closed_url = argv[2];
	return unit_run("etcd_live", cases);
}
