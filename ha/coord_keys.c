/* SPDX-License-Identifier: BSD-3-Clause */
/* coord_keys.c -- the coordinator's keys: values written and read totally */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <jansson.h>

#include "coord_keys.h"

#define NODE_ID_MAX 65535u
/* the values the protocol carries stay within a signed 64-bit number */
#define NUM_MAX ((uint64_t)INT64_MAX)

/* json (taken) compact into buf; its length, 0 if it does not fit */
static size_t
dump(json_t *j, char *buf, size_t size)
{
	size_t n;

	if (j == NULL)
		return 0;
	n = json_dumpb(j, buf, size > 0 ? size - 1 : 0, JSON_COMPACT);
	json_decref(j);
	if (n == 0 || n >= size)
		return 0;
	buf[n] = '\0';
	return n;
}

size_t
coord_leader_value(uint32_t node_id, uint64_t epoch, const char *state,
		const char *ctl_addr, char *buf, size_t size)
{
	if (epoch > NUM_MAX)
		return 0;
	return dump(json_pack("{s:I, s:I, s:s, s:s}", "node_id", (json_int_t)node_id,
		"epoch", (json_int_t)epoch, "state", state, "ctl_addr", ctl_addr),
		buf, size);
}

size_t
coord_member_value(const struct coord_member *m, const char *ctl_addr, char *buf,
		size_t size)
{
	if (m->epoch > NUM_MAX || m->last_lsn > NUM_MAX || m->last_epoch > NUM_MAX)
		return 0;
	return dump(json_pack("{s:I, s:s, s:I, s:I, s:I, s:b, s:b, s:s}",
		"node_id", (json_int_t)m->node_id, "role", m->role,
		"epoch", (json_int_t)m->epoch, "last_lsn", (json_int_t)m->last_lsn,
		"last_epoch", (json_int_t)m->last_epoch, "link_up", m->link_up,
		"candidate", m->candidate, "ctl_addr", ctl_addr), buf, size);
}

size_t
coord_switchover_value(uint32_t from, uint32_t to, bool failover, char *buf,
		size_t size)
{
	return dump(json_pack("{s:I, s:I, s:b}", "from", (json_int_t)from,
		"to", (json_int_t)to, "failover", failover), buf, size);
}

size_t
coord_history_value(uint32_t node_id, uint64_t epoch, uint64_t from_lsn, char *buf,
		size_t size)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	if (epoch > NUM_MAX || from_lsn > NUM_MAX)
		return 0;
	return dump(json_pack("{s:I, s:I, s:I, s:I}", "node_id", (json_int_t)node_id,
		"epoch", (json_int_t)epoch, "from_lsn", (json_int_t)from_lsn,
		"at_ms", (json_int_t)tv.tv_sec * 1000 + tv.tv_usec / 1000), buf, size);
}

