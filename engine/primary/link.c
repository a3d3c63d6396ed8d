/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.c -- one replica's link on the primary: its thread, its connection
 * and catch-up, streaming, and its state (cluster.h has the states and
 * the changes between them).
 *
 * A link copies the byte range [sent, published) of the local ring with
 * rpma_write (split where the ring wraps), then rpma_flush(PERSISTENT) over
 * the same range; the flush's completion moves the link's flushed position.
 * Up to LINK_DEPTH batches are in flight; a batch takes everything
 * published when it is posted, so appends that arrive meanwhile share the
 * next one (group commit across the network).  That data path is
 * link_io.c, run by this thread and by appenders waiting for durability.
 *
 * Catch-up, on every (re)connection: the link and the replica find the
 * last LSN whose chain position (offset, lap, chained CRC) both hold, by
 * binary search with QUERY messages; the replica is truncated after it
 * (records an earlier primary left there were never committed), and the
 * link resumes from there.  When the local ring no longer holds that
 * point, the replica restarts empty at the local checkpoint and receives
 * the whole ring from there (a full resync), chasing the live tail.
 *
 * While streaming, the link also carries a verification's requests
 * (verify.c) to its replica, one message at a time between its batches.
 * The (re)connection and catch-up are link_connect.c; the data connection
 * and the chain agreement link_catchup.c; how far a catch-up has come
 * link_progress.c.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "primary/primary.h"
#include "ctl/ctl_chan.h"
#include "common/fabric.h"
#include "common/elog.h"

/*
 * On a clean stop, the batches in flight complete before the connection
 * goes (bounded by the down timeout): no flush is cut off.
 */
static void
drain(struct link *l)
{
	uint64_t until = clock_now_ms() + (uint64_t)l->c->cfg.down_timeout_ms;
	bool progress, busy = true;

	while (busy && clock_now_ms() < until) {
		progress = false;
		link_io_lock(l);
		busy = l->io_ready && link_busy(l) &&
			link_data_path(l, false, &progress) == 0 && link_busy(l);
		link_io_unlock(l);
		if (busy && !progress)
			(void)rpma_ext_cq_poll(&l->cq, 1, NULL, 0, 10);
	}
}

static void
link_close(struct link *l)
{
	cluster_lock(l->c);
	link_set_state(l, REPL_LINK_DRAINING);
	cluster_unlock(l->c);
	if (atomic_load(&l->c->stopping) && l->cq)
		drain(l);
	link_io_lock(l);
	l->io_ready = false;
	atomic_store(&l->waiting_since_ms, 0);
	link_io_unlock(l);
	/* a leader asleep on its CQ lets go first (it wakes within ms) */
	while (atomic_load(&l->cq_sleepers) > 0) {
		cluster_lead_wake(l->c);
		usleep(200);
	}
	link_data_close(&l->conn, &l->dst);
	ctl_chan_close(&l->ch);
	link_verify_reset(l);
	l->cq = NULL;
	cluster_lock(l->c);
	link_set_state(l, REPL_LINK_DOWN);
	link_progress_end(l);	/* the next connection's is its own */
	l->force_down = false;
	cluster_unlock(l->c);
}

/* ------------------------------------------------------------------ */
/* streaming                                                          */

static int
serve_head_request(struct link *l)
{
	struct cluster *c = l->c;
	struct log_pos want;
	struct ctl_ack ack;
	uint64_t seq;
	int ret;

	/* head_done_seq is this thread's own: no lock to see nothing asked */
	if (atomic_load_explicit(&l->head_req_seq, memory_order_relaxed) ==
	    l->head_done_seq)
		return 0;
	cluster_lock(c);
	seq = l->head_req_seq;
	want = l->head_req;
	cluster_unlock(c);
	ret = link_shape_replica(l, CTL_SET_HEAD, &want, &ack);
	cluster_lock(c);
	if (ret == 0) {
		l->replica_head = ack.head.lsn;	/* a holder's may stop short */
		l->hold_next = ack.hold_next;
		l->holds = ack.hold_next != 0;
	}
	l->head_done_seq = seq;
	l->head_status = ret;
	pthread_cond_broadcast(&c->cond);
	cluster_unlock(c);
	return ret;
}

