/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_process_test.c -- the process_* families
 * (tools/repld/metrics_process.c): /proc/PID/stat's fields counted from
 * the command's last ')', whatever the command holds; a line cut short
 * or a field that is not a number refused with why; /proc/stat's btime
 * line; and this process's own six families, each with a sample whose
 * value is plausible.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metrics_process.h"
#include "unit.h"

/* fields 3.. of a real line (utime 7, stime 3, start 6892796, vsize
 * 3133440, rss 416), after "PID (COMM) " */
#define TAIL "R 12537 12537 16236 0 -1 4194304 101 0 0 0 7 3 0 0 20 0 1 0 " \
	"6892796 3133440 416 18446744073709551615 94406001426432 0 0 0 0 17 1 0\n"

static char err[128];

static void
parses(void)
{
	static const char *const lines[] = {
		"12540 (cat) " TAIL,
		"12540 (a b) c) (d) " TAIL,	/* spaces and parentheses */
		"12540 () " TAIL,
	};
	struct proc_stat st;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		CU_ASSERT_EQUAL(proc_stat_parse(lines[i], &st, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(st.utime_ticks, 7);
		CU_ASSERT_EQUAL(st.stime_ticks, 3);
		CU_ASSERT_EQUAL(st.start_ticks, 6892796);
		CU_ASSERT_EQUAL(st.vsize_bytes, 3133440);
		CU_ASSERT_EQUAL(st.rss_pages, 416);
	}
	/* a line that ends at rss is whole enough */
	CU_ASSERT_EQUAL(proc_stat_parse("1 (x) R 0 0 0 0 -1 0 0 0 0 0 "
		"18446744073709551615 0 0 0 20 0 1 0 5 6 7", &st, err,
		sizeof(err)), 0);
	CU_ASSERT_EQUAL(st.utime_ticks, UINT64_MAX);
	CU_ASSERT_EQUAL(st.rss_pages, 7);
}

static void
refuses(void)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "", "no \"(command) \"" },
		{ "12540 cat R 1 2 3", "no \"(command) \"" },
		{ "12540 (cat)R 1 2", "no \"(command) \"" },
		{ "12540 )cat( R 1 2", "no \"(command) \"" },
		{ "12540 (cat) R 1 2 3\n", "6 fields, fewer than the 24 up to rss" },
		{ "12540 (cat) R 0 0 0 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6\n",
		  "23 fields, fewer than the 24 up to rss" },
		{ "12540 (cat) RS 0 0", "field 3 (state): \"RS\"" },
		{ "12540 (cat) R 0 0 0 0 -1 0 0 0 0 0 7x 3 0 0 20 0 1 0 5 6 7\n",
		  "field 14 is not a number: \"7x\"" },
		{ "12540 (cat) R 0 0 0 0 -1 0 0 0 0 0 -7 3 0 0 20 0 1 0 5 6 7\n",
		  "field 14 is not a number: \"-7\"" },
		{ "12540 (cat) R 0 0 0 0 -1 0 0 0 0 0 18446744073709551616 3 0 0 "
		  "20 0 1 0 5 6 7\n", "field 14 is not a number" },
		{ "12540 (cat) R 0 0 0 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6 -7\n",
		  "field 24 is not a number: \"-7\"" },
		{ "12540 (cat) R 0 x 0 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6 7\n",
		  "field 5 is not a number: \"x\"" },
		{ "12540 (cat) R 0  0 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6 7\n",
		  "field 5 is not a number: \"\"" },
	};
	struct proc_stat st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(proc_stat_parse(bad[i].line, &st, err,
			sizeof(err)), -1);
		CU_ASSERT_EQUAL(strncmp(err, bad[i].why, strlen(bad[i].why)), 0);
		if (strncmp(err, bad[i].why, strlen(bad[i].why)) != 0)
			fprintf(stderr, "%zu: got \"%s\", want \"%s\"\n", i, err,
				bad[i].why);
	}
}

static void
btime(void)
{
	uint64_t b = 0;

	CU_ASSERT_EQUAL(proc_btime_line("btime 1796522347\n", &b), 1);
	CU_ASSERT_EQUAL(b, 1796522347);
	CU_ASSERT_EQUAL(proc_btime_line("btime 5", &b), 1);
	CU_ASSERT_EQUAL(b, 5);
	CU_ASSERT_EQUAL(proc_btime_line("cpu  1 2 3\n", &b), 0);
	CU_ASSERT_EQUAL(proc_btime_line("btimex 5\n", &b), 0);
	CU_ASSERT_EQUAL(proc_btime_line("btime \n", &b), -1);
	CU_ASSERT_EQUAL(proc_btime_line("btime -5\n", &b), -1);
	CU_ASSERT_EQUAL(proc_btime_line("btime 5 6\n", &b), -1);
	CU_ASSERT_EQUAL(b, 5);
}

/* the value of the sample NAME in text, as a double; -1 when absent */
static double
sample(const char *text, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\n%s ", name);
	if ((p = strstr(text, key)) == NULL)
		return -1;
	return strtod(p + strlen(key), NULL);
}

static void
this_process(void)
{
	static const char *const families[] = {
		"process_start_time_seconds gauge", "process_cpu_seconds_total counter",
		"process_resident_memory_bytes gauge",
		"process_virtual_memory_bytes gauge", "process_open_fds gauge",
		"process_max_fds gauge",
	};
	struct mtext t;
	double now = (double)time(NULL), fds;
	int extra[3];

	if (access("/proc/self/stat", R_OK) != 0)
		UNIT_SKIP("no /proc/self/stat");
	/* three more descriptors: the count must see them */
	mtext_init(&t);
	metrics_process_text(&t);
	fds = sample(t.p, "process_open_fds");
	mtext_free(&t);
	for (int i = 0; i < 3; i++)
		extra[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	mtext_init(&t);
	metrics_process_text(&t);
	CU_ASSERT_FALSE(t.failed);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		char line[80];

		snprintf(line, sizeof(line), "# TYPE %s\n", families[i]);
		CU_ASSERT_PTR_NOT_NULL(strstr(t.p, line));
	}
	CU_ASSERT_TRUE(sample(t.p, "process_start_time_seconds") > now - 3600);
	CU_ASSERT_TRUE(sample(t.p, "process_start_time_seconds") <= now + 1);
	CU_ASSERT_TRUE(sample(t.p, "process_cpu_seconds_total") >= 0);
	CU_ASSERT_TRUE(sample(t.p, "process_resident_memory_bytes") > 1e5);
	CU_ASSERT_TRUE(sample(t.p, "process_virtual_memory_bytes") >=
		sample(t.p, "process_resident_memory_bytes"));
	CU_ASSERT_TRUE(fds >= 3);
	CU_ASSERT_EQUAL(sample(t.p, "process_open_fds"), fds + 3);
	CU_ASSERT_TRUE(sample(t.p, "process_max_fds") >=
		sample(t.p, "process_open_fds"));
	if (sample(t.p, "process_open_fds") != fds + 3)
		fprintf(stderr, "%s", t.p);
	mtext_free(&t);
	for (int i = 0; i < 3; i++)
		close(extra[i]);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(parses),
		UNIT_CASE(refuses),
		UNIT_CASE(btime),
		UNIT_CASE(this_process),
		CU_TEST_INFO_NULL,
	};

	return unit_run("metrics_process", cases);
}
