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

#include "admin_proto.h"
#include "client.h"
#include "replctl.h"

#define TOKS 2048
#define CHANGE_TIMEOUT_MS 120000	/* a promotion waits for its nodes */

static struct jtok toks[TOKS];

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
num(const struct jdoc *d, int obj, const char *key, char *out, size_t len)
{
	int i = json_get(d, obj, key);

	if (i < 0 || d->t[i].type != J_NUMBER)
		return "-";
	snprintf(out, len, "%" PRIu64, json_u64(d, i, 0));
	return out;
}

static const char *
text(const struct jdoc *d, int obj, const char *key, char *out, size_t len)
{
	json_text(d, json_get(d, obj, key), out, len);
	return out[0] ? out : "-";
}

static void
print_replicas(const struct jdoc *d, bool full)
{
	int arr = json_get(d, 0, "replicas");

	if (arr < 0 || d->t[arr].size == 0) {
		printf("no replicas: a single node\n");
		return;
	}
	if (full)
		printf("%-21s %-11s %-6s %10s %9s %10s %7s %-9s %-5s %-7s %s\n",
			"REPLICA", "STATE", "MEMBER", "FLUSHED", "LAG-REC",
			"LAG-BYTES", "LAG-MS", "TRANSPORT", "FLUSH", "BACKEND", "WHY");
	else
		printf("%-21s %-11s %-6s %10s %s\n", "REPLICA", "STATE", "MEMBER",
			"RECONNECTS", "WHY");
	for (int i = 0; i < d->t[arr].size; i++) {
		int r = json_item(d, arr, i);
		char a[64], st[16], f[24], lr[24], lb[24], lm[24], tr[16], fm[8],
			be[8], why[200], rc[24];
		bool member = json_bool(d, json_get(d, r, "member"), false);

		text(d, r, "address", a, sizeof(a));
		text(d, r, "state", st, sizeof(st));
		text(d, r, "why", why, sizeof(why));
		if (full)
			printf("%-21s %-11s %-6s %10s %9s %10s %7s %-9s %-5s %-7s %s\n",
				a, st, member ? "yes" : "no",
				num(d, r, "flushed_lsn", f, sizeof(f)),
				num(d, r, "lag_records", lr, sizeof(lr)),
				num(d, r, "lag_bytes", lb, sizeof(lb)),
				num(d, r, "lag_ms", lm, sizeof(lm)),
				text(d, r, "transport", tr, sizeof(tr)),
				text(d, r, "flush_method", fm, sizeof(fm)),
				text(d, r, "backend", be, sizeof(be)),
				strcmp(why, "-") ? why : "");
		else
			printf("%-21s %-11s %-6s %10s %s\n", a, st,
				member ? "yes" : "no",
				num(d, r, "reconnects", rc, sizeof(rc)),
				strcmp(why, "-") ? why : "");
	}
}

/* what each link did: its state and its counters */
static void
print_link_counters(const struct jdoc *d)
{
	int arr = json_get(d, 0, "replicas");

	if (arr < 0 || d->t[arr].size == 0)
		return;
	printf("\n%-21s %-11s %10s %10s %8s %8s %9s %7s %10s\n", "REPLICA",
		"LINK", "BATCHES", "FLUSHES", "SPINS", "SLEEPS", "CATCH-UPS",
		"RESYNCS", "RECONNECTS");
	for (int i = 0; i < d->t[arr].size; i++) {
		int r = json_item(d, arr, i);
		char a[64], ls[16], n[7][24];

		printf("%-21s %-11s %10s %10s %8s %8s %9s %7s %10s\n",
			text(d, r, "address", a, sizeof(a)),
			text(d, r, "link_state", ls, sizeof(ls)),
			num(d, r, "batches", n[0], sizeof(n[0])),
			num(d, r, "flushes", n[1], sizeof(n[1])),
			num(d, r, "spins", n[2], sizeof(n[2])),
			num(d, r, "sleeps", n[3], sizeof(n[3])),
			num(d, r, "catch_ups", n[4], sizeof(n[4])),
			num(d, r, "full_resyncs", n[5], sizeof(n[5])),
			num(d, r, "reconnects", n[6], sizeof(n[6])));
	}
}

