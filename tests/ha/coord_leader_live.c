/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_leader_live.c -- the leader lease against a real etcd (started by
 * coord_leader_live.sh with a short election timeout, so a 1 s TTL is
 * granted as asked): one winner and a loser that learns the holder;
 * renewals moving valid_until on; no takeover before the old holder's
 * valid_until, and one soon after its last renewal; resign handing the key
 * over at once; an update refused once the key is lost; epochs distinct
 * under two concurrent takers; a stale lease replaced by a fresh one.
 * Each case has its own prefix.
 *
 *   coord_leader_live URL
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "coord/leader.h"
#include "unit.h"

static const char *url;

#define TTL_S 1
#define MS 1000000ull

static void
sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

static struct coord_leader *
leader(const char *prefix, uint64_t node)
{
	struct etcd_client_cfg ecfg = {
		.endpoints = &url, .n_endpoints = 1, .timeout_ms = 2000,
	};
	struct coord_leader_cfg cfg = {
		.etcd = &ecfg, .prefix = prefix, .ttl_s = TTL_S, .node_id = node,
	};
	char err[256];
	struct coord_leader *l = coord_leader_new(&cfg, err, sizeof(err));

	if (l == NULL)
		printf("coord_leader_new: %s\n", err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	return l;
}

#define OK(l, call) do { \
		enum etcd_rc rc_ = (call); \
		if (rc_ != ETCD_OK) \
			printf("\n  %s: %s: %s\n", #call, etcd_rc_name(rc_), \
				coord_leader_error(l)); \
		CU_ASSERT_EQUAL_FATAL(rc_, ETCD_OK); \
	} while (0)

static const char V1[] = "{\"node_id\":1,\"epoch\":7,\"state\":\"promoting\"}";
static const char V2[] = "{\"node_id\":2,\"epoch\":8,\"state\":\"promoting\"}";

/* a campaign expected to end as want; the holder freed */
static void
campaign_is(struct coord_leader *l, const char *v, enum coord_campaign_outcome want)
{
	struct coord_campaign r;

	OK(l, coord_leader_campaign(l, v, &r));
	CU_ASSERT_EQUAL(r.outcome, want);
	coord_holder_free(&r.holder);
}

/* 1 wins, 2 learns the holder, 1's renewals move valid_until on */
static void
two_leaders(void)
{
	struct coord_leader *l1 = leader("/cl/1/", 1), *l2 = leader("/cl/1/", 2);
	struct coord_campaign r;
	uint64_t vu;

	CU_ASSERT_EQUAL(coord_leader_state(l1), COORD_LEADER_IDLE);
	CU_ASSERT_FALSE(coord_leader_valid(l1, clock_now_ns()));
	OK(l1, coord_leader_campaign(l1, V1, &r));
	CU_ASSERT_EQUAL_FATAL(r.outcome, COORD_CAMPAIGN_WON);
	CU_ASSERT_EQUAL(coord_leader_state(l1), COORD_LEADER_HELD);
	CU_ASSERT_STRING_EQUAL(coord_leader_state_name(coord_leader_state(l1)), "held");
	printf("\n  TTL asked %d s, granted %" PRId64 " s\n", TTL_S, coord_leader_ttl(l1));
	CU_ASSERT_EQUAL(coord_leader_ttl(l1), TTL_S);
	CU_ASSERT(coord_leader_valid(l1, clock_now_ns()));
	/* a second campaign while held is refused, not sent */
	CU_ASSERT_EQUAL(coord_leader_campaign(l1, V1, &r), ETCD_E_INVAL);

	OK(l2, coord_leader_campaign(l2, V2, &r));
	CU_ASSERT_EQUAL_FATAL(r.outcome, COORD_CAMPAIGN_HELD);
	CU_ASSERT(r.holder.present);
	CU_ASSERT_STRING_EQUAL(r.holder.value, V1);
	CU_ASSERT_EQUAL(r.holder.lease, coord_leader_lease(l1));
	CU_ASSERT(r.holder.mod_revision > 0);
	coord_holder_free(&r.holder);
	CU_ASSERT_EQUAL(coord_leader_state(l2), COORD_LEADER_IDLE);
	CU_ASSERT_EQUAL(coord_leader_lease(l2), 0);

	vu = coord_leader_valid_until(l1);
	for (int i = 0; i < 4; i++) {
		uint64_t before;

		sleep_ms(150);
		before = clock_now_ns();
		OK(l1, coord_leader_renew(l1));
		CU_ASSERT(coord_leader_valid(l1, clock_now_ns()));
		CU_ASSERT(coord_leader_valid_until(l1) > vu);
		vu = coord_leader_valid_until(l1);
		/* TTL 1 s less the 100 ms margin, from the request's start */
		CU_ASSERT(vu >= before + 900 * MS);
		CU_ASSERT(vu <= clock_now_ns() + 900 * MS);
	}
	OK(l1, coord_leader_resign(l1));
	OK(l2, coord_leader_resign(l2));	/* idle: nothing to revoke */
	coord_leader_free(l1);
	coord_leader_free(l2);
}

