/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_membership.c -- the membership and its changes, on a primary and
 * four replicas (replica_run in threads, ofi tcp on 127.0.0.1):
 *
 *  1. the first start stores configuration epoch 1, listing every node
 *     by node id, in every caught-up log; a restart with another k is
 *     refused unless it reconfigures;
 *  2. replacing one replica by another at a new address, n and k the
 *     same, is a change: J then F, two configuration epochs up, and the
 *     replaced node no longer listed (C5);
 *  3. a change (k 1 -> 2) commits once k_S + 1 nodes of S hold J;
 *  4. with one node of S stopped before it stores J, the change does not
 *     commit: the membership stays joint and a record is not durable
 *     without S's quorum, although T's quorum holds it; another change
 *     is refused meanwhile;
 *  5. a promotion under S is refused when a reachable node of S holds J;
 *  6. a promotion under J needs both quorums: refused with the old one's
 *     met and the new one's not, then promoted once both are; it
 *     finishes the change once k_S + 1 nodes of S hold J, and the record
 *     left behind in 4 is kept;
 *  7. a version 1 membership (no node ids) is used by the node that
 *     wrote it only, whose promotion stores it as version 2;
 *  8. a node holding another membership of the promoter's configuration
 *     epoch does not count toward its promotion.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "common/membership.h"
#include "repl.h"
#include "replica/replica.h"
#include "../lib/test_ports.h"

#define SIZE (1u << 20)
#define NREP 4
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, \
	"repl_membership: %s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
	failed = 1; } } while (0)

static const uint8_t uuid[16] = "membership-test";
static int failed;

struct rep {
	struct replica_cfg cfg;
	pthread_t thread;
	atomic_int stop;	/* replica_cfg.stop, set by the test's thread */
	char path[128], ctl[16], data[16];
	bool running;
	int ret;
};

static struct rep reps[NREP];
static char ppath[128], pport[16];

static void *
rep_main(void *arg)
{
	struct rep *r = arg;

	r->ret = replica_run(&r->cfg);
	return NULL;
}

static void
rep_start(int i, int base)
{
	struct rep *r = &reps[i];

	snprintf(r->path, sizeof(r->path), "/dev/shm/rpma-memb-%d-r%d", (int)getpid(), i);
	snprintf(r->ctl, sizeof(r->ctl), "%d", base + 2 * i);
	snprintf(r->data, sizeof(r->data), "%d", base + 2 * i + 1);
	r->stop = 0;
	r->cfg = (struct replica_cfg){ .path = r->path, .backend = RPMA_EXT_MEM_CRASH,
		.size = SIZE, .create = 1, .node_id = (uint32_t)(10 + i),
		.provider = "tcp", .addr = "127.0.0.1", .ctl_port = r->ctl,
		.data_port = r->data, .timeout_ms = 2000, .stop = &r->stop };
	memcpy(r->cfg.cluster_uuid, uuid, 16);
	if (pthread_create(&r->thread, NULL, rep_main, r) != 0)
		exit(99);
	r->running = true;
	usleep(100000);
}

static void
rep_stop(int i)
{
	if (!reps[i].running)
		return;
	reps[i].stop = 1;
	pthread_join(reps[i].thread, NULL);
	reps[i].running = false;
	CHECK(reps[i].ret == 0);
}

/* the membership a (closed) log holds (config_epoch 0: none) */
static struct membership
stored(const char *path)
{
	struct rpma_ext_mem *mem = NULL;
	struct membership ms = { 0 };

	if (rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem) == 0) {
		membership_load(mem, &ms);
		rpma_ext_mem_close(&mem);
	}
	return ms;
}

/*
 * Both membership copies of a (closed) log made a version 1 membership:
 * the replicas listed (their control ports), k, as the encoder before
 * node ids wrote it.
 */