static void
print_status(const struct jdoc *d)
{
	char role[16], listen[64], tr[16], fm[8], be[8], path[256], b1[24], b2[24],
		n[6][24], pa[64];
	bool primary;

	text(d, 0, "role", role, sizeof(role));
	primary = strcmp(role, "primary") == 0;
	printf("node %s (%s%s) at %s\n", num(d, 0, "node_id", n[0], sizeof(n[0])),
		role, json_bool(d, json_get(d, 0, "changing"), false) ?
		", changing state" : "", text(d, 0, "listen", listen, sizeof(listen)));
	printf("log       %s %s", text(d, 0, "backend", be, sizeof(be)),
		text(d, 0, "path", path, sizeof(path)));
	if (json_get(d, 0, "size_bytes") >= 0)
		printf(", %s used of %s",
			human_bytes(json_u64(d, json_get(d, 0, "used_bytes"), 0), b1, sizeof(b1)),
			human_bytes(json_u64(d, json_get(d, 0, "size_bytes"), 0), b2, sizeof(b2)));
	printf("\n");
	printf("epoch     %s, configuration epoch %s%s%s\n",
		num(d, 0, "epoch", n[0], sizeof(n[0])),
		num(d, 0, "config_epoch", n[1], sizeof(n[1])),
		json_bool(d, json_get(d, 0, "config_joint"), false) ?
			" (joint: a membership change in progress)" : "",
		json_bool(d, json_get(d, 0, "fenced"), false) ? ", FENCED" : "");
	printf("LSN       first %s, last %s, durable %s",
		num(d, 0, "first_lsn", n[0], sizeof(n[0])),
		num(d, 0, "last_lsn", n[1], sizeof(n[1])),
		num(d, 0, "durable_lsn", n[2], sizeof(n[2])));
	if (primary)
		printf(", commit %s", num(d, 0, "commit_lsn", n[3], sizeof(n[3])));
	printf("\n");
	printf("transport %s, flush method %s, quorum %s",
		text(d, 0, "transport", tr, sizeof(tr)),
		text(d, 0, "flush_method", fm, sizeof(fm)),
		num(d, 0, "quorum", n[4], sizeof(n[4])));
	if (primary)
		printf(", %s replicas up", num(d, 0, "replicas_up", n[5], sizeof(n[5])));
	printf("\n");
	if (!primary) {
		if (json_bool(d, json_get(d, 0, "floor_pending"), false))
			printf("waiting for its promise floor: made anew, it serves no "
				"primary until %s of its peers answered (%s so far)\n",
				num(d, 0, "floor_needed", n[1], sizeof(n[1])),
				num(d, 0, "floor_answered", n[2], sizeof(n[2])));
		if (json_bool(d, json_get(d, 0, "following"), false))
			printf("following node %s (connected from %s)\n",
				num(d, 0, "primary_node", n[0], sizeof(n[0])),
				text(d, 0, "primary_address", pa, sizeof(pa)));
		else
			printf("following no primary now\n");
		if (json_get(d, 0, "session_state") >= 0) {
			char ss[16];

			printf("session   %s: %s sessions, %s fences, %s dropped "
				"silent; %s queries, %s truncates, %s checkpoint "
				"moves, %s commits\n",
				text(d, 0, "session_state", ss, sizeof(ss)),
				num(d, 0, "sessions", n[0], sizeof(n[0])),
				num(d, 0, "fences", n[1], sizeof(n[1])),
				num(d, 0, "silent_drops", n[2], sizeof(n[2])),
				num(d, 0, "queries", n[3], sizeof(n[3])),
				num(d, 0, "truncates", n[4], sizeof(n[4])),
				num(d, 0, "head_moves", n[5], sizeof(n[5])),
				num(d, 0, "commits", pa, sizeof(pa)));
		}
		return;
	}
	printf("\n");
	print_replicas(d, true);
	print_link_counters(d);
}

/* one request whose reply is printed as a table or passed on as JSON */
static int
simple(const struct live_opts *o, const char *line, const char *what,
		void (*print)(const struct jdoc *d))
{
	struct jdoc d;
	char *reply;
	int ret = client_call(o, line, &d, toks, TOKS, &reply);

	if (ret)
		return ret;
	if (o->json)
		printf("%s\n", reply);
	if (!json_bool(&d, json_get(&d, 0, "ok"), false)) {
		ret = client_failed(&d, what);
	} else if (!o->json) {
		if (print) {
			print(&d);
		} else {
			char msg[512];

			printf("%s\n", text(&d, 0, "message", msg, sizeof(msg)));
		}
	}
	free(reply);
	return ret;
}

static void
print_peers(const struct jdoc *d)
{
	int arr = json_get(d, 0, "peers");

	if (json_get(d, 0, "replicas") >= 0) {
		print_replicas(d, false);
		return;
	}
	printf("%-21s\n", "PEER");
	for (int i = 0; arr >= 0 && i < d->t[arr].size; i++) {
		char a[64];

		printf("%-21s\n", text(d, json_item(d, arr, i), "address", a, sizeof(a)));
	}
}

static void
print_verify(const struct jdoc *d)
{
	int arr = json_get(d, 0, "replicas");
	char n[3][24];

	printf("verified LSN %s..%s in ranges of %s records\n",
		num(d, 0, "from", n[0], sizeof(n[0])), num(d, 0, "to", n[1], sizeof(n[1])),
		num(d, 0, "range_records", n[2], sizeof(n[2])));
	for (int i = 0; arr >= 0 && i < d->t[arr].size; i++) {
		int r = json_item(d, arr, i), bad = json_get(d, r, "bad");
		char a[64], why[200];
		uint64_t mism = json_u64(d, json_get(d, r, "mismatches"), 0);

		text(d, r, "address", a, sizeof(a));
		if (!json_bool(d, json_get(d, r, "checked"), false)) {
			printf("%-21s NOT CHECKED: %s\n", a,
				text(d, r, "why", why, sizeof(why)));
			continue;
		}
		printf("%-21s %s ranges, %" PRIu64 " mismatched%s\n", a,
			num(d, r, "ranges", n[0], sizeof(n[0])), mism,
			mism ? ":" : ", ok");
		for (int b = 0; bad >= 0 && b < d->t[bad].size; b++) {
			int x = json_item(d, bad, b);

			printf("%-21s   LSN %s..%s differ\n", "",
				num(d, x, "from", n[1], sizeof(n[1])),
				num(d, x, "to", n[2], sizeof(n[2])));
		}
	}
}

