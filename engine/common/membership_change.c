/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership_change.c -- which entry a node is, whether two memberships
 * say the same configuration, and the memberships of a change: the joint
 * one J(S, T) and the final one F(T) (membership.h has the rules).
 */
#include "config.h"

#include <string.h>

#include "common/membership.h"

static bool
has_addr(const struct member *m)
{
	return m->port != 0;
}

static bool
addr_equal(const struct member *a, const struct member *b)
{
	return has_addr(a) && has_addr(b) && a->port == b->port &&
		strcmp(a->host, b->host) == 0;
}

int
membership_find(const struct membership *ms, uint32_t node_id,
		const char *host, uint16_t port)
{
	for (uint32_t i = 0; i < ms->count && i < MEMBERSHIP_NODES_MAX; i++) {
		const struct member *e = &ms->m[i];

		if (e->node_id != 0) {
			if (node_id == e->node_id)
				return (int)i;
		} else if (host && port && port == e->port &&
			   strcmp(host, e->host) == 0) {
			return (int)i;
		}
	}
	return -1;
}

bool
membership_leaves_out(const struct membership *ms, uint32_t node_id)
{
	int at;

	if (ms->config_epoch == 0 || ms->v1 || node_id == 0)
		return false;
	if ((at = membership_find(ms, node_id, NULL, 0)) >= 0)
		return (ms->m[at].flags & MEMBER_F_NEW) == 0;
	/* an entry without an id may be this node, known by its address */
	for (uint32_t i = 0; i < ms->count && i < MEMBERSHIP_NODES_MAX; i++)
		if (ms->m[i].node_id == 0)
			return false;
	return true;
}

/*
 * One node in both?  By node id where both know it (self's entries by
 * that alone), else by address.  strict: where both know the node id,
 * the addresses must agree too (a node that moved is a change).
 */
static bool
same_node(const struct member *a, const struct member *b, uint32_t self_id,
		bool strict)
{
	if (a->node_id != 0 && b->node_id != 0) {
		if (a->node_id != b->node_id)
			return false;
		if (self_id != 0 && a->node_id == self_id)
			return true;
		return !strict || !has_addr(a) || !has_addr(b) || addr_equal(a, b);
	}
	return addr_equal(a, b);
}

bool
membership_same(const struct membership *a, const struct membership *b,
		uint32_t self_id)
{
	bool used[MEMBERSHIP_NODES_MAX] = { false };
	uint32_t joint = MEMBERSHIP_F_JOINT;

	if ((a->flags & joint) != (b->flags & joint) || a->k != b->k ||
	    a->k_old != b->k_old || a->count != b->count ||
	    a->count > MEMBERSHIP_NODES_MAX)
		return false;
	for (uint32_t i = 0; i < a->count; i++) {
		bool found = false;

		for (uint32_t j = 0; j < b->count && !found; j++) {
			if (used[j] || a->m[i].flags != b->m[j].flags ||
			    !same_node(&a->m[i], &b->m[j], self_id, true))
				continue;
			used[j] = found = true;
		}
		if (!found)
			return false;
	}
	return true;
}

int
membership_joint(const struct membership *s, const struct membership *t,
		uint32_t self_id, struct membership *j, const char **why)
{
	bool matched[MEMBERSHIP_NODES_MAX] = { false };

	memset(j, 0, sizeof(*j));
	for (uint32_t i = 0; i < s->count && i < MEMBERSHIP_NODES_MAX; i++) {
		if (!(s->m[i].flags & MEMBER_F_NEW))
			continue;
		j->m[j->count] = s->m[i];
		j->m[j->count++].flags = MEMBER_F_OLD;
	}
	for (uint32_t i = 0; i < t->count && i < MEMBERSHIP_NODES_MAX; i++) {
		const struct member *n = &t->m[i];
		int at = -1;

		if (!(n->flags & MEMBER_F_NEW))
			continue;
		for (uint32_t k = 0; k < j->count && at < 0; k++)
			if (!matched[k] && (j->m[k].flags & MEMBER_F_OLD) &&
			    same_node(&j->m[k], n, self_id, false))
				at = (int)k;
		if (at < 0) {
			if (j->count == MEMBERSHIP_NODES_MAX) {
				*why = "the old and the new configuration together "
					"have more than 12 nodes";
				return -1;
			}
			at = (int)j->count++;
			j->m[at] = *n;
			j->m[at].flags = 0;
		} else if (has_addr(n)) {
			/* T's address is where the node is now */
			memcpy(j->m[at].host, n->host, sizeof(n->host));
			j->m[at].port = n->port;
		}
		matched[at] = true;
		j->m[at].flags |= MEMBER_F_NEW;
		if (j->m[at].node_id == 0)
			j->m[at].node_id = n->node_id;
		if (j->m[at].incarnation == 0)
			j->m[at].incarnation = n->incarnation;
	}
	/* an address T gives to another node is no longer the old one's */
	for (uint32_t a = 0; a < j->count; a++)
		for (uint32_t b = 0; b < j->count; b++)
			if (a != b && j->m[a].flags == MEMBER_F_OLD &&
			    (j->m[b].flags & MEMBER_F_NEW) &&
			    addr_equal(&j->m[a], &j->m[b])) {
				j->m[a].host[0] = '\0';
				j->m[a].port = 0;
			}
	j->config_epoch = s->config_epoch + 1;
	j->k = t->k;
	j->k_old = s->k;
	j->flags = MEMBERSHIP_F_JOINT;
	return membership_check(j, why);
}

void
membership_final(const struct membership *j, struct membership *f)
{
	memset(f, 0, sizeof(*f));
	for (uint32_t i = 0; i < j->count && i < MEMBERSHIP_NODES_MAX; i++)
		if (j->m[i].flags & MEMBER_F_NEW) {
			f->m[f->count] = j->m[i];
			f->m[f->count++].flags = MEMBER_F_NEW;
		}
	f->config_epoch = j->config_epoch + 1;
	f->k = j->k;
	f->flags = MEMBERSHIP_F_FROM_JOINT;
	f->from_crc = membership_crc(j);
}
