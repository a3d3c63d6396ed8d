/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * durable_wait.c -- an appender's wait until its LSN is durable, run to
 * completion in its own thread (docs/design.md, "The hot path").
 *
 * The appender posts what is published (its record and any that arrived
 * with it) on every link whose data path is free, persists the local log
 * while the flushes travel, and then:
 *
 *   - LEADER: one waiter at a time (c->spinning) polls every link's
 *     completions itself, posting what was published meanwhile, so the
 *     records of the others ride its batches: first for a bounded busy
 *     poll, then asleep on the links' own completion fds (rpma_ext_cq_poll
 *     of polled connections: a completion wakes the leader and nobody
 *     else).  It returns when its LSN is durable;
 *   - FOLLOWER: the others sleep in c->durable_q on their LSN, woken once
 *     by whoever moves the commit point past it (quorum.c);
 *   - HANDOVER: a leader leaving while batches still travel wakes the
 *     first follower to lead next (one wake-up it was owed anyway);
 *   - NOTHING TO POLL: no batch travels that polling could complete (a
 *     link down or catching up, or the quorum not reachable): the links'
 *     threads carry on, kicked, and the appender follows;
 *   - CROWDED: with as many appenders waiting as the machine has CPUs,
 *     nobody leads: each leader would be woken twice per batch (handed
 *     over to, then by its completion) while the cores are all taken, and
 *     a link's thread asleep on its completion fd is the next leader
 *     already; its one wake-up per batch serves every waiter of it
 *     (measured: 8 clients on 2 CPUs, 18k appends/s rotating the lead,
 *     30-35k through the link's thread).
 *
 * A follower enqueues under c->lock and then looks at c->spinning; a
 * leader clears c->spinning before it looks at the queue under c->lock:
 * so either the leader finds the follower to hand over to, or the
 * follower finds nobody leading and leads.  Nobody sleeps with nobody
 * leading while a batch it needs travels.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <unistd.h>

#include "primary/primary.h"
#include "common/errors.h"

/* a leader asleep rechecks fence and stop at least this often */
#define LEAD_SLEEP_MAX_MS 20
/*
 * Where a look at the completions is a system call, the looks of a busy
 * poll after the first are this far apart (measured at c=1 over loopback
 * tcp: 2 us cost 13 syscalls an append, 4 us 10 and no more latency, 6 us
 * more latency).
 */
#define LOOK_GAP_NS 4000

enum follow_outcome { FOLLOW_DONE, FOLLOW_LEAD };

/* as many appenders wait as there are CPUs: the links' threads poll */
static bool
crowded(struct cluster *c)
{
	return atomic_load_explicit(&c->n_waiting, memory_order_relaxed) >=
		c->ncpu;
}

static bool
durable_past(struct cluster *c, uint64_t lsn)
{
	return atomic_load_explicit(&c->durable_atomic, memory_order_acquire) > lsn;
}

/*
 * Asleep in c->durable_q until lsn is durable: woken once, by whoever
 * moves the commit point past it (or by a fence), never for another's;
 * or asked to lead (FOLLOW_LEAD, *ret untouched), by a leader leaving or
 * because nobody leads.
 */
static enum follow_outcome
follow(struct cluster *c, uint64_t lsn, const struct timespec *until, int *ret)
{
	struct durable_waiter w = { .lsn = lsn };
	enum follow_outcome out = FOLLOW_DONE;
	bool timed_out = false;

	sem_init(&w.wake, 0, 0);
	cluster_lock(c);
	cluster_quorum_update(c);
	for (;;) {
		if (c->durable_lsn > lsn) {
			*ret = 0;
			break;
		}
		if (atomic_load(&c->fenced)) {
			*ret = REPL_E_UNKNOWN;
			break;
		}
		if (timed_out) {
			*ret = REPL_E_TIMEDOUT;
			break;
		}
		if (w.lead) {
			out = FOLLOW_LEAD;
			break;
		}
		quorum_enqueue(c, &w);
		/* after the enqueue: a leader leaving now finds us queued */
		if (c->lead_wanted && !atomic_load(&c->spinning) && !crowded(c)) {
			quorum_dequeue(c, &w);
			out = FOLLOW_LEAD;
			break;
		}
		cluster_unlock(c);
		do {
			*ret = until == NULL ? sem_wait(&w.wake) :
				sem_clockwait(&w.wake, CLOCK_MONOTONIC, until);
		} while (*ret != 0 && errno == EINTR);
		timed_out = *ret != 0;
		cluster_lock(c);
		quorum_dequeue(c, &w);	/* still queued only if it timed out */
	}
	cluster_unlock(c);
	/* a post that crossed a time-out may remain: nobody touches w now */
	sem_destroy(&w.wake);
	return out;
}

/* the leader's CQs asleep: let the links' threads delete them again */
static void
unhold(struct link **held, int n)
{
	for (int i = 0; i < n; i++)
		atomic_fetch_sub(&held[i]->cq_sleepers, 1);
}

/* the links' threads carry on: the appender no longer polls for them */
static void
kick_links(struct cluster *c)
{
	for (int i = 0; i < c->n_links; i++)
		link_kick(&c->links[i]);
}

static void
relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * The leader's rounds until until_ns (UINT64_MAX: no bound): 1 once lsn
 * is durable, 0 with nothing that polling could complete (or the time
 * up), -1 fenced.
 */
static int
lead(struct cluster *c, uint64_t lsn, uint64_t until_ns, uint64_t posted_ns)
{
	uint64_t now = clock_now_ns(), next_look = 0;
	uint64_t spin_until = now + cluster_poll_budget_ns(c, true);
	/*
	 * Each look a system call (libfabric over sockets): none before
	 * the answer can be there, then one every LOOK_GAP_NS, so a busy
	 * poll costs a few system calls, not one a microsecond.
	 */
	bool paced = c->poll_is_syscall && spin_until > now &&
		(next_look = cluster_first_look_ns(c, posted_ns)) != 0;

	for (;;) {
		struct rpma_cq *cqs[LEAD_CQS_MAX];
		struct link *held[LEAD_CQS_MAX];
		struct pollfd pfd = { .fd = c->lead_fd, .events = POLLIN };
		bool sleep = (now = clock_now_ns()) >= spin_until;
		int n = 0, busy = 0, ms;

		if (!sleep && now < next_look) {
			relax();	/* no look yet: nothing costs a syscall */
			continue;
		}
		for (int i = 0; i < c->n_links; i++) {
			struct rpma_cq *cq = NULL;

			busy += link_lead_step(&c->links[i],
				sleep && n < LEAD_CQS_MAX ? &cq : NULL);
			if (cq) {
				cqs[n] = cq;
				held[n++] = &c->links[i];
			}
		}
		if (durable_past(c, lsn) || atomic_load(&c->fenced) || busy == 0 ||
		    atomic_load(&c->stopping) || now >= until_ns) {
			unhold(held, n);
			return durable_past(c, lsn) ? 1 :
				atomic_load(&c->fenced) ? -1 : 0;
		}
		if (!sleep) {
			if (paced)
				next_look = clock_now_ns() + LOOK_GAP_NS;
			continue;
		}
		/* asleep at most LEAD_SLEEP_MAX_MS; with no CQ free (its data
		 * path busy) a short nap */
		ms = until_ns - now < (uint64_t)LEAD_SLEEP_MAX_MS * 1000000 ?
			(int)((until_ns - now) / 1000000) + 1 : LEAD_SLEEP_MAX_MS;
		(void)rpma_ext_cq_poll(cqs, n, &pfd, 1, n ? ms : 1);
		unhold(held, n);
		if (pfd.revents) {
			uint64_t v;

			(void)!read(c->lead_fd, &v, sizeof(v));
		}
	}
}

/*
 * The leader leaves.  Done (handover): while somebody waits, the first
 * follower leads next, for the batches that travel for it; nobody
 * waiting, the next appender (or a link's own timer) reaps them.  Not
 * done: leading helps nobody until the next appender posts, so the
 * followers sleep until the links' threads move the commit point.
 */
static void
lead_end(struct cluster *c, bool handover)
{
	struct durable_waiter *w;

	atomic_store(&c->spinning, false);
	cluster_lock(c);
	if (!handover)
		c->lead_wanted = false;
	else if ((w = c->durable_q) != NULL) {
		c->durable_q = w->next;
		w->queued = false;
		w->lead = true;
		sem_post(&w->wake);
	}
	cluster_unlock(c);
}

static int
wait_durable(struct cluster *c, uint64_t lsn, int timeout_ms)
{
	struct timespec until = { 0 };
	const struct timespec *u = timeout_ms >= 0 ? &until : NULL;
	uint64_t posted_ns = clock_now_ns(), until_ns = UINT64_MAX;
	int ret;

	if (timeout_ms >= 0) {
		until = clock_deadline(timeout_ms);	/* the same clock */
		until_ns = (uint64_t)until.tv_sec * 1000000000ull +
			(uint64_t)until.tv_nsec;
	}
	/* post our batch ourselves where the link is free: no hand-off */
	for (int i = 0; i < c->n_links; i++)
		link_help(&c->links[i], true);
	/* the local persist runs while the flushes travel */
	if ((ret = wal_sync(c->wal, lsn)))
		return ret;
	cluster_lock(c);
	cluster_quorum_update(c);
	c->lead_wanted = true;
	cluster_unlock(c);
	for (;;) {
		if (durable_past(c, lsn))
			return 0;
		if (atomic_load(&c->fenced))
			return REPL_E_UNKNOWN;
		if (crowded(c)) {
			kick_links(c);
		} else if (!atomic_exchange(&c->spinning, true)) {
			int led = lead(c, lsn, until_ns, posted_ns);

			lead_end(c, led > 0);
			if (led > 0)
				return 0;
			if (led < 0)
				return REPL_E_UNKNOWN;
			kick_links(c);	/* nothing to poll */
		}
		if (follow(c, lsn, u, &ret) == FOLLOW_DONE)
			return ret;
	}
}

int
cluster_wait_durable(struct cluster *c, uint64_t lsn, int timeout_ms)
{
	int ret;

	if (atomic_load_explicit(&c->durable_atomic, memory_order_acquire) > lsn)
		return 0;
	/* counted: busy polling stops when waiters are as many as CPUs */
	atomic_fetch_add_explicit(&c->n_waiting, 1, memory_order_relaxed);
	ret = wait_durable(c, lsn, timeout_ms);
	atomic_fetch_sub_explicit(&c->n_waiting, 1, memory_order_relaxed);
	return ret;
}
