/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_replica_status.c -- what a primary reports of each replica: the
 * transport, flush method and backend of its connection, and how far it
 * lags (records, bytes, milliseconds).  Replica 0 runs in a child process
 * so that it can be frozen (SIGSTOP): its lag then grows by exactly what
 * is appended, and its age, while replica 1 keeps the quorum; thawed, it
 * catches up and the lag is gone.  The links' states and counters: a
 * batch moves them, and a replica restarted makes its link drain,
 * reconnect and catch up again.  Replica 2 runs through librepl's API
 * (repl_replica_node): a hold its reader takes, and its want of a base,
 * reach the primary's status with the next heartbeat, no release needed.
 * A replica caught up, or lagging while it streams, shows no catch-up in
 * progress (catchup_* all 0).  A hold outlives its replica's going down;
 * repl_release_past_down releases past it.
 */
#define TEST_NAME "repl_replica_status"
#include "repl_inproc.h"
#include "common/clock.h"
#include "../lib/test_ports.h"

#define LEN 100
#define REC_BYTES (40 + LEN + 4)	/* header, payload padded to 8 */

static uint64_t
append_n(struct repl *r, int n)
{
	char buf[LEN];
	uint64_t lsn = 0;

	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < n; i++)
		CHECK(repl_append(r, buf, sizeof(buf), &lsn) == 0);
	return lsn;
}

/* replica 2, served through the public API in a thread */
static struct repl_replica_node *node2;
static pthread_t node2_thread;
static int node2_ret;

static void *
node2_main(void *arg)
{
	(void)arg;
	node2_ret = repl_replica_run(node2);
	return NULL;
}

static void
node2_start(int base)
{
	struct inproc_rep *ir = &inproc_reps[2];
	struct repl_replica_cfg rc;

	inproc_rep_cfg(2, base, NULL);	/* its path and ports */
	rc = (struct repl_replica_cfg){ .path = ir->path,
		.backend = REPL_BACKEND_CRASH, .size = INPROC_SIZE, .create = 1,
		.node_id = 12, .provider = "tcp", .addr = "127.0.0.1",
		.ctl_port = ir->ctl, .data_port = ir->data, .timeout_ms = 5000 };
	memcpy(rc.cluster_uuid, inproc_uuid, 16);
	if (repl_replica_open(&rc, &node2) != 0 ||
	    pthread_create(&node2_thread, NULL, node2_main, NULL) != 0)
		exit(99);
}

static void
node2_stop(void)
{
	CHECK(repl_replica_stop(node2) == 0);
	pthread_join(node2_thread, NULL);
	CHECK(node2_ret == 0);
	CHECK(repl_replica_close(&node2) == 0);
	unlink(inproc_reps[2].path);
}

/*
 * Until replica i's status says holds (and then hold_from) and wants_base,
 * polled for up to 10 s: 0, or -1 with the last status in *rs
 */