/* exit 1 when a range differs or a replica could not be compared */
static int
verify(const struct live_opts *o, const char *line)
{
	struct jdoc d;
	char *reply;
	int ret = client_call(o, line, &d, toks, TOKS, &reply), arr;

	if (ret)
		return ret;
	if (o->json)
		printf("%s\n", reply);
	if (!json_bool(&d, json_get(&d, 0, "ok"), false)) {
		ret = client_failed(&d, "verify");
		free(reply);
		return ret;
	}
	if (!o->json)
		print_verify(&d);
	arr = json_get(&d, 0, "replicas");
	for (int i = 0; arr >= 0 && i < d.t[arr].size; i++) {
		int r = json_item(&d, arr, i);

		if (!json_bool(&d, json_get(&d, r, "checked"), false) ||
		    json_u64(&d, json_get(&d, r, "mismatches"), 1) != 0)
			ret = EXIT_FAILED;
	}
	if (ret)
		fprintf(stderr, "replctl: verify: the replicas do not all hold what "
			"the primary holds (see above)\n");
	free(reply);
	return ret;
}

static int
usage_of(const char *synopsis)
{
	fprintf(stderr, "usage: replctl %s\n", synopsis);
	return EXIT_USAGE;
}

int
cmd_live(int argc, char *argv[], const struct live_opts *o)
{
	const char *cmd = argv[0];
	char line[ADMIN_LINE_MAX];
	struct live_opts slow = *o;

	/*
	 * A change of state may wait for nodes: more time than a question,
	 * unless --timeout says how long the caller waits.
	 */
	if (!o->timeout_given && slow.timeout_ms < CHANGE_TIMEOUT_MS)
		slow.timeout_ms = CHANGE_TIMEOUT_MS;
	if (strcmp(cmd, "status") == 0)
		return argc == 1 ? simple(o, "STATUS", "status", print_status) :
			usage_of("status [--json]  |  status [--json] LOG");
	if (strcmp(cmd, "peers") == 0)
		return argc == 1 ? simple(o, "STATUS", "peers", print_peers) :
			usage_of("peers [--json]");
	if (strcmp(cmd, "verify") == 0) {
		uint64_t from = 0, to = 0;

		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--from") == 0 && i + 1 < argc &&
			    arg_u64(argv[i + 1], 0, UINT64_MAX, &from))
				i++;
			else if (strcmp(argv[i], "--to") == 0 && i + 1 < argc &&
			    arg_u64(argv[i + 1], 0, UINT64_MAX, &to))
				i++;
			else
				return usage_of("verify [--from LSN] [--to LSN] [--json]");
		}
		snprintf(line, sizeof(line), "VERIFY %" PRIu64 " %" PRIu64, from, to);
		return verify(&slow, line);
	}
	if (strcmp(cmd, "promote") == 0) {
		if (argc > 2 || (argc == 2 && strcmp(argv[1], "--force") != 0))
			return usage_of("promote [--force]");
		return simple(&slow, argc == 2 ? "PROMOTE force" : "PROMOTE",
			"promote", NULL);
	}
	if (strcmp(cmd, "fence") == 0)
		return argc == 1 ? simple(&slow, "FENCE", "fence", NULL) :
			usage_of("fence");
	if (strcmp(cmd, "reload") == 0)
		return argc == 1 ? simple(&slow, "RELOAD", "reload", NULL) :
			usage_of("reload");
	if (strcmp(cmd, "add") == 0 || strcmp(cmd, "remove") == 0) {
		const char *member = NULL, *quorum = NULL;

		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "--quorum") == 0 && i + 1 < argc)
				quorum = argv[++i];
			else if (member == NULL && argv[i][0] != '-')
				member = argv[i];
			else
				member = NULL, argc = -1;
		}
		if (member == NULL || strlen(member) > 100 ||
		    (quorum && (strlen(quorum) != 1 || quorum[0] < '0' || quorum[0] > '8')))
			return usage_of(strcmp(cmd, "add") == 0 ?
				"add HOST:PORT [--quorum K]" :
				"remove HOST:PORT [--quorum K]");
		snprintf(line, sizeof(line), "%s %s%s%s",
			strcmp(cmd, "add") == 0 ? "ADD" : "REMOVE", member,
			quorum ? " " : "", quorum ? quorum : "");
		return simple(&slow, line, cmd, NULL);
	}
	if (strcmp(cmd, "append") == 0)
		return cmd_append(argc, argv, o);
	if (strcmp(cmd, "bench") == 0)
		return cmd_bench(argc, argv, o);
	return -1;
}