/* a verification's request (verify.c) to the replica; its reply comes later */
static int
serve_verify(struct link *l)
{
	struct ctl_msg m = { .type = CTL_VERIFY };

	if (!link_verify_take(l, &m.u.verify))
		return 0;
	if (link_send(l, &m))
		return -1;
	link_verify_sent(l, m.seq);
	return 0;
}

/*
 * A replica gets the membership once it holds everything committed: this
 * epoch's first record (so every record before it) and the commit point.
 * It stores it durably and answers with an ACK; only then does it count
 * as holding it: toward the quorum, toward a change's commit and, in a
 * promotion, toward the N - k nodes.  It gets it on every connection,
 * also when it says it holds this configuration epoch already: another
 * primary may have stored another membership under the same number.
 * After a restart the commit point starts at the checkpoint; the epoch's
 * first record is what keeps a wiped replica from counting before it has
 * the data.  Every node of every configuration of the membership gets it
 * (during a change also the nodes it removes), and again after each
 * change of it.
 */
static bool
wants_membership(struct link *l)
{
	struct cluster *c = l->c;
	bool want;

	/*
	 * The common case, once per batch: it holds the current one.  acked
	 * and held are written by this thread only, so they are read without
	 * c->lock, which the data path does not take for this.
	 */
	if (l->acked && l->held >= atomic_load_explicit(&c->ms_epoch,
			memory_order_relaxed))
		return false;
	cluster_lock(c);
	want = l->state == REPL_LINK_STREAMING && (l->in_new || l->in_old) &&
		(!l->acked || l->held < c->ms.config_epoch) &&
		l->flushed_lsn >= c->durable_lsn && l->flushed_lsn > c->epoch_start_lsn;
	cluster_unlock(c);
	return want;
}

static int
give_membership(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m = { .type = CTL_MEMBERSHIP };
	struct membership ms;

	cluster_lock(c);
	ms = m.u.membership = c->ms;
	cluster_unlock(c);
	if (link_send(l, &m) || link_recv_reply(l, CTL_ACK, &m))
		return -1;
	if (m.u.ack.status != 0) {
		link_fail(l, "the replica did not store configuration epoch %llu "
			"(error %d)", (unsigned long long)ms.config_epoch,
			m.u.ack.status);
		return -1;
	}
	/* it stored it: its membership never goes below this while its log lives */
	cluster_floor_stored(c, l->node_id, l->incarnation, ms.config_epoch);
	cluster_lock(c);
	l->held = ms.config_epoch;
	l->acked = true;
	cluster_ms_place(c, l);
	cluster_quorum_update(c);
	cluster_ms_advance(c);
	cluster_unlock(c);
	REPL_LOG_NOTICE("replica %s:%s caught up: a member (configuration epoch "
		"%llu%s, stored)", l->host, l->ctl_port,
		(unsigned long long)ms.config_epoch,
		(ms.flags & MEMBERSHIP_F_JOINT) ? ", joint" : "");
	return 0;
}

/* a checkpoint move asked and not yet served (the link must not sleep) */
static bool
head_request_waiting(struct link *l)
{
	return atomic_load_explicit(&l->head_req_seq, memory_order_relaxed) !=
		l->head_done_seq;
}

/*
 * stream()'s steps, in its order; each returns -1 with the link failed.
 * The data path: reap, post what was published; *busy: batches in flight
 * after it (read under io_lock, as every reader of the batches does).
 */
