/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * health_query_test.c -- a health path's limits on a replica
 * (tools/repld/health_query.c): lag=RECORDS and last_contact_ms=MS read
 * as plain decimal numbers, anything else refused with why; a replica
 * past a limit refused with its lag and the limit, one within it not.
 */
#include <string.h>

#include "health_query.h"
#include "unit.h"

static char err[256];

static int
add(struct health_limits *l, const char *key, const char *value)
{
	err[0] = '\0';
	return health_limits_add(l, key, value, err, sizeof(err));
}

static void
parses(void)
{
	struct health_limits l = { 0 };

	CU_ASSERT_EQUAL(add(&l, "lag", "1000"), 0);
	CU_ASSERT_TRUE(l.has_lag);
	CU_ASSERT_EQUAL(l.lag, 1000);
	CU_ASSERT_FALSE(l.has_contact);
	CU_ASSERT_EQUAL(add(&l, "last_contact_ms", "0"), 0);
	CU_ASSERT_TRUE(l.has_contact);
	CU_ASSERT_EQUAL(l.contact_ms, 0);

	struct health_limits big = { 0 };

	CU_ASSERT_EQUAL(add(&big, "lag", "9223372036854775807"), 0);
	CU_ASSERT_EQUAL(big.lag, 9223372036854775807ull);
}

/* value -> the start of the refusal */
static void
refuses(void)
{
	static const struct {
		const char *key, *value, *why;
	} bad[] = {
		{ "lag", "16MB", "lag=16MB: not a number of records" },
		{ "lag", "-1", "lag=-1: not a number of records" },
		{ "lag", "+5", "lag=+5: not a number of records" },
		{ "lag", " 5", "lag= 5: not a number of records" },
		{ "lag", "5 ", "lag=5 : not a number of records" },
		{ "lag", "0x10", "lag=0x10: not a number of records" },
		{ "lag", "9223372036854775808", "lag=9223372036854775808: not a" },
		{ "lag", "99999999999999999999999", "lag=99999999999999999999999: not" },
		{ "lag", "", "lag needs a value" },
		{ "lag", NULL, "lag needs a value" },
		{ "last_contact_ms", "2s", "last_contact_ms=2s: not a number of "
		  "milliseconds" },
		{ "last_contact_ms", "1.5", "last_contact_ms=1.5: not a number" },
		{ "last_contact_ms", NULL, "last_contact_ms needs a value" },
		{ "lag_ms", "500", "unknown parameter \"lag_ms\": the health paths "
		  "take lag (records) and last_contact_ms (milliseconds)" },
		{ "", "1", "unknown parameter \"\"" },
		/* the URL's bytes quoted back printable, and cut */
		{ "a\nb\x01", "1", "unknown parameter \"a?b?\"" },
		{ "lag", "1\r\nX-Injected: 1", "lag=1??X-Injected: 1: not a" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct health_limits l = { 0 };

		CU_ASSERT_EQUAL(add(&l, bad[i].key, bad[i].value), -1);
		CU_ASSERT_EQUAL(strncmp(err, bad[i].why, strlen(bad[i].why)), 0);
		if (strncmp(err, bad[i].why, strlen(bad[i].why)) != 0)
			fprintf(stderr, "got \"%s\", want \"%s...\"\n", err, bad[i].why);
		CU_ASSERT_FALSE(l.has_lag);
		CU_ASSERT_FALSE(l.has_contact);
	}

	char longkey[200];
	struct health_limits l = { 0 };

	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	CU_ASSERT_EQUAL(add(&l, longkey, "1"), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "kkk...\""));
	CU_ASSERT_TRUE(strlen(err) < 150);	/* not the 199 bytes */

	CU_ASSERT_EQUAL(add(&l, "lag", "1"), 0);
	CU_ASSERT_EQUAL(add(&l, "lag", "2"), -1);
	CU_ASSERT_STRING_EQUAL(err, "lag given twice");
	CU_ASSERT_EQUAL(l.lag, 1);
}

static void
decides(void)
{
	struct health_limits none = { 0 }, lag5 = { .has_lag = true, .lag = 5 },
		c500 = { .has_contact = true, .contact_ms = 500 };
	struct health_lag at5 = { 5, true, 100 }, at6 = { 6, true, 100 },
		silent = { 0, true, 501 }, never = { 0, false, 0 };
	char buf[256];

	CU_ASSERT_PTR_NULL(health_limits_refusal(&none, &at6, buf, sizeof(buf)));
	CU_ASSERT_PTR_NULL(health_limits_refusal(&none, &never, buf, sizeof(buf)));
	CU_ASSERT_PTR_NULL(health_limits_refusal(&lag5, &at5, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(health_limits_refusal(&lag5, &at6, buf, sizeof(buf)),
		"the replica lags 6 records behind the primary's commit point, "
		"more than lag=5");
	CU_ASSERT_PTR_NULL(health_limits_refusal(&c500, &at6, buf, sizeof(buf)));
	CU_ASSERT_STRING_EQUAL(health_limits_refusal(&c500, &silent, buf,
		sizeof(buf)), "the replica last heard from its primary 501 ms ago, "
		"more than last_contact_ms=500");
	CU_ASSERT_STRING_EQUAL(health_limits_refusal(&c500, &never, buf,
		sizeof(buf)), "the replica has heard no primary since it began "
		"serving");
	/* a lag limit says nothing of contact */
	CU_ASSERT_PTR_NULL(health_limits_refusal(&lag5, &never, buf, sizeof(buf)));
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(parses),
		UNIT_CASE(refuses),
		UNIT_CASE(decides),
		CU_TEST_INFO_NULL,
	};

	return unit_run("health_query", cases);
}
