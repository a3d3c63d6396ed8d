/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * live.c -- replctl's commands against a running repld (its admin
 * socket): status, peers, verify, promote, fence, add, remove, reload,
 * append.  Tables for people, --json for programs (the daemon's reply as
 * it came, one object per line).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_proto.h"
#include "admin_req.h"
#include "client.h"
#include "repld_conf.h"
#include "replctl.h"

#define CHANGE_TIMEOUT_MS 120000	/* a promotion waits for its nodes */

static const char *
human_bytes(uint64_t b, char *out, size_t len)
{
	if (b >= (1ull << 30))
		snprintf(out, len, "%.1f GiB", (double)b / (1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(out, len, "%.1f MiB", (double)b / (1ull << 20));
	else if (b >= 1024)
		snprintf(out, len, "%.1f KiB", (double)b / 1024);
	else
		snprintf(out, len, "%" PRIu64 " B", b);
	return out;
}

/* a number field, or "-" when the daemon did not give it */
static const char *
num(const json_t *obj, const char *key, char *out, size_t len)
{
	if (!json_is_number(json_object_get(obj, key)))
		return "-";
	snprintf(out, len, "%" PRIu64, jin_u64(obj, key, 0));
	return out;
}

static const char *
text(const json_t *obj, const char *key)
{
	const char *s = jin_str(obj, key);

	return s[0] ? s : "-";
}

/* a JSON number of milliseconds as an operator reads it (28m41s) */
static const char *
age(const json_t *obj, const char *key, char *out, size_t len)
{
	if (!json_is_number(json_object_get(obj, key)))
		return "-";
	return repld_duration_text(jin_u64(obj, key, 0), out, len);
}

/* a replica's last contact with a primary, as a phrase */
static const char *
last_contact(const json_t *d, const char *who, char *out, size_t len)
{
	char ago[24];

	if (!json_is_number(json_object_get(d, "last_contact_ms")))
		snprintf(out, len, "none heard since it began serving as a replica");
	else
		snprintf(out, len, "last heard from %s %s ago", who,
			age(d, "last_contact_ms", ago, sizeof(ago)));
	return out;
}

/* how far a replica's log is behind the commit point it heard: "" or ", ..." */
static const char *
records_behind(const json_t *d, char *out, size_t len)
{
	uint64_t commit = jin_u64(d, "commit_lsn", 0);
	uint64_t durable = jin_u64(d, "durable_lsn", 0);

	out[0] = '\0';
	if (commit > durable)
		snprintf(out, len, ", %" PRIu64 " records behind it",
			commit - durable);
	return out;
}

/*
 * A catch-up in progress, as status --json gives it: "catching up: 45%
 * (12.0 MiB of 26.7 MiB), 3s left"; NULL when none is on
 */
static const char *
catchup_text(const json_t *r, char *out, size_t len)
{
	uint64_t total = jin_u64(r, "catchup_total_bytes", 0);
	uint64_t done = jin_u64(r, "catchup_done_bytes", 0);
	char d[24], t[24], left[48];

	if (!json_is_number(json_object_get(r, "catchup_total_bytes")) || total == 0)
		return NULL;
	if (done > total)
		done = total;
	if (json_is_number(json_object_get(r, "catchup_eta_ms")))
		snprintf(left, sizeof(left), "%s left", repld_duration_text(
			jin_u64(r, "catchup_eta_ms", 0), d, sizeof(d)));
	else
		snprintf(left, sizeof(left), "time left not known yet");
	snprintf(out, len, "catching up: %d%% (%s of %s), %s",
		(int)((double)done * 100 / (double)total),
		human_bytes(done, d, sizeof(d)), human_bytes(total, t, sizeof(t)),
		left);
	return out;
}

/*
 * Why a replica is not streaming, and whether the primary has released
 * what it would resume from: then it is copied anew when it is back.  A
 * replica catching up says how far it has come.
 */
static const char *
replica_why(const json_t *d, const json_t *r, char *out, size_t len)
{
	uint64_t first = jin_u64(d, "first_lsn", 0), flushed = jin_u64(r, "flushed_lsn", 0);
	const char *progress = catchup_text(r, out, len);

	if (progress)
		return progress;

	if (strcmp(jin_str(r, "state"), "streaming") != 0 && first > 1 &&
	    flushed + 1 < first) {
		snprintf(out, len, "%s%sreleased past (its next record, LSN %" PRIu64
			", is gone here): a full resync when it is back",
			jin_str(r, "why"), jin_str(r, "why")[0] ? "; " : "", flushed + 1);
		return out;
	}
	return jin_str(r, "why");
}

static void
print_replicas(const json_t *d, bool full)
{
	const json_t *arr = json_object_get(d, "replicas");

	if (json_array_size(arr) == 0) {
		printf("no replicas: a single node\n");
		return;
	}
	if (full)
		printf("%-21s %-11s %-6s %10s %9s %9s %7s %-9s %-5s %-7s %s\n",
			"REPLICA", "STATE", "MEMBER", "FLUSHED", "LAG-REC",
			"LAG-BYTES", "LAG-AGE", "TRANSPORT", "FLUSH", "BACKEND", "WHY");
	else
		printf("%-21s %-11s %-6s %10s %s\n", "REPLICA", "STATE", "MEMBER",
			"RECONNECTS", "WHY");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *r = json_array_get(arr, i);
		char f[24], lr[24], lb[24], lm[24], rc[24], why[384];
		const char *member = jin_bool(r, "member", false) ? "yes" : "no";

		if (full)
			printf("%-21s %-11s %-6s %10s %9s %9s %7s %-9s %-5s %-7s %s\n",
				jin_str(r, "address"), jin_str(r, "state"), member,
				num(r, "flushed_lsn", f, sizeof(f)),
				num(r, "lag_records", lr, sizeof(lr)),
				json_is_number(json_object_get(r, "lag_bytes")) ?
				human_bytes(jin_u64(r, "lag_bytes", 0), lb, sizeof(lb)) : "-",
				age(r, "lag_ms", lm, sizeof(lm)),
				text(r, "transport"), text(r, "flush_method"),
				text(r, "backend"), replica_why(d, r, why, sizeof(why)));
		else
			printf("%-21s %-11s %-6s %10s %s\n", jin_str(r, "address"),
				jin_str(r, "state"), member,
				num(r, "reconnects", rc, sizeof(rc)),
				replica_why(d, r, why, sizeof(why)));
	}
}

/* the archiver's line (repld.conf(5), archive), when the node has one */
static void
print_archive(const json_t *d)
{
	const json_t *a = json_object_get(d, "archive");
	char n[3][24], b[32];
	struct timespec now;

	if (!json_is_object(a))
		return;
	printf("archive   %s: %s", text(a, "target"), text(a, "state"));
	if (strcmp(jin_str(a, "state"), "idle") == 0) {
		printf(" (it archives while this node is %s)\n",
			strcmp(jin_str(a, "on"), "any") == 0 ?
			"a replica or the primary" : "a replica");
		return;
	}
	printf(", archived to LSN %s, %s records behind (%s)",
		num(a, "archived_lsn", n[0], sizeof(n[0])),
		num(a, "lag_records", n[1], sizeof(n[1])), age(a, "lag_ms", b, sizeof(b)));
	clock_gettime(CLOCK_REALTIME, &now);
	if (json_is_number(json_object_get(a, "last_success_ms"))) {
		uint64_t at = jin_u64(a, "last_success_ms", 0),
			ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;

		printf(", last published %s ago", repld_duration_text(ms > at ? ms - at : 0,
			b, sizeof(b)));
	}
	printf(", %s failures", num(a, "failures", n[2], sizeof(n[2])));
	if (jin_bool(a, "holding", false))
		printf(", holding the log after LSN %s", num(a, "hold_lsn", n[0], sizeof(n[0])));
	if (jin_bool(a, "hold_dropped", false))
		printf(", HOLD DROPPED (more than archive.max_hold held)");
	if (json_is_number(json_object_get(a, "gap_at")))
		printf(", GAP from LSN %s", num(a, "gap_at", n[0], sizeof(n[0])));
	if (jin_str(a, "last_error")[0])
		printf("; last error: %s", jin_str(a, "last_error"));
	printf("\n");
}

/* what each link did: its state and its counters */
static void
print_link_counters(const json_t *d)
{
	const json_t *arr = json_object_get(d, "replicas");

	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return;
	printf("\n%-21s %-11s %10s %10s %8s %8s %9s %7s %10s\n", "REPLICA",
		"LINK", "BATCHES", "FLUSHES", "SPINS", "SLEEPS", "CATCH-UPS",
		"RESYNCS", "RECONNECTS");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *r = json_array_get(arr, i);
		char n[7][24];

		printf("%-21s %-11s %10s %10s %8s %8s %9s %7s %10s\n",
			text(r, "address"), text(r, "link_state"),
			num(r, "batches", n[0], sizeof(n[0])),
			num(r, "flushes", n[1], sizeof(n[1])),
			num(r, "spins", n[2], sizeof(n[2])),
			num(r, "sleeps", n[3], sizeof(n[3])),
			num(r, "catch_ups", n[4], sizeof(n[4])),
			num(r, "full_resyncs", n[5], sizeof(n[5])),
			num(r, "reconnects", n[6], sizeof(n[6])));
	}
}