static int
wait_hold(struct repl *r, int i, int holds, uint64_t from, int wants,
		struct repl_replica_status *rs)
{
	for (int t = 0; t < 1000; t++) {
		if (repl_replica_status(r, i, rs) == 0 &&
		    rs->state == REPL_REPLICA_STREAMING &&
		    rs->holds == holds && (!holds || rs->hold_from == from) &&
		    rs->wants_base == wants)
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * Replica 2's reader holds, wants a base, and lets go: the primary sees
 * each from the replica's answers to its heartbeats, with no release in
 * between (before them, only a release round's ACKs said so).
 */
static void
hold_seen(struct repl *r, uint64_t lsn)
{
	struct repl_replica_status rs;
	struct repl_status st;
	uint64_t x = lsn - 10, t0, first;

	CHECK(inproc_wait_flushed(r, 2, lsn, 10000) == 0);
	CHECK(repl_replica_status(r, 2, &rs) == 0);
	CHECK(rs.holds == 0 && rs.hold_from == 0 && rs.wants_base == 0);
	CHECK(repl_status(r, &st) == 0);
	first = st.first_lsn;	/* nothing releases until we do, below */
	CHECK(first >= 1 && first <= x);

	{
		struct repl_replica_info ri;

		/* nothing held, nothing told */
		CHECK(repl_replica_info(node2, &ri) == 0 && ri.hold_told == 0);
		CHECK(repl_replica_hold(node2, x) == 0);
		t0 = clock_now_ms();
		CHECK(wait_hold(r, 2, 1, x + 1, 0, &rs) == 0);
		printf(TEST_NAME ": a hold after LSN %llu seen in %llu ms: holds %d, "
			"hold_from %llu\n", (unsigned long long)x,
			(unsigned long long)(clock_now_ms() - t0), rs.holds,
			(unsigned long long)rs.hold_from);
		/* the primary saw it: the replica says it told it so */
		CHECK(repl_replica_info(node2, &ri) == 0 && ri.hold_told == x + 1);
	}

	/* a second reader's hold (slot 1): the replica holds the lower, so
	 * the first reader moving on does not let go of the second's records */
	CHECK(repl_replica_hold_slot(node2, 1, x) == 0);
	CHECK(repl_replica_hold(node2, x + 5) == 0);
	usleep(300 * 1000);	/* three heartbeats: a wrong hold would show */
	CHECK(wait_hold(r, 2, 1, x + 1, 0, &rs) == 0);
	CHECK(repl_replica_unhold_slot(node2, 1) == 0);
	CHECK(wait_hold(r, 2, 1, x + 6, 0, &rs) == 0);
	CHECK(repl_replica_hold(node2, x) == 0);
	CHECK(wait_hold(r, 2, 1, x + 1, 0, &rs) == 0);
	CHECK(repl_replica_hold_slot(node2, REPL_HOLD_SLOTS, x) == REPL_E_INVAL);
	CHECK(repl_replica_unhold_slot(node2, -1) == REPL_E_INVAL);

	CHECK(repl_replica_want_base(node2, 1) == 0);
	CHECK(wait_hold(r, 2, 1, x + 1, 1, &rs) == 0);
	/* the others' readers want nothing */
	CHECK(repl_replica_status(r, 0, &rs) == 0 && rs.wants_base == 0 &&
		rs.holds == 0);
	CHECK(repl_replica_status(r, 1, &rs) == 0 && rs.wants_base == 0 &&
		rs.holds == 0);
	CHECK(repl_replica_want_base(node2, 0) == 0);
	CHECK(wait_hold(r, 2, 1, x + 1, 0, &rs) == 0);
	CHECK(repl_replica_want_base(NULL, 1) == REPL_E_INVAL);

	CHECK(repl_status(r, &st) == 0);
	CHECK(st.first_lsn == first);
	/* a release now stops at the hold learned from a heartbeat */
	CHECK(repl_release(r, lsn) == 0);
	CHECK(repl_status(r, &st) == 0);
	printf(TEST_NAME ": released up to LSN %llu with a hold after %llu: "
		"first_lsn %llu\n", (unsigned long long)lsn,
		(unsigned long long)x, (unsigned long long)st.first_lsn);
	CHECK(st.first_lsn <= x + 1);

	CHECK(repl_replica_unhold(node2) == 0);
	CHECK(wait_hold(r, 2, 0, 0, 0, &rs) == 0);
	CHECK(rs.hold_from == 0 && rs.hold_lsn == 0);
}

/*
 * A holder that goes down keeps its hold (rule 3 of docs/replication.md's
 * held records): repl_release stops at it; repl_release_past_down goes
 * past it, the bound a primary puts on what a replica that is away keeps.
 * Back with a new log, it catches up from the primary's first record.
 */
static void
down_hold(struct repl *r, int base)
{
	struct repl_replica_status rs;
	struct repl_status st;
	uint64_t x, lsn;

	x = append_n(r, 1);
	CHECK(inproc_wait_flushed(r, 2, x, 10000) == 0);
	CHECK(repl_replica_hold(node2, x) == 0);
	CHECK(wait_hold(r, 2, 1, x + 1, 0, &rs) == 0);
	lsn = append_n(r, 20);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(inproc_wait_flushed(r, i, lsn, 10000) == 0);
	node2_stop();
	for (int t = 0; t < 500; t++) {
		CHECK(repl_replica_status(r, 2, &rs) == 0);
		if (rs.link_state != REPL_LINK_STREAMING)
			break;
		usleep(10000);
	}
	CHECK(rs.link_state != REPL_LINK_STREAMING && rs.holds);

	CHECK(repl_release(r, lsn) == 0);
	CHECK(repl_status(r, &st) == 0);
	printf(TEST_NAME ": holder down, hold after %llu: repl_release to %llu "
		"leaves first_lsn %llu\n", (unsigned long long)x,
		(unsigned long long)lsn, (unsigned long long)st.first_lsn);
	CHECK(st.first_lsn <= x + 1);
	CHECK(repl_release_past_down(r, lsn - 1) == 0);
	CHECK(repl_status(r, &st) == 0);
	printf(TEST_NAME ": repl_release_past_down to %llu: first_lsn %llu\n",
		(unsigned long long)lsn - 1, (unsigned long long)st.first_lsn);
	CHECK(st.first_lsn == lsn);
	CHECK(repl_release_past_down(NULL, lsn) == REPL_E_INVAL);

	node2_start(base);
	lsn = append_n(r, 5);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	CHECK(inproc_wait_flushed(r, 2, lsn, 20000) == 0);
	CHECK(repl_replica_status(r, 2, &rs) == 0);
	CHECK(rs.state == REPL_REPLICA_STREAMING && rs.holds == 0);
}

static void
check_caught_up(struct repl *r, int i)
{
	struct repl_replica_status rs;

	CHECK(repl_replica_status(r, i, &rs) == 0);
	CHECK(rs.state == REPL_REPLICA_STREAMING);
	CHECK(strcmp(rs.transport, "tcp") == 0);
	/* libfabric providers flush by the replica's core */
	CHECK(strcmp(rs.flush_method, "gpspm") == 0);
	CHECK(strcmp(rs.backend, "crash") == 0);
	CHECK(rs.lag_records == 0);
	CHECK(rs.lag_bytes == 0);
	CHECK(rs.lag_ms == 0);
	/* caught up: no catch-up in progress any more */
	CHECK(rs.catchup_total_bytes == 0 && rs.catchup_done_bytes == 0 &&
		rs.catchup_eta_ms == 0);
}

int
main(void)
{
	int base = test_ports(8);
	struct repl_replica_status rs;
	struct repl *r = NULL;
	uint64_t lsn;

	/* the child before any thread of ours */
	inproc_rep_process(0, base);
	inproc_rep_thread(1, base, NULL);
	node2_start(base);
	usleep(300000);
	inproc_flush_method = REPL_FLUSH_GPSPM;	/* what tcp does: accepted */
	CHECK(inproc_primary(3, 1, &r) == 0);
	if (r == NULL)
		goto out;

	lsn = append_n(r, 100);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	CHECK(inproc_wait_flushed(r, 0, lsn, 10000) == 0);
	CHECK(inproc_wait_flushed(r, 1, lsn, 10000) == 0);
	check_caught_up(r, 0);
	check_caught_up(r, 1);
	/* the link's own state and what it did to get there; state_ms
	 * counts whole milliseconds, so let the current state last one */
	usleep(5000);
	CHECK(repl_replica_status(r, 0, &rs) == 0);
	CHECK(rs.link_state == REPL_LINK_STREAMING);
	CHECK(rs.batches > 0 && rs.flushes > 0 && rs.flushes <= rs.batches);
	CHECK(rs.catch_ups == 1 && rs.full_resyncs <= 1);
	CHECK(rs.state_entries[REPL_LINK_CONNECTING] >= 1);
	CHECK(rs.state_entries[REPL_LINK_STREAMING] == 1);
	CHECK(rs.state_ms[REPL_LINK_STREAMING] > 0);

	/* frozen: replica 1 alone makes records durable; 0 falls behind */
	kill(inproc_reps[0].pid, SIGSTOP);
	{
		/* stopped for sure: a thread of it may run on until it is told */
		int status = 0;

		CHECK(waitpid(inproc_reps[0].pid, &status, WUNTRACED) ==
			inproc_reps[0].pid && WIFSTOPPED(status));
	}
	lsn = append_n(r, 50);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	usleep(400000);
	CHECK(repl_replica_status(r, 0, &rs) == 0);
	CHECK(rs.state == REPL_REPLICA_STREAMING);	/* not yet down */
	printf(TEST_NAME ": frozen replica: lag %llu records, %llu bytes, %llu ms\n",
		(unsigned long long)rs.lag_records, (unsigned long long)rs.lag_bytes,
		(unsigned long long)rs.lag_ms);
	CHECK(rs.lag_records == 50);
	CHECK(rs.lag_bytes == 50 * REC_BYTES);
	CHECK(rs.lag_ms >= 300 && rs.lag_ms < 5000);
	/* lag of a streaming link is no catch-up */
	CHECK(rs.catchup_total_bytes == 0);
	check_caught_up(r, 1);

	kill(inproc_reps[0].pid, SIGCONT);
	CHECK(inproc_wait_flushed(r, 0, lsn, 10000) == 0);
	check_caught_up(r, 0);
	{
		/* restarted: the link drains, reconnects and catches up again */
		uint64_t batches;

		CHECK(repl_replica_status(r, 1, &rs) == 0);
		batches = rs.batches;
		/* its log kept: stopped, then run again on it */
		inproc_reps[1].stop = 1;
		pthread_join(inproc_reps[1].thread, NULL);
		for (int t = 0; t < 100; t++) {
			CHECK(repl_replica_status(r, 1, &rs) == 0);
			if (rs.link_state != REPL_LINK_STREAMING)
				break;
			usleep(50000);
		}
		CHECK(rs.link_state != REPL_LINK_STREAMING);
		inproc_rep_thread(1, base, NULL);
		lsn = append_n(r, 10);
		CHECK(repl_wait_durable(r, lsn, 10000) == 0);
		CHECK(inproc_wait_flushed(r, 1, lsn, 20000) == 0);
		CHECK(repl_replica_status(r, 1, &rs) == 0);
		printf(TEST_NAME ": restarted replica: %llu reconnects, %llu "
			"catch-ups, %llu batches, %llu sleeps\n",
			(unsigned long long)rs.reconnects,
			(unsigned long long)rs.catch_ups,
			(unsigned long long)rs.batches, (unsigned long long)rs.sleeps);
		CHECK(rs.reconnects >= 1 && rs.catch_ups >= 2);
		CHECK(rs.state_entries[REPL_LINK_DRAINING] >= 1);
		CHECK(rs.state_entries[REPL_LINK_STREAMING] >= 2);
		CHECK(rs.batches > batches);
	}
	hold_seen(r, lsn);
	down_hold(r, base);
	printf(TEST_NAME ": tcp/gpspm/crash reported; a frozen replica lagged "
		"50 records, %d bytes\n", 50 * REC_BYTES);
	CHECK(repl_close(&r) == 0);
out:
	inproc_rep_stop(0);
	inproc_rep_stop(1);
	node2_stop();
	unlink(inproc_ppath);
	return failed;
}
