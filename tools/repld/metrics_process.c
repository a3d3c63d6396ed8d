/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_process.c -- the process_* families (metrics_process.h).
 *
 * /proc is read afresh at each scrape and parsed whole: the command name
 * in /proc/self/stat may hold spaces and parentheses, so the fields are
 * counted from its last ')'.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "metrics_process.h"

/* fields of /proc/PID/stat, counted from 1 (proc(5)) */
#define F_STATE		3	/* the first after "(comm)" */
#define F_UTIME		14
#define F_STIME		15
#define F_STARTTIME	22
#define F_VSIZE		23
#define F_RSS		24

/* [s, s + len): a decimal number without sign, within uint64_t */
static bool
parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* a field the metrics do not use: a number, perhaps negative */
static bool
is_number(const char *s, size_t len)
{
	uint64_t v;

	if (len > 0 && s[0] == '-') {
		s++;
		len--;
	}
	return parse_u64(s, len, &v);
}

int
proc_stat_parse(const char *text, struct proc_stat *st, char *err,
		size_t errlen)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	const char *p, *end;
	int field = F_STATE;

	memset(st, 0, sizeof(*st));
	if (open == NULL || close == NULL || close < open || close[1] != ' ') {
		snprintf(err, errlen, "no \"(command) \" before the fields");
		return -1;
	}
	for (p = close + 2; field <= F_RSS; field++, p = end + 1) {
		size_t len;
		uint64_t v, *to = NULL;

		end = p + strcspn(p, " \n");
		len = (size_t)(end - p);
		switch (field) {
		case F_STATE:
			if (len != 1) {
				snprintf(err, errlen, "field %d (state): \"%.*s\"",
					field, (int)(len < 16 ? len : 16), p);
				return -1;
			}
			break;
		case F_UTIME:	  to = &st->utime_ticks; break;
		case F_STIME:	  to = &st->stime_ticks; break;
		case F_STARTTIME: to = &st->start_ticks; break;
		case F_VSIZE:	  to = &st->vsize_bytes; break;
		case F_RSS:	  to = &st->rss_pages; break;
		default:
			if (!is_number(p, len))
				goto bad;
		}
		if (to != NULL) {
			if (!parse_u64(p, len, &v))
				goto bad;
			*to = v;
		}
		/* a line ends at rss or later, never before */
		if (*end != ' ' && field < F_RSS) {
			snprintf(err, errlen, "%d fields, fewer than the %d up to "
				"rss", field, F_RSS);
			return -1;
		}
		continue;
bad:
		snprintf(err, errlen, "field %d is not a number: \"%.*s\"", field,
			(int)(len < 24 ? len : 24), p);
		return -1;
	}
	return 0;
}

int
proc_btime_line(const char *line, uint64_t *btime)
{
	size_t len;

	if (strncmp(line, "btime ", 6) != 0)
		return 0;
	line += 6;
	len = strcspn(line, "\n");
	if (line[len] == '\n' && line[len + 1] != '\0')
		return -1;
	return parse_u64(line, len, btime) ? 1 : -1;
}

/* the boot time, in seconds since the epoch: false when unknown */
static bool
boot_time(uint64_t *btime)
{
	FILE *f = fopen("/proc/stat", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (f == NULL)
		return false;
	while (found == 0 && getline(&line, &cap, f) > 0)
		found = proc_btime_line(line, btime);
	free(line);
	fclose(f);
	return found == 1;
}

static bool
self_stat(struct proc_stat *st)
{
	char buf[1024], err[128];
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n;

	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n > 0 && n < sizeof(buf) - 1 && proc_stat_parse(buf, st, err,
		sizeof(err)) == 0;
}

/* the descriptors open now, less the one that reads the directory */
static bool
open_fds(uint64_t *count)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char self[24];

	if (d == NULL)
		return false;
	snprintf(self, sizeof(self), "%d", dirfd(d));
	*count = 0;
	while ((e = readdir(d)) != NULL)
		*count += e->d_name[0] != '.' && strcmp(e->d_name, self) != 0;
	closedir(d);
	return true;
}

void
metrics_process_text(struct mtext *t)
{
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct proc_stat st;
	struct rlimit rl;
	uint64_t btime = 0, fds = 0;
	bool has_stat = tick > 0 && page > 0 && self_stat(&st);
	bool has_boot = has_stat && boot_time(&btime);
	bool has_fds = open_fds(&fds);
	bool has_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0;

	mtext_family(t, "process_start_time_seconds", "gauge", "When the "
		"daemon started, in seconds since the Unix epoch.");
	if (has_boot)
		mtext_sample(t, "process_start_time_seconds", NULL, (double)btime +
			(double)st.start_ticks / (double)tick);
	mtext_family(t, "process_cpu_seconds_total", "counter", "CPU time the "
		"daemon used, in user and system mode together.");
	if (has_stat)
		mtext_sample(t, "process_cpu_seconds_total", NULL,
			(double)(st.utime_ticks + st.stime_ticks) / (double)tick);
	mtext_family(t, "process_resident_memory_bytes", "gauge", "Memory of "
		"the daemon held in RAM (its resident set).");
	if (has_stat)
		mtext_sample_u64(t, "process_resident_memory_bytes", NULL,
			st.rss_pages * (uint64_t)page);
	mtext_family(t, "process_virtual_memory_bytes", "gauge", "The size "
		"of the daemon's address space.");
	if (has_stat)
		mtext_sample_u64(t, "process_virtual_memory_bytes", NULL,
			st.vsize_bytes);
	mtext_family(t, "process_open_fds", "gauge", "File descriptors the "
		"daemon has open.");
	if (has_fds)
		mtext_sample_u64(t, "process_open_fds", NULL, fds);
	mtext_family(t, "process_max_fds", "gauge", "The most file descriptors "
		"the daemon may open (its soft RLIMIT_NOFILE).");
	if (has_limit) {
		if (rl.rlim_cur == RLIM_INFINITY)
			mtext_sample(t, "process_max_fds", NULL, INFINITY);
		else
			mtext_sample_u64(t, "process_max_fds", NULL,
				(uint64_t)rl.rlim_cur);
	}
}