static void
print_status(const json_t *d)
{
	char b1[24], b2[24], n[6][24], phrase[64];
	bool primary = strcmp(jin_str(d, "role"), "primary") == 0;
	bool replica = strcmp(jin_str(d, "role"), "replica") == 0;

	printf("node %s (%s%s) at %s, repld %s\n", num(d, "node_id", n[0],
		sizeof(n[0])), jin_str(d, "role"), jin_bool(d, "changing", false) ?
		", changing state" : "", text(d, "listen"), text(d, "version"));
	printf("log       %s %s", text(d, "backend"), text(d, "path"));
	if (json_object_get(d, "size_bytes"))
		printf(", %s used of %s",
			human_bytes(jin_u64(d, "used_bytes", 0), b1, sizeof(b1)),
			human_bytes(jin_u64(d, "size_bytes", 0), b2, sizeof(b2)));
	if (jin_bool(d, "log_full", false))
		printf(", FULL: appends refused (%s so far)",
			num(d, "appends_full", n[0], sizeof(n[0])));
	printf("\n");
	printf("epoch     %s, configuration epoch %s%s%s\n",
		num(d, "epoch", n[0], sizeof(n[0])),
		num(d, "config_epoch", n[1], sizeof(n[1])),
		jin_bool(d, "config_joint", false) ?
			" (joint: a membership change in progress)" : "",
		jin_bool(d, "fenced", false) ? ", FENCED" : "");
	printf("LSN       first %s, last %s, durable %s",
		num(d, "first_lsn", n[0], sizeof(n[0])),
		num(d, "last_lsn", n[1], sizeof(n[1])),
		num(d, "durable_lsn", n[2], sizeof(n[2])));
	if (primary)
		printf(", commit %s", num(d, "commit_lsn", n[3], sizeof(n[3])));
	else if (replica && json_is_number(json_object_get(d, "commit_lsn")))
		printf(", the primary's commit %s as last heard%s",
			num(d, "commit_lsn", n[3], sizeof(n[3])),
			records_behind(d, phrase, sizeof(phrase)));
	printf("\n");
	if (primary && json_object_get(d, "retention")) {
		const json_t *r = json_object_get(d, "retention");

		const json_t *who = json_object_get(r, "held_by_replica");

		printf("retention %s, %s%% used, released up to LSN %s (held by %s%s%s)%s",
			text(r, "mode"), num(r, "used_percent", n[0], sizeof(n[0])),
			num(r, "release_lsn", n[1], sizeof(n[1])), text(r, "held_by"),
			json_is_string(who) ? ": " : "",
			json_is_string(who) ? json_string_value(who) : "",
			jin_bool(r, "space_alarm", false) ? ", SPACE ALARM" : "");
		if (json_integer_value(json_object_get(r, "unseen_replicas")) > 0)
			printf(", %s replicas not seen yet (they may hold)",
				num(r, "unseen_replicas", n[2], sizeof(n[2])));
		if (json_integer_value(json_object_get(r, "replica_holds_dropped")) > 0)
			printf(", RELEASED PAST %s holds of replicas away "
				"(retention.replica_max_hold)",
				num(r, "replica_holds_dropped", n[2], sizeof(n[2])));
		printf("\n");
	}
	if (json_object_get(d, "persist_barriers"))
		printf("persists  %s ranges under %s barriers of the medium\n",
			num(d, "persist_ranges", n[0], sizeof(n[0])),
			num(d, "persist_barriers", n[1], sizeof(n[1])));
	printf("transport %s, flush method %s, quorum %s", text(d, "transport"),
		text(d, "flush_method"), num(d, "quorum", n[4], sizeof(n[4])));
	if (primary)
		printf(", %s replicas up", num(d, "replicas_up", n[5], sizeof(n[5])));
	printf("\n");
	if (!primary) {
		const json_t *ro = json_object_get(d, "reopen");

		if (json_is_object(ro))
			printf("reopening its log as the primary under its old "
				"membership (a membership change failed): %s failed "
				"attempts, closed for %s ms; last: %s\n",
				num(ro, "attempts", n[0], sizeof(n[0])),
				num(ro, "closed_ms", n[1], sizeof(n[1])),
				text(ro, "error"));
		if (jin_bool(d, "floor_pending", false))
			printf("waiting for its promise floor: made anew, it serves no "
				"primary until %s of its peers answered (%s so far)\n",
				num(d, "floor_needed", n[1], sizeof(n[1])),
				num(d, "floor_answered", n[2], sizeof(n[2])));
		if (jin_bool(d, "following", false))
			printf("following node %s (connected from %s), %s\n",
				num(d, "primary_node", n[0], sizeof(n[0])),
				text(d, "primary_address"), last_contact(d, "it", phrase,
				sizeof(phrase)));
		else if (replica)
			printf("following no primary now (%s)\n", last_contact(d,
				"one", phrase, sizeof(phrase)));
		else
			printf("following no primary now\n");
		if (jin_bool(d, "removed", false))
			printf("REMOVED   from the membership (configuration epoch "
				"%s%s leaves it out): %s\n",
				num(d, "config_epoch", n[0], sizeof(n[0])),
				jin_bool(d, "config_joint", false) ? ", joint" : "",
				jin_bool(d, "config_joint", false) ?
				"it holds the joint membership of a change that "
				"removes it; once that change commits (the primary's "
				"status says), no primary of this cluster connects to "
				"it; stop it, or add it back with replctl add on the "
				"primary" :
				"no primary of this cluster connects to it now; stop "
				"it, or add it back with replctl add on the primary");
		if (json_object_get(d, "session_state") != NULL) {
			char n7[24];

			printf("session   %s: %s sessions, %s fences, %s dropped "
				"silent; %s queries, %s truncates, %s checkpoint "
				"moves, %s commits\n",
				text(d, "session_state"),
				num(d, "sessions", n[0], sizeof(n[0])),
				num(d, "fences", n[1], sizeof(n[1])),
				num(d, "silent_drops", n[2], sizeof(n[2])),
				num(d, "queries", n[3], sizeof(n[3])),
				num(d, "truncates", n[4], sizeof(n[4])),
				num(d, "head_moves", n[5], sizeof(n[5])),
				num(d, "commits", n7, sizeof(n7)));
		}
		print_archive(d);
		print_coordinator(d);
		return;
	}
	printf("\n");
	print_replicas(d, true);
	print_link_counters(d);
	print_archive(d);
	print_coordinator(d);
}

