/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_show.c -- replctl status, the coordinator block: what a node of
 * an HA cluster (repld.conf(5), coordinator) sees of etcd, the leader key,
 * a pending switchover and the member keys.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "replctl.h"

/* a signed field (the lease's TTL may be -1: unknown), or dflt */
static int64_t
ival(const json_t *obj, const char *key, int64_t dflt)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

/* a duration for people: ms below 10 s, seconds with a tenth above */
static const char *
dur(int64_t ms, char *out, size_t len)
{
	if (ms < 10000)
		snprintf(out, len, "%" PRId64 " ms", ms);
	else
		snprintf(out, len, "%.1f s", (double)ms / 1000);
	return out;
}

static void
print_leader(const json_t *co)
{
	const json_t *ld = json_object_get(co, "leader");
	int64_t ttl = ival(ld, "lease_ttl_s", -1);
	char ttl_s[32], age[32];

	if (!json_is_object(ld)) {
		printf("%-9s none: nobody holds the leader key\n", "leader");
		return;
	}
	/* etcd counts whole seconds, rounded down */
	if (ttl == 0)
		snprintf(ttl_s, sizeof(ttl_s), "under 1 s");
	else if (ttl > 0)
		snprintf(ttl_s, sizeof(ttl_s), "%" PRId64 " s", ttl);
	else
		snprintf(ttl_s, sizeof(ttl_s), "unknown");
	printf("%-9s node %" PRId64 ", epoch %" PRId64 ", %s, lease %s left, read "
		"%s ago%s\n", "leader", ival(ld, "node_id", 0), ival(ld, "epoch", 0),
		jin_str(ld, "state")[0] ? jin_str(ld, "state") : "-", ttl_s,
		dur(ival(ld, "age_ms", 0), age, sizeof(age)),
		jin_bool(co, "holds_leader", false) ? " (this node holds it)" : "");
}

/* the member key against what the node asked sees of that member itself */
static const char *
seen_word(const json_t *m)
{
	const char *seen = jin_str(m, "seen");

	return strcmp(seen, "self") == 0 ? "self" :
		strcmp(seen, "linked") == 0 ? "linked" :
		strcmp(seen, "no_link") == 0 ? "NO-LINK" : "-";
}

static void
print_members(const json_t *co)
{
	const json_t *arr = json_object_get(co, "members");
	int stale = 0;

	if (json_array_size(arr) == 0) {
		printf("no member keys: no node publishes itself\n");
		return;
	}
	printf("%-6s %-8s %12s %12s %12s %-4s %-9s %s\n", "MEMBER", "ROLE", "EPOCH",
		"LAST-LSN", "LAST-EPOCH", "LINK", "SEEN-HERE", "CANDIDATE");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *m = json_array_get(arr, i);

		printf("%-6" PRId64 " %-8s %12" PRId64 " %12" PRId64 " %12" PRId64
			" %-4s %-9s %s\n", ival(m, "node_id", 0),
			jin_str(m, "role")[0] ? jin_str(m, "role") : "-",
			ival(m, "epoch", 0), ival(m, "last_lsn", 0),
			ival(m, "last_epoch", 0),
			jin_bool(m, "link_up", false) ? "up" : "down", seen_word(m),
			jin_bool(m, "candidate", false) ? "yes" : "no");
		stale += strcmp(jin_str(m, "seen"), "no_link") == 0;
	}
	for (size_t i = 0; stale && i < json_array_size(arr); i++) {
		const json_t *m = json_array_get(arr, i);
		char b[32];

		if (strcmp(jin_str(m, "seen"), "no_link") != 0)
			continue;
		printf("NO-LINK   node %" PRId64 ": this node has no link with it",
			ival(m, "node_id", 0));
		if (ival(m, "silent_ms", -1) >= 0)
			printf(" (nothing heard for %s)", dur(ival(m, "silent_ms", 0),
				b, sizeof(b)));
		printf("; its key is its own last word, kept until its lease "
			"runs out: it may be dead, stopped or cut off\n");
	}
}

