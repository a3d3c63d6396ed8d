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
	/* ... but its line is: where its record begins, and how long */
	EXPECT(r.verb == ADMIN_APPEND && r.head == 10 && r.len == 10);
	EXPECT(parse("APPEND 7 9\n", &r, &used, why) == ADMIN_PARSE_MORE);
	EXPECT(r.head == 11 && r.len == 7 && r.client_id == 9);
	EXPECT(parse("STAT", &r, &used, why) == ADMIN_PARSE_MORE);
	EXPECT(r.head == 0);

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
	EXPECT(parse("RELEASE 42\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_RELEASE && r.lsn == 42);
	EXPECT(parse("RELEASE 9223372036854775807\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(parse("RELEASE 9223372036854775808\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("RELEASE -1\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(strstr(why, "RELEASE") != NULL && strstr(why, "-1") != NULL);
	EXPECT(parse("RELEASE\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("RELEASE 1 2\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("READ 7\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_READ && r.from == 7 && !r.follow);
	EXPECT(parse("READ 0 follow\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_READ && r.from == 0 && r.follow);
	EXPECT(parse("READ 7 fallow\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(strstr(why, "follow") != NULL && strstr(why, "fallow") != NULL);
	EXPECT(parse("READ x\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(strstr(why, "READ") != NULL && strstr(why, "\"x\"") != NULL);
	EXPECT(parse("READ 9223372036854775808\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("READ\n", &r, &used, why) == ADMIN_PARSE_BAD);

	/* MAINTENANCE on's reason is the rest of the line, blanks and all */
	EXPECT(parse("MAINTENANCE on  kernel  upgrade, host 2\r\n", &r, &used,
		why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_MAINTENANCE && r.maintenance_on &&
		strcmp(r.reason, "kernel  upgrade, host 2") == 0);
	EXPECT(parse("MAINTENANCE on\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.maintenance_on && r.reason[0] == '\0');
	EXPECT(parse("MAINTENANCE off\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_MAINTENANCE && !r.maintenance_on);
	EXPECT(parse("MAINTENANCE off now\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("MAINTENANCE\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(parse("MAINTENANCE yes\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(strstr(why, "\"yes\"") != NULL);
	EXPECT(parse("MAINTENANCE on a\tb\n", &r, &used, why) == ADMIN_PARSE_BAD);
	EXPECT(strstr(why, "control") != NULL);
	{
		char line[ADMIN_LINE_MAX];

		snprintf(line, sizeof(line), "MAINTENANCE on %0*d\n",
			ADMIN_REASON_MAX, 0);
		EXPECT(parse(line, &r, &used, why) == ADMIN_PARSE_OK);
		EXPECT(strlen(r.reason) == ADMIN_REASON_MAX);
		snprintf(line, sizeof(line), "MAINTENANCE on %0*d\n",
			ADMIN_REASON_MAX + 1, 0);
		EXPECT(parse(line, &r, &used, why) == ADMIN_PARSE_BAD);
	}
	EXPECT(parse("HISTORY\n", &r, &used, why) == ADMIN_PARSE_OK);
	EXPECT(r.verb == ADMIN_HISTORY);
	EXPECT(parse("HISTORY 5\n", &r, &used, why) == ADMIN_PARSE_BAD);

	/* a line too long to be a request, with no LF in reach */
	{
		char *big = malloc(ADMIN_LINE_MAX + 10);

		memset(big, 'A', ADMIN_LINE_MAX + 9);
		big[ADMIN_LINE_MAX + 9] = '\0';
		EXPECT(parse(big, &r, &used, why) == ADMIN_PARSE_FATAL);
		free(big);
	}
}

/* the reader's view of a line jo_line made (its LF left out) */
static json_t *
read_line(const char *line, size_t len)
{
	char why[300];
	json_t *d = json_in_reply(line, len ? len - 1 : 0, "the test", why, sizeof(why));

	if (d == NULL) {
		fprintf(stderr, "not read back: %s\n", why);
		failures++;
	}
	return d;
}

static void
round_trip(void)
{
	static const char head[] = "{\"ok\":true,\"lsn\":9223372036854775807,"
		"\"code\":-300009,\"why\":\"a \\\"quoted\\\"\\tword\\u0001\",";
	char buf[256], small[160];
	json_t *r, *d;
	size_t len;

	r = json_pack("{s:b, s:o, s:i, s:o, s:[{s:o}]}", "ok", true,
		"lsn", jo_u64(INT64_MAX), "code", -300009,
		"why", jo_str("a \"quoted\"\tword\x01"),
		"replicas", "address", jo_str("127.0.0.1:7420"));
	len = jo_line(r, buf, sizeof(buf));
	EXPECT(len > 0 && buf[len - 1] == '\n');
	/* compact, and the keys in the order made */
	EXPECT(len > 0 && strncmp(buf, head, strlen(head)) == 0);
	d = read_line(buf, len);
	EXPECT(jin_bool(d, "ok", false));
	EXPECT(jin_u64(d, "lsn", 0) == INT64_MAX);
	EXPECT(json_integer_value(json_object_get(d, "code")) == -300009);
	EXPECT(jin_u64(d, "code", 7) == 7);	/* negative: not a count */
	EXPECT(strcmp(jin_str(d, "why"), "a \"quoted\"\tword\x01") == 0);
	EXPECT(strcmp(jin_str(json_array_get(json_object_get(d, "replicas"), 0),
		"address"), "127.0.0.1:7420") == 0);
	EXPECT(json_object_get(d, "absent") == NULL && jin_str(d, "absent")[0] == '\0');
	EXPECT(jin_u64(d, "why", 5) == 5 && jin_bool(d, "lsn", true));
	EXPECT(json_array_get(json_object_get(d, "replicas"), 1) == NULL);
	json_decref(d);

	/* beyond a signed 64-bit integer: no value, so no reply */
	EXPECT(jo_u64((uint64_t)INT64_MAX + 1) == NULL);
	EXPECT(jo_u64(UINT64_MAX) == NULL);
	/* text that is not UTF-8 still goes, its odd bytes as '?' */
	r = jo_str("log \xff\xfe.img");
	EXPECT(r && strcmp(json_string_value(r), "log ??.img") == 0);
	json_decref(r);

	/* a reply that cannot be made or does not fit: an error in its place */
	len = jo_line(NULL, small, sizeof(small) - 1);
	d = read_line(small, len);
	EXPECT(!jin_bool(d, "ok", true) && strcmp(jin_str(d, "error"), "ERROR") == 0);
	EXPECT(strstr(jin_str(d, "message"), "cannot be made") != NULL);
	json_decref(d);
	memset(buf, 'x', 200);
	buf[200] = '\0';
	len = jo_line(json_pack("{s:s}", "message", buf), small, sizeof(small) - 1);
	d = read_line(small, len);
	EXPECT(!jin_bool(d, "ok", true) && strcmp(jin_str(d, "error"), "ERROR") == 0);
	EXPECT(strcmp(jin_str(d, "message"), "the reply does not fit the "
		"protocol's limit") == 0);
	json_decref(d);
	/* not even that fits: nothing rather than a cut line */
	EXPECT(jo_line(json_pack("{s:b}", "ok", true), small, 8) == 0);
}

static void
bad_json(void)
{
	static const char *bad[] = {
		"", "{", "{\"a\"}", "{\"a\":}", "[1,]", "{\"a\":1,}", "tru",
		"\"open", "{\"a\":1} x", "{1:2}", "\"\\q\"", "\"\\u12\"", "-",
		"{\"a\":1,\"a\":2}", "{\"lsn\":18446744073709551615}",
		"{\"a\":\"\\u0000\"}", "{\"a\":\"\xff\"}", "{\"a\":1}\n{}",
	};
	/* JSON, but not an object */
	static const char *not_object[] = { "[1,2]", "[]", "1", "\"s\"", "null" };
	char why[300];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *d;

		why[0] = '\0';
		if ((d = json_in_reply(bad[i], strlen(bad[i]), "repld at S", why,
				sizeof(why))) != NULL) {
			fprintf(stderr, "accepted bad JSON: %s\n", bad[i]);
			failures++;
			json_decref(d);
		}
		/* where the bytes came from, jansson's reason and where */
		EXPECT(strncmp(why, "repld at S answered what is not a reply: ", 41) == 0);
		EXPECT(strstr(why, " (line ") != NULL);
	}
	for (size_t i = 0; i < sizeof(not_object) / sizeof(not_object[0]); i++) {
		why[0] = '\0';
		EXPECT(json_in_reply(not_object[i], strlen(not_object[i]), "repld at S",
			why, sizeof(why)) == NULL);
		EXPECT(strstr(why, "not an object") != NULL ||
			strstr(why, "expected") != NULL);
	}
	/* the message says where, as jansson counts */
	EXPECT(json_in_reply("{\"ok\":tru}", 10, "repld at S", why, sizeof(why)) == NULL);
	EXPECT(strcmp(why, "repld at S answered what is not a reply: invalid token "
		"near 'tru' (line 1, column 9, byte 9)") == 0);
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