/* 1 stops renewing: 2 wins only after 1's valid_until, and soon after */
static void
takeover(void)
{
	struct coord_leader *l1 = leader("/cl/2/", 1), *l2 = leader("/cl/2/", 2);
	struct coord_campaign r;
	uint64_t last, vu, end = 0, deadline;
	bool won = false;
	int tries = 0;

	campaign_is(l1, V1, COORD_CAMPAIGN_WON);
	last = clock_now_ns();
	OK(l1, coord_leader_renew(l1));
	vu = coord_leader_valid_until(l1);
	CU_ASSERT(vu > last);

	deadline = last + (uint64_t)(TTL_S + 2) * 1000 * MS;
	while (!won && clock_now_ns() < deadline) {
		OK(l2, coord_leader_campaign(l2, V2, &r));
		end = clock_now_ns();
		tries++;
		if (r.outcome == COORD_CAMPAIGN_WON) {
			won = true;
			/* the txn that won ran before end: end must be past vu */
			CU_ASSERT(end >= vu);
			printf("  takeover %.0f ms after the last renewal (valid_until"
				" at %.0f ms, %d tries)\n", (double)(end - last) / 1e6,
				(double)(vu - last) / 1e6, tries);
		} else {
			CU_ASSERT_EQUAL(r.outcome, COORD_CAMPAIGN_HELD);
			CU_ASSERT_STRING_EQUAL(r.holder.value, V1);
			sleep_ms(20);
		}
		coord_holder_free(&r.holder);
	}
	CU_ASSERT_FATAL(won);
	CU_ASSERT(end - last <= (uint64_t)(TTL_S + 2) * 1000 * MS);
	CU_ASSERT_FALSE(coord_leader_valid(l1, clock_now_ns()));

	/* 1's next renewal: the lease expired, the key is lost */
	CU_ASSERT_EQUAL(coord_leader_renew(l1), ETCD_E_LEASE_NOT_FOUND);
	CU_ASSERT_EQUAL(coord_leader_state(l1), COORD_LEADER_LOST);
	CU_ASSERT_STRING_EQUAL(coord_leader_state_name(COORD_LEADER_LOST), "lost");
	CU_ASSERT_FALSE(coord_leader_valid(l1, 0));
	CU_ASSERT_EQUAL(coord_leader_renew(l1), ETCD_E_INVAL);

	OK(l1, coord_leader_resign(l1));	/* lost: the revoke finds nothing */
	CU_ASSERT_EQUAL(coord_leader_state(l1), COORD_LEADER_IDLE);
	OK(l2, coord_leader_resign(l2));
	coord_leader_free(l1);
	coord_leader_free(l2);
}

