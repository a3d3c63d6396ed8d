/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster_floor.c -- the peer floors (peer_floor.h) on a primary and a
 * promotion: every HELLO_REPLY is checked against them, and what a peer
 * promised or stored raises them, in this node's log.
 *
 * A peer's promise and membership never go down while its log lives, so
 * an answer of the same incarnation below what this node saw it hold
 * comes from an older copy of that log (a snapshot or backup put back):
 * records it acknowledged since may be missing from it.  It then counts
 * toward no quorum and no promotion and gets no records, until its log is
 * made anew (another incarnation).  Stores happen only when a value
 * rises: on a promotion, a first connection in a new epoch and a
 * membership's acknowledgement; never on the append path.
 */
#include "config.h"

#include <stdio.h>

#include "primary/primary.h"
#include "common/elog.h"

/* store the table (under floor_lock); a failure is logged, not fatal */
static void
store(struct cluster *c)
{
	int ret = peer_floors_store(c->mem, &c->floors);

	if (ret)
		REPL_LOG_ERROR("cannot store the peer floors in the log (%d): what "
			"this node saw of its peers is kept in memory only", ret);
}

int
cluster_floor_check(struct cluster *c, const char *host, const char *port,
		const struct ctl_hello_reply *hr, char *why, size_t n)
{
	const struct peer_floor *e;
	struct peer_floor f;
	bool first;

	rank_lock(&c->floor_lock, LOCK_RANK_FLOOR);
	e = peer_floor_older(&c->floors, hr->node_id, hr->incarnation,
		hr->prior_epoch, hr->config_epoch);
	if (e == NULL) {
		rank_unlock(&c->floor_lock, LOCK_RANK_FLOOR);
		return 0;
	}
	f = *e;
	first = peer_floor_mark_older(&c->floors, hr->node_id, hr->incarnation);
	if (first)
		store(c);
	rank_unlock(&c->floor_lock, LOCK_RANK_FLOOR);
	if (hr->prior_epoch < f.promise)
		snprintf(why, n, "its log is an older copy: it followed epoch %llu, "
			"below the %llu it promised this node; make it anew (repld "
			"--reinit)", (unsigned long long)hr->prior_epoch,
			(unsigned long long)f.promise);
	else if (hr->config_epoch < f.config)
		snprintf(why, n, "its log is an older copy: it holds configuration "
			"epoch %llu, below the %llu it acknowledged; make it anew "
			"(repld --reinit)", (unsigned long long)hr->config_epoch,
			(unsigned long long)f.config);
	else
		snprintf(why, n, "its log is an older copy (found so before); make "
			"it anew (repld --reinit)");
	if (first)
		REPL_LOG_ERROR("replica %s:%s (node %u, incarnation %016llx) runs on "
			"an older copy of its log (restored from a snapshot or a "
			"backup?): it followed epoch %llu and holds configuration "
			"epoch %llu, but it promised epoch %llu to this node and "
			"acknowledged storing configuration epoch %llu, and neither "
			"goes down while a log lives; records it acknowledged may be "
			"missing from it.  It counts toward no quorum and no "
			"promotion and gets no records: make its log anew (repld "
			"--reinit on node %u)", host, port, (unsigned)hr->node_id,
			(unsigned long long)hr->incarnation,
			(unsigned long long)hr->prior_epoch,
			(unsigned long long)hr->config_epoch,
			(unsigned long long)f.promise, (unsigned long long)f.config,
			(unsigned)hr->node_id);
	return -1;
}

void
cluster_floor_promised(struct cluster *c, const struct ctl_hello_reply *hr,
		uint64_t epoch)
{
	if (hr->epoch != epoch)
		return;		/* not what it accepted */
	rank_lock(&c->floor_lock, LOCK_RANK_FLOOR);
	if (peer_floor_raise(&c->floors, hr->node_id, hr->incarnation, epoch, 0))
		store(c);
	rank_unlock(&c->floor_lock, LOCK_RANK_FLOOR);
}

void
cluster_floor_stored(struct cluster *c, uint32_t node_id, uint64_t incarnation,
		uint64_t e)
{
	rank_lock(&c->floor_lock, LOCK_RANK_FLOOR);
	if (peer_floor_raise(&c->floors, node_id, incarnation, 0, e))
		store(c);
	rank_unlock(&c->floor_lock, LOCK_RANK_FLOOR);
}
