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

enum etcd_rc
coord_keys_read(struct etcd_client *etcd, struct coord_leader *leader,
		const char *prefix, struct coord_keys *out, char *why, size_t whylen)
{
	struct coord_holder h;
	struct etcd_range r;
	char key[512];
	enum etcd_rc rc;

	memset(out, 0, sizeof(*out));
	out->leader_ttl_s = -1;
	if ((rc = coord_leader_get(leader, &h)) != ETCD_OK)
		return failed(rc, why, whylen, "leader", coord_leader_error(leader));
	if (h.present) {
		struct etcd_lease ls;

		out->has_leader = true;
		/* one that does not parse is held all the same: by "node 0" */
		(void)coord_leader_parse(h.value, h.value_len, &out->leader);
		if (h.lease != 0 &&
		    etcd_lease_timetolive(etcd, h.lease, false, &ls) == ETCD_OK) {
			out->leader_ttl_s = ls.ttl;
			etcd_lease_free(&ls);
		}
	}
	coord_holder_free(&h);

	snprintf(key, sizeof(key), "%smembers/", prefix);
	if ((rc = etcd_get_prefix(etcd, key, strlen(key), false, &r)) != ETCD_OK)
		return failed(rc, why, whylen, "members", etcd_client_error(etcd));
	for (size_t i = 0; i < r.n_kvs; i++) {
		struct coord_member m;

		if (!coord_member_parse((const char *)r.kvs[i].value.p, r.kvs[i].value.len,
				&m)) {
			out->bad_members++;
			continue;
		}
		/* the key names the same node as its value, once */
		char want[32];
		bool dup = false;

		snprintf(want, sizeof(want), "%" PRIu32, m.node_id);
		if (r.kvs[i].key.len != strlen(key) + strlen(want) ||
		    memcmp(r.kvs[i].key.p + strlen(key), want, strlen(want)) != 0) {
			out->bad_members++;
			continue;
		}
		for (int j = 0; j < out->n_members; j++)
			dup |= out->members[j].node_id == m.node_id;
		if (dup || out->n_members == COORD_MEMBERS_MAX) {
			out->bad_members++;
			continue;
		}
		out->members[out->n_members++] = m;
	}
	etcd_range_free(&r);
	qsort(out->members, (size_t)out->n_members, sizeof(out->members[0]), by_node);

	snprintf(key, sizeof(key), "%sswitchover", prefix);
	if ((rc = etcd_get(etcd, key, strlen(key), &r)) != ETCD_OK)
		return failed(rc, why, whylen, "switchover", etcd_client_error(etcd));
	/* one that does not parse names nobody: ignored until its lease ends */
	if (r.n_kvs > 0 && coord_switchover_parse((const char *)r.kvs[0].value.p,
			r.kvs[0].value.len, &out->sw))
		out->has_switchover = true;
	etcd_range_free(&r);
	return ETCD_OK;
}