/* the holder resigns: the key goes at once and the other wins */
static void
resign(void)
{
	struct coord_leader *l1 = leader("/cl/3/", 1), *l2 = leader("/cl/3/", 2);
	struct coord_holder h;
	uint64_t t0, dt;

	campaign_is(l1, V1, COORD_CAMPAIGN_WON);
	campaign_is(l2, V2, COORD_CAMPAIGN_HELD);
	t0 = clock_now_ns();
	OK(l1, coord_leader_resign(l1));
	CU_ASSERT_EQUAL(coord_leader_state(l1), COORD_LEADER_IDLE);
	CU_ASSERT_FALSE(coord_leader_valid(l1, clock_now_ns()));
	campaign_is(l2, V2, COORD_CAMPAIGN_WON);
	dt = clock_now_ns() - t0;
	printf("  resign to the other's win: %.1f ms\n", (double)dt / 1e6);
	CU_ASSERT(dt < 500 * MS);

	OK(l1, coord_leader_get(l1, &h));
	CU_ASSERT_FATAL(h.present);
	CU_ASSERT_STRING_EQUAL(h.value, V2);
	CU_ASSERT_EQUAL(h.lease, coord_leader_lease(l2));
	coord_holder_free(&h);

	OK(l2, coord_leader_resign(l2));
	OK(l1, coord_leader_get(l1, &h));
	CU_ASSERT_FALSE(h.present);
	CU_ASSERT_PTR_NULL(h.value);
	coord_holder_free(&h);
	coord_leader_free(l1);
	coord_leader_free(l2);
}

/* the holder updates its value; once lost, an update is refused */
static void
update(void)
{
	struct coord_leader *l1 = leader("/cl/4/", 1), *l2 = leader("/cl/4/", 2);
	static const char V1b[] = "{\"node_id\":1,\"epoch\":7,\"state\":\"primary\"}";
	struct coord_holder h;
	int64_t rev;
	bool ours;

	campaign_is(l1, V1, COORD_CAMPAIGN_WON);
	OK(l1, coord_leader_get(l1, &h));
	rev = h.mod_revision;
	coord_holder_free(&h);
	OK(l1, coord_leader_update(l1, V1b, &ours));
	CU_ASSERT(ours);
	OK(l2, coord_leader_get(l2, &h));
	CU_ASSERT_STRING_EQUAL(h.value, V1b);
	CU_ASSERT_EQUAL(h.lease, coord_leader_lease(l1));
	CU_ASSERT(h.mod_revision > rev);
	coord_holder_free(&h);

	/* no renewal: the key expires and 2 takes it */
	uint64_t deadline = clock_now_ns() + 4000 * MS;
	struct coord_campaign r = { 0 };

	while (clock_now_ns() < deadline) {
		OK(l2, coord_leader_campaign(l2, V2, &r));
		coord_holder_free(&r.holder);
		if (r.outcome == COORD_CAMPAIGN_WON)
			break;
		sleep_ms(50);
	}
	CU_ASSERT_EQUAL_FATAL(r.outcome, COORD_CAMPAIGN_WON);

	OK(l1, coord_leader_update(l1, V1, &ours));
	CU_ASSERT_FALSE(ours);
	CU_ASSERT_EQUAL(coord_leader_state(l1), COORD_LEADER_LOST);
	OK(l1, coord_leader_get(l1, &h));
	CU_ASSERT_STRING_EQUAL(h.value, V2);	/* not overwritten */
	coord_holder_free(&h);
	/* and lost stays lost: no update is sent */
	OK(l1, coord_leader_update(l1, V1, &ours));
	CU_ASSERT_FALSE(ours);

	OK(l1, coord_leader_resign(l1));
	OK(l2, coord_leader_resign(l2));
	coord_leader_free(l1);
	coord_leader_free(l2);
}

#define TAKES 50

struct taker {
	pthread_t th;
	uint64_t node;
	uint64_t got[TAKES];
	int n;
	enum etcd_rc rc;
	char err[512];
};