/*
 * What status exits with: 0 when the node does its part -- a primary that
 * can acknowledge appends (not fenced, not changing state, at least
 * quorum member replicas streaming), a replica that follows a primary --
 * else EXIT_UNACKED with why.
 */
static int
status_exit(const json_t *d, char *why, size_t len)
{
	const json_t *arr = json_object_get(d, "replicas");
	const char *role = jin_str(d, "role");
	uint64_t up = 0, quorum = jin_u64(d, "quorum", 0);

	if (strcmp(role, "primary") == 0) {
		if (jin_bool(d, "fenced", false)) {
			snprintf(why, len, "the primary is fenced: a newer one took over");
			return EXIT_UNACKED;
		}
		if (jin_bool(d, "changing", false) || !json_is_array(arr)) {
			snprintf(why, len, "the primary is changing state: appends wait");
			return EXIT_UNACKED;
		}
		if (jin_bool(d, "log_full", false)) {
			snprintf(why, len, "the primary's log is full: appends fail with "
				"REPL_E_FULL until records are released (%" PRIu64 " of %"
				PRIu64 " bytes used; see retention)", jin_u64(d, "used_bytes", 0),
				jin_u64(d, "size_bytes", 0));
			return EXIT_UNACKED;
		}
		for (size_t i = 0; i < json_array_size(arr); i++) {
			const json_t *r = json_array_get(arr, i);

			up += strcmp(jin_str(r, "state"), "streaming") == 0 &&
				jin_bool(r, "member", false);
		}
		if (up < quorum) {
			snprintf(why, len, "the primary cannot acknowledge appends: %"
				PRIu64 " of its quorum of %" PRIu64 " replicas streaming",
				up, quorum);
			return EXIT_UNACKED;
		}
		return 0;
	}
	if (json_is_object(json_object_get(d, "reopen"))) {
		snprintf(why, len, "the primary's log is closed: it is reopening "
			"it under its old membership after a membership change failed");
		return EXIT_UNACKED;
	}
	if (strcmp(role, "replica") != 0) {
		snprintf(why, len, "the node is %s: it serves no log", role);
		return EXIT_UNACKED;
	}
	if (jin_bool(d, "floor_pending", false)) {
		snprintf(why, len, "the replica waits for its promise floor: it "
			"follows no primary yet");
		return EXIT_UNACKED;
	}
	if (!jin_bool(d, "following", false)) {
		snprintf(why, len, "the replica follows no primary now");
		return EXIT_UNACKED;
	}
	return 0;
}

