/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_keys_test.c -- the coordinator's key values (ha/coord_keys.c):
 * what it writes reads back the same, and what etcd may hold that is not
 * such a value is refused whole -- never half-read into a campaign.
 */
#include <stdio.h>
#include <string.h>

#include "coord_keys.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static void
round_trips(void)
{
	char buf[COORD_VALUE_MAX];
	struct coord_leader_value lv;
	struct coord_member m = { .node_id = 3, .role = "replica", .epoch = 131074,
		.last_lsn = 9007199254740993ull, .last_epoch = 131074, .link_up = true,
		.candidate = false }, back;
	struct coord_switchover sw;
	size_t n;

	n = coord_leader_value(2, 131074, "primary", "10.0.0.2:7400", buf, sizeof(buf));
	CHECK(n > 0 && n == strlen(buf));
	CHECK(coord_leader_parse(buf, n, &lv));
	CHECK(lv.node_id == 2 && lv.epoch == 131074 && strcmp(lv.state, "primary") == 0);
	CHECK(strcmp(lv.ctl_addr, "10.0.0.2:7400") == 0);
	/* an address that is none still names the holder, without an address */
	CHECK(coord_leader_parse("{\"node_id\":3,\"epoch\":5,\"state\":\"primary\","
		"\"ctl_addr\":\"no port\"}", 62, &lv) && lv.node_id == 3 &&
		lv.ctl_addr[0] == '\0');
	CHECK(coord_leader_parse("{\"node_id\":3,\"epoch\":5,\"state\":\"primary\"}", 41,
		&lv) && lv.ctl_addr[0] == '\0');

	n = coord_member_value(&m, "[::1]:7400", buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(coord_member_parse(buf, n, &back));
	CHECK(back.node_id == 3 && strcmp(back.role, "replica") == 0 &&
		back.last_lsn == m.last_lsn && back.link_up && !back.candidate);
	CHECK(coord_member_same(&m, &back));
	back.link_up = false;
	CHECK(!coord_member_same(&m, &back));
	back = m;
	back.last_lsn++;
	CHECK(coord_member_same(&m, &back));	/* the position aside */

	n = coord_switchover_value(1, 0, true, buf, sizeof(buf));
	CHECK(n > 0 && coord_switchover_parse(buf, n, &sw));
	CHECK(sw.from == 1 && sw.to == 0 && sw.failover);

	/* too small a buffer: no value rather than a cut one */
	CHECK(coord_leader_value(2, 1, "primary", "x", buf, 10) == 0);
	CHECK(coord_history_value(2, 131074, 42, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"at_ms\":") != NULL);
}

static void
leader_refused(void)
{
	static const char *const bad[] = {
		"", "null", "[]", "42", "\"primary\"", "{",
		"{\"node_id\":0,\"epoch\":1,\"state\":\"primary\"}",
		"{\"node_id\":65536,\"epoch\":1,\"state\":\"primary\"}",
		"{\"node_id\":-1,\"epoch\":1,\"state\":\"primary\"}",
		"{\"node_id\":1.5,\"epoch\":1,\"state\":\"primary\"}",
		"{\"node_id\":\"1\",\"epoch\":1,\"state\":\"primary\"}",
		"{\"node_id\":1,\"epoch\":-5,\"state\":\"primary\"}",
		"{\"node_id\":1,\"state\":\"primary\"}",
		"{\"node_id\":1,\"epoch\":1,\"state\":\"leader\"}",
		"{\"node_id\":1,\"epoch\":1,\"state\":1}",
		"{\"node_id\":1,\"node_id\":2,\"epoch\":1,\"state\":\"primary\"}",
		"{\"node_id\":1,\"epoch\":1,\"state\":\"primary\"} trailing",
	};
	struct coord_leader_value lv;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool ok = coord_leader_parse(bad[i], strlen(bad[i]), &lv);

		CHECK(!ok);
		if (ok)
			fprintf(stderr, "  accepted: %s\n", bad[i]);
		CHECK(lv.node_id == 0 && strcmp(lv.state, "?") == 0);
	}
	/* a NUL inside, and more than a value holds */
	CHECK(!coord_leader_parse("{\"node_id\":1\0}", 15, &lv));
	char big[COORD_VALUE_MAX + 64];

	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"node_id\":1,\"epoch\":1,\"state\":\"primary\"}", 41);
	CHECK(!coord_leader_parse(big, sizeof(big), &lv));
	/* unknown keys are another version's: accepted */
	CHECK(coord_leader_parse("{\"node_id\":1,\"epoch\":1,\"state\":\"promoting\","
		"\"new\":[1]}", 53, &lv) && lv.node_id == 1);
}

