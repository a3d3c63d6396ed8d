/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster_ms.c -- the primary's membership (membership.h has the rules):
 * which one a start promotes under and which peers it fences, what it
 * stores once promoted (the first membership, or J of a change), where
 * each link's node stands in it, the acknowledgement rule of the current
 * one, and the change's commit (J -> F).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primary/primary.h"
#include "common/elog.h"
#include "common/errors.h"

/* a port number: 1..65535, digits only; 0 if not */
static uint16_t
port_of(const char *s)
{
	char *end;
	long v;

	if (s == NULL || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v <= 0 || v > 65535 ? 0 : (uint16_t)v;
}

/*
 * The configuration as a final membership (epoch 0 here): this node
 * (its node id; its control address where both listen_addr and
 * listen_port are given: "every address" reaches nobody) and the
 * replicas, by address.
 */
static int
build_conf(struct cluster *c)
{
	struct membership *ms = &c->conf_ms;
	struct member *self = &ms->m[0];

	memset(ms, 0, sizeof(*ms));
	if (c->cfg.n_replicas + 1 > MEMBERSHIP_NODES_MAX) {
		REPL_LOG_ERROR("at most %d replicas (a membership lists %d nodes)",
			MEMBERSHIP_NODES_MAX - 1, MEMBERSHIP_NODES_MAX);
		return REPL_E_INVAL;
	}
	ms->count = 1 + (uint32_t)c->cfg.n_replicas;
	ms->k = (uint32_t)c->cfg.quorum;
	self->node_id = c->id.node_id;
	self->incarnation = c->id.incarnation;
	self->flags = MEMBER_F_NEW;
	if (c->cfg.listen_addr && c->cfg.listen_port) {
		if (strlen(c->cfg.listen_addr) > MEMBER_HOST_MAX ||
		    (self->port = port_of(c->cfg.listen_port)) == 0) {
			REPL_LOG_ERROR("this node's control address %s:%s: a host of "
				"at most %d characters and a numeric port are "
				"needed", c->cfg.listen_addr, c->cfg.listen_port,
				MEMBER_HOST_MAX);
			return REPL_E_INVAL;
		}
		snprintf(self->host, sizeof(self->host), "%s", c->cfg.listen_addr);
	}
	for (int i = 0; i < c->cfg.n_replicas; i++) {
		struct member *e = &ms->m[1 + i];
		const struct cluster_replica *r = &c->cfg.replicas[i];

		e->flags = MEMBER_F_NEW;
		e->port = port_of(r->ctl_port);
		if (e->port == 0 || strlen(r->host) > MEMBER_HOST_MAX) {
			REPL_LOG_ERROR("replica %s:%s: a host of at most %d characters "
				"and a numeric port are needed", r->host, r->ctl_port,
				MEMBER_HOST_MAX);
			return REPL_E_INVAL;
		}
		snprintf(e->host, sizeof(e->host), "%s", r->host);
	}
	{
		struct membership probe = *ms;
		const char *why;

		probe.config_epoch = 1;
		if (membership_check(&probe, &why)) {
			REPL_LOG_ERROR("the configuration is no membership (%s): a "
				"replica listed twice, or listed at this node's "
				"own control address?", why);
			return REPL_E_INVAL;
		}
	}
	return 0;
}

/* is entry e this node: by node id, or by this node's control address */
static bool
is_self(const struct cluster *c, const struct member *e)
{
	const struct member *self = &c->conf_ms.m[0];

	if (e->node_id != 0)
		return e->node_id == c->id.node_id;
	return self->port != 0 && e->port == self->port &&
		strcmp(e->host, self->host) == 0;
}

/* this node's entry in ms, or -1 */
static int
self_in(const struct cluster *c, const struct membership *ms)
{
	for (uint32_t i = 0; i < ms->count && i < MEMBERSHIP_NODES_MAX; i++)
		if (is_self(c, &ms->m[i]))
			return (int)i;
	return -1;
}

/* a version 1 membership as its writer (this node) sees it: itself added */
static int
from_v1(struct cluster *c, struct membership *out)
{
	const struct membership *v1 = &c->stored;

	if (c->id.epoch == 0 || (c->id.epoch & 0xffff) != (c->id.node_id & 0xffff)) {
		REPL_LOG_ERROR("promotion refused: this node's log holds a version 1 "
			"membership (configuration epoch %llu) that lists no node "
			"ids; only the node that wrote it (the primary of its epoch, "
			"node %llu) may use it, and a replica holding one counts "
			"for nothing until a primary gives it a version 2 one",
			(unsigned long long)v1->config_epoch,
			(unsigned long long)(c->id.epoch & 0xffff));
		return REPL_E_NOT_MEMBER;
	}
	*out = *v1;
	out->v1 = false;
	memmove(&out->m[1], &out->m[0], sizeof(out->m[0]) * v1->count);
	out->m[0] = c->conf_ms.m[0];
	out->count = v1->count + 1;
	return 0;
}

/* the peers: the configuration's replicas, then what else under lists */
static int
choose_peers(struct cluster *c)
{
	const struct membership *u = &c->under;
	int n = 0;

	for (int i = 0; i < c->cfg.n_replicas; i++, n++) {
		struct cluster_peer *p = &c->peers[n];

		snprintf(p->host, sizeof(p->host), "%s", c->cfg.replicas[i].host);
		snprintf(p->port, sizeof(p->port), "%s", c->cfg.replicas[i].ctl_port);
		p->port_num = c->conf_ms.m[1 + i].port;
	}
	for (uint32_t e = 0; e < u->count && c->plan != CLUSTER_PLAN_BOOTSTRAP; e++) {
		const struct member *m = &u->m[e];
		bool named = false;

		if (m->port == 0 || is_self(c, m))
			continue;
		for (int i = 0; i < c->cfg.n_replicas && !named; i++)
			named = c->peers[i].port_num == m->port &&
				strcmp(c->peers[i].host, m->host) == 0;
		if (named)
			continue;
		if (n == CLUSTER_PEERS_MAX)
			return REPL_E_INVAL;	/* cannot be: both are bounded */
		memcpy(c->peers[n].host, m->host, sizeof(c->peers[n].host));
		snprintf(c->peers[n].port, sizeof(c->peers[n].port), "%u",
			(unsigned)m->port);
		c->peers[n].port_num = m->port;
		n++;
	}
	c->n_links = n;
	return 0;
}

int
cluster_ms_choose(struct cluster *c)
{
	struct membership *u = &c->under;
	uint32_t id = c->id.node_id;
	int ret, at;

	membership_load(c->mem, &c->stored);
	if ((ret = build_conf(c)))
		return ret;
	if (c->cfg.bootstrap) {
		/* the cluster's first (promote.c checks that it is) */
		*u = c->conf_ms;
		u->config_epoch = 1;
		c->plan = CLUSTER_PLAN_BOOTSTRAP;
	} else if (c->stored.config_epoch == 0) {
		*u = c->stored;		/* promote.c refuses: not a member */
		c->plan = CLUSTER_PLAN_KEEP;
	} else if (c->stored.v1) {
		if ((ret = from_v1(c, u)))
			return ret;
		c->plan = membership_same(u, &c->conf_ms, id) ?
			CLUSTER_PLAN_UPGRADE : CLUSTER_PLAN_CHANGE;
	} else if (c->stored.flags & MEMBERSHIP_F_JOINT) {
		struct membership t;

		*u = c->stored;
		c->plan = CLUSTER_PLAN_FINISH;
		membership_final(u, &t);
		if (!membership_same(&t, &c->conf_ms, id) && c->cfg.reconfigure) {
			/* one change at a time: J's T is where this one goes */
			REPL_LOG_ERROR("membership change refused: the log holds a "
				"change in progress (joint, configuration epoch %llu) "
				"to %u nodes, k %u; start with that configuration to "
				"finish it, then change it again",
				(unsigned long long)u->config_epoch,
				membership_nodes(u, MEMBER_F_NEW), u->k);
			return REPL_E_MEMBERSHIP;
		}
		if (!membership_same(&t, &c->conf_ms, id))
			REPL_LOG_WARNING("membership: the log holds a change in "
				"progress (joint, configuration epoch %llu); this start "
				"finishes it with its new configuration (%u nodes, k "
				"%u), which is not the configuration given: change the "
				"membership again once it is committed",
				(unsigned long long)u->config_epoch,
				membership_nodes(u, MEMBER_F_NEW), u->k);
	} else {
		*u = c->stored;
		c->plan = membership_same(u, &c->conf_ms, id) ?
			CLUSTER_PLAN_KEEP : CLUSTER_PLAN_CHANGE;
	}
	if (c->plan == CLUSTER_PLAN_CHANGE && !c->cfg.reconfigure) {
		REPL_LOG_ERROR("the configuration (%d replicas, quorum %d) is not the "
			"log's membership (configuration epoch %llu: %u nodes, k %u): "
			"a restart does not change the membership; reconfigure to "
			"change it", c->cfg.n_replicas, c->cfg.quorum,
			(unsigned long long)c->stored.config_epoch,
			membership_nodes(u, MEMBER_F_NEW), u->k);
		return REPL_E_MEMBERSHIP;
	}
	if (c->plan == CLUSTER_PLAN_CHANGE) {
		struct membership j;
		const char *why;

		/* a later promotion must reach every node of the new one */
		if (c->conf_ms.m[0].port == 0) {
			REPL_LOG_ERROR("membership change refused: this primary has no "
				"control address (listen_addr and listen_port), and "
				"every node of the new configuration must be reachable "
				"by address");
			return REPL_E_MEMBERSHIP;
		}
		if (membership_joint(u, &c->conf_ms, id, &j, &why)) {
			REPL_LOG_ERROR("membership change refused: %s", why);
			return REPL_E_MEMBERSHIP;
		}
	}
	if (c->plan == CLUSTER_PLAN_KEEP || c->plan == CLUSTER_PLAN_FINISH) {
		/* a primary outside its own configuration: a change removed it */
		at = self_in(c, u);
		if (c->stored.config_epoch != 0 &&
		    (at < 0 || !(u->m[at].flags & MEMBER_F_NEW))) {
			REPL_LOG_ERROR("promotion refused: this node (node %u) is not in "
				"the %s configuration of the membership its log holds "
				"(configuration epoch %llu): a change removes it",
				(unsigned)id, c->plan == CLUSTER_PLAN_FINISH ? "new" :
				"current", (unsigned long long)u->config_epoch);
			return REPL_E_NOT_MEMBER;
		}
	}
	if ((ret = choose_peers(c)))
		return ret;
	for (int i = c->cfg.n_replicas; i < c->n_links; i++)
		REPL_LOG_NOTICE("membership: %s:%s is a node of configuration epoch "
			"%llu that the configuration does not name: it is fenced "
			"and given the change", c->peers[i].host, c->peers[i].port,
			(unsigned long long)u->config_epoch);
	return 0;
}

/* what the promotion learned: node ids and incarnations where unknown */
static void
learn(struct cluster *c, struct membership *ms)
{
	for (uint32_t e = 0; e < ms->count; e++) {
		struct member *m = &ms->m[e];

		if (is_self(c, m)) {
			m->node_id = c->id.node_id;
			m->incarnation = c->id.incarnation;
			continue;
		}
		for (int i = 0; i < c->n_links; i++) {
			const struct cluster_peer *p = &c->peers[i];

			if (!p->reached || p->port_num != m->port ||
			    strcmp(p->host, m->host) != 0)
				continue;
			if (m->node_id == 0 && membership_find(ms, p->node_id,
					NULL, 0) < 0)
				m->node_id = p->node_id;
			if (m->node_id == p->node_id && m->incarnation == 0)
				m->incarnation = p->incarnation;
		}
	}
}

static void
place_self(struct cluster *c)
{
	int at = self_in(c, &c->ms);

	c->self_flags = at < 0 ? 0 : c->ms.m[at].flags;
}

int
cluster_ms_adopt(struct cluster *c)
{
	struct membership next;
	const char *why;
	int ret;

	switch (c->plan) {
	case CLUSTER_PLAN_KEEP:
	case CLUSTER_PLAN_FINISH:
		c->ms = c->stored;
		atomic_store_explicit(&c->ms_epoch, c->ms.config_epoch,
			memory_order_relaxed);
		place_self(c);
		if (c->plan == CLUSTER_PLAN_FINISH)
			REPL_LOG_NOTICE("membership: configuration epoch %llu is a "
				"change in progress (joint): it is committed once %u "
				"nodes of the old configuration hold it",
				(unsigned long long)c->ms.config_epoch,
				c->ms.k_old + 1);
		return 0;
	case CLUSTER_PLAN_BOOTSTRAP:
	case CLUSTER_PLAN_UPGRADE:
		next = c->conf_ms;
		learn(c, &next);
		next.config_epoch = c->plan == CLUSTER_PLAN_BOOTSTRAP ? 1 :
			c->stored.config_epoch + 1;
		break;
	case CLUSTER_PLAN_CHANGE: {
		struct membership s = c->under, t = c->conf_ms;

		learn(c, &s);
		learn(c, &t);
		if (membership_joint(&s, &t, c->id.node_id, &next, &why)) {
			REPL_LOG_ERROR("membership change refused once the nodes "
				"answered: %s", why);
			return REPL_E_MEMBERSHIP;
		}
		REPL_LOG_NOTICE("membership: configuration epoch %llu (%u nodes, k "
			"%u) becomes %u nodes, k %u, through the joint configuration "
			"epoch %llu: acknowledgements need both quorums until %u "
			"nodes of the old one hold it", (unsigned long long)
			s.config_epoch, membership_nodes(&s, MEMBER_F_NEW), s.k,
			membership_nodes(&t, MEMBER_F_NEW), t.k,
			(unsigned long long)next.config_epoch, s.k + 1);
		break;
	}
	default:
		return REPL_E_INVAL;
	}
	if ((ret = membership_store(c->mem, &next)))
		return ret;
	c->ms = next;
	atomic_store_explicit(&c->ms_epoch, next.config_epoch, memory_order_relaxed);
	place_self(c);
	return 0;
}

/* may a node holding configuration epoch e count under the current rule? */
static bool
accepted(const struct membership *ms, uint64_t e)
{
	return e != 0 && (e == ms->config_epoch ||
		((ms->flags & MEMBERSHIP_F_FROM_JOINT) && e + 1 == ms->config_epoch));
}

void
cluster_ms_place(struct cluster *c, struct link *l)
{
	int at = membership_find(&c->ms, l->node_id, l->host,
		c->peers[l->idx].port_num);
	uint16_t f = at < 0 || l->node_id == 0 ? 0 : c->ms.m[at].flags;

	/* this node, or a node another link reaches already: not twice */
	if (l->node_id == c->id.node_id)
		f = 0;
	for (int i = 0; i < l->idx && f; i++)
		if (c->links[i].node_id == l->node_id) {
			REPL_LOG_WARNING("replica %s:%s answers as node %u, as "
				"%s:%s does: it counts once", l->host, l->ctl_port,
				(unsigned)l->node_id, c->links[i].host,
				c->links[i].ctl_port);
			f = 0;
		}
	l->in_new = (f & MEMBER_F_NEW) != 0;
	l->in_old = (f & MEMBER_F_OLD) != 0;
	l->member = f != 0 && l->acked && accepted(&c->ms, l->held);
}

/* does ms list link l's node, by its node id or by its address? */
static bool
listed(const struct membership *ms, const struct link *l)
{
	const struct cluster_peer *p = &l->c->peers[l->idx];

	if (l->node_id != 0 && membership_find(ms, l->node_id, NULL, 0) >= 0)
		return true;
	for (uint32_t i = 0; i < ms->count; i++)
		if (ms->m[i].port == p->port_num && strcmp(ms->m[i].host, p->host) == 0)
			return true;
	return false;
}

void
cluster_ms_advance(struct cluster *c)
{
	struct membership f;
	uint32_t holders;
	int ret;

	if (!(c->ms.flags & MEMBERSHIP_F_JOINT) || atomic_load(&c->fenced))
		return;
	holders = (c->self_flags & MEMBER_F_OLD) != 0;
	for (int i = 0; i < c->n_links; i++)
		holders += c->links[i].in_old &&
			c->links[i].held == c->ms.config_epoch;
	/* (held is set by this primary's J only: its ACK said it is stored) */
	if (holders < c->ms.k_old + 1)
		return;
	/*
	 * k_old + 1 nodes of S hold J: a promotion under S needs N_S - k_S
	 * of them holding S and nothing newer, so none can succeed any more.
	 */
	membership_final(&c->ms, &f);
	if ((ret = membership_store(c->mem, &f))) {
		REPL_LOG_ERROR("membership: cannot store configuration epoch %llu "
			"(%d): the change stays joint", (unsigned long long)
			f.config_epoch, ret);
		return;
	}
	REPL_LOG_NOTICE("membership: the change is committed (%u of the old "
		"configuration's nodes hold configuration epoch %llu): "
		"configuration epoch %llu, %u nodes, k %u", holders,
		(unsigned long long)c->ms.config_epoch,
		(unsigned long long)f.config_epoch, membership_nodes(&f, MEMBER_F_NEW),
		f.k);
	c->ms = f;
	atomic_store_explicit(&c->ms_epoch, f.config_epoch, memory_order_relaxed);
	place_self(c);
	for (int i = 0; i < c->n_links; i++) {
		struct link *l = &c->links[i];

		cluster_ms_place(c, l);
		/* a node the change removed: its link ends */
		if (i >= c->cfg.n_replicas && !l->in_new && !listed(&f, l)) {
			l->retired = true;
			snprintf(l->why, sizeof(l->why), "removed by the change of "
				"the membership");
			link_kick(l);
		}
	}
	cluster_quorum_update(c);
	pthread_cond_broadcast(&c->cond);
}

bool
cluster_ms_wait_final(struct cluster *c, int ms)
{
	struct timespec until = clock_deadline(ms);
	bool joint;

	cluster_lock(c);
	while ((joint = (c->ms.flags & MEMBERSHIP_F_JOINT) != 0) &&
	       !atomic_load(&c->fenced)) {
		int ret;

		c->waiters++;
		ret = pthread_cond_timedwait(&c->cond, &c->lock, &until);
		c->waiters--;
		if (ret == ETIMEDOUT)
			break;
	}
	joint = (c->ms.flags & MEMBERSHIP_F_JOINT) != 0;
	cluster_unlock(c);
	return !joint;
}