/* one request whose reply is printed as a table or passed on as JSON */
static int
simple(const struct live_opts *o, const char *line, const char *what,
		void (*print)(const json_t *d))
{
	json_t *d;
	char *reply;
	int ret = client_call(o, line, &d, &reply);

	if (ret)
		return ret;
	if (o->json)
		printf("%s\n", reply);
	if (!jin_bool(d, "ok", false))
		ret = client_failed(d, what);
	else if (!o->json && print)
		print(d);
	else if (!o->json)
		printf("%s\n", text(d, "message"));
	if (ret == 0 && print == print_status) {
		char why[200];

		if ((ret = status_exit(d, why, sizeof(why))) != 0)
			fprintf(stderr, "replctl: status: %s\n", why);
	}
	json_decref(d);
	free(reply);
	return ret;
}

static void
print_peers(const json_t *d)
{
	const json_t *arr = json_object_get(d, "peers");

	if (json_object_get(d, "replicas")) {
		print_replicas(d, false);
		return;
	}
	printf("%-21s\n", "PEER");
	for (size_t i = 0; i < json_array_size(arr); i++)
		printf("%-21s\n", text(json_array_get(arr, i), "address"));
}

static void
print_verify(const json_t *d)
{
	const json_t *arr = json_object_get(d, "replicas");
	char n[3][24];

	printf("verified LSN %s..%s in ranges of %s records\n",
		num(d, "from", n[0], sizeof(n[0])), num(d, "to", n[1], sizeof(n[1])),
		num(d, "range_records", n[2], sizeof(n[2])));
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *r = json_array_get(arr, i);
		const json_t *bad = json_object_get(r, "bad");
		uint64_t mism = jin_u64(r, "mismatches", 0);

		if (!jin_bool(r, "checked", false)) {
			printf("%-21s NOT CHECKED: %s\n", jin_str(r, "address"),
				text(r, "why"));
			continue;
		}
		printf("%-21s %s ranges, %" PRIu64 " mismatched%s\n",
			jin_str(r, "address"), num(r, "ranges", n[0], sizeof(n[0])), mism,
			mism ? ":" : ", ok");
		for (size_t b = 0; b < json_array_size(bad); b++) {
			const json_t *x = json_array_get(bad, b);

			printf("%-21s   LSN %s..%s differ\n", "",
				num(x, "from", n[1], sizeof(n[1])),
				num(x, "to", n[2], sizeof(n[2])));
		}
	}
}

