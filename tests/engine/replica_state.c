/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_state.c -- the state a replica's daemon shows (replica_state):
 * before a primary, its empty log and no primary; while a primary appends,
 * the LSNs it holds and has persisted, the primary's node id, address and
 * epoch, the membership it stored; after the primary closed, no primary
 * but the same log.  Another thread reads it all the while (ASan/TSan see
 * every access).
 */
#define TEST_NAME "replica_state"
#include <stdatomic.h>

#include "repl_inproc.h"
#include "../lib/test_ports.h"

#define N 300

static struct replica_state state;
static atomic_int reading = 1;
static unsigned long reads, inconsistent;

/* a reader in another thread: each copy is consistent */
static void *
reader(void *arg)
{
	struct repl_replica_info s;

	(void)arg;
	while (atomic_load(&reading)) {
		replica_state_get(&state, &s);
		if (s.last_lsn < s.durable_lsn || (s.following && s.primary_id == 0))
			inconsistent++;
		reads++;
		usleep(1000);
	}
	return NULL;
}

/* the snapshot once cond holds, within 10 s */
#define WAIT_FOR(s, cond) do { \
	for (int t_ = 0; t_ < 1000; t_++) { \
		replica_state_get(&state, &(s)); \
		if (cond) \
			break; \
		usleep(10000); \
	} \
} while (0)

int
main(void)
{
	int base = test_ports(8);
	struct repl_replica_info s;
	struct repl_status ps;
	struct repl *r = NULL;
	pthread_t rd;
	uint64_t lsn = 0;

	CHECK(replica_state_init(&state) == 0);
	inproc_rep_thread(0, base, &state);
	if (pthread_create(&rd, NULL, reader, NULL) != 0)
		return 99;

	/* a fresh log, nobody to follow */
	WAIT_FOR(s, s.size_bytes != 0);
	CHECK(s.size_bytes == INPROC_SIZE - 8192);
	CHECK(strcmp(s.backend, "crash") == 0);
	CHECK(!s.following && s.primary_id == 0 && s.primary_addr[0] == '\0');
	CHECK(s.first_lsn == 0 && s.last_lsn == 0 && s.used_bytes == 0);

	CHECK(inproc_primary(1, 1, &r) == 0);
	if (r == NULL)
		goto out;
	for (int i = 0; i < N; i++)
		CHECK(repl_append(r, "replica state", 13, &lsn) == 0);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	CHECK(repl_status(r, &ps) == 0);

	/* the commit point reaches it after the flush: durable follows */
	WAIT_FOR(s, s.durable_lsn >= lsn && s.config_epoch != 0);
	CHECK(s.following);
	CHECK(s.primary_id == 1);
	CHECK(strncmp(s.primary_addr, "127.0.0.1:", 10) == 0);
	CHECK(s.epoch == ps.epoch);
	CHECK(s.config_epoch == ps.config_epoch);
	CHECK(s.first_lsn == 1);
	CHECK(s.last_lsn == lsn && lsn == N + 1);
	CHECK(s.durable_lsn == lsn);
	/* N records and the epoch's first (a header alone) */
	CHECK(s.used_bytes == (uint64_t)N * (40 + 16) + 40);
	CHECK(s.used_bytes == ps.used_bytes);

	CHECK(repl_close(&r) == 0);
	WAIT_FOR(s, !s.following);
	CHECK(!s.following && s.primary_id == 0);
	CHECK(s.last_lsn == lsn && s.durable_lsn == lsn);
out:
	inproc_rep_stop(0);
	atomic_store(&reading, 0);
	pthread_join(rd, NULL);
	CHECK(reads > 0 && inconsistent == 0);
	printf(TEST_NAME ": followed node 1 up to LSN %llu (%lu reads)\n",
		(unsigned long long)lsn, reads);
	replica_state_destroy(&state);
	unlink(inproc_ppath);
	return failed;
}
