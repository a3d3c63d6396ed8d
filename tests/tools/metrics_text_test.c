/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_text_test.c -- the Prometheus text exposition writer: the
 * family's lines, labels escaped, values as the format spells them, a
 * histogram's buckets cumulative up to +Inf == _count.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics_text.h"
#include "unit.h"

static void
family_and_samples(void)
{
	struct mtext t;
	const char *l[] = { "replica", "a\"b\\c\nd", "state", "up", NULL };

	mtext_init(&t);
	mtext_family(&t, "x_total", "counter", "Things\nseen \\ counted.");
	mtext_sample_u64(&t, "x_total", NULL, 18446744073709551615ull);
	mtext_sample_u64(&t, "x_total", l, 3);
	mtext_sample(&t, "x_seconds", NULL, 0.25);
	mtext_sample(&t, "x_seconds", NULL, 3.0 / 1e3);	/* not 0.0030000000000000001 */
	mtext_sample(&t, "x_seconds", NULL, INFINITY);
	mtext_sample(&t, "x_seconds", NULL, NAN);
	CU_ASSERT_FALSE(t.failed);
	CU_ASSERT_STRING_EQUAL(t.p,
		"# HELP x_total Things\\nseen \\\\ counted.\n"
		"# TYPE x_total counter\n"
		"x_total 18446744073709551615\n"
		"x_total{replica=\"a\\\"b\\\\c\\nd\",state=\"up\"} 3\n"
		"x_seconds 0.25\n"
		"x_seconds 0.003\n"
		"x_seconds +Inf\n"
		"x_seconds NaN\n");
	mtext_free(&t);
	CU_ASSERT_PTR_NULL(t.p);
}

static void
histogram(void)
{
	static const double bounds[] = { 1e-05, 0.001, 1 };
	static const uint64_t counts[] = { 2, 0, 5, 1 };
	struct mtext t;

	mtext_init(&t);
	mtext_histogram(&t, "h_seconds", bounds, counts, 3, 1.5);
	CU_ASSERT_FALSE(t.failed);
	CU_ASSERT_STRING_EQUAL(t.p,
		"h_seconds_bucket{le=\"1e-05\"} 2\n"
		"h_seconds_bucket{le=\"0.001\"} 2\n"
		"h_seconds_bucket{le=\"1\"} 7\n"
		"h_seconds_bucket{le=\"+Inf\"} 8\n"
		"h_seconds_sum 1.5\n"
		"h_seconds_count 8\n");
	mtext_free(&t);
}

/* the buffer grows past its first allocation and stays one string */
static void
grows(void)
{
	struct mtext t;
	char name[32];

	mtext_init(&t);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "m_%d", i);
		mtext_sample_u64(&t, name, NULL, (uint64_t)i);
	}
	CU_ASSERT_FALSE(t.failed);
	CU_ASSERT_EQUAL(strlen(t.p), t.len);
	CU_ASSERT_PTR_NOT_NULL(strstr(t.p, "\nm_1999 1999\n"));
	mtext_free(&t);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(family_and_samples),
		UNIT_CASE(histogram),
		UNIT_CASE(grows),
		CU_TEST_INFO_NULL,
	};

	return unit_run("metrics_text", cases);
}