/* exit 1 when a range differs or a replica could not be compared */
static int
verify(const struct live_opts *o, const char *line)
{
	const json_t *arr;
	json_t *d;
	char *reply;
	int ret = client_call(o, line, &d, &reply);

	if (ret)
		return ret;
	if (o->json)
		printf("%s\n", reply);
	if (!jin_bool(d, "ok", false)) {
		ret = client_failed(d, "verify");
		goto out;
	}
	if (!o->json)
		print_verify(d);
	arr = json_object_get(d, "replicas");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *r = json_array_get(arr, i);

		if (!jin_bool(r, "checked", false) || jin_u64(r, "mismatches", 1) != 0)
			ret = EXIT_FAILED;
	}
	if (ret)
		fprintf(stderr, "replctl: verify: the replicas do not all hold what "
			"the primary holds (see above)\n");
out:
	json_decref(d);
	free(reply);
	return ret;
}

static int
usage_of(const char *synopsis)
{
	fprintf(stderr, "usage: replctl %s\n", synopsis);
	return EXIT_USAGE;
}

enum { OPT_FROM = 1, OPT_TO, OPT_FORCE, OPT_QUORUM };

static const struct option verify_opts[] = {
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ NULL, 0, NULL, 0 },
};
static const struct option promote_opts[] = {
	{ "force", no_argument, NULL, OPT_FORCE },
	{ NULL, 0, NULL, 0 },
};
static const struct option member_opts[] = {
	{ "quorum", required_argument, NULL, OPT_QUORUM },
	{ NULL, 0, NULL, 0 },
};

