/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_verify.c -- repl_verify compares a replica's copy of the records
 * with the primary's, range by range.  A primary with two replicas (in
 * threads) appends records of many client ids; both copies compare equal.
 * Then one byte of one record's payload is changed in replica 1's ring
 * (its memory, found in this process's mappings by the node id in its
 * header): replica 1 shows exactly that record's range as different,
 * replica 0 still none.  Arguments out of range are refused, and a
 * replica that is down cannot be compared (REPL_E_TIMEDOUT, with why).
 */
#define TEST_NAME "repl_verify"
#include <inttypes.h>

#include "repl_inproc.h"
#include "../lib/test_ports.h"

#define N 1000
#define LAST (N + 1)		/* LSN 1 is the primary's epoch start */
#define LEN 24			/* a record takes 40 + 24 bytes in the ring */
#define RING_OFF 8192
#define BAD_LSN 600		/* in range 513..768 */

/* the mapping of the log of node node_id (its memfd memory), or NULL */
static uint8_t *
log_memory(uint32_t node_id)
{
	char line[512];
	uint8_t *found = NULL;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f)) {
		uintptr_t a, b;

		if (!strstr(line, "memfd:rpma-mem") ||
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &a, &b) != 2 ||
		    b - a < INPROC_SIZE || !strstr(line, "rw"))
			continue;
		/* either header copy: magic "RPLWAL", node id at offset 12 */
		for (int k = 0; k < 2; k++) {
			uint8_t *h = (uint8_t *)a + 4096 * k;
			uint32_t id;

			memcpy(&id, h + 12, 4);
			if (memcmp(h, "RPLWAL", 6) == 0 && id == node_id)
				found = (uint8_t *)a;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void
expect_equal(struct repl *r, int i)
{
	struct repl_verify_result res;

	CHECK(repl_verify(r, i, 1, LAST, &res) == 0);
	CHECK(res.from == 1 && res.to == LAST);
	CHECK(res.ranges == (LAST + REPL_VERIFY_RANGE - 1) / REPL_VERIFY_RANGE);
	CHECK(res.mismatches == 0);
	CHECK(res.why[0] == '\0');
}

int
main(void)
{
	int base = test_ports(8);
	struct repl_verify_result res;
	struct repl *r = NULL;
	uint64_t lsn = 0;
	uint8_t *ring1;

	inproc_rep_thread(0, base, NULL);
	inproc_rep_thread(1, base, NULL);
	usleep(300000);
	CHECK(inproc_primary(2, 2, &r) == 0);
	if (r == NULL)
		goto out;
	for (int k = 0; k < N; k++) {
		char buf[LEN];
		struct iovec iov = { buf, sizeof(buf) };

		snprintf(buf, sizeof(buf), "rec %019d", k);
		CHECK(repl_appendv(r, &iov, 1, 1000 + (uint64_t)k % 7, &lsn) == 0);
	}
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	CHECK(lsn == LAST);
	CHECK(inproc_wait_flushed(r, 0, LAST, 10000) == 0);
	CHECK(inproc_wait_flushed(r, 1, LAST, 10000) == 0);

	CHECK(repl_verify(NULL, 0, 1, N, &res) == REPL_E_INVAL);
	CHECK(repl_verify(r, 2, 1, N, &res) == REPL_E_INVAL);
	CHECK(repl_verify(r, -1, 1, N, &res) == REPL_E_INVAL);
	CHECK(repl_verify(r, 0, 5, 4, &res) == REPL_E_INVAL);
	CHECK(repl_verify(r, 0, 1, N, NULL) == REPL_E_INVAL);

	expect_equal(r, 0);
	expect_equal(r, 1);
	/* clamped to what is committed: all of it, from LSN 1 */
	CHECK(repl_verify(r, 0, 0, UINT64_MAX, &res) == 0);
	CHECK(res.from == 1 && res.to == LAST && res.mismatches == 0);
	/* a part, in ranges from its start */
	CHECK(repl_verify(r, 1, 100, 400, &res) == 0);
	CHECK(res.from == 100 && res.to == 400 && res.ranges == 2);

	/* one byte of record BAD_LSN's payload, in replica 1's ring only */
	ring1 = log_memory(11);
	CHECK(ring1 != NULL);
	if (ring1 == NULL)
		goto close;
	/* after the epoch start's 40 bytes, records of 40 + LEN from LSN 2 */
	ring1[RING_OFF + 40 + (BAD_LSN - 2) * (40 + LEN) + 40 + 3] ^= 0x20;

	CHECK(repl_verify(r, 1, 1, N, &res) == 0);
	CHECK(res.ranges == 4);
	CHECK(res.mismatches == 1);
	CHECK(res.bad[0].from == 513 && res.bad[0].to == 768);
	expect_equal(r, 0);
	/* narrowed down: a range of one record */
	CHECK(repl_verify(r, 1, BAD_LSN, BAD_LSN, &res) == 0);
	CHECK(res.ranges == 1 && res.mismatches == 1);
	CHECK(repl_verify(r, 1, BAD_LSN + 1, BAD_LSN + 1, &res) == 0);
	CHECK(res.ranges == 1 && res.mismatches == 0);

	/* a replica that is down cannot answer */
	inproc_rep_stop(1);
	for (int t = 0; t < 500; t++) {
		struct repl_replica_status rs;

		if (repl_replica_status(r, 1, &rs) == 0 &&
		    rs.state == REPL_REPLICA_DOWN)
			break;
		usleep(10000);
	}
	CHECK(repl_verify(r, 1, 1, N, &res) == REPL_E_TIMEDOUT);
	CHECK(res.why[0] != '\0' && res.ranges == 0);
	printf(TEST_NAME ": %d records equal on both replicas; a flipped bit on "
		"one shows as range 513..768 (%s)\n", N, res.why);
close:
	CHECK(repl_close(&r) == 0);
out:
	inproc_rep_stop(0);
	if (!inproc_reps[1].stop)
		inproc_rep_stop(1);
	unlink(inproc_ppath);
	return failed;
}
