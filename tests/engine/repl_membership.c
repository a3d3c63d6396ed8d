/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_membership.c -- the membership is stored with its own
 * configuration epoch: the first start stores it in every log (a replica
 * gets it once it caught up, and only then counts toward the quorum); a
 * restart with another n or k is refused unless it reconfigures; a
 * reconfiguration that would leave fewer replicas than the quorum is
 * refused; one that adds a replica takes the next configuration epoch, and
 * the new replica holds it after catching up.  A torn store keeps the
 * previous membership.  Replicas run in threads (replica_run), over ofi
 * tcp on 127.0.0.1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "membership.h"
#include "repl.h"
#include "replica.h"

#define SIZE (1u << 20)
#define NREP 3
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, \
	"repl_membership: %s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
	failed = 1; } } while (0)

static const uint8_t uuid[16] = "membership-test";
static int failed;

struct rep {
	struct replica_cfg cfg;
	pthread_t thread;
	volatile sig_atomic_t stop;
	char path[128], ctl[8], data[8];
	int ret;
};

static struct rep reps[NREP];
static char ppath[128];

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
}

static void
rep_stop(int i)
{
	reps[i].stop = 1;
	pthread_join(reps[i].thread, NULL);
	CHECK(reps[i].ret == 0);
}

/* the membership a log holds (config_epoch 0: none) */
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

static int
open_primary(int n, int k, int reconfigure, struct repl **r)
{
	struct repl_replica list[NREP];
	struct repl_cfg c = { .path = ppath, .backend = REPL_BACKEND_CRASH,
		.size = SIZE, .create = access(ppath, F_OK) != 0, .node_id = 1,
		.bootstrap = access(ppath, F_OK) != 0,
		.full_timeout_ms = 5000, .replicas = list, .n_replicas = n,
		.quorum = k, .down_timeout_ms = 2000, .heartbeat_ms = 100,
		.promote_wait_ms = 3000, .reconfigure = reconfigure };

	memcpy(c.cluster_uuid, uuid, 16);
	for (int i = 0; i < n; i++)
		list[i] = (struct repl_replica){ "127.0.0.1", reps[i].ctl };
	return repl_open(&c, r);
}

/* append some records, wait for them, then for every replica to be a member */
static void
append_and_settle(struct repl *r, int n)
{
	uint64_t lsn = 0;
	int members = 0;

	for (int i = 0; i < 20; i++)
		CHECK(repl_append(r, "membership", 10, &lsn) == 0);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
	for (int tries = 0; tries < 100 && members < n; tries++) {
		members = 0;
		for (int i = 0; i < n; i++) {
			struct repl_replica_status rs;

			if (repl_replica_status(r, i, &rs) == 0)
				members += rs.member;
		}
		if (members < n)
			usleep(50000);
	}
	CHECK(members == n);
}

static void
torn_store(void)
{
	char path[128];
	struct rpma_ext_mem *mem = NULL;
	struct membership a = { .config_epoch = 4, .quorum = 1, .n = 1 }, b, got;
	uint8_t *base;

	snprintf(path, sizeof(path), "/dev/shm/rpma-memb-%d-torn", (int)getpid());
	a.m[0].port = 7000;
	strcpy(a.m[0].host, "replica-a");
	b = a;
	b.config_epoch = 5;
	b.n = 2;
	b.m[1].port = 7001;
	strcpy(b.m[1].host, "replica-b");
	CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, path, SIZE, RPMA_EXT_MEM_CREATE,
		&mem) == 0);
	if (mem == NULL)
		return;
	membership_load(mem, &got);
	CHECK(got.config_epoch == 0);
	CHECK(membership_store(mem, &a) == 0);
	CHECK(membership_store(mem, &b) == 0);
	membership_load(mem, &got);
	CHECK(got.config_epoch == 5 && got.n == 2 &&
		strcmp(got.m[1].host, "replica-b") == 0);
	/* the next store goes over epoch 4's copy; tear it: 5 stays */
	b.config_epoch = 6;
	CHECK(membership_store(mem, &b) == 0);
	rpma_ext_mem_get_ptr(mem, (void **)&base);
	for (int k = 0; k < 2; k++) {
		uint8_t *copy = base + (size_t)k * 4096 + MEMBERSHIP_OFF;

		if (copy[8] == 6)	/* epoch 6's copy: cut its crc */
			copy[540] ^= 0x5a;
	}
	membership_load(mem, &got);
	CHECK(got.config_epoch == 5);
	rpma_ext_mem_close(&mem);
	unlink(path);
}

int
main(void)
{
	int base = 25000 + (int)(getpid() % 1000) * 8;
	struct repl *r = NULL;
	struct repl_status st;
	struct membership ms;

	snprintf(ppath, sizeof(ppath), "/dev/shm/rpma-memb-%d-p", (int)getpid());
	torn_store();
	for (int i = 0; i < NREP; i++)
		rep_start(i, base);
	usleep(300000);

	/* the first start: configuration epoch 1, in every caught-up log */
	CHECK(open_primary(2, 1, 0, &r) == 0);
	if (r == NULL)
		goto out;
	repl_status(r, &st);
	CHECK(st.config_epoch == 1);
	append_and_settle(r, 2);
	repl_close(&r);

	/* a restart with another n or k is refused, nothing changed */
	CHECK(open_primary(1, 1, 0, &r) == REPL_E_MEMBERSHIP);
	CHECK(open_primary(2, 2, 0, &r) == REPL_E_MEMBERSHIP);
	/* fewer replicas than the quorum: refused even when reconfiguring */
	CHECK(open_primary(1, 2, 1, &r) == REPL_E_INVAL);
	CHECK(r == NULL);
	ms = stored(ppath);
	CHECK(ms.config_epoch == 1 && ms.n == 2 && ms.quorum == 1);

	/* the same n and k start as before */
	CHECK(open_primary(2, 1, 0, &r) == 0);
	repl_status(r, &st);
	CHECK(st.config_epoch == 1);
	repl_close(&r);

	/* a third replica: the next configuration epoch, after catching up */
	CHECK(open_primary(3, 1, 1, &r) == 0);
	if (r == NULL)
		goto out;
	repl_status(r, &st);
	CHECK(st.config_epoch == 2);
	append_and_settle(r, 3);
	repl_close(&r);
	ms = stored(ppath);
	CHECK(ms.config_epoch == 2 && ms.n == 3);
	printf("repl_membership: configuration epochs 1 and 2 stored; restarts "
		"with another n or k refused\n");
out:
	for (int i = 0; i < NREP; i++)
		rep_stop(i);
	for (int i = 0; i < NREP; i++) {
		ms = stored(reps[i].path);
		/* replicas 0 and 1 were members of both, 2 of the second */
		CHECK(ms.config_epoch == 2);
		unlink(reps[i].path);
	}
	unlink(ppath);
	return failed;
}
