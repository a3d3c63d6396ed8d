/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proc_counts.h -- the system calls and context switches of whole
 * processes over a stretch of a benchmark, to be divided by the appends
 * made meanwhile: the hot path's cost in hand-offs, beside its latency.
 *
 * System calls are counted by the kernel's raw_syscalls:sys_enter
 * tracepoint, one perf event per thread that exists when counting
 * begins, inheriting into the threads those create (perf_event_open(2));
 * that needs tracefs (mount -t tracefs nodev /sys/kernel/tracing) and the
 * right to trace the process (root, or perf_event_paranoid <= -1).
 * Without them only context switches are counted.  Context switches are
 * the sum over the process's threads of voluntary and involuntary
 * switches (/proc/PID/task/TID/status); for this process getrusage(2),
 * which keeps the switches of threads that have ended.
 */
#ifndef PROC_COUNTS_H
#define PROC_COUNTS_H 1

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_COUNTS_TASKS_MAX 64

struct proc_counts {
	pid_t pid;
	bool self;			/* this process */
	bool have_syscalls;		/* the tracepoint could be used */
	char why[160];			/* ... and if not, why */
	int fds[PROC_COUNTS_TASKS_MAX];	/* one perf event per thread */
	int n_fds;
	uint64_t syscalls0, switches0;	/* at the start */
	uint64_t syscalls, switches;	/* since the start (proc_counts_stop) */
};

/* begins counting for pid (0: this process) */
void proc_counts_start(struct proc_counts *pc, pid_t pid);
/* ends it: pc->syscalls and pc->switches since the start */
void proc_counts_stop(struct proc_counts *pc);
/*
 * "per append, WHO: S syscalls, W context switches", each divided by n
 * (without the tracepoint: the switches and why syscalls are missing)
 */
void proc_counts_print(const struct proc_counts *pc, const char *who, double n);

#endif