static int
put_v1(const char *path, uint64_t epoch, uint32_t k, const int *list, int n)
{
	struct rpma_ext_mem *mem = NULL;
	uint8_t b[544] = { 0 };
	int ret;

	memcpy(b, "RPLMEMB\001", 8);
	for (int i = 0; i < 8; i++)
		b[8 + i] = (uint8_t)(epoch >> (8 * i));
	b[16] = (uint8_t)k;
	b[20] = (uint8_t)n;
	for (int i = 0; i < n; i++) {
		uint16_t port = (uint16_t)atoi(reps[list[i]].ctl);

		b[24 + 64 * i + 4] = (uint8_t)port;
		b[24 + 64 * i + 5] = (uint8_t)(port >> 8);
		strcpy((char *)b + 24 + 64 * i + 8, "127.0.0.1");
	}
	{
		uint32_t crc = rpma_crc32c(0, b, 540);

		for (int i = 0; i < 4; i++)
			b[540 + i] = (uint8_t)(crc >> (8 * i));
	}
	if ((ret = rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem)))
		return ret;
	/* the version 2 bytes past the 544 go too, as the old format had them */
	ret = rpma_ext_mem_memcpy(mem, MEMBERSHIP_OFF, b, sizeof(b)) ||
		rpma_ext_mem_memcpy(mem, 4096 + MEMBERSHIP_OFF, b, sizeof(b));
	{
		uint8_t zero[MEMBERSHIP_SIZE - 544] = { 0 };

		ret = ret || rpma_ext_mem_memcpy(mem, MEMBERSHIP_OFF + 544, zero,
				sizeof(zero)) ||
			rpma_ext_mem_memcpy(mem, 4096 + MEMBERSHIP_OFF + 544, zero,
				sizeof(zero)) ||
			rpma_ext_mem_persist(mem, 0, 8192);
	}
	rpma_ext_mem_close(&mem);
	return ret;
}

/* both membership copies of a (closed) log made ms, whatever they held */
static int
put_ms(const char *path, const struct membership *ms)
{
	struct rpma_ext_mem *mem = NULL;
	uint8_t b[MEMBERSHIP_SIZE];
	const char *why;
	int ret;

	if (membership_encode(ms, b, &why))
		return -1;
	if ((ret = rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, 0, 0, &mem)))
		return ret;
	ret = rpma_ext_mem_memcpy(mem, MEMBERSHIP_OFF, b, sizeof(b)) ||
		rpma_ext_mem_memcpy(mem, 4096 + MEMBERSHIP_OFF, b, sizeof(b)) ||
		rpma_ext_mem_persist(mem, 0, 8192);
	rpma_ext_mem_close(&mem);
	return ret;
}

/* the entry of node id in ms: its flags (0: not listed) */
static unsigned
flags_of(const struct membership *ms, uint32_t id)
{
	int at = membership_find(ms, id, NULL, 0);

	return at < 0 ? 0 : ms->m[at].flags;
}

/*
 * A primary on log path (node id with a new log), its replicas the
 * listed ones (-1 ends the list; 100 is node 1, the first primary, at
 * its control port), k; promote_wait_ms wait.
 */
static int
open_node(const char *path, uint32_t id, const int *list, int k,
		int reconfigure, int wait, struct repl **r)
{
	struct repl_replica peers[NREP + 1];
	struct repl_cfg c = { .path = path, .backend = REPL_BACKEND_CRASH,
		.size = SIZE, .create = access(path, F_OK) != 0, .node_id = id,
		.bootstrap = access(path, F_OK) != 0,
		.full_timeout_ms = 5000, .replicas = peers, .quorum = k,
		.down_timeout_ms = 1000, .heartbeat_ms = 100,
		.promote_wait_ms = wait, .reconfigure = reconfigure,
		.listen_addr = "127.0.0.1", .listen_port = pport };
	int n = 0;

	memcpy(c.cluster_uuid, uuid, 16);
	for (; list[n] >= 0; n++)
		peers[n] = (struct repl_replica){ "127.0.0.1",
			list[n] == 100 ? pport : reps[list[n]].ctl };
	c.n_replicas = n;
	if (id != 1)
		c.listen_port = NULL;	/* its port is its replica's */
	*r = NULL;
	return repl_open(&c, r);
}

static int
open_primary(const int *list, int k, int reconfigure, int wait, struct repl **r)
{
	return open_node(ppath, 1, list, k, reconfigure, wait, r);
}

/* wait up to ms for the first n configured replicas all to be members */
static bool
members(struct repl *r, int n, int ms)
{
	for (int t = 0; t < ms / 50; t++) {
		int m = 0;

		for (int i = 0; i < n; i++) {
			struct repl_replica_status rs;

			if (repl_replica_status(r, i, &rs) == 0)
				m += rs.member && rs.state == REPL_REPLICA_STREAMING;
		}
		if (m == n)
			return true;
		usleep(50000);
	}
	return false;
}

