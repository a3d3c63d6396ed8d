/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_maintenance.c -- MAINTENANCE and HISTORY: the admin thread hands
 * the request to the coordinator's thread (the one that talks to etcd)
 * and waits for its answer.  Maintenance is one key without a lease,
 * PREFIX<uuid>/maintenance, that every coordinator reads with the others
 * in its tick's one range: while it exists ha_step holds back every
 * takeover and campaign a replica would start by itself (ha_rules.h).
 * The history is read only when asked: it is no input of the rules.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coord_internal.h"

static uint64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool
unreachable(struct coordinator *c, const char **error, char *msg, size_t len)
{
	if (c->reachable && c->keys_valid)
		return false;
	*error = "COORDINATOR_UNREACHABLE";
	snprintf(msg, len, "etcd does not answer (%s): nothing changed",
		c->view.last_error);
	return true;
}

void
co_serve_maintenance(struct coordinator *c, bool on, const char *reason,
		struct coord_maint_answer *a)
{
	char value[COORD_VALUE_MAX];
	int64_t deleted = 0;
	size_t len;

	memset(a, 0, sizeof(*a));
	if (unreachable(c, &a->error, a->message, sizeof(a->message)))
		return;
	a->was_on = c->keys.has_maintenance;
	if (!on) {
		if (!co_client_ok(c, etcd_delete(c->etcd, c->k_maintenance,
				strlen(c->k_maintenance), false, &deleted),
				"maintenance delete")) {
			a->error = "COORDINATOR_UNREACHABLE";
			snprintf(a->message, sizeof(a->message), "%s", c->view.last_error);
			return;
		}
		/* what etcd deleted says, not the last read */
		a->was_on = deleted > 0;
		if (a->was_on)
			a->m = c->keys.maint;
		snprintf(a->message, sizeof(a->message), a->was_on ?
			"maintenance off: automatic failover armed again" :
			"maintenance was not on: nothing changed");
		if (a->was_on)
			co_notice(c, "coordinator: maintenance turned off from this node");
		return;
	}
	a->m.node_id = c->node_id;
	a->m.at_ms = wall_ms();
	snprintf(a->m.reason, sizeof(a->m.reason), "%s", reason);
	if (strlen(reason) > COORD_REASON_MAX || !coord_reason_ok(reason, strlen(reason)) ||
	    (len = coord_maintenance_value(a->m.node_id, a->m.at_ms, reason, value,
			sizeof(value))) == 0) {
		memset(&a->m, 0, sizeof(a->m));
		a->error = "BAD_REQUEST";
		snprintf(a->message, sizeof(a->message), "the reason must be UTF-8 "
			"text of at most %d bytes without control characters",
			COORD_REASON_MAX);
		return;
	}
	/* no lease: it outlives every node, until an operator turns it off */
	if (!co_client_ok(c, etcd_put(c->etcd, c->k_maintenance,
			strlen(c->k_maintenance), value, len, 0, NULL), "maintenance put")) {
		memset(&a->m, 0, sizeof(a->m));
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "%s", c->view.last_error);
		return;
	}
	a->on = true;
	snprintf(a->message, sizeof(a->message), "maintenance on: no node takes "
		"over or campaigns by itself until it is turned off; switchover and "
		"failover still do");
	co_notice(c, "coordinator: maintenance turned on from this node%s%s",
		reason[0] ? ": " : "", reason);
}

void
co_maintenance_seen(struct coordinator *c)
{
	const struct coord_keys *k = &c->keys;

	if (k->has_maintenance == c->maint_seen)
		return;
	c->maint_seen = k->has_maintenance;
	if (!k->has_maintenance)
		co_notice(c, "coordinator: maintenance is over: automatic failover "
			"armed");
	else if (k->maint.node_id == 0)
		co_warning(c, "coordinator: the maintenance key holds a value that "
			"is not one of repld's: maintenance all the same (no node takes "
			"over by itself) until it goes");
	else
		co_notice(c, "coordinator: maintenance set by node %" PRIu32 "%s%s: no "
			"node takes over by itself until it is turned off",
			k->maint.node_id, k->maint.reason[0] ? ": " : "", k->maint.reason);
}

void
co_serve_history(struct coordinator *c, struct coord_history_answer *a)
{
	char why[256];
	enum etcd_rc rc;

	memset(a, 0, sizeof(*a));
	if (!c->reachable) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "etcd does not answer (%s)",
			c->view.last_error);
		return;
	}
	rc = coord_history_read(c->etcd, c->prefix, &a->list, why, sizeof(why));
	if (!co_etcd_ok(c, rc, "history", why)) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "%s", why);
	}
}

void
co_request_stopping(struct coord_req *r)
{
	static const char stopping[] = "the daemon is stopping: nothing changed";

	switch (r->kind) {
	case REQ_SWITCHOVER:
		r->ans->error = "COORDINATOR_UNREACHABLE";
		snprintf(r->ans->message, sizeof(r->ans->message), "%s", stopping);
		break;
	case REQ_MAINTENANCE:
		r->maint->error = "COORDINATOR_UNREACHABLE";
		snprintf(r->maint->message, sizeof(r->maint->message), "%s", stopping);
		break;
	case REQ_HISTORY:
		r->history->error = "COORDINATOR_UNREACHABLE";
		snprintf(r->history->message, sizeof(r->history->message),
			"the daemon is stopping");
		break;
	case REQ_MEMBERSHIP:
	case REQ_WITHDRAW:
		r->ret = COORD_E_UNREACHABLE;
		snprintf(r->msg, r->msglen, "%s", stopping);
		break;
	}
}

static const char no_coordinator[] = "this node has no coordinator: repld.conf "
	"names none (coordinator.etcd)";

void
coordinator_maintenance(struct coordinator *c, bool on, const char *reason,
		struct coord_maint_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (c == NULL) {
		a->error = "NO_COORDINATOR";
		snprintf(a->message, sizeof(a->message), "%s", no_coordinator);
		return;
	}
	if (!co_request(c, &(struct coord_req){ .kind = REQ_MAINTENANCE, .on = on,
			.reason = reason ? reason : "", .maint = a })) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "the daemon is stopping");
	}
}

void
coordinator_history(struct coordinator *c, struct coord_history_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (c == NULL) {
		a->error = "NO_COORDINATOR";
		snprintf(a->message, sizeof(a->message), "%s", no_coordinator);
		return;
	}
	if (!co_request(c, &(struct coord_req){ .kind = REQ_HISTORY, .history = a })) {
		a->error = "COORDINATOR_UNREACHABLE";
		snprintf(a->message, sizeof(a->message), "the daemon is stopping");
	}
}
