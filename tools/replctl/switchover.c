/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * switchover.c -- replctl switchover and failover: ask a node with a
 * coordinator (repld.conf(5), coordinator) to hand the primary's role on,
 * then watch its STATUS until the coordinator's leader key names the new
 * primary.
 *
 * The daemon answers the request at once, with the primary it moves
 * away from (from, 0 for none) and that one's epoch; the change itself
 * runs after the answer (the old primary drains and steps down, the target
 * campaigns and promotes).  It is done when the leader key is held, in
 * state "primary", by another node than from (the target, when one was
 * named) with a newer epoch: a leader key taken by the new primary is
 * what the cluster acts on, whatever node replctl asks.
 */
#include "config.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_proto.h"
#include "client.h"
#include "replctl.h"

#define POLL_MS 100		/* between two STATUS */
#define WAIT_DEFAULT_S 30
#define WAIT_MAX_S 86400
#define WHY_MAX 600		/* a client's why and what a STATUS showed */

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* what the request asked for and what its answer said */
struct want {
	uint64_t from, to, epoch;	/* to 0: whichever replica wins */
};

/*
 * One request on the open connection and its answer as an object: 0,
 * EXIT_UNREACHABLE (c->why says why) or EXIT_FAILED (not a reply: why).
 */
static int
ask(struct client *c, const char *line, json_t **doc, char *why, size_t len)
{
	const char *r;
	size_t n;
	char from[sizeof(c->why)];

	*doc = NULL;
	if (client_send(c, line, NULL, 0) != 0 || (r = client_reply(c, &n)) == NULL) {
		snprintf(why, len, "%s", c->why);
		return EXIT_UNREACHABLE;
	}
	snprintf(from, sizeof(from), "repld at %s", c->path);
	if ((*doc = json_in_reply(r, n, from, why, len)) == NULL)
		return EXIT_FAILED;
	return 0;
}

/*
 * Whether the STATUS d shows w done: *node and *epoch the new primary's.
 * Otherwise what it shows, for the message if the wait runs out.
 */
static bool
done(const json_t *d, const struct want *w, uint64_t *node, uint64_t *epoch,
		char *seen, size_t len)
{
	const json_t *co = json_object_get(d, "coordinator");
	const json_t *ld = json_object_get(co, "leader");
	const json_t *sw = json_object_get(co, "switchover");
	const char *state = jin_str(ld, "state");
	char pend[80] = "";
	int n;

	if (!jin_bool(d, "ok", false)) {
		snprintf(seen, len, "STATUS answered %s: %s", jin_str(d, "error"),
			jin_str(d, "message"));
		return false;
	}
	if (!json_is_object(co)) {
		snprintf(seen, len, "the node's status has no coordinator");
		return false;
	}
	if (json_is_object(sw))
		snprintf(pend, sizeof(pend), "; the %s from node %" PRIu64 " to node %"
			PRIu64 " still pending", jin_bool(sw, "failover", false) ?
			"failover" : "switchover", jin_u64(sw, "from", 0),
			jin_u64(sw, "to", 0));
	if (!json_is_object(ld)) {
		snprintf(seen, len, "nobody holds the leader key%s%s", pend,
			jin_bool(co, "reachable", true) ? "" :
			" (etcd unreachable from this node)");
		return false;
	}
	*node = jin_u64(ld, "node_id", 0);
	*epoch = jin_u64(ld, "epoch", 0);
	if (strcmp(state, "primary") == 0 && *epoch > w->epoch &&
	    (w->to ? *node == w->to : *node != w->from))
		return true;
	n = snprintf(seen, len, "node %" PRIu64 " holds the leader key, epoch %"
		PRIu64 ", state %s%s", *node, *epoch, state[0] ? state : "unknown",
		pend);
	if (!jin_bool(co, "reachable", true) && n >= 0 && (size_t)n < len)
		snprintf(seen + n, len - (size_t)n, " (etcd unreachable from this "
			"node: that may be stale)");
	return false;
}

/*
 * STATUS every POLL_MS until done or wait_ms after start; a connection
 * lost meanwhile is opened again (the node may be the one stepping down).
 * 0 with the new primary, EXIT_FAILED with what was seen last, or
 * EXIT_UNREACHABLE when the last attempts could not reach the daemon.
 * An attempt that ran out of a time the end of the wait cut shorter than
 * --timeout says nothing of the daemon: it does not replace what an
 * earlier one saw.  One refused or answered at once does.
 */
static int
watch(const struct live_opts *o, struct client *c, const struct want *w,
		int64_t start, int64_t wait_ms, uint64_t *node, uint64_t *epoch,
		char *seen, size_t len)
{
	int64_t end = start + wait_ms;
	int last = -1;		/* what the last attempt that counts ended in */
	char now_seen[WHY_MAX];

	snprintf(seen, len, "no STATUS answered yet");
	for (;;) {
		int64_t now = mono_ms(), next = now + POLL_MS;
		struct live_opts q = *o;
		json_t *d = NULL;
		int ret;

		/* no connect and no STATUS waits past the end of the wait */
		if (end - now < q.timeout_ms)
			q.timeout_ms = end - now > 0 ? (int)(end - now) : 1;
		if (c->fd < 0 && client_open(c, &q) != 0) {
			snprintf(now_seen, sizeof(now_seen), "%s", c->why);
			ret = EXIT_UNREACHABLE;
		} else {
			c->timeout_ms = q.timeout_ms;
			ret = ask(c, "STATUS", &d, now_seen, sizeof(now_seen));
			if (ret == 0 && done(d, w, node, epoch, now_seen,
					sizeof(now_seen))) {
				json_decref(d);
				return 0;
			}
			json_decref(d);
			/* a line half read would garble the next: start anew */
			if (ret != 0)
				client_close(c);
		}
		/* ran out of a shortened time: says nothing, keep the last */
		bool cut_short = ret != 0 && q.timeout_ms < o->timeout_ms &&
			mono_ms() - now >= q.timeout_ms;

		if (!cut_short || last < 0) {
			snprintf(seen, len, "%s", now_seen);
			last = ret;
		}
		now = mono_ms();
		if (now >= end)
			return last == EXIT_UNREACHABLE ? EXIT_UNREACHABLE : EXIT_FAILED;
		if (next > end)
			next = end;
		if (next > now)
			(void)poll(NULL, 0, (int)(next - now));
	}
}