/* wait up to ms for the first n configured replicas to hold epoch e */
static bool
holding(struct repl *r, int n, uint64_t e, int ms)
{
	for (int t = 0; t < ms / 50; t++) {
		int h = 0;

		for (int i = 0; i < n; i++) {
			struct repl_replica_status rs;

			if (repl_replica_status(r, i, &rs) == 0)
				h += rs.config_epoch == e;
		}
		if (h == n)
			return true;
		usleep(50000);
	}
	return false;
}

/* append records; the last one's LSN */
static uint64_t
append(struct repl *r, int n)
{
	uint64_t lsn = 0;

	for (int i = 0; i < n; i++)
		CHECK(repl_append(r, "membership", 10, &lsn) == 0);
	return lsn;
}

static struct repl_status
status(struct repl *r)
{
	struct repl_status st = { 0 };

	CHECK(repl_status(r, &st) == 0);
	return st;
}

int
main(void)
{
	int base = test_ports(24);
	struct repl *r = NULL;
	struct repl_status st;
	struct membership ms;
	uint64_t lsn, left;

	/* REPL_TEST_VERBOSE: the engine's notices on stderr */
	if (getenv("REPL_TEST_VERBOSE")) {
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE);
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_NOTICE);
	}
	snprintf(ppath, sizeof(ppath), "/dev/shm/rpma-memb-%d-p", (int)getpid());
	snprintf(pport, sizeof(pport), "%d", base + 20);
	for (int i = 0; i < NREP; i++)
		rep_start(i, base);

	/* 1. the first start: epoch 1, every node by node id */
	CHECK(open_primary((int[]){ 0, 1, -1 }, 1, 0, 3000, &r) == 0);
	if (r == NULL)
		goto out;
	st = status(r);
	CHECK(st.config_epoch == 1 && !st.config_joint);
	CHECK(repl_wait_durable(r, append(r, 20), 10000) == 0);
	CHECK(members(r, 2, 5000));
	{
		/* the running primary's own view: what its log stores */
		struct repl_membership live;

		CHECK(repl_membership(r, &live) == 0);
		CHECK(live.config_epoch == 1 && live.version == 2 && live.k == 1 &&
			live.count == 3 && live.n_new == 3 && live.flags == 0);
		CHECK(live.nodes[0].node_id == 1 && live.nodes[0].port != 0);
		CHECK(repl_membership(NULL, &live) == REPL_E_INVAL &&
			repl_membership(r, NULL) == REPL_E_INVAL);
	}
	repl_close(&r);
	ms = stored(ppath);
	CHECK(ms.config_epoch == 1 && ms.count == 3 && ms.k == 1 && ms.flags == 0);
	CHECK(flags_of(&ms, 1) == MEMBER_F_NEW && flags_of(&ms, 10) == MEMBER_F_NEW &&
		flags_of(&ms, 11) == MEMBER_F_NEW);
	CHECK(ms.m[membership_find(&ms, 10, NULL, 0)].incarnation != 0);
	/* another k: refused without reconfigure, and k above n in any case */
	CHECK(open_primary((int[]){ 0, 1, -1 }, 2, 0, 3000, &r) == REPL_E_MEMBERSHIP);
	CHECK(open_primary((int[]){ 0, -1 }, 2, 1, 3000, &r) == REPL_E_INVAL);
	CHECK(stored(ppath).config_epoch == 1);
	printf("repl_membership: configuration epoch 1 lists nodes 1, 10, 11\n");

	/* 2. C5: replica 1 replaced by replica 2, n and k the same */
	CHECK(open_primary((int[]){ 0, 2, -1 }, 1, 0, 3000, &r) == REPL_E_MEMBERSHIP);
	CHECK(open_primary((int[]){ 0, 2, -1 }, 1, 1, 5000, &r) == 0);
	if (r == NULL)
		goto out;
	st = status(r);
	CHECK(st.config_epoch == 3 && !st.config_joint);
	CHECK(repl_wait_durable(r, append(r, 20), 10000) == 0);
	CHECK(members(r, 2, 5000));
	repl_close(&r);
	ms = stored(ppath);
	CHECK(ms.config_epoch == 3 && ms.count == 3 &&
		ms.flags == MEMBERSHIP_F_FROM_JOINT);
	CHECK(flags_of(&ms, 10) && flags_of(&ms, 12) && !flags_of(&ms, 11));
	printf("repl_membership: a replaced address is a change: configuration "
		"epoch 1 -> 3\n");

	/* 3. k 1 -> 2 with every node of S up: committed at once */
	CHECK(open_primary((int[]){ 0, 2, -1 }, 2, 1, 5000, &r) == 0);
	if (r == NULL)
		goto out;
	st = status(r);
	CHECK(st.config_epoch == 5 && !st.config_joint);
	CHECK(repl_wait_durable(r, append(r, 20), 10000) == 0);
	CHECK(members(r, 2, 5000));
	repl_close(&r);
	CHECK(stored(ppath).config_epoch == 5 && stored(ppath).k == 2);

	/* 4. replica 0 of S stopped before it holds J: no F, no quorum of S */
	rep_stop(0);
	CHECK(stored(reps[0].path).config_epoch == 5);
	CHECK(open_primary((int[]){ 0, 2, 3, -1 }, 2, 1, 1500, &r) == 0);
	if (r == NULL)
		goto out;
	st = status(r);
	CHECK(st.config_epoch == 6 && st.config_joint);
	/* T's quorum (replicas 2 and 3 hold J) is there, S's is not */
	{
		bool up = false;

		for (int t = 0; t < 100 && !up; t++) {
			struct repl_replica_status a, b;

			up = repl_replica_status(r, 1, &a) == 0 && a.member &&
				a.config_epoch == 6 &&
				repl_replica_status(r, 2, &b) == 0 && b.member &&
				b.config_epoch == 6;
			if (!up)
				usleep(50000);
		}
		CHECK(up);
	}
	{
		struct repl_membership live;

		CHECK(repl_membership(r, &live) == 0);
		CHECK(live.config_epoch == 6 && (live.flags & REPL_MEMBERSHIP_JOINT) &&
			live.k == 2 && live.k_old == 2 && live.n_old == 3 &&
			live.n_new == 4);
	}
	left = append(r, 1);
	CHECK(repl_wait_durable(r, left, 1500) == REPL_E_TIMEDOUT);
	st = status(r);
	CHECK(st.config_joint && st.commit_lsn < left);
	repl_close(&r);
	ms = stored(ppath);
	CHECK(ms.config_epoch == 6 && ms.flags == MEMBERSHIP_F_JOINT &&
		ms.k == 2 && ms.k_old == 2);
	CHECK(flags_of(&ms, 10) == (MEMBER_F_NEW | MEMBER_F_OLD) &&
		flags_of(&ms, 13) == MEMBER_F_NEW);
	/* one change at a time: another one is refused while J is stored */
	CHECK(open_primary((int[]){ 0, 2, -1 }, 1, 1, 1500, &r) == REPL_E_MEMBERSHIP);
	CHECK(stored(ppath).config_epoch == 6);
	printf("repl_membership: a change without k_S + 1 nodes of S holding J "
		"stays joint; LSN %llu not durable\n", (unsigned long long)left);

	/* 5. replica 0 (holding S) cannot promote: replica 2 of S holds J */
	CHECK(open_node(reps[0].path, 10, (int[]){ 100, 2, -1 }, 2, 0, 1500, &r) ==
		REPL_E_NO_QUORUM);
	CHECK(r == NULL);
	CHECK(stored(reps[0].path).config_epoch == 5);
	printf("repl_membership: a promotion under S refused: a node of S holds J\n");

	/* 6. under J: the old quorum alone (node 1 itself) is not enough */
	rep_start(0, base);
	rep_stop(2);
	rep_stop(3);
	CHECK(open_primary((int[]){ 0, 2, 3, -1 }, 2, 0, 1500, &r) == REPL_E_NO_QUORUM);
	CHECK(stored(ppath).config_epoch == 6);
	/*
	 * Replicas 2 and 3 back: both quorums.  (Replica 2 follows the
	 * epoch of replica 0's refused promotion: this one goes above it.)
	 * The change commits once replica 0, of S, holds J too.
	 */
	rep_start(2, base);
	rep_start(3, base);
	CHECK(open_primary((int[]){ 0, 2, 3, -1 }, 2, 0, 5000, &r) == 0);
	if (r == NULL)
		goto out;
	st = status(r);
	CHECK(st.config_epoch == 7 && !st.config_joint);
	lsn = append(r, 5);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	CHECK(holding(r, 3, 7, 5000));
	{
		/* the record of 4 is there, as it was */
		char buf[16];
		size_t len = 0;

		CHECK(repl_read(r, left, buf, sizeof(buf), &len) == 0 && len == 10 &&
			memcmp(buf, "membership", 10) == 0);
	}
	repl_close(&r);
	ms = stored(ppath);
	CHECK(ms.config_epoch == 7 && ms.flags == MEMBERSHIP_F_FROM_JOINT &&
		ms.count == 4 && ms.k == 2);
	printf("repl_membership: a promotion under J needs both quorums, then "
		"commits the change (configuration epoch 7)\n");

	/* 7. every log holds a version 1 membership (epoch 9): only its writer
	 * may use it, and stores it as version 2 (epoch 10) */
	for (int i = 0; i < NREP; i++)
		rep_stop(i);
	{
		const int v1_reps[] = { 0, 2, 3 };

		CHECK(put_v1(ppath, 9, 2, v1_reps, 3) == 0);
		for (int i = 0; i < 3; i++)
			CHECK(put_v1(reps[v1_reps[i]].path, 9, 2, v1_reps, 3) == 0);
	}
	ms = stored(ppath);
	CHECK(ms.v1 && ms.config_epoch == 9 && ms.count == 3);
	rep_start(2, base);
	rep_start(3, base);
	CHECK(open_node(reps[0].path, 10, (int[]){ 100, 2, 3, -1 }, 2, 0, 1500, &r) ==
		REPL_E_NOT_MEMBER);
	rep_start(0, base);
	CHECK(open_primary((int[]){ 0, 2, 3, -1 }, 2, 0, 5000, &r) == 0);
	if (r == NULL)
		goto out;
	st = status(r);
	CHECK(st.config_epoch == 10 && !st.config_joint);
	CHECK(repl_wait_durable(r, append(r, 5), 10000) == 0);
	CHECK(holding(r, 3, 10, 5000));
	repl_close(&r);
	ms = stored(ppath);
	CHECK(!ms.v1 && ms.config_epoch == 10 && ms.flags == 0 && ms.count == 4 &&
		flags_of(&ms, 1) && flags_of(&ms, 10) && flags_of(&ms, 12) &&
		flags_of(&ms, 13));
	printf("repl_membership: a version 1 membership: its writer stores it as "
		"version 2 (configuration epoch 10); a replica cannot use it\n");

	/*
	 * 8. another membership with the same configuration epoch (as a
	 * superseded primary's change would leave it) does not count: node
	 * 10 promoting with node 1 and replica 3 down needs replica 2, whose
	 * log holds a membership of epoch 10 that is not node 10's.
	 */
	for (int i = 0; i < NREP; i++)
		rep_stop(i);
	{
		struct membership real = stored(reps[2].path), other = real;

		other.k = 1;
		CHECK(real.config_epoch == 10 && real.k == 2);
		CHECK(put_ms(reps[2].path, &other) == 0);
		CHECK(stored(reps[2].path).k == 1);
		rep_start(2, base);
		CHECK(open_node(reps[0].path, 10, (int[]){ 100, 2, 3, -1 }, 2, 0,
			1500, &r) == REPL_E_NO_QUORUM);
		CHECK(r == NULL);
		repl_close(&r);
		rep_stop(2);
		/* the control: the same with replica 2 holding epoch 10 itself */
		CHECK(put_ms(reps[2].path, &real) == 0);
		rep_start(2, base);
		CHECK(open_node(reps[0].path, 10, (int[]){ 100, 2, 3, -1 }, 2, 0,
			5000, &r) == 0);
		repl_close(&r);
		rep_stop(2);
	}
	printf("repl_membership: a membership of the same configuration epoch "
		"that is another one does not count toward a promotion\n");
out:
	for (int i = 0; i < NREP; i++)
		rep_stop(i);
	/* every node of the last configuration holds it */
	CHECK(stored(reps[0].path).config_epoch == 10);
	CHECK(stored(reps[2].path).config_epoch == 10);
	CHECK(stored(reps[3].path).config_epoch == 10);
	/* the replaced node never got F of the change that removed it */
	CHECK(stored(reps[1].path).config_epoch < 3);
	for (int i = 0; i < NREP; i++)
		unlink(reps[i].path);
	unlink(ppath);
	return failed;
}
