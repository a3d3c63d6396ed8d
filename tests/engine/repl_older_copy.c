/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_older_copy.c -- a replica whose log goes back to an older copy,
 * seen by the primary's peer floors (engine/log/peer_floor.h): a primary
 * (node 1) and replicas 0 and 1 (nodes 10 and 11, k = 1) in one process.
 *
 * Both replicas catch up and store the membership (configuration epoch
 * 1).  Replica 1 stops and its log comes back without it: the state of a
 * copy taken after it promised the primary's epoch and before it stored
 * the membership.  It keeps its incarnation, so it looks like itself, but
 * a membership never goes down while a log lives:
 *
 *  - the primary's link does not stream to it: it stays down, its reason
 *    naming the older copy and the two configuration epochs, and it never
 *    becomes a member; records are durable with replica 0 meanwhile;
 *  - the primary's log keeps what it found: closed and promoted again,
 *    the promotion does not count replica 1 (it promotes with replica 0)
 *    and its link refuses replica 1 again;
 *  - made anew (another incarnation), replica 1 catches up and is a
 *    member, and the primary's log then holds its new incarnation's floor.
 *
 * Without the floors replica 1 streams and becomes a member again.
 */
#define TEST_NAME "repl_older_copy"
#include "repl_inproc.h"

#include "common/membership.h"
#include "log/peer_floor.h"
#include "../lib/test_ports.h"

/* replica i stops; its log stays */
static void
rep_halt(int i)
{
	struct inproc_rep *r = &inproc_reps[i];

	r->stop = 1;
	pthread_join(r->thread, NULL);
	CHECK(r->ret == 0);
}

/* replica i starts again on the log its path holds (a new one if none) */
static void
rep_again(int i)
{
	struct inproc_rep *r = &inproc_reps[i];

	r->stop = 0;
	if (pthread_create(&r->thread, NULL, inproc_rep_main, r) != 0)
		exit(99);
}

/* the stopped log at path holds no membership any more, in either copy */
static void
drop_membership(const char *path)
{
	struct rpma_ext_mem *mem = NULL;
	struct membership ms;
	uint8_t *base;

	CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem) == 0);
	if (mem == NULL)
		return;
	membership_load(mem, &ms);
	CHECK(ms.config_epoch == 1);
	rpma_ext_mem_get_ptr(mem, (void **)&base);
	memset(base + MEMBERSHIP_OFF, 0, MEMBERSHIP_SIZE);
	memset(base + 4096 + MEMBERSHIP_OFF, 0, MEMBERSHIP_SIZE);
	CHECK(rpma_ext_mem_persist(mem, 0, 8192) == 0);
	membership_load(mem, &ms);
	CHECK(ms.config_epoch == 0);
	rpma_ext_mem_close(&mem);
}

/* the primary, on its log: the first start (bootstrap) or a later one */
static int
primary(bool first, struct repl **repl)
{
	return inproc_primary_with(2, 1, first, 2000, 3000, repl);
}

/*
 * Replica i is refused as an older copy (its reason says so and contains
 * `want`) within ms, and is no member for another second.
 */
static void
check_refused(struct repl *r, int i, const char *want, int ms)
{
	struct repl_replica_status rs = { 0 };
	bool seen = false;

	for (int t = 0; t < ms / 10 && !seen; t++) {
		usleep(10000);
		seen = repl_replica_status(r, i, &rs) == 0 &&
			rs.state == REPL_REPLICA_DOWN &&
			strstr(rs.why, "older copy") != NULL;
	}
	if (!seen)
		fprintf(stderr, TEST_NAME ": replica %d not refused as an older "
			"copy: state %d, member %d, why \"%s\"\n", i, (int)rs.state,
			rs.member, rs.why);
	CHECK(seen);
	if (seen && strstr(rs.why, want) == NULL) {
		fprintf(stderr, TEST_NAME ": reason \"%s\" lacks \"%s\"\n", rs.why,
			want);
		CHECK(0);
	}
	printf(TEST_NAME ": replica %d: %s\n", i, rs.why);
	for (int t = 0; t < 100; t++) {
		CHECK(repl_replica_status(r, i, &rs) == 0);
		CHECK(rs.state != REPL_REPLICA_STREAMING && !rs.member);
		if (rs.state == REPL_REPLICA_STREAMING || rs.member) {
			fprintf(stderr, TEST_NAME ": replica %d: state %d, member "
				"%d, why \"%s\"\n", i, (int)rs.state, rs.member,
				rs.why);
			break;
		}
		usleep(10000);
	}
}

static void
append_durable(struct repl *r, int n)
{
	uint64_t lsn = 0;

	for (int k = 0; k < n; k++)
		CHECK(repl_append(r, "older-copy", 10, &lsn) == 0);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
}

/* what the primary's (closed) log remembers of node_id */
static struct peer_floor
floor_of(uint32_t node_id)
{
	struct rpma_ext_mem *mem = NULL;
	struct peer_floors t = { 0 };
	struct peer_floor f = { 0 };
	const struct peer_floor *e;

	CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, inproc_ppath, 0, 0, &mem) == 0);
	if (mem == NULL)
		return f;
	peer_floors_load(mem, &t);
	rpma_ext_mem_close(&mem);
	if ((e = peer_floor_find(&t, node_id)) != NULL)
		f = *e;
	return f;
}

int
main(void)
{
	int base = test_ports(8);
	struct repl *r = NULL;
	struct peer_floor f;
	uint64_t inc;

	inproc_rep_thread(0, base, NULL);
	inproc_rep_thread(1, base, NULL);
	usleep(300000);
	CHECK(primary(true, &r) == 0);
	if (r == NULL)
		goto out;
	append_durable(r, 20);
	CHECK(inproc_wait_member(r, 0, 10000) == 0);
	CHECK(inproc_wait_member(r, 1, 10000) == 0);

	/* replica 1's log goes back to before it stored the membership */
	rep_halt(1);
	drop_membership(inproc_reps[1].path);
	rep_again(1);
	check_refused(r, 1, "configuration epoch 0, below the 1", 10000);
	append_durable(r, 20);		/* with replica 0: k = 1 */
	CHECK(repl_close(&r) == 0);

	/* the primary's log remembers: promoted again, without replica 1 */
	f = floor_of(11);
	CHECK(f.node_id == 11 && (f.flags & PEER_FLOOR_F_OLDER_COPY) &&
		f.config == 1 && f.promise != 0);
	inc = f.incarnation;
	CHECK(floor_of(10).config == 1 && floor_of(10).flags == 0);
	CHECK(primary(false, &r) == 0);
	if (r == NULL)
		goto out;
	check_refused(r, 1, "older copy", 10000);
	append_durable(r, 20);

	/* made anew: a new incarnation, caught up, a member */
	rep_halt(1);
	unlink(inproc_reps[1].path);
	rep_again(1);
	CHECK(inproc_wait_member(r, 1, 10000) == 0);
	append_durable(r, 20);
	CHECK(repl_close(&r) == 0);
	f = floor_of(11);
	CHECK(f.node_id == 11 && f.flags == 0 && f.incarnation != inc &&
		f.config == 1 && f.promise != 0);
out:
	if (r)
		repl_close(&r);
	inproc_rep_stop(0);
	inproc_rep_stop(1);
	unlink(inproc_ppath);
	printf(TEST_NAME ": %s\n", failed ? "FAIL" : "ok");
	return failed ? 1 : 0;
}
