/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_counts_test.c -- the benchmarks' per-append counts
 * (tools/bench/proc_counts.c) count what a process does: 2000 system
 * calls made by a thread started after counting began, and 20 sleeps
 * (each a voluntary switch), in this process and in a child that was
 * running before.  Where the syscall tracepoint cannot be used (no
 * tracefs, no right to trace) the test exits 77 saying why, after the
 * switches are checked.
 */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_counts.h"

#define CALLS	2000
#define SLEEPS	20

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static void
work(void)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < CALLS; i++)
		(void)syscall(SYS_getppid);
	for (int i = 0; i < SLEEPS; i++)
		nanosleep(&ms, NULL);
}

static void *
thread_main(void *arg)
{
	(void)arg;
	work();
	return NULL;
}

int
main(void)
{
	struct proc_counts self, child;
	int p[2], go[2], st;
	pthread_t t;
	pid_t pid;
	char c;

	/* a child that runs before its counting begins, and works once told */
	if (pipe(p) != 0 || pipe(go) != 0)
		return 99;
	if ((pid = fork()) == 0) {
		close(p[0]);
		close(go[1]);
		(void)!write(p[1], "r", 1);
		if (read(go[0], &c, 1) == 1)
			work();
		(void)!write(p[1], "d", 1);
		pause();
		_exit(0);
	}
	if (read(p[0], &c, 1) != 1)
		return 99;
	proc_counts_start(&child, pid);
	(void)!write(go[1], "g", 1);
	if (read(p[0], &c, 1) != 1)
		return 99;
	proc_counts_stop(&child);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);

	proc_counts_start(&self, 0);
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 99;
	pthread_join(t, NULL);
	proc_counts_stop(&self);

	printf("proc_counts_test: this process: %llu syscalls, %llu switches; the "
		"child: %llu syscalls, %llu switches\n",
		(unsigned long long)self.syscalls, (unsigned long long)self.switches,
		(unsigned long long)child.syscalls, (unsigned long long)child.switches);
	CHECK(self.switches >= SLEEPS);
	CHECK(child.switches >= SLEEPS);
	if (!self.have_syscalls || !child.have_syscalls) {
		if (failures)
			return 1;
		printf("SKIP: proc_counts_test: syscalls not counted here: %s\n",
			self.have_syscalls ? child.why : self.why);
		return 77;
	}
	/* the work's calls, and not wildly more (a count of something else) */
	CHECK(self.syscalls >= CALLS && self.syscalls < 20 * CALLS);
	CHECK(child.syscalls >= CALLS && child.syscalls < 20 * CALLS);
	if (failures) {
		fprintf(stderr, "proc_counts_test: %d checks failed\n", failures);
		return 1;
	}
	printf("proc_counts_test: all checks passed\n");
	return 0;
}
