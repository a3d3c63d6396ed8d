/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_process.h -- the process_* families every Prometheus client
 * library exports (repld(8), METRICS): start time, memory, file
 * descriptors and CPU time of the daemon, read from /proc at each scrape.
 * A value that cannot be read (no /proc, a line it does not understand)
 * leaves its family without a sample.
 */
#ifndef REPLD_METRICS_PROCESS_H
#define REPLD_METRICS_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "metrics_text.h"

/* what metrics take of /proc/PID/stat (proc(5)) */
struct proc_stat {
	uint64_t utime_ticks, stime_ticks;	/* CPU time, clock ticks */
	uint64_t start_ticks;			/* after boot, clock ticks */
	uint64_t vsize_bytes;
	uint64_t rss_pages;
};

/*
 * The text of /proc/PID/stat (one line) into *st: 0, or -1 with why in
 * err (no "(comm)", fewer fields than rss, a field that is not a number).
 */
int proc_stat_parse(const char *text, struct proc_stat *st, char *err,
		size_t errlen);

/* one line of /proc/stat: 1 and *btime for "btime N", 0 for another, -1 bad */
int proc_btime_line(const char *line, uint64_t *btime);

/* the six families, with this process's samples */
void metrics_process_text(struct mtext *t);

#endif
