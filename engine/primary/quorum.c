/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * quorum.c -- the commit rule: what is durable now.  The bottom of the
 * primary's side: the links report their flushes here (under c->lock) and
 * the appenders read the result, so the durability wait climbs no further
 * than this file.
 *
 * An LSN is durable when the local log persisted it and the membership's
 * rule holds: k member links of its configuration have flushed it, and
 * while a change is in progress k_old of the old configuration too; and
 * nothing moves until this epoch's start record is durable.
 */
#include "config.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <unistd.h>

#include "primary/primary.h"

/*
 * The k-th largest flushed LSN among the streaming members in flag's
 * configuration, k the replicas it needs (the primary counts if it is in
 * it): at most d; the current commit point if too few stream.
 */
static uint64_t
durable_in(struct cluster *c, uint16_t flag, uint32_t k, uint64_t d)
{
	uint64_t flushed[CLUSTER_PEERS_MAX];
	uint32_t need = k + ((c->self_flags & flag) ? 0 : 1);
	uint32_t n = 0;

	if (need == 0)
		return d;
	for (int i = 0; i < c->n_links; i++) {
		const struct link *l = &c->links[i];

		if (l->state == REPL_LINK_STREAMING && l->member &&
		    ((flag == MEMBER_F_NEW && l->in_new) ||
		     (flag == MEMBER_F_OLD && l->in_old)))
			flushed[n++] = l->flushed_lsn;
	}
	if (n < need)
		return c->durable_lsn;
	for (uint32_t i = 0; i < need; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (flushed[j] > flushed[i]) {
				uint64_t t = flushed[i];

				flushed[i] = flushed[j];
				flushed[j] = t;
			}
	return flushed[need - 1] < d ? flushed[need - 1] : d;
}

static uint64_t
membership_rule(struct cluster *c, uint64_t d)
{
	d = durable_in(c, MEMBER_F_NEW, c->ms.k, d);
	if (c->ms.flags & MEMBERSHIP_F_JOINT)
		d = durable_in(c, MEMBER_F_OLD, c->ms.k_old, d);
	return d;
}

/* under c->lock: post the durable waiters whose LSN is below d */
static void
wake_below(struct cluster *c, uint64_t d)
{
	while (c->durable_q && c->durable_q->lsn < d) {
		struct durable_waiter *w = c->durable_q;

		c->durable_q = w->next;
		w->queued = false;
		sem_post(&w->wake);	/* the last touch: w may go now */
	}
}

/* recompute durable_lsn (under c->lock); wake waiters if it moved */
void
cluster_quorum_update(struct cluster *c)
{
	struct log_pos durable;
	uint64_t d;

	/*
	 * Fenced: a new primary may have taken records this one never
	 * acknowledged, or dropped them; nothing more is acknowledged here.
	 */
	if (atomic_load(&c->fenced))
		return;
	wal_positions(c->wal, NULL, NULL, &durable);
	/* the membership's rule: k of NEW, and while joint k_old of OLD too */
	d = membership_rule(c, durable.lsn);
	/* the commit rule: nothing moves until this epoch's start is durable */
	if (d <= c->epoch_start_lsn)
		return;
	if (d > c->durable_lsn) {
		c->durable_lsn = d;
		atomic_store_explicit(&c->durable_atomic, d, memory_order_release);
		/* only those whose record it passed: no thundering herd */
		wake_below(c, d);
		/* the rarer waits on cond (a membership change, a verification) */
		if (c->waiters)
			pthread_cond_broadcast(&c->cond);
	}
}

void
quorum_enqueue(struct cluster *c, struct durable_waiter *w)
{
	struct durable_waiter **p = &c->durable_q;

	/* ascending LSN: a walk as long as the queue, one entry per client */
	while (*p && (*p)->lsn <= w->lsn)
		p = &(*p)->next;
	w->next = *p;
	w->queued = true;
	*p = w;
}

void
quorum_dequeue(struct cluster *c, struct durable_waiter *w)
{
	if (!w->queued)
		return;
	for (struct durable_waiter **p = &c->durable_q; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	w->queued = false;
}

/* a leader asleep on the links' CQs (durable_wait.c) looks again */
void
cluster_lead_wake(struct cluster *c)
{
	uint64_t one = 1;

	if (atomic_load(&c->spinning))
		(void)!write(c->lead_fd, &one, sizeof(one));
}

void
quorum_wake_all(struct cluster *c)
{
	wake_below(c, UINT64_MAX);
	cluster_lead_wake(c);
}

bool
cluster_fenced(struct cluster *c)
{
	return atomic_load_explicit(&c->fenced, memory_order_relaxed);
}

uint64_t
cluster_durable_lsn(struct cluster *c)
{
	return atomic_load_explicit(&c->durable_atomic, memory_order_acquire) - 1;
}
