/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verify.c -- compare a replica's copy of the records with the primary's,
 * by checksums of ranges (wal_range_crc) that each side computes over its
 * own ring.
 *
 * The link thread owns the replica's control channel, so the caller only
 * leaves a request in the link (at most CTL_VERIFY_RANGES_MAX ranges: one
 * message, a bounded amount of work on each side), kicks the link and
 * waits; the link sends it between its batches and hands back the answer
 * when it comes.  The primary's checksums are computed in the caller's
 * thread meanwhile, so the link's data path is never held up for long.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "primary/primary.h"
#include "common/errors.h"

/* ------------------------------------------------------------------ */
/* the caller's side                                                  */

/*
 * Leave q in the link and wait for the replica's answer, as long as the
 * link stays up in the session it was in (reconnects).
 */
static int
ask_replica(struct cluster *c, struct link *l, const struct ctl_verify *q,
		uint64_t reconnects, struct ctl_verify_reply *reply, char *why,
		size_t n)
{
	struct timespec until = clock_deadline(c->cfg.down_timeout_ms);
	uint64_t want;
	int ret = 0;

	cluster_lock(c);
	l->verify.q = *q;
	want = ++l->verify.asked;
	cluster_unlock(c);
	link_kick(l);
	cluster_lock(c);
	while (l->verify.answered < want) {
		if (atomic_load(&c->fenced)) {
			snprintf(why, n, "this primary is fenced: %.100s", c->fenced_why);
			ret = REPL_E_FENCED;
			break;
		}
		if (l->state != REPL_LINK_STREAMING || l->reconnects != reconnects) {
			snprintf(why, n, "replica %d went down: %.100s", l->idx, l->why);
			ret = REPL_E_TIMEDOUT;
			break;
		}
		c->waiters++;
		ret = pthread_cond_timedwait(&c->cond, &c->lock, &until);
		c->waiters--;
		if (ret == ETIMEDOUT && l->verify.answered < want) {
			snprintf(why, n, "replica %d did not answer within %d ms",
				l->idx, c->cfg.down_timeout_ms);
			ret = REPL_E_TIMEDOUT;
			break;
		}
		ret = 0;
	}
	if (ret == 0)
		*reply = l->verify.reply;
	else
		l->verify.answered = l->verify.asked;	/* given up: none comes */
	cluster_unlock(c);
	return ret;
}

/* one message's worth of ranges from lo to hi: ours, theirs, compared */
static int
verify_chunk(struct cluster *c, struct link *l, uint64_t reconnects,
		uint64_t lo, uint64_t hi, struct cluster_verify_result *res,
		bool *stopped)
{
	struct ctl_verify q = { lo, hi, REPL_VERIFY_RANGE };
	uint32_t ours[CTL_VERIFY_RANGES_MAX];
	struct ctl_verify_reply theirs;
	uint32_t n = (uint32_t)ctl_verify_ranges(lo, hi, REPL_VERIFY_RANGE);
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = lo + (uint64_t)i * REPL_VERIFY_RANGE;
		uint64_t b = hi - a < REPL_VERIFY_RANGE ? hi :
			a + REPL_VERIFY_RANGE - 1;

		if (wal_range_crc(c->wal, a, b, &ours[i]) != 0) {
			/* released here meanwhile (or damaged): compare what came before */
			snprintf(res->why, sizeof(res->why), "stopped at LSN %llu: this "
				"primary no longer holds it", (unsigned long long)a);
			res->to = a - 1;
			*stopped = true;
			if (i == 0)
				return 0;
			hi = a - 1;
			q.to = hi;
			n = i;
			break;
		}
	}
	if ((ret = ask_replica(c, l, &q, reconnects, &theirs, res->why,
			sizeof(res->why))))
		return ret;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = lo + (uint64_t)i * REPL_VERIFY_RANGE;
		uint64_t b = hi - a < REPL_VERIFY_RANGE ? hi :
			a + REPL_VERIFY_RANGE - 1;

		res->ranges++;
		/* a range the replica does not hold in full differs too */
		if (!(theirs.flags[i] & CTL_VERIFY_F_MISSING) && theirs.crc[i] == ours[i])
			continue;
		if (res->mismatches < REPL_VERIFY_SHOW) {
			res->bad[res->mismatches].from = a;
			res->bad[res->mismatches].to = b;
		}
		res->mismatches++;
	}
	return 0;
}

int
cluster_verify(struct cluster *c, int i, uint64_t from, uint64_t to,
		struct cluster_verify_result *res)
{
	const uint64_t chunk = (uint64_t)REPL_VERIFY_RANGE * CTL_VERIFY_RANGES_MAX;
	struct link *l;
	struct log_pos head;
	uint64_t lo, hi, commit, flushed = 0, reconnects;
	enum repl_link_state state;
	bool stopped = false;
	int ret = 0;

	if (c == NULL || res == NULL || i < 0 || i >= c->cfg.n_replicas || from > to)
		return REPL_E_INVAL;
	memset(res, 0, sizeof(*res));
	l = &c->links[i];
	rank_lock(&c->verify_lock, LOCK_RANK_VERIFY);
	wal_positions(c->wal, &head, NULL, NULL);
	commit = cluster_durable_lsn(c);
	cluster_lock(c);
	state = l->state;
	if (state == REPL_LINK_STREAMING)
		flushed = l->flushed_lsn - 1;
	reconnects = l->reconnects;
	if (atomic_load(&c->fenced)) {
		snprintf(res->why, sizeof(res->why), "this primary is fenced: %.100s",
			c->fenced_why);
		ret = REPL_E_FENCED;
	} else if (state != REPL_LINK_STREAMING) {
		snprintf(res->why, sizeof(res->why), "replica %d is not streaming%s%.100s",
			i, l->why[0] ? ": " : "", l->why);
		ret = REPL_E_TIMEDOUT;
	}
	cluster_unlock(c);
	if (ret)
		goto out;

	/* what both sides must hold: kept here, committed, flushed there */
	lo = from > head.lsn ? from : head.lsn;
	hi = to;
	if (hi > commit)
		hi = commit;
	if (hi > flushed)
		hi = flushed;
	res->from = lo;
	res->to = hi;
	if (lo > hi) {
		res->to = lo - 1;
		snprintf(res->why, sizeof(res->why), "nothing to compare: LSNs %llu to "
			"%llu are not both kept here and committed and flushed on "
			"replica %d", (unsigned long long)from, (unsigned long long)to, i);
		goto out;
	}
	for (uint64_t a = lo; !stopped; a += chunk) {
		uint64_t b = hi - a < chunk ? hi : a + chunk - 1;

		if ((ret = verify_chunk(c, l, reconnects, a, b, res, &stopped)))
			break;
		if (b == hi)
			break;
	}
out:
	rank_unlock(&c->verify_lock, LOCK_RANK_VERIFY);
	return ret;
}