static void
member_refused(void)
{
	static const char *const bad[] = {
		"{}",
		"{\"node_id\":1,\"role\":\"leader\",\"epoch\":1,\"last_lsn\":1,"
			"\"last_epoch\":1,\"link_up\":true,\"candidate\":true}",
		"{\"node_id\":1,\"role\":\"replica\",\"epoch\":1,\"last_lsn\":1,"
			"\"last_epoch\":1,\"link_up\":1,\"candidate\":true}",
		"{\"node_id\":1,\"role\":\"replica\",\"epoch\":1,\"last_lsn\":1,"
			"\"last_epoch\":1,\"link_up\":true}",
		"{\"node_id\":1,\"role\":\"replica\",\"epoch\":1,"
			"\"last_lsn\":18446744073709551615,\"last_epoch\":1,"
			"\"link_up\":true,\"candidate\":true}",
		"{\"node_id\":1,\"role\":\"replicas\",\"epoch\":1,\"last_lsn\":1,"
			"\"last_epoch\":1,\"link_up\":true,\"candidate\":true}",
	};
	struct coord_member m;
	struct coord_switchover sw;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!coord_member_parse(bad[i], strlen(bad[i]), &m));
		CHECK(m.node_id == 0);
	}
	CHECK(!coord_switchover_parse("{\"from\":1,\"to\":70000,\"failover\":false}",
		38, &sw));
	CHECK(!coord_switchover_parse("{\"from\":1,\"to\":2}", 17, &sw));
	CHECK(sw.from == 0 && sw.to == 0);
}

#define N1 "{\"node_id\":1,\"ctl_addr\":\"10.0.0.1:7000\"}"
#define N2 "{\"node_id\":2,\"ctl_addr\":\"10.0.0.2:7000\"}"
#define N0 "{\"node_id\":0,\"ctl_addr\":\"[fe80::1]:7000\"}"

static void
membership_values(void)
{
	static const char *const bad[] = {
		"{}",
		/* no epoch 0; the quorum below the number of nodes */
		"{\"config_epoch\":0,\"quorum\":1,\"nodes\":[" N1 "," N2 "]}",
		"{\"config_epoch\":3,\"quorum\":2,\"nodes\":[" N1 "," N2 "]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[]}",
		/* a node twice, by id or by address */
		"{\"config_epoch\":3,\"quorum\":1,\"nodes\":[" N1 "," N1 "]}",
		"{\"config_epoch\":3,\"quorum\":1,\"nodes\":[" N1 ","
			"{\"node_id\":1,\"ctl_addr\":\"10.0.0.9:7000\"}]}",
		"{\"config_epoch\":3,\"quorum\":1,\"nodes\":[" N1 ","
			"{\"node_id\":5,\"ctl_addr\":\"10.0.0.1:7000\"}]}",
		/* addresses that are none */
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":1,\"ctl_addr\":\"h\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":1,\"ctl_addr\":\"h:0\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":1,\"ctl_addr\":\"h:65536\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":1,\"ctl_addr\":\"a b:1\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":1,\"ctl_addr\":\"a:b:1\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":1,\"ctl_addr\":\":1\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[{\"node_id\":70000,\"ctl_addr\":\"h:1\"}]}",
		"{\"config_epoch\":3,\"quorum\":0,\"nodes\":[1]}",
	};
	const char *good = "{\"config_epoch\":3,\"quorum\":1,\"nodes\":[" N1 "," N0 "]}";
	struct coord_membership m, m2;
	char buf[COORD_MEMBERSHIP_VALUE_MAX];
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!coord_membership_parse(bad[i], strlen(bad[i]), &m));
		CHECK(m.n == 0 && m.config_epoch == 0);
	}
	CHECK(coord_membership_parse(good, strlen(good), &m));
	CHECK(m.config_epoch == 3 && m.quorum == 1 && m.n == 2);
	CHECK(m.nodes[0].node_id == 1 && strcmp(m.nodes[1].ctl_addr, "[fe80::1]:7000") == 0);
	n = coord_membership_value(&m, buf, sizeof(buf));
	CHECK(n > 0 && strcmp(buf, good) == 0);
	CHECK(coord_membership_parse(buf, n, &m2) && coord_membership_same(&m, &m2));
	/* a node id learned still names the same node; another epoch does not */
	m2.nodes[1].node_id = 3;
	CHECK(coord_membership_same(&m, &m2));
	m2.nodes[0].node_id = 4;
	CHECK(!coord_membership_same(&m, &m2));
	m2 = m;
	m2.config_epoch = 5;
	CHECK(!coord_membership_same(&m, &m2));
}

