/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_replica_status.c -- what a primary reports of each replica: the
 * transport, flush method and backend of its connection, and how far it
 * lags (records, bytes, milliseconds).  Replica 0 runs in a child process
 * so that it can be frozen (SIGSTOP): its lag then grows by exactly what
 * is appended, and its age, while replica 1 keeps the quorum; thawed, it
 * catches up and the lag is gone.  The links' states and counters: a
 * batch moves them, and a replica restarted makes its link drain,
 * reconnect and catch up again.
 */
#define TEST_NAME "repl_replica_status"
#include "repl_inproc.h"
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
	usleep(300000);
	inproc_flush_method = REPL_FLUSH_GPSPM;	/* what tcp does: accepted */
	CHECK(inproc_primary(2, 1, &r) == 0);
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
	printf(TEST_NAME ": tcp/gpspm/crash reported; a frozen replica lagged "
		"50 records, %d bytes\n", 50 * REC_BYTES);
	CHECK(repl_close(&r) == 0);
out:
	inproc_rep_stop(0);
	inproc_rep_stop(1);
	unlink(inproc_ppath);
	return failed;
}