static int
stream_data(struct link *l, bool *progress, bool *busy)
{
	char why[sizeof(l->io_why)];
	int ret;

	link_io_lock(l);
	ret = link_data_path(l, true, progress);
	*busy = link_busy(l);
	if (ret)
		memcpy(why, l->io_why, sizeof(why));
	link_io_unlock(l);
	if (ret)
		link_fail(l, "%s", why);	/* also when an appender failed it */
	return ret;
}

/* what release, a verification and the membership ask of the replica */
static int
stream_requests(struct link *l)
{
	if (serve_head_request(l) || serve_verify(l))
		return -1;
	if (wants_membership(l) && give_membership(l))
		return -1;
	return 0;
}

/*
 * The commit point, at most every COMMIT_EVERY_MS, also when the link is
 * idle (its sleep ends when one is due): not a message per append to a
 * lone client, whose link goes idle after each.
 */
static int
stream_commit(struct link *l, uint64_t t)
{
	struct cluster *c = l->c;
	struct ctl_msg cm = { .type = CTL_COMMIT };
	uint64_t durable = atomic_load_explicit(&c->durable_atomic,
		memory_order_acquire);

	if (durable <= l->commit_sent || t - l->last_commit_ms < COMMIT_EVERY_MS)
		return 0;
	cm.u.commit.epoch = c->id.epoch;
	cm.u.commit.commit_lsn = durable - 1;
	cluster_lock(c);
	cm.u.commit.flushed = l->flushed_pos;
	cluster_unlock(c);
	if (link_send(l, &cm))
		return -1;
	l->commit_sent = durable;
	l->last_commit_ms = t;
	return 0;
}

/*
 * A heartbeat's answer says what the replica's readers need now: its hold
 * is the one an ACK would give, only fresher, so a release honours a hold
 * taken since the last round (cluster.c, held_limit).
 */
static void
note_heartbeat(struct link *l, const struct ctl_heartbeat *hb)
{
	cluster_lock(l->c);
	l->hold_next = hb->hold_next;
	l->holds = hb->hold_next != 0;
	l->wants_base = (hb->flags & CTL_HEARTBEAT_F_WANTS_BASE) != 0;
	cluster_unlock(l->c);
}

/* what the replica sent: heartbeats, a verification's answers, errors */
static int
stream_recv(struct link *l)
{
	struct ctl_msg m;
	int ret;

	while ((ret = ctl_chan_recv(l->ch, &m, 0)) == 0) {
		l->last_recv_ms = clock_now_ms();
		if (m.type == CTL_HEARTBEAT)
			note_heartbeat(l, &m.u.heartbeat);
		if (m.type == CTL_ERROR && m.u.error.code == CTL_CODE_FENCED) {
			link_fenced(l, m.u.error.text);
			return -1;
		}
		if (m.type == CTL_ERROR) {
			link_fail(l, "the replica reports: %s", m.u.error.text);
			return -1;
		}
		if (m.type == CTL_VERIFY_REPLY && link_verify_reply(l, &m) != 0) {
			link_fail(l, "a VERIFY_REPLY to nothing asked");
			return -1;
		}
		if (m.type != CTL_HEARTBEAT && m.type != CTL_VERIFY_REPLY) {
			link_fail(l, "unexpected %s from the replica",
				ctl_msg_type_name(m.type));
			return -1;
		}
	}
	if (ret != CTL_CHAN_AGAIN) {
		link_fail(l, "control channel: %s", ret == CTL_CHAN_CLOSED ?
			"closed by the replica" : ctl_chan_why(l->ch));
		return -1;
	}
	return 0;
}

/*
 * A heartbeat when nothing else went out for a period, and also when
 * nothing came in for one: the replica speaks only to answer, so under a
 * steady load the COMMITs going out would otherwise keep it silent until
 * it is taken for dead.  Then: is the replica silent too long?
 */