bool
coord_reason_ok(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	if (len > COORD_REASON_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return false;
	/* jansson refuses a string that is not UTF-8: so does the reason */
	json_t *j = json_stringn(s, len);

	json_decref(j);
	return j != NULL;
}

size_t
coord_maintenance_value(uint32_t node_id, uint64_t at_ms, const char *reason,
		char *buf, size_t size)
{
	if (node_id == 0 || at_ms > NUM_MAX || !coord_reason_ok(reason, strlen(reason)))
		return 0;
	return dump(json_pack("{s:I, s:I, s:s}", "node_id", (json_int_t)node_id,
		"at_ms", (json_int_t)at_ms, "reason", reason), buf, size);
}

size_t
coord_membership_value(const struct coord_membership *m, char *buf, size_t size)
{
	json_t *nodes = json_array(), *o;

	if (nodes == NULL || m->config_epoch > NUM_MAX) {
		json_decref(nodes);
		return 0;
	}
	for (int i = 0; i < m->n; i++)
		if (json_array_append_new(nodes, json_pack("{s:I, s:s}", "node_id",
				(json_int_t)m->nodes[i].node_id, "ctl_addr",
				m->nodes[i].ctl_addr)) != 0) {
			json_decref(nodes);
			return 0;
		}
	o = json_pack("{s:I, s:I, s:o}", "config_epoch", (json_int_t)m->config_epoch,
		"quorum", (json_int_t)m->quorum, "nodes", nodes);
	return dump(o, buf, size);
}

/* ---- reading ---- */

/* an object from exactly these bytes (at most max), or NULL */
static json_t *
object_max(const char *v, size_t len, size_t max)
{
	json_t *j;

	if (v == NULL || len == 0 || len > max)
		return NULL;
	j = json_loadb(v, len, JSON_REJECT_DUPLICATES, NULL);
	if (j != NULL && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static json_t *
object_of(const char *v, size_t len)
{
	return object_max(v, len, COORD_VALUE_MAX);
}

static bool
num(json_t *o, const char *key, uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	json_int_t i;

	if (!json_is_integer(v) || (i = json_integer_value(v)) < 0 ||
	    (uint64_t)i > max)
		return false;
	*out = (uint64_t)i;
	return true;
}

static bool
boolean(json_t *o, const char *key, bool *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

/* a string of at most size - 1 bytes, one of names when names is given */
static bool
str(json_t *o, const char *key, const char *const *names, char *out, size_t size)
{
	json_t *v = json_object_get(o, key);
	const char *s;

	if (!json_is_string(v) || json_string_length(v) >= size)
		return false;
	s = json_string_value(v);
	if (names != NULL) {
		bool known = false;

		for (int i = 0; names[i]; i++)
			known |= strcmp(names[i], s) == 0;
		if (!known)
			return false;
	}
	snprintf(out, size, "%s", s);
	return true;
}

bool
coord_leader_parse(const char *v, size_t len, struct coord_leader_value *out)
{
	static const char *const states[] = { "primary", "promoting", NULL };
	json_t *o = object_of(v, len);
	uint64_t id = 0, epoch = 0;
	bool ok;

	memset(out, 0, sizeof(*out));
	snprintf(out->state, sizeof(out->state), "?");
	if (o == NULL)
		return false;
	ok = num(o, "node_id", NODE_ID_MAX, &id) && id > 0 &&
		num(o, "epoch", NUM_MAX, &epoch) &&
		str(o, "state", states, out->state, sizeof(out->state));
	if (!ok) {
		json_decref(o);
		snprintf(out->state, sizeof(out->state), "?");
		return false;
	}
	out->node_id = (uint32_t)id;
	out->epoch = epoch;
	/* where clients find it: a value without one still names the holder */
	if (!str(o, "ctl_addr", NULL, out->ctl_addr, sizeof(out->ctl_addr)) ||
	    !coord_ctl_addr_split(out->ctl_addr, NULL, NULL))
		out->ctl_addr[0] = '\0';
	json_decref(o);
	return true;
}

bool
coord_member_parse(const char *v, size_t len, struct coord_member *out)
{
	static const char *const roles[] = { "primary", "replica", "down", NULL };
	json_t *o = object_of(v, len);
	uint64_t id = 0;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (o == NULL)
		return false;
	ok = num(o, "node_id", NODE_ID_MAX, &id) && id > 0 &&
		str(o, "role", roles, out->role, sizeof(out->role)) &&
		num(o, "epoch", NUM_MAX, &out->epoch) &&
		num(o, "last_lsn", NUM_MAX, &out->last_lsn) &&
		num(o, "last_epoch", NUM_MAX, &out->last_epoch) &&
		boolean(o, "link_up", &out->link_up) &&
		boolean(o, "candidate", &out->candidate);
	json_decref(o);
	if (!ok) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->node_id = (uint32_t)id;
	return true;
}

bool
coord_switchover_parse(const char *v, size_t len, struct coord_switchover *out)
{
	json_t *o = object_of(v, len);
	uint64_t from = 0, to = 0;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (o == NULL)
		return false;
	ok = num(o, "from", NODE_ID_MAX, &from) && num(o, "to", NODE_ID_MAX, &to) &&
		boolean(o, "failover", &out->failover);
	json_decref(o);
	if (!ok) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->from = (uint32_t)from;
	out->to = (uint32_t)to;
	return true;
}

bool
coord_maintenance_parse(const char *v, size_t len, struct coord_maintenance *out)
{
	json_t *o = object_of(v, len), *r;
	uint64_t id = 0;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (o == NULL)
		return false;
	r = json_object_get(o, "reason");
	ok = num(o, "node_id", NODE_ID_MAX, &id) && id > 0 &&
		num(o, "at_ms", NUM_MAX, &out->at_ms) && json_is_string(r) &&
		coord_reason_ok(json_string_value(r), json_string_length(r));
	if (ok)
		memcpy(out->reason, json_string_value(r), json_string_length(r) + 1);
	json_decref(o);
	if (!ok) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->node_id = (uint32_t)id;
	return true;
}

bool
coord_history_parse(const char *v, size_t len, struct coord_history *out)
{
	json_t *o = object_of(v, len);
	uint64_t id = 0;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (o == NULL)
		return false;
	ok = num(o, "node_id", NODE_ID_MAX, &id) && id > 0 &&
		num(o, "epoch", NUM_MAX, &out->epoch) && out->epoch > 0 &&
		num(o, "from_lsn", NUM_MAX, &out->from_lsn) &&
		num(o, "at_ms", NUM_MAX, &out->at_ms);
	json_decref(o);
	if (!ok) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->node_id = (uint32_t)id;
	return true;
}

/* "host:port" or "[ipv6]:port": a host of 1..COORD_HOST_MAX bytes
 * without blanks (or ':' outside brackets), a port 1..65535 without a sign
 * or leading zero */
bool
coord_ctl_addr_split(const char *s, char host[COORD_HOST_MAX + 1],
		uint16_t *port_out)
{
	const char *colon = strrchr(s, ':');
	size_t hl;
	unsigned long port = 0;
	bool bracketed = s[0] == '[';	/* an IPv6 address: "[a:b::c]:port" */

	if (colon == NULL || (hl = (size_t)(colon - s)) == 0 || hl > COORD_HOST_MAX + 2 ||
	    (bracketed && (hl < 3 || s[hl - 1] != ']')) ||
	    (!bracketed && hl > COORD_HOST_MAX))
		return false;
	for (size_t i = bracketed; i < hl - bracketed; i++)
		if (s[i] <= ' ' || (s[i] == ':' && !bracketed) || s[i] == 0x7f ||
		    s[i] == '[' || s[i] == ']')
			return false;
	if (colon[1] < '1' || colon[1] > '9' || strlen(colon + 1) > 5)
		return false;
	for (const char *p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (port < 1 || port > 65535)
		return false;
	if (host != NULL) {
		/* brackets off: what a peer's address is */
		memcpy(host, s + bracketed, hl - 2 * bracketed);
		host[hl - 2 * bracketed] = '\0';
	}
	if (port_out != NULL)
		*port_out = (uint16_t)port;
	return true;
}

int
coord_membership_others(const struct coord_membership *m, uint32_t my_id,
		const char *my_ctl_addr, struct coord_peer *out, int max,
		const char **bad)
{
	int n = 0;

	for (int i = 0; i < m->n; i++) {
		const struct coord_ms_node *nd = &m->nodes[i];

		if (nd->node_id == my_id ||
		    (nd->node_id == 0 && strcmp(nd->ctl_addr, my_ctl_addr) == 0))
			continue;
		if (n == max || !coord_ctl_addr_split(nd->ctl_addr, out[n].host,
				&out[n].control_port)) {
			*bad = nd->ctl_addr;
			return -1;
		}
		n++;
	}
	return n;
}

bool
coord_membership_parse(const char *v, size_t len, struct coord_membership *out)
{
	json_t *o = object_max(v, len, COORD_MEMBERSHIP_VALUE_MAX), *nodes, *e;
	uint64_t ce = 0, k = 0;
	size_t i;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (o == NULL)
		return false;
	nodes = json_object_get(o, "nodes");
	ok = num(o, "config_epoch", NUM_MAX, &ce) && ce >= 1 &&
		num(o, "quorum", COORD_MEMBERS_MAX, &k) && json_is_array(nodes) &&
		json_array_size(nodes) >= 1 &&
		json_array_size(nodes) <= COORD_MEMBERS_MAX && k < json_array_size(nodes);
	json_array_foreach(ok ? nodes : NULL, i, e) {
		struct coord_ms_node *nd = &out->nodes[i];
		uint64_t id = 0;

		ok = json_is_object(e) && num(e, "node_id", NODE_ID_MAX, &id) &&
			str(e, "ctl_addr", NULL, nd->ctl_addr, sizeof(nd->ctl_addr)) &&
			coord_ctl_addr_split(nd->ctl_addr, NULL, NULL);
		if (!ok)
			break;
		nd->node_id = (uint32_t)id;
		/* a node listed twice, by id or by address, is no membership */
		for (size_t j = 0; ok && j < i; j++)
			ok = (id == 0 || out->nodes[j].node_id != id) &&
				strcmp(out->nodes[j].ctl_addr, nd->ctl_addr) != 0;
		if (!ok)
			break;
	}
	if (ok)
		out->n = (int)json_array_size(nodes);
	json_decref(o);
	if (!ok) {
		memset(out, 0, sizeof(*out));
		return false;
	}
	out->config_epoch = ce;
	out->quorum = (uint32_t)k;
	return true;
}

static bool
ms_node_in(const struct coord_ms_node *x, const struct coord_membership *m)
{
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->nodes[i].ctl_addr, x->ctl_addr) == 0 &&
		    (x->node_id == 0 || m->nodes[i].node_id == 0 ||
		     m->nodes[i].node_id == x->node_id))
			return true;
	return false;
}

bool
coord_membership_same(const struct coord_membership *a,
		const struct coord_membership *b)
{
	if (a->config_epoch != b->config_epoch || a->quorum != b->quorum || a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (!ms_node_in(&a->nodes[i], b))
			return false;
	return true;
}

bool
coord_member_same(const struct coord_member *a, const struct coord_member *b)
{
	return a->node_id == b->node_id && strcmp(a->role, b->role) == 0 &&
		a->epoch == b->epoch && a->last_epoch == b->last_epoch &&
		a->link_up == b->link_up && a->candidate == b->candidate;
}

size_t
coord_archiver_value(uint32_t node_id, char *buf, size_t size)
{
	if (node_id == 0 || node_id > NODE_ID_MAX)
		return 0;
	return dump(json_pack("{s:I}", "node_id", (json_int_t)node_id), buf, size);
}

bool
coord_archiver_parse(const char *v, size_t len, uint32_t *node_id)
{
	json_t *o = object_of(v, len);
	uint64_t id = 0;
	bool ok;

	*node_id = 0;
	if (o == NULL)
		return false;
	ok = num(o, "node_id", NODE_ID_MAX, &id) && id > 0;
	json_decref(o);
	if (ok)
		*node_id = (uint32_t)id;
	return ok;
}