static void *
take_thread(void *arg)
{
	struct taker *t = arg;
	struct coord_leader *l = leader("/cl/5/", t->node);

	for (t->n = 0; t->n < TAKES; t->n++) {
		t->rc = coord_epoch_take(l, 0, &t->got[t->n]);
		if (t->rc != ETCD_OK) {
			snprintf(t->err, sizeof(t->err), "%s", coord_leader_error(l));
			break;
		}
	}
	coord_leader_free(l);
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* two takers at once: 100 epochs, all distinct, each taker's increasing */
static void
epochs(void)
{
	struct coord_leader *l = leader("/cl/5/", 9);
	struct taker t[2] = { { .node = 1 }, { .node = 2 } };
	uint64_t e, all[2 * TAKES];

	OK(l, coord_epoch_take(l, 1000, &e));	/* absent: min_epoch */
	CU_ASSERT_EQUAL(e, 1000);
	OK(l, coord_epoch_take(l, 0, &e));
	CU_ASSERT_EQUAL(e, 1001);
	OK(l, coord_epoch_take(l, 5, &e));	/* below the counter: ignored */
	CU_ASSERT_EQUAL(e, 1002);

	for (int i = 0; i < 2; i++)
		CU_ASSERT_FATAL(pthread_create(&t[i].th, NULL, take_thread, &t[i]) == 0);
	for (int i = 0; i < 2; i++) {
		CU_ASSERT(pthread_join(t[i].th, NULL) == 0);
		if (t[i].rc != ETCD_OK)
			printf("\n  taker %d: %s: %s\n", i, etcd_rc_name(t[i].rc), t[i].err);
		CU_ASSERT_EQUAL_FATAL(t[i].n, TAKES);
		for (int j = 0; j < TAKES; j++) {
			CU_ASSERT(t[i].got[j] > 1002);
			if (j > 0)
				CU_ASSERT(t[i].got[j] > t[i].got[j - 1]);
			all[i * TAKES + j] = t[i].got[j];
		}
	}
	qsort(all, 2 * TAKES, sizeof(all[0]), cmp_u64);
	for (int i = 1; i < 2 * TAKES; i++)
		CU_ASSERT(all[i] != all[i - 1]);
	/* none lost either: the counter moved by exactly one per take */
	CU_ASSERT_EQUAL(all[2 * TAKES - 1], 1002 + 2 * TAKES);

	OK(l, coord_epoch_take(l, 5000, &e));	/* above it: min_epoch */
	CU_ASSERT_EQUAL(e, 5000);
	OK(l, coord_epoch_take(l, 0, &e));
	CU_ASSERT_EQUAL(e, 5001);
	coord_leader_free(l);
}

/* a lease granted earlier and left to expire: the campaign grants anew */
static void
stale_lease(void)
{
	struct etcd_client_cfg ecfg = { .endpoints = &url, .n_endpoints = 1 };
	char err[256];
	struct etcd_client *c = etcd_client_new(&ecfg, err, sizeof(err));
	struct coord_leader *l = leader("/cl/6/", 1);
	struct coord_campaign r;
	struct etcd_lease tl;
	int64_t stale, ttl;
	uint64_t sent, t0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	sent = clock_now_ns();
	CU_ASSERT_EQUAL_FATAL(etcd_lease_grant(c, TTL_S, &stale, &ttl), ETCD_OK);
	t0 = clock_now_ms();
	while (etcd_lease_timetolive(c, stale, false, &tl) == ETCD_OK &&
	    clock_now_ms() - t0 < 4000) {
		etcd_lease_free(&tl);
		sleep_ms(100);
	}
	CU_ASSERT_EQUAL_FATAL(etcd_lease_timetolive(c, stale, false, &tl),
		ETCD_E_LEASE_NOT_FOUND);

	/* no lease: refused, never a key without one */
	CU_ASSERT_EQUAL(coord_leader_campaign_lease(l, V1, 0, ttl, sent, &r),
		ETCD_E_INVAL);
	CU_ASSERT_EQUAL(r.outcome, COORD_CAMPAIGN_ERROR);
	OK(l, coord_leader_campaign_lease(l, V1, stale, ttl, sent, &r));
	CU_ASSERT_EQUAL_FATAL(r.outcome, COORD_CAMPAIGN_WON);
	CU_ASSERT(coord_leader_lease(l) != stale);
	CU_ASSERT(coord_leader_lease(l) != 0);
	/* valid from the fresh grant, not from the stale one's */
	CU_ASSERT(coord_leader_valid(l, clock_now_ns()));
	OK(l, coord_leader_renew(l));

	OK(l, coord_leader_resign(l));
	etcd_client_free(c);
	coord_leader_free(l);
}

int
main(int argc, char **argv)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(two_leaders), UNIT_CASE(takeover), UNIT_CASE(resign),
		UNIT_CASE(update), UNIT_CASE(epochs), UNIT_CASE(stale_lease),
		CU_TEST_INFO_NULL,
	};

	if (argc != 2) {
		fprintf(stderr, "usage: coord_leader_live URL (run by coord_leader_live.sh)\n");
		return 99;
	}
	url = argv[1];
	return unit_run("coord_leader_live", cases);
}