static int
usage_of(bool failover)
{
	fprintf(stderr, "usage: replctl %s\n", failover ?
		"failover --to NODE [--wait SECONDS] [--json]" :
		"switchover [--to NODE] [--wait SECONDS] [--json]");
	return EXIT_USAGE;
}

/* replctl's own failure as the error object of --json: code 0, a name */
static void
json_error(const char *name, const char *message)
{
	printf("{\"ok\":false,\"error\":\"%s\",\"code\":0,\"message\":", name);
	json_str(stdout, message);
	printf("}\n");
}

int
cmd_switchover(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_TO = 1, OPT_WAIT };
	static const struct option opts[] = {
		{ "to", required_argument, NULL, OPT_TO },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ NULL, 0, NULL, 0 },
	};
	const char *what = argv[0];
	bool failover = strcmp(what, "failover") == 0;
	struct want w = { 0 };
	uint64_t to = 0, wait_s = WAIT_DEFAULT_S, node = 0, epoch = 0;
	char line[ADMIN_LINE_MAX], why[WHY_MAX];
	struct client c;
	int64_t start, ms;
	json_t *d;
	int c_opt, ret;

	optind = 0;
	while ((c_opt = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		switch (c_opt) {
		case OPT_TO:
			/* a node id (repld.conf(5): node_id) */
			if (!opt_u64("--to", optarg, 1, 65535, &to))
				return usage_of(failover);
			break;
		case OPT_WAIT:
			if (!opt_u64("--wait", optarg, 1, WAIT_MAX_S, &wait_s))
				return usage_of(failover);
			break;
		default:	/* '?': said already */
			return usage_of(failover);
		}
	}
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	if (argc - optind != 0) {
		fprintf(stderr, "replctl: %s takes no operand (the target is --to "
			"NODE)\n", what);
		return usage_of(failover);
	}
	if (failover && to == 0) {
		fprintf(stderr, "replctl: failover needs --to NODE: the node that "
			"takes over (without a primary nobody else picks one)\n");
		return usage_of(failover);
	}
	if (failover)
		snprintf(line, sizeof(line), "FAILOVER %" PRIu64, to);
	else if (to)
		snprintf(line, sizeof(line), "SWITCHOVER %" PRIu64, to);
	else
		snprintf(line, sizeof(line), "SWITCHOVER");

	/* the request's answer within --timeout, as for any command */
	start = mono_ms();
	if (client_open(&c, o) != 0) {
		fprintf(stderr, "replctl: %s\n", c.why);
		return EXIT_UNREACHABLE;
	}
	if ((ret = ask(&c, line, &d, why, sizeof(why))) != 0) {
		fprintf(stderr, "replctl: %s\n", why);
		client_close(&c);
		return ret;
	}
	if (!jin_bool(d, "ok", false)) {
		/* refused: the daemon's answer, as every command passes it on */
		if (o->json)
			printf("%s\n", c.in);
		ret = client_failed(d, what);
		json_decref(d);
		client_close(&c);
		return ret;
	}
	w.from = jin_u64(d, "from", 0);
	w.to = to ? to : jin_u64(d, "to", 0);
	w.epoch = jin_u64(d, "epoch", 0);
	json_decref(d);

	ret = watch(o, &c, &w, start, (int64_t)wait_s * 1000, &node, &epoch, why,
		sizeof(why));
	client_close(&c);
	ms = mono_ms() - start;
	if (ret != 0) {
		char msg[sizeof(why) + 200];

		if (w.to)
			snprintf(msg, sizeof(msg), "%s: node %" PRIu64 " is not the "
				"primary after %" PRIu64 " s (--wait); last seen: %s",
				what, w.to, wait_s, why);
		else
			snprintf(msg, sizeof(msg), "%s: no node took over from node %"
				PRIu64 " as the primary in %" PRIu64 " s (--wait); "
				"last seen: %s", what, w.from, wait_s, why);
		/* unreachable: no object, as for every command */
		if (ret != EXIT_UNREACHABLE && o->json)
			json_error("WAIT_TIMEDOUT", msg);
		fprintf(stderr, "replctl: %s\n", msg);
		return ret;
	}
	if (o->json)
		printf("{\"ok\":true,\"from\":%" PRIu64 ",\"to\":%" PRIu64 ",\"epoch\":%"
			PRIu64 ",\"new_epoch\":%" PRIu64 ",\"ms\":%" PRId64 "}\n", w.from,
			node, w.epoch, epoch, ms);
	else
		printf("node %" PRIu64 " is the primary (epoch %" PRIu64 "), %" PRId64
			" ms after the request\n", node, epoch, ms);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
}