/* the membership's nodes other than this one, as peers to open the log with */
static void
membership_others(void)
{
	struct coord_membership m = { .config_epoch = 4, .quorum = 1, .n = 3, .nodes = {
		{ .node_id = 1, .ctl_addr = "10.0.0.1:7400" },
		{ .node_id = 2, .ctl_addr = "[fd00::2]:7402" },
		{ .node_id = 0, .ctl_addr = "10.0.0.3:7400" } } };
	struct coord_peer p[3];
	const char *bad = NULL;

	/* by node id; brackets off */
	CHECK(coord_membership_others(&m, 1, "elsewhere:1", p, 3, &bad) == 2);
	CHECK(strcmp(p[0].host, "fd00::2") == 0 && p[0].control_port == 7402);
	CHECK(strcmp(p[1].host, "10.0.0.3") == 0 && p[1].control_port == 7400);
	/* a node of id 0 is this one by its address */
	CHECK(coord_membership_others(&m, 9, "10.0.0.3:7400", p, 3, &bad) == 2);
	CHECK(strcmp(p[0].host, "10.0.0.1") == 0 && strcmp(p[1].host, "fd00::2") == 0);
	/* more than fit, and an address that does not split: named */
	CHECK(coord_membership_others(&m, 1, "x:1", p, 1, &bad) == -1 &&
		strcmp(bad, "10.0.0.3:7400") == 0);
	strcpy(m.nodes[1].ctl_addr, "no port");
	CHECK(coord_membership_others(&m, 1, "x:1", p, 3, &bad) == -1 &&
		strcmp(bad, "no port") == 0);
}

/* the maintenance key and the history's values: written, read back, and
 * refused whole when they are not such values */
