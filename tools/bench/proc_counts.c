/* SPDX-License-Identifier: BSD-3-Clause */
/* proc_counts.c -- system calls and context switches of a process */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc_counts.h"

static const char *const tracefs[] = {
	"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
	"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
};

/* the tracepoint's id, or -1 */
static long long
sys_enter_id(void)
{
	for (size_t i = 0; i < sizeof(tracefs) / sizeof(tracefs[0]); i++) {
		FILE *f = fopen(tracefs[i], "r");
		long long id;

		if (f == NULL)
			continue;
		if (fscanf(f, "%lld", &id) != 1)
			id = -1;
		fclose(f);
		if (id >= 0)
			return id;
	}
	return -1;
}

static int
open_event(long long id, pid_t tid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.inherit = 1;		/* the threads it creates count with it */
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, 0);
}

/* the switches of every thread of pid, as /proc says */
static uint64_t
task_switches(pid_t pid)
{
	char path[64], line[256];
	struct dirent *e;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		FILE *f;
		unsigned long long v;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", (int)pid,
			e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				sum += v;
		fclose(f);
	}
	closedir(d);
	return sum;
}

static uint64_t
switches(const struct proc_counts *pc)
{
	struct rusage ru;

	/* this process's own count keeps the threads that ended */
	if (pc->self && getrusage(RUSAGE_SELF, &ru) == 0)
		return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	return task_switches(pc->pid);
}

static uint64_t
syscalls(const struct proc_counts *pc)
{
	uint64_t sum = 0, v;

	for (int i = 0; i < pc->n_fds; i++)
		if (read(pc->fds[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v;
	return sum;
}

void
proc_counts_start(struct proc_counts *pc, pid_t pid)
{
	long long id = sys_enter_id();
	char path[64];
	struct dirent *e;
	DIR *d;

	memset(pc, 0, sizeof(*pc));
	pc->self = pid == 0;
	pc->pid = pid == 0 ? getpid() : pid;
	if (id < 0) {
		snprintf(pc->why, sizeof(pc->why), "no tracefs (mount -t tracefs "
			"nodev /sys/kernel/tracing)");
	} else {
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pc->pid);
		if ((d = opendir(path)) != NULL) {
			while ((e = readdir(d)) != NULL && pc->n_fds < PROC_COUNTS_TASKS_MAX) {
				int fd;

				if (e->d_name[0] == '.')
					continue;
				if ((fd = open_event(id, (pid_t)atoi(e->d_name))) < 0) {
					snprintf(pc->why, sizeof(pc->why), "perf_event_open: "
						"%s (root, or perf_event_paranoid <= -1)",
						strerror(errno));
					break;
				}
				pc->fds[pc->n_fds++] = fd;
			}
			closedir(d);
		}
		pc->have_syscalls = pc->n_fds > 0 && pc->why[0] == '\0';
		for (int i = 0; i < pc->n_fds; i++)
			(void)ioctl(pc->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	}
	pc->syscalls0 = syscalls(pc);
	pc->switches0 = switches(pc);
}

void
proc_counts_stop(struct proc_counts *pc)
{
	pc->syscalls = pc->have_syscalls ? syscalls(pc) - pc->syscalls0 : 0;
	pc->switches = switches(pc) - pc->switches0;
	for (int i = 0; i < pc->n_fds; i++)
		close(pc->fds[i]);
	pc->n_fds = 0;
}

void
proc_counts_print(const struct proc_counts *pc, const char *who, double n)
{
	if (pc->have_syscalls)
		printf("per append, %s: %.1f syscalls, %.2f context switches\n", who,
			(double)pc->syscalls / n, (double)pc->switches / n);
	else
		printf("per append, %s: %.2f context switches (syscalls not "
			"counted: %s)\n", who, (double)pc->switches / n, pc->why);
}