/* coordinator.waiting's word, said (replctl(8), status) */
static const char *
waiting_sentence(const char *w)
{
	static const char *const said[][2] = {
		{ "busy", "busy: a change of this node runs" },
		{ "etcd", "etcd: etcd does not answer; no takeover until it does" },
		{ "not_candidate", "not_candidate: candidate = false" },
		{ "leader", "leader: a node holds the leader key" },
		{ "not_member", "not_member: this log holds no membership yet" },
		{ "backoff", "backoff: a promotion of this node was refused; it "
			"waits a lease and a random part of one" },
		{ "switchover", "switchover: a switchover names another node" },
		{ "link", "link: this replica follows a primary" },
		{ "other_link", "other_link: another replica follows a primary" },
		{ "keyless", "keyless: the primary last followed holds no leader "
			"key (or none was since the start); it gets lease_ms + "
			"down_ms to come back" },
		{ "unpublished", "unpublished: etcd does not list this node yet" },
		{ "rank", "rank: a replica with a longer log goes first" },
		{ "maintenance", "maintenance: it would take over, but maintenance "
			"is on (replctl maintenance off)" },
	};

	for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++)
		if (strcmp(w, said[i][0]) == 0)
			return said[i][1];
	return w;
}

#define COORD_SAID_MAX 320

/* " (set by node N at TIME: reason)", as status shows maintenance */
static const char *
maintenance_said(const json_t *co, char *out, size_t len)
{
	const json_t *m = json_object_get(co, "maintenance");
	const char *why = jin_str(m, "reason");
	char when[40];

	if (ival(m, "node_id", 0) <= 0)
		snprintf(out, len, " (the maintenance key holds a value that is not "
			"repld's: no takeover until it goes)");
	else
		snprintf(out, len, " (set by node %" PRId64 " at %s%s%s)",
			ival(m, "node_id", 0), utc_text(jin_u64(m, "at_ms", 0), when,
			sizeof(when)), why[0] ? ": " : "", why);
	return out;
}

void
print_coordinator(const json_t *d)
{
	const json_t *co = json_object_get(d, "coordinator");
	const json_t *sw = json_object_get(co, "switchover");
	const char *fo = jin_str(co, "failover"), *err = jin_str(co, "last_error");
	char b[32], state[80], mt[COORD_SAID_MAX];

	if (!json_is_object(co))
		return;		/* no coordinator: promotions are manual */
	if (jin_bool(co, "reachable", false))
		snprintf(state, sizeof(state), "reachable");
	else
		snprintf(state, sizeof(state), "UNREACHABLE for %s",
			dur(ival(co, "unreachable_ms", 0), b, sizeof(b)));
	printf("\ncoordinator %s: %s, failover %s%s, lease %" PRId64 " ms\n",
		jin_str(co, "endpoint")[0] ? jin_str(co, "endpoint") : "-", state,
		strcmp(fo, "paused") == 0 ? "PAUSED" :
		strcmp(fo, "maintenance") == 0 ? "MAINTENANCE" : fo[0] ? fo : "-",
		strcmp(fo, "paused") == 0 ? " (etcd unreachable: no takeover)" :
		strcmp(fo, "off") == 0 ? " (candidate = false: it never takes over)" :
		strcmp(fo, "maintenance") == 0 ? maintenance_said(co, mt, sizeof(mt)) :
		"", ival(co, "lease_ms", 0));
	print_leader(co);
	if (json_is_object(sw)) {
		char to[40] = "the most advanced replica";

		if (ival(sw, "to", 0) > 0)
			snprintf(to, sizeof(to), "node %" PRId64, ival(sw, "to", 0));
		printf("%-9s a %s from node %" PRId64 " to %s\n", "pending",
			jin_bool(sw, "failover", false) ? "failover" : "switchover",
			ival(sw, "from", 0), to);
	}
	printf("%-9s %" PRId64 " begun by this node, %" PRId64 " won (promoted)\n",
		"campaigns", ival(co, "campaigns", 0), ival(co, "promotions", 0));
	if (jin_str(co, "waiting")[0])
		printf("%-9s %s\n", "waiting", waiting_sentence(jin_str(co, "waiting")));
	if (err[0])
		printf("%-9s the last etcd failure: %s\n", "error", err);
	print_members(co);
}