static int
stream_heartbeat(struct link *l, uint64_t t)
{
	struct cluster *c = l->c;

	if (t - l->last_send_ms >= (uint64_t)c->cfg.heartbeat_ms ||
	    (t > l->last_recv_ms &&
	     t - l->last_recv_ms >= (uint64_t)c->cfg.heartbeat_ms &&
	     t - l->last_hb_ms >= (uint64_t)c->cfg.heartbeat_ms)) {
		struct ctl_msg hb = { .type = CTL_HEARTBEAT };

		hb.u.heartbeat.time_ns = t * 1000000;
		if (link_send(l, &hb))
			return -1;
		l->last_hb_ms = t;
	}
	t = clock_now_ms();	/* messages above may have moved last_recv_ms past t */
	if (t > l->last_recv_ms &&
	    t - l->last_recv_ms > (uint64_t)c->cfg.down_timeout_ms) {
		link_fail(l, "silent for %d ms", c->cfg.down_timeout_ms);
		return -1;
	}
	return 0;
}

/* a long catch-up or resync: say how far it has come */
static void
stream_report(struct link *l, uint64_t t, const struct log_pos *pub)
{
	uint64_t flushed;

	/* c->lock only while a catch-up is on: appenders contend for it */
	if (atomic_load_explicit(&l->count_writes, memory_order_relaxed)) {
		cluster_lock(l->c);
		link_progress_sample(l, t);
		cluster_unlock(l->c);
	}
	if (t - l->last_report_ms < 2000)
		return;
	cluster_lock(l->c);
	flushed = l->flushed_lsn;
	cluster_unlock(l->c);
	/* flushed may be past this pub: appenders post too */
	if (pub->lsn > flushed && pub->lsn - flushed > 10000)
		REPL_LOG_NOTICE("replica %s:%s catching up: flushed up to LSN "
			"%llu, %llu records behind", l->host, l->ctl_port,
			(unsigned long long)flushed - 1,
			(unsigned long long)(pub->lsn - flushed));
	l->last_report_ms = t;
}

/*
 * Batches in flight: poll the completion queue a little first.  Polling
 * makes progress in this thread, so a flush that completes soon costs no
 * hand-off through the core's progress thread and no wake-up.
 */
static int
stream_spin(struct link *l, uint64_t budget_ns, bool *progress)
{
	uint64_t until = clock_now_ns() + budget_ns;

	link_count(&l->n.spins, 1);
	do {
		char why[sizeof(l->io_why)];
		int ret;

		link_io_lock(l);
		ret = link_data_path(l, false, progress);
		if (ret)
			memcpy(why, l->io_why, sizeof(why));
		link_io_unlock(l);
		if (ret) {
			link_fail(l, "%s", why);
			return -1;
		}
		if (*progress)
			return 0;
	} while (clock_now_ns() < until);
	return 0;
}

/* nothing to do: sleep until a completion, a message or a kick */
static void
stream_sleep(struct link *l)
{
	struct cluster *c = l->c;
	struct pollfd pfd[2] = {
		{ .fd = ctl_chan_fd(l->ch), .events = POLLIN },
		{ .fd = l->kick_fd, .events = POLLIN },
	};
	struct log_pos pub;
	uint64_t v, now;
	int timeout = c->cfg.heartbeat_ms;
	bool idle, unsent;

	atomic_store(&l->sleeping, true);
	/* a publish or a head request between the check and the flag */
	wal_positions(c->wal, NULL, &pub, NULL);
	link_io_lock(l);
	idle = !link_busy(l);
	unsent = !pos_equal(&pub, &l->sent);
	link_io_unlock(l);
	if ((unsent && idle) || head_request_waiting(l) || link_verify_waiting(l)) {
		atomic_store(&l->sleeping, false);
		return;
	}
	link_count(&l->n.sleeps, 1);
	/* a commit point not yet sent: up when it is due */
	if (atomic_load_explicit(&c->durable_atomic, memory_order_acquire) >
	    l->commit_sent) {
		now = clock_now_ms();
		timeout = now - l->last_commit_ms >= COMMIT_EVERY_MS ? 0 :
			(int)(COMMIT_EVERY_MS - (now - l->last_commit_ms));
	}
	/*
	 * The completions matter only with batches in flight, and not while
	 * an appender polls for them (it kicks us when it stops): then its
	 * reaping wakes nobody.  Otherwise the provider's own fd wakes us,
	 * not a hand-off from its progress thread.
	 */
	if (rpma_ext_cq_poll(&l->cq, idle || atomic_load(&c->spinning) ? 0 : 1,
			pfd, 2, timeout) < 0)
		(void)poll(pfd, 2, timeout);
	atomic_store(&l->sleeping, false);
	if (pfd[1].revents)
		(void)!read(l->kick_fd, &v, sizeof(v));
}

