/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_inproc.h -- what the tests that run a primary and its replicas in
 * one test program share: replicas (replica_run) in threads, or in a
 * child process where the test must freeze one (SIGSTOP), over ofi tcp on
 * 127.0.0.1 with crash-backend logs in /dev/shm, and a primary opened on
 * them.  Define TEST_NAME (a string, for messages) before including it.
 */
#ifndef REPL_INPROC_H
#define REPL_INPROC_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "repl.h"
#include "replica/replica.h"

#define INPROC_SIZE (1u << 20)
#define INPROC_MAX 3

#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, \
	TEST_NAME ": %s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
	failed = 1; } } while (0)

static int failed;
static const uint8_t inproc_uuid[16] = "inproc-cluster!";

struct inproc_rep {
	struct replica_cfg cfg;
	pthread_t thread;
	pid_t pid;		/* a child process; 0: a thread */
	atomic_int stop;	/* replica_cfg.stop */
	char path[128], ctl[16], data[16];
	int ret;
};

static struct inproc_rep inproc_reps[INPROC_MAX];
static char inproc_ppath[128];
static atomic_int *inproc_child_stop;
static int inproc_flush_method;		/* REPL_FLUSH_* for the primary */

static void *
inproc_rep_main(void *arg)
{
	struct inproc_rep *r = arg;

	r->ret = replica_run(&r->cfg);
	return NULL;
}

/* the ports come from base (distinct per test process) */
static inline void
inproc_rep_cfg(int i, int base, struct replica_state *state)
{
	struct inproc_rep *r = &inproc_reps[i];

	snprintf(r->path, sizeof(r->path), "/dev/shm/rpma-inproc-%d-r%d",
		(int)getpid(), i);
	snprintf(r->ctl, sizeof(r->ctl), "%d", base + 2 * i);
	snprintf(r->data, sizeof(r->data), "%d", base + 2 * i + 1);
	r->stop = 0;
	r->pid = 0;
	r->cfg = (struct replica_cfg){ .path = r->path,
		.backend = RPMA_EXT_MEM_CRASH, .size = INPROC_SIZE, .create = 1,
		.node_id = (uint32_t)(10 + i), .provider = "tcp",
		.addr = "127.0.0.1", .ctl_port = r->ctl, .data_port = r->data,
		.timeout_ms = 5000, .stop = &r->stop, .state = state };
	memcpy(r->cfg.cluster_uuid, inproc_uuid, 16);
}

/* replica i in a thread of this process */
static inline void
inproc_rep_thread(int i, int base, struct replica_state *state)
{
	inproc_rep_cfg(i, base, state);
	if (pthread_create(&inproc_reps[i].thread, NULL, inproc_rep_main,
			&inproc_reps[i]) != 0)
		exit(99);
}

static void
inproc_on_term(int sig)
{
	(void)sig;
	*inproc_child_stop = 1;
}

/* replica i in a child process (start it before any thread): SIGSTOP-able */
static inline void
inproc_rep_process(int i, int base)
{
	struct inproc_rep *r = &inproc_reps[i];

	inproc_rep_cfg(i, base, NULL);
	r->pid = fork();
	if (r->pid < 0)
		exit(99);
	if (r->pid == 0) {
		inproc_child_stop = &r->stop;
		signal(SIGTERM, inproc_on_term);
		_exit(replica_run(&r->cfg) == 0 ? 0 : 1);
	}
}

static inline void
inproc_rep_stop(int i)
{
	struct inproc_rep *r = &inproc_reps[i];

	if (r->pid > 0) {
		int status = 0;

		kill(r->pid, SIGCONT);
		kill(r->pid, SIGTERM);
		waitpid(r->pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		r->pid = 0;
	} else {
		r->stop = 1;
		pthread_join(r->thread, NULL);
		CHECK(r->ret == 0);
	}
	unlink(r->path);
}

/*
 * The primary (node 1) on replicas 0 .. n - 1: its log's first start
 * (first: made and bootstrapped) or a later one, with these timeouts
 */
static inline int
inproc_primary_with(int n, int quorum, bool first, int down_ms, int promote_wait_ms,
		struct repl **repl)
{
	struct repl_replica list[INPROC_MAX];
	struct repl_cfg c = { .path = inproc_ppath,
		.backend = REPL_BACKEND_CRASH, .size = INPROC_SIZE, .create = first,
		.bootstrap = first, .node_id = 1, .full_timeout_ms = 5000, .replicas = list,
		.n_replicas = n, .quorum = quorum, .down_timeout_ms = down_ms,
		.heartbeat_ms = 100, .promote_wait_ms = promote_wait_ms,
		.flush_method = inproc_flush_method };

	snprintf(inproc_ppath, sizeof(inproc_ppath), "/dev/shm/rpma-inproc-%d-p",
		(int)getpid());
	memcpy(c.cluster_uuid, inproc_uuid, 16);
	for (int i = 0; i < n; i++)
		list[i] = (struct repl_replica){ "127.0.0.1", inproc_reps[i].ctl };
	return repl_open(&c, repl);
}

/* a new primary (node 1) on replicas 0 .. n - 1 */
static inline int
inproc_primary(int n, int quorum, struct repl **repl)
{
	return inproc_primary_with(n, quorum, true, 5000, 10000, repl);
}

/* wait up to ms for replica i to be a streaming member */
static inline int
inproc_wait_member(struct repl *repl, int i, int ms)
{
	struct repl_replica_status rs;

	for (int t = 0; t < ms / 10; t++) {
		if (repl_replica_status(repl, i, &rs) == 0 &&
		    rs.state == REPL_REPLICA_STREAMING && rs.member)
			return 0;
		usleep(10000);
	}
	return -1;
}

/* wait up to ms for replica i to stream with everything up to lsn flushed */
static inline int
inproc_wait_flushed(struct repl *repl, int i, uint64_t lsn, int ms)
{
	struct repl_replica_status rs;

	for (int t = 0; t < ms / 10; t++) {
		if (repl_replica_status(repl, i, &rs) == 0 &&
		    rs.state == REPL_REPLICA_STREAMING && rs.flushed_lsn >= lsn)
			return 0;
		usleep(10000);
	}
	return -1;
}

#endif