static void
maintenance_history(void)
{
	static const char *const bad_maint[] = {
		"", "{}", "[]", "null", "{\"node_id\":1,\"at_ms\":5}",
		"{\"node_id\":0,\"at_ms\":5,\"reason\":\"\"}",
		"{\"node_id\":70000,\"at_ms\":5,\"reason\":\"\"}",
		"{\"node_id\":1,\"at_ms\":-5,\"reason\":\"\"}",
		"{\"node_id\":1,\"at_ms\":5,\"reason\":7}",
		/* a control character, a NUL, a duplicate key */
		"{\"node_id\":1,\"at_ms\":5,\"reason\":\"a\\nb\"}",
		"{\"node_id\":1,\"at_ms\":5,\"reason\":\"a\\u0000b\"}",
		"{\"node_id\":1,\"node_id\":2,\"at_ms\":5,\"reason\":\"\"}",
		"{\"node_id\":1,\"at_ms\":5,\"reason\":\"x\"} trailing",
	};
	static const char *const bad_hist[] = {
		"{}", "{\"node_id\":1,\"epoch\":0,\"from_lsn\":1,\"at_ms\":1}",
		"{\"node_id\":0,\"epoch\":1,\"from_lsn\":1,\"at_ms\":1}",
		"{\"node_id\":1,\"epoch\":1,\"from_lsn\":-1,\"at_ms\":1}",
		"{\"node_id\":1,\"epoch\":1,\"from_lsn\":1}",
	};
	char buf[COORD_VALUE_MAX], reason[COORD_REASON_MAX + 2];
	struct coord_maintenance m;
	struct coord_history h;
	size_t n;

	n = coord_maintenance_value(3, 1700000000123ull, "kernel \"upgrade\" \xc3\xa9",
		buf, sizeof(buf));
	CHECK(n > 0 && coord_maintenance_parse(buf, n, &m));
	CHECK(m.node_id == 3 && m.at_ms == 1700000000123ull &&
		strcmp(m.reason, "kernel \"upgrade\" \xc3\xa9") == 0);
	n = coord_maintenance_value(1, 0, "", buf, sizeof(buf));
	CHECK(n > 0 && coord_maintenance_parse(buf, n, &m) && m.reason[0] == '\0');
	/* the longest reason, every byte escaped, still fits a value */
	memset(reason, '"', COORD_REASON_MAX);
	reason[COORD_REASON_MAX] = '\0';
	n = coord_maintenance_value(65535, 1700000000123ull, reason, buf, sizeof(buf));
	CHECK(n > 0 && coord_maintenance_parse(buf, n, &m) &&
		strlen(m.reason) == COORD_REASON_MAX);
	reason[COORD_REASON_MAX] = '"';
	reason[COORD_REASON_MAX + 1] = '\0';
	CHECK(coord_maintenance_value(1, 1, reason, buf, sizeof(buf)) == 0);
	CHECK(!coord_reason_ok(reason, strlen(reason)));
	CHECK(coord_maintenance_value(1, 1, "tab\there", buf, sizeof(buf)) == 0);
	CHECK(coord_maintenance_value(1, 1, "not utf-8 \xff", buf, sizeof(buf)) == 0);
	CHECK(coord_maintenance_value(0, 1, "", buf, sizeof(buf)) == 0);
	for (size_t i = 0; i < sizeof(bad_maint) / sizeof(bad_maint[0]); i++) {
		CHECK(!coord_maintenance_parse(bad_maint[i], strlen(bad_maint[i]), &m));
		CHECK(m.node_id == 0 && m.reason[0] == '\0');
	}

	/* the log-archiver key: a node id, nothing else accepted */
	{
		uint32_t ar = 7;
		static const char *const bad_ar[] = { "", "{}", "{\"node_id\":0}",
			"{\"node_id\":65536}", "{\"node_id\":\"2\"}", "[2]",
			"{\"node_id\":2,\"node_id\":3}", "{\"node_id\":-1}" };

		n = coord_archiver_value(2, buf, sizeof(buf));
		CHECK(n > 0 && coord_archiver_parse(buf, n, &ar) && ar == 2);
		CHECK(coord_archiver_value(0, buf, sizeof(buf)) == 0);
		CHECK(coord_archiver_value(65536, buf, sizeof(buf)) == 0);
		for (size_t i = 0; i < sizeof(bad_ar) / sizeof(bad_ar[0]); i++) {
			ar = 7;
			CHECK(!coord_archiver_parse(bad_ar[i], strlen(bad_ar[i]), &ar) &&
				ar == 0);
		}
	}

	n = coord_history_value(2, 131074, 42, buf, sizeof(buf));
	CHECK(n > 0 && coord_history_parse(buf, n, &h));
	CHECK(h.node_id == 2 && h.epoch == 131074 && h.from_lsn == 42 && h.at_ms > 0);
	for (size_t i = 0; i < sizeof(bad_hist) / sizeof(bad_hist[0]); i++) {
		CHECK(!coord_history_parse(bad_hist[i], strlen(bad_hist[i]), &h));
		CHECK(h.node_id == 0 && h.epoch == 0);
	}
}

int
main(void)
{
	round_trips();
	leader_refused();
	member_refused();
	membership_values();
	membership_others();
	maintenance_history();
	if (failures) {
		fprintf(stderr, "coord_keys_test: %d checks failed\n", failures);
		return 1;
	}
	printf("coord_keys_test: all checks passed\n");
	return 0;
}