/* the commands of this file: their options, and operands (add, remove: one) */
static const struct {
	const char *name, *synopsis;
	const struct option *opts;
	int operands;
} commands[] = {
	{ "status", "status [--json]  |  status [--json] LOG", NULL, 0 },
	{ "peers", "peers [--json]", NULL, 0 },
	{ "verify", "verify [--from LSN] [--to LSN] [--json]", verify_opts, 0 },
	{ "promote", "promote [--force]", promote_opts, 0 },
	{ "fence", "fence", NULL, 0 },
	{ "reload", "reload", NULL, 0 },
	{ "add", "add HOST:PORT [--quorum K]", member_opts, 1 },
	{ "remove", "remove HOST:PORT [--quorum K]", member_opts, 1 },
	{ "release", "release LSN", NULL, 1 },
};

/*
 * HOST:PORT as the daemon takes it (admin_req.c): a host of printable
 * characters without spaces or ':', a port 1..65535
 */
static bool
host_port(const char *s)
{
	const char *colon = strrchr(s, ':');
	uint64_t port;

	if (colon == NULL || colon == s || colon - s > ADMIN_HOST_MAX)
		return false;
	for (const char *p = s; p < colon; p++)
		if (*p <= ' ' || *p > '~' || *p == ':')
			return false;
	return colon[1] >= '0' && colon[1] <= '9' &&
		arg_u64(colon + 1, 1, 65535, &port);
}

