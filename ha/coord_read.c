/* SPDX-License-Identifier: BSD-3-Clause */
/* coord_read.c -- one tick's reads of the coordinator's keys in etcd */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_keys.h"

/* ---- the tick's reads ---- */

static enum etcd_rc
failed(enum etcd_rc rc, char *why, size_t whylen, const char *what, const char *err)
{
	snprintf(why, whylen, "%s: %s", what, err && *err ? err : etcd_rc_name(rc));
	return rc;
}

static int
by_node(const void *a, const void *b)
{
	const struct coord_member *x = a, *y = b;

	return (x->node_id > y->node_id) - (x->node_id < y->node_id);
}

/* whether key (klen bytes) is prefix then name exactly */
static bool
key_is(const uint8_t *key, size_t klen, const char *prefix, const char *name)
{
	size_t pl = strlen(prefix), nl = strlen(name);

	return klen == pl + nl && memcmp(key, prefix, pl) == 0 &&
		memcmp(key + pl, name, nl) == 0;
}

/* a members/ID key: its value must name the same node, once */
static void
add_member(struct coord_keys *out, const struct etcd_kv *kv, size_t id_at)
{
	struct coord_member m;
	char want[32];
	bool dup = false;

	if (!coord_member_parse((const char *)kv->value.p, kv->value.len, &m)) {
		out->bad_members++;
		return;
	}
	snprintf(want, sizeof(want), "%" PRIu32, m.node_id);
	if (kv->key.len != id_at + strlen(want) ||
	    memcmp(kv->key.p + id_at, want, strlen(want)) != 0) {
		out->bad_members++;
		return;
	}
	for (int j = 0; j < out->n_members; j++)
		dup |= out->members[j].node_id == m.node_id;
	if (dup || out->n_members == COORD_MEMBERS_MAX) {
		out->bad_members++;
		return;
	}
	out->members[out->n_members++] = m;
}

/*
 * One range, [PREFIX "leader", PREFIX "switchover\0"): the leader key,
 * the log-archiver key, the maintenance key, every members/ key, the
 * membership key and the switchover key lie in it (in that order: "le"
 * before "lo", "ma" before "me", '/' before 'h'), the epochs counter and
 * the history before it.  One request instead of
 * three, and one revision: the leader, the members and a pending
 * switchover as they were together.  Then the leader's lease's TTL.
 */
enum etcd_rc
coord_keys_read(struct etcd_client *etcd, const char *prefix,
		struct coord_keys *out, char *why, size_t whylen)
{
	char from[512], end[512], members[512];
	struct etcd_range r;
	int64_t lease = 0;
	enum etcd_rc rc;
	int nf, ne, nm;

	memset(out, 0, sizeof(*out));
	out->leader_ttl_s = -1;
	nf = snprintf(from, sizeof(from), "%sleader", prefix);
	/* the end is exclusive: "switchover" followed by a NUL byte */
	ne = snprintf(end, sizeof(end), "%sswitchover", prefix) + 1;
	nm = snprintf(members, sizeof(members), "%smembers/", prefix);
	if (nf < 0 || (size_t)nf >= sizeof(from) || ne <= 0 ||
	    (size_t)ne >= sizeof(end) || nm < 0 || (size_t)nm >= sizeof(members)) {
		snprintf(why, whylen, "keys: the prefix is too long");
		return ETCD_E_INVAL;
	}
	if ((rc = etcd_get_range(etcd, from, (size_t)nf, end, (size_t)ne, &r)) != ETCD_OK)
		return failed(rc, why, whylen, "keys", etcd_client_error(etcd));
	for (size_t i = 0; i < r.n_kvs; i++) {
		const struct etcd_kv *kv = &r.kvs[i];

		if (key_is(kv->key.p, kv->key.len, prefix, "leader")) {
			out->has_leader = true;
			/* one that does not parse is held all the same: by "node 0" */
			(void)coord_leader_parse((const char *)kv->value.p, kv->value.len,
				&out->leader);
			lease = kv->lease;
			out->leader_lease = kv->lease;
		} else if (key_is(kv->key.p, kv->key.len, prefix, "log-archiver")) {
			/* one that does not parse is held all the same: by "node 0" */
			out->has_archiver = true;
			(void)coord_archiver_parse((const char *)kv->value.p,
				kv->value.len, &out->archiver);
		} else if (key_is(kv->key.p, kv->key.len, prefix, "maintenance")) {
			/* one that does not parse is maintenance all the same (node
			   0): an operator meant something by it */
			out->has_maintenance = true;
			(void)coord_maintenance_parse((const char *)kv->value.p,
				kv->value.len, &out->maint);
		} else if (key_is(kv->key.p, kv->key.len, prefix, "membership")) {
			out->membership_rev = kv->mod_revision;
			out->has_membership = coord_membership_parse(
				(const char *)kv->value.p, kv->value.len, &out->membership);
			out->bad_membership = !out->has_membership;
		} else if (key_is(kv->key.p, kv->key.len, prefix, "switchover")) {
			/* one that does not parse names nobody: ignored until its lease ends */
			if (coord_switchover_parse((const char *)kv->value.p, kv->value.len,
					&out->sw))
				out->has_switchover = true;
		} else if (kv->key.len > (size_t)nm &&
			   memcmp(kv->key.p, members, (size_t)nm) == 0) {
			add_member(out, kv, (size_t)nm);
		}
		/* anything else between them is no key of ours: ignored */
	}
	etcd_range_free(&r);
	qsort(out->members, (size_t)out->n_members, sizeof(out->members[0]), by_node);

