/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_proto_test.c -- both ends of the admin socket's text: the
 * daemon's request parser (admin_req) and writer (json_out), replctl's
 * reader (json_in), each on good and bad input with the expected outcome.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_proto.h"
#include "admin_req.h"
#include "json_in.h"
#include "json_out.h"

static int failures;

#define EXPECT(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

static enum admin_parse
parse(const char *s, struct admin_req *r, size_t *used, char *why)
{
	return admin_req_parse(s, strlen(s), r, used, why, 256);
}

static void
requests(void)
{
	struct admin_req r;
	char why[256];
	size_t used;
	const char *two = "APPEND 5 42\nhelloSTATUS\n";

	EXPECT(parse(two, &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_APPEND && r.len == 5 && r.client_id == 42);
	EXPECT(memcmp(r.data, "hello", 5) == 0 && used == 17);
	EXPECT(parse(two + used, &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_STATUS && used == 7);

	/* a record not all here yet: nothing consumed */
	EXPECT(parse("APPEND 10\nshort", &r, &used, why) == ADMIN_PARSE_MORE);
	EXPECT(used == 0);
	EXPECT(parse("STAT", &r, &used, why) == ADMIN_PARSE_MORE);

	/* an APPEND whose length is unusable: the stream is lost */
	EXPECT(parse("APPEND 0\n", &r, &used, why) == ADMIN_PARSE_FATAL);
	EXPECT(strstr(why, "length") != NULL);
	EXPECT(parse("APPEND 2000000\n", &r, &used, why) == ADMIN_PARSE_FATAL);
	EXPECT(parse("APPEND 5x\n", &r, &used, why) == ADMIN_PARSE_FATAL);
	EXPECT(parse("APPEND\n", &r, &used, why) == ADMIN_PARSE_FATAL);

	/* others are refused one line at a time */
	EXPECT(parse("BOGUS 1\nSTATUS\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(strstr(why, "unknown request \"BOGUS\"") != NULL && used == 8);
	EXPECT(parse("STATUS now\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("VERIFY 9 3\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("PROMOTE now\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("ADD host\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("ADD host:0\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("ADD host:70000\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("ADD host:7420 9\n", &r, &used, why) == ADMIN_PARSE_BAD);

	EXPECT(parse("ADD 10.0.0.2:7420 2\r\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_ADD && strcmp(r.host, "10.0.0.2") == 0 &&
		r.port == 7420 && r.quorum == 2);
	EXPECT(parse("REMOVE node3:7430\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_REMOVE && r.quorum == -1);
	EXPECT(parse("VERIFY 3 9\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.from == 3 && r.to == 9);
	/* the reply repeats them: no more than a signed 64-bit integer */
	EXPECT(parse("VERIFY 1 9223372036854775807\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(parse("VERIFY 9223372036854775808\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("VERIFY 1 18446744073709551615\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("PROMOTE force\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.force == 1);

	/* a line too long to be a request, with no LF in reach */
	{
		char *big = malloc(ADMIN_LINE_MAX + 10);

		memset(big, 'A', ADMIN_LINE_MAX + 9);
		big[ADMIN_LINE_MAX + 9] = '\0';
		EXPECT(parse(big, &r, &used, why) == ADMIN_PARSE_FATAL);
		free(big);
	}
}

static void
round_trip(void)
{
	static const char head[] = "{\"ok\":true,\"lsn\":9223372036854775807,"
		"\"code\":-300009,\"why\":\"a \\\"quoted\\\"\\tword\\u0001\",";
	char buf[256], small[160], out[64];
	struct jtok t[32];
	struct jdoc d;
	json_t *r;
	size_t len;

	r = json_pack("{s:b, s:o, s:i, s:o, s:[{s:o}]}", "ok", true,
		"lsn", jo_u64(INT64_MAX), "code", -300009,
		"why", jo_str("a \"quoted\"\tword\x01"),
		"replicas", "address", jo_str("127.0.0.1:7420"));
	len = jo_line(r, buf, sizeof(buf));
	EXPECT(len > 0 && buf[len - 1] == '\n');
	/* compact, and the keys in the order made */
	EXPECT(len > 0 && strncmp(buf, head, strlen(head)) == 0);
	EXPECT(json_parse(&d, buf, len - 1, t, 32, out, sizeof(out)) == 0);
	EXPECT(json_bool(&d, json_get(&d, 0, "ok"), false));
	EXPECT(json_u64(&d, json_get(&d, 0, "lsn"), 0) == INT64_MAX);
	EXPECT(json_i64(&d, json_get(&d, 0, "code"), 0) == -300009);
	EXPECT(strcmp(json_text(&d, json_get(&d, 0, "why"), out, sizeof(out)),
		"a \"quoted\"\tword\x01") == 0);
	EXPECT(strcmp(json_text(&d, json_get(&d, json_item(&d,
		json_get(&d, 0, "replicas"), 0), "address"), out, sizeof(out)),
		"127.0.0.1:7420") == 0);
	EXPECT(json_get(&d, 0, "absent") == -1);
	EXPECT(json_item(&d, json_get(&d, 0, "replicas"), 1) == -1);

	/* beyond a signed 64-bit integer: no value, so no reply */
	EXPECT(jo_u64((uint64_t)INT64_MAX + 1) == NULL);
	r = jo_u64(UINT64_MAX);
	EXPECT(r == NULL);
	json_decref(r);
	/* text that is not UTF-8 still goes, its odd bytes as '?' */
	r = jo_str("log \xff\xfe.img");
	EXPECT(r && strcmp(json_string_value(r), "log ??.img") == 0);
	json_decref(r);

	/* a reply that cannot be made or does not fit: an error in its place */
	len = jo_line(NULL, small, sizeof(small) - 1);
	EXPECT(len > 0 && json_parse(&d, small, len - 1, t, 32, out, sizeof(out)) == 0);
	EXPECT(!json_bool(&d, json_get(&d, 0, "ok"), true));
	small[len] = '\0';
	EXPECT(strstr(small, "cannot be made") != NULL);
	memset(buf, 'x', 200);
	buf[200] = '\0';
	len = jo_line(json_pack("{s:s}", "message", buf), small, sizeof(small) - 1);
	EXPECT(len > 0 && json_parse(&d, small, len - 1, t, 32, out, sizeof(out)) == 0);
	EXPECT(strcmp(json_text(&d, json_get(&d, 0, "error"), out, sizeof(out)),
		"ERROR") == 0);
	small[len] = '\0';
	EXPECT(strstr(small, "does not fit the protocol's limit") != NULL);
	/* not even that fits: nothing rather than a cut line */
	EXPECT(jo_line(json_pack("{s:b}", "ok", true), small, 8) == 0);
}

static void
bad_json(void)
{
	static const char *bad[] = {
		"", "{", "{\"a\"}", "{\"a\":}", "[1,]", "{\"a\":1,}", "tru",
		"\"open", "{\"a\":1} x", "{1:2}", "\"\\q\"", "\"\\u12\"", "-",
		"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]",
	};
	struct jtok t[64];
	struct jdoc d;
	char why[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (json_parse(&d, bad[i], strlen(bad[i]), t, 64, why, sizeof(why)) == 0) {
			fprintf(stderr, "accepted bad JSON: %s\n", bad[i]);
			failures++;
		}
		EXPECT(strstr(why, "at byte") != NULL);
	}
	/* more values than tokens: refused, not overrun */
	EXPECT(json_parse(&d, "[1,2,3,4]", 9, t, 3, why, sizeof(why)) != 0);
}

int
main(void)
{
	requests();
	round_trip();
	bad_json();
	if (failures) {
		fprintf(stderr, "admin_proto_test: %d failures\n", failures);
		return 1;
	}
	printf("admin_proto_test: ok\n");
	return 0;
}