int
cmd_live(int argc, char *argv[], struct live_opts *o)
{
	const char *cmd = argv[0], *member = NULL;
	char line[ADMIN_LINE_MAX];
	uint64_t from = 0, to = 0, quorum = UINT64_MAX;
	struct live_opts slow;
	bool force = false;
	size_t k;
	int c, ret;

	for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++)
		if (strcmp(cmd, commands[k].name) == 0)
			break;
	if (k == sizeof(commands) / sizeof(commands[0])) {
		fprintf(stderr, "replctl: unknown command '%s'\n", cmd);
		return EXIT_USAGE;
	}
	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, commands[k].opts, o)) != -1) {
		switch (c) {
		case OPT_FROM:
		case OPT_TO:
			/* the reply repeats them: within its numbers (admin_proto.h) */
			if (!opt_u64(c == OPT_FROM ? "--from" : "--to", optarg, 0,
					INT64_MAX, c == OPT_FROM ? &from : &to))
				return usage_of(commands[k].synopsis);
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_QUORUM:
			if (!opt_u64("--quorum", optarg, 0, REPLD_PEERS_MAX, &quorum))
				return usage_of(commands[k].synopsis);
			break;
		default:	/* '?': said already */
			return usage_of(commands[k].synopsis);
		}
	}
	/* these act on the node they name, whatever its role */
	o->one_node = strcmp(cmd, "promote") == 0 || strcmp(cmd, "reload") == 0;
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	if (argc - optind != commands[k].operands) {
		fprintf(stderr, "replctl: %s takes %s\n", cmd, commands[k].operands ?
			"one operand" : "no operand");
		return usage_of(commands[k].synopsis);
	}
	/* to 0: up to the commit LSN, which FROM may not pass either */
	if (to && from > to) {
		fprintf(stderr, "replctl: verify: --from %" PRIu64 " is after --to %"
			PRIu64 "\n", from, to);
		return usage_of(commands[k].synopsis);
	}
	if (strcmp(cmd, "release") == 0) {
		uint64_t lsn;

		/* the reply repeats it: within its numbers (admin_proto.h) */
		if (!opt_u64("release: LSN", argv[optind], 0, INT64_MAX, &lsn))
			return usage_of(commands[k].synopsis);
		snprintf(line, sizeof(line), "RELEASE %" PRIu64, lsn);
		return simple(o, line, "release", NULL);
	}
	if (commands[k].operands) {
		member = argv[optind];
		if (!host_port(member)) {
			fprintf(stderr, "replctl: %s: \"%s\" is not HOST:PORT (a "
				"replica's host and its control port, 1..65535)\n",
				cmd, member);
			return usage_of(commands[k].synopsis);
		}
	}

	/*
	 * A change of state may wait for nodes: more time than a question,
	 * unless --timeout says how long the caller waits.
	 */
	slow = *o;
	if (!o->timeout_given && slow.timeout_ms < CHANGE_TIMEOUT_MS)
		slow.timeout_ms = CHANGE_TIMEOUT_MS;
	if (strcmp(cmd, "status") == 0)
		return simple(o, "STATUS", "status", print_status);
	if (strcmp(cmd, "peers") == 0)
		return simple(o, "STATUS", "peers", print_peers);
	if (strcmp(cmd, "verify") == 0) {
		snprintf(line, sizeof(line), "VERIFY %" PRIu64 " %" PRIu64, from, to);
		return verify(&slow, line);
	}
	if (strcmp(cmd, "promote") == 0)
		return simple(&slow, force ? "PROMOTE force" : "PROMOTE", "promote",
			NULL);
	if (strcmp(cmd, "fence") == 0)
		return simple(&slow, "FENCE", "fence", NULL);
	if (strcmp(cmd, "reload") == 0)
		return simple(&slow, "RELOAD", "reload", NULL);
	if (quorum != UINT64_MAX)
		snprintf(line, sizeof(line), "%s %s %" PRIu64, strcmp(cmd, "add") == 0 ?
			"ADD" : "REMOVE", member, quorum);
	else
		snprintf(line, sizeof(line), "%s %s", strcmp(cmd, "add") == 0 ?
			"ADD" : "REMOVE", member);
	return simple(&slow, line, cmd, NULL);
}