static bool
forced_down(struct link *l)
{
	return atomic_load_explicit(&l->force_down, memory_order_relaxed);
}

/* one round of a streaming link: 0 to go on, -1 once it failed */
static int
stream(struct link *l)
{
	struct log_pos pub;
	uint64_t t, budget;
	bool progress = false, busy;

	if (stream_data(l, &progress, &busy))
		return -1;
	wal_positions(l->c->wal, NULL, &pub, NULL);
	if (stream_requests(l))
		return -1;
	t = clock_now_ms();
	if (stream_commit(l, t) || stream_recv(l) || stream_heartbeat(l, t))
		return -1;
	stream_report(l, t, &pub);
	if (forced_down(l)) {
		link_fail(l, "did not move its checkpoint in time");
		return -1;
	}
	if (progress)
		return 0;
	if (busy && !atomic_load(&l->c->spinning) &&
	    (budget = cluster_poll_budget_ns(l->c, false)) != 0) {
		if (stream_spin(l, budget, &progress))
			return -1;
		if (progress)
			return 0;
	}
	stream_sleep(l);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the thread                                                         */

/* why the link ends: the cluster stops, is fenced, or removed it */
static bool
link_ends(struct link *l)
{
	bool r;

	if (atomic_load(&l->c->stopping) || atomic_load(&l->c->fenced))
		return true;
	cluster_lock(l->c);
	r = l->retired;
	cluster_unlock(l->c);
	return r;
}

void *
link_main(void *arg)
{
	struct link *l = arg;
	struct cluster *c = l->c;
	int backoff = 50;

	(void)pthread_setname_np(pthread_self(), "repl-link");
	while (!link_ends(l)) {
		if (link_connect(l) == 0) {
			bool ok = true;

			backoff = 50;
			/* a new session: the replica learns the commit point
			 * again, also when it has not moved since */
			l->commit_sent = 0;
			while (!link_ends(l) && (ok = stream(l) == 0))
				;
			/*
			 * A primary that closes tells the replica its last
			 * commit point, so that the replica's readers get to
			 * the last record acknowledged here.
			 */
			if (ok && atomic_load(&c->stopping) && !atomic_load(&c->fenced))
				(void)stream_commit(l, UINT64_MAX);
		}
		link_close(l);
		cluster_lock(c);
		l->reconnects++;
		cluster_unlock(c);
		if (link_ends(l))
			break;
		{
			struct pollfd pfd = { .fd = l->kick_fd, .events = POLLIN };
			uint64_t v;

			/* retry soon, then less often; a stop wakes it */
			if (poll(&pfd, 1, backoff) > 0)
				(void)!read(l->kick_fd, &v, sizeof(v));
			backoff = backoff < 1000 ? backoff * 2 : 1000;
		}
	}
	/* its last state: why it ended (a stopping cluster leaves it down) */
	cluster_lock(c);
	if (atomic_load(&c->fenced))
		link_set_state(l, REPL_LINK_FENCED);
	else if (l->retired && !atomic_load(&c->stopping))
		link_set_state(l, REPL_LINK_RETIRED);
	cluster_unlock(c);
	return NULL;
}