	if (lease != 0) {
		struct etcd_lease ls;

		if (etcd_lease_timetolive(etcd, lease, false, &ls) == ETCD_OK) {
			out->leader_ttl_s = ls.ttl;
			etcd_lease_free(&ls);
		}
	}
	return ETCD_OK;
}

/* ---- the history, on request ---- */

static int
by_epoch(const void *a, const void *b)
{
	const struct coord_history *x = a, *y = b;

	return (x->epoch > y->epoch) - (x->epoch < y->epoch);
}

/* the decimal epoch after the prefix, digits only, no leading zero */
static bool
key_epoch(const uint8_t *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 19 || (p[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = v;
	return true;
}

enum etcd_rc
coord_history_read(struct etcd_client *etcd, const char *prefix,
		struct coord_history_list *out, char *why, size_t whylen)
{
	char from[512], end[512];
	struct coord_history *all = NULL;
	struct etcd_range r;
	enum etcd_rc rc;
	int nf, ne, n = 0;

	memset(out, 0, sizeof(*out));
	nf = snprintf(from, sizeof(from), "%shistory/", prefix);
	/* every key under "history/": up to "history0" ('0' follows '/') */
	ne = snprintf(end, sizeof(end), "%shistory0", prefix);
	if (nf < 0 || (size_t)nf >= sizeof(from) || ne < 0 || (size_t)ne >= sizeof(end)) {
		snprintf(why, whylen, "history: the prefix is too long");
		return ETCD_E_INVAL;
	}
	if ((rc = etcd_get_range(etcd, from, (size_t)nf, end, (size_t)ne, &r)) != ETCD_OK)
		return failed(rc, why, whylen, "history", etcd_client_error(etcd));
	if (r.n_kvs > 0 && (all = calloc(r.n_kvs, sizeof(*all))) == NULL) {
		etcd_range_free(&r);
		snprintf(why, whylen, "history: out of memory");
		return ETCD_E_NOMEM;
	}
	for (size_t i = 0; i < r.n_kvs; i++) {
		const struct etcd_kv *kv = &r.kvs[i];
		uint64_t epoch;

		/* the key names the epoch its value records */
		if (!coord_history_parse((const char *)kv->value.p, kv->value.len,
				&all[n]) ||
		    !key_epoch(kv->key.p + nf, kv->key.len - (size_t)nf, &epoch) ||
		    epoch != all[n].epoch)
			out->invalid++;
		else
			n++;
	}
	etcd_range_free(&r);
	if (n > 0) {
		qsort(all, (size_t)n, sizeof(all[0]), by_epoch);
		out->total = n;
		out->n = n < COORD_HISTORY_MAX ? n : COORD_HISTORY_MAX;
		memcpy(out->e, all + (n - out->n), (size_t)out->n * sizeof(all[0]));
	}
	free(all);
	return ETCD_OK;
}
