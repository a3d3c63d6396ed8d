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
 * The data connection and the chain agreement are in link_catchup.c.
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

/* ------------------------------------------------------------------ */
/* the link's state                                                   */

static const char *const state_names[REPL_LINK_STATES] = {
	[REPL_LINK_DOWN] = "down",
	[REPL_LINK_CONNECTING] = "connecting",
	[REPL_LINK_CATCHING_UP] = "catching_up",
	[REPL_LINK_STREAMING] = "streaming",
	[REPL_LINK_DRAINING] = "draining",
	[REPL_LINK_FENCED] = "fenced",
	[REPL_LINK_RETIRED] = "retired",
};

/* the changes cluster.h draws; DRAINING to itself: a second failure */
static const bool allowed[REPL_LINK_STATES][REPL_LINK_STATES] = {
	[REPL_LINK_DOWN] = { [REPL_LINK_CONNECTING] = true, [REPL_LINK_FENCED] = true,
		[REPL_LINK_RETIRED] = true },
	[REPL_LINK_CONNECTING] = { [REPL_LINK_CATCHING_UP] = true, [REPL_LINK_DRAINING] = true },
	[REPL_LINK_CATCHING_UP] = { [REPL_LINK_STREAMING] = true, [REPL_LINK_DRAINING] = true },
	[REPL_LINK_STREAMING] = { [REPL_LINK_DRAINING] = true },
	[REPL_LINK_DRAINING] = { [REPL_LINK_DRAINING] = true, [REPL_LINK_DOWN] = true },
};

const char *
repl_link_state_name(enum repl_link_state s)
{
	return (unsigned)s < REPL_LINK_STATES ? state_names[s] : "unknown";
}

void
link_set_state(struct link *l, enum repl_link_state to)
{
	enum repl_link_state from = l->state;
	uint64_t now = clock_now_ms();

	/* a change the table does not draw is a bug: a debug build stops
	 * there, a release build says so and goes on */
	if ((unsigned)to >= REPL_LINK_STATES || !allowed[from][to]) {
		REPL_LOG_ERROR("link %s:%s: no change from %s to %s", l->host,
			l->ctl_port, repl_link_state_name(from), repl_link_state_name(to));
#ifndef NDEBUG
		fprintf(stderr, "link %s:%s: no change from %s to %s\n", l->host,
			l->ctl_port, repl_link_state_name(from), repl_link_state_name(to));
		abort();
#endif
		if ((unsigned)to >= REPL_LINK_STATES)
			return;
	}
	if (from == to)
		return;
	if (from == REPL_LINK_STREAMING)
		l->left_ms = now;	/* its lag's age from here on */
	if (l->state_since_ms && now > l->state_since_ms)
		link_count(&l->n.state_ms[from], now - l->state_since_ms);
	link_count(&l->n.entered[to], 1);
	l->state_since_ms = now;
	l->state = to;
	pthread_cond_broadcast(&l->c->cond);
}

/* ------------------------------------------------------------------ */
/* a link's connection                                                */

static void
link_fail(struct link *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* the connection is lost: it drains, its thread closes it */
static void
link_fail(struct link *l, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	cluster_lock(l->c);
	if (l->state != REPL_LINK_DRAINING || strcmp(l->why, why) != 0)
		REPL_LOG_WARNING("replica %s:%s is down: %s", l->host, l->ctl_port, why);
	snprintf(l->why, sizeof(l->why), "%s", why);
	link_set_state(l, REPL_LINK_DRAINING);
	cluster_unlock(l->c);
}

/*
 * The replica follows a newer primary (a promotion happened): this
 * primary is deposed.  Appends waiting for durability end, none follows,
 * and no link reconnects.
 */
void
link_fenced(struct link *l, const char *why)
{
	struct cluster *c = l->c;

	cluster_lock(c);
	if (!atomic_exchange(&c->fenced, true)) {
		snprintf(c->fenced_why, sizeof(c->fenced_why), "%s", why);
		REPL_LOG_ERROR("this primary is fenced: replica %s:%s says %s; it "
			"acknowledges nothing more", l->host, l->ctl_port, why);
	}
	pthread_cond_broadcast(&c->cond);
	quorum_wake_all(c);
	cluster_unlock(c);
	for (int i = 0; i < c->n_links; i++)
		link_kick(&c->links[i]);
	link_fail(l, "fenced: %s", why);
}

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
	l->force_down = false;
	cluster_unlock(l->c);
}

static int
send_msg(struct link *l, struct ctl_msg *m)
{
	m->seq = ++l->msg_seq;
	if (ctl_chan_send(l->ch, m, l->c->cfg.down_timeout_ms) != 0) {
		link_fail(l, "control channel: %s", ctl_chan_why(l->ch));
		return -1;
	}
	l->last_send_ms = clock_now_ms();
	return 0;
}

/* wait for a reply of type `want`, answering heartbeats meanwhile */
static int
recv_reply(struct link *l, enum ctl_type want, struct ctl_msg *m)
{
	uint64_t until = clock_now_ms() + (uint64_t)l->c->cfg.down_timeout_ms;

	for (;;) {
		int left = (int)(until - clock_now_ms());
		int ret = ctl_chan_recv(l->ch, m, left > 0 ? left : 0);

		if (ret == 0) {
			l->last_recv_ms = clock_now_ms();
			if (m->type == want)
				return 0;
			if (m->type == CTL_HEARTBEAT)
				continue;
			/* a verification's answer may come before this one */
			if (m->type == CTL_VERIFY_REPLY && link_verify_reply(l, m) == 0)
				continue;
			if (m->type == CTL_ERROR && m->u.error.code == CTL_CODE_FENCED)
				link_fenced(l, m->u.error.text);
			else if (m->type == CTL_ERROR)
				link_fail(l, "the replica refused: %s", m->u.error.text);
			else
				link_fail(l, "the replica sent %s, not %s",
					ctl_msg_type_name(m->type), ctl_msg_type_name(want));
			return -1;
		}
		if (ret == CTL_CHAN_AGAIN && left > 0)
			continue;
		link_fail(l, "no %s from the replica: %s", ctl_msg_type_name(want),
			ret == CTL_CHAN_AGAIN ? "timed out" : ctl_chan_why(l->ch));
		return -1;
	}
}

static int
shape_replica(struct link *l, enum ctl_type type, const struct log_pos *p,
		struct ctl_ack *ack)
{
	struct ctl_msg m = { .type = type };

	m.u.cut.pos = *p;
	m.u.cut.epoch = wal_epoch_before(l->c->wal, p->lsn);
	if (send_msg(l, &m) || recv_reply(l, CTL_ACK, &m))
		return -1;
	*ack = m.u.ack;
	if (ack->status != 0) {
		link_fail(l, "the replica could not %s (error %d)",
			type == CTL_TRUNCATE ? "truncate" : "move its checkpoint",
			ack->status);
		return -1;
	}
	return 0;
}

/*
 * Find where the replica resumes and make its log end there (under
 * release_lock: the local checkpoint does not move meanwhile).
 */
static int
catch_up(struct link *l, const struct ctl_hello_reply *hr)
{
	struct cluster *c = l->c;
	struct log_pos head, pub, start;
	struct ctl_ack ack;
	uint64_t lo, hi, r_first = hr->head.lsn, r_last = hr->tail.lsn - 1;
	bool found;
	char why[160];

	wal_positions(c->wal, &head, &pub, NULL);
	lo = (r_first > head.lsn ? r_first : head.lsn) - 1;
	hi = r_last < pub.lsn - 1 ? r_last : pub.lsn - 1;
	if (chain_agreement(l->ch, &l->msg_seq, c->cfg.down_timeout_ms, c->wal,
			lo, hi, &found, &lo, why, sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	if (!found) {
		/* nothing in common that we still hold: a full resync */
		start = head;
		link_count(&l->n.full_resyncs, 1);
		REPL_LOG_NOTICE("replica %s:%s: full resync from LSN %llu", l->host,
			l->ctl_port, (unsigned long long)head.lsn);
	} else {
		if (wal_pos_after(c->wal, lo, &start)) {
			link_fail(l, "lost LSN %llu during catch-up", (unsigned long long)lo);
			return -1;
		}
		if (r_last > lo)
			REPL_LOG_NOTICE("replica %s:%s: dropping its LSNs %llu..%llu "
				"(never committed)", l->host, l->ctl_port,
				(unsigned long long)lo + 1, (unsigned long long)r_last);
	}
	if (shape_replica(l, CTL_TRUNCATE, &start, &ack))
		return -1;
	if (ack.head.lsn < head.lsn && shape_replica(l, CTL_SET_HEAD, &head, &ack))
		return -1;
	if (ack.head.lsn < head.lsn) {
		/* what it holds is released here: our appends would overwrite it */
		link_fail(l, "the replica holds LSN %llu, which this primary released",
			(unsigned long long)ack.head.lsn);
		return -1;
	}
	link_io_lock(l);
	l->sent = start;
	l->next_seq = l->oldest_seq = 0;
	l->unsent_since_ms = 0;
	link_note_waiting(l);
	l->io_ready = true;
	link_io_unlock(l);
	cluster_lock(c);
	l->hold_next = ack.hold_next;
	l->holds = ack.hold_next != 0;
	l->wants_base = false;	/* until this connection's heartbeats say */
	l->replica_head = ack.head.lsn;
	l->flushed_lsn = start.lsn;
	l->flushed_pos = start;
	link_set_state(l, REPL_LINK_STREAMING);
	l->why[0] = '\0';
	cluster_quorum_update(c);
	pthread_cond_broadcast(&c->cond);
	cluster_unlock(c);
	link_count(&l->n.catch_ups, 1);
	REPL_LOG_NOTICE("replica %s:%s is up, resuming at LSN %llu (%llu to send)",
		l->host, l->ctl_port, (unsigned long long)start.lsn,
		(unsigned long long)(pub.lsn - start.lsn));
	return 0;
}

/* what status reports of the connection just opened */
static void
note_connection(struct link *l, const struct ctl_hello_reply *hr)
{
	enum rpma_ext_flush_method fm = RPMA_EXT_FLUSH_NONE;

	(void)rpma_ext_conn_get_flush_method(l->conn, RPMA_FLUSH_TYPE_PERSISTENT, &fm);
	cluster_lock(l->c);
	snprintf(l->transport, sizeof(l->transport), "%s", l->c->cfg.provider);
	snprintf(l->flush_method, sizeof(l->flush_method), "%s",
		fabric_flush_method_name(fm));
	snprintf(l->backend, sizeof(l->backend), "%s",
		fabric_backend_name(hr->backend));
	cluster_unlock(l->c);
}

static int
link_connect(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m = { .type = CTL_HELLO };
	struct ctl_hello_reply hr;
	struct log_pos head;
	char why[160];
	int ret;

	cluster_lock(c);
	link_set_state(l, REPL_LINK_CONNECTING);
	cluster_unlock(c);
	/* from where this primary listens: the address its peers know it by */
	ret = ctl_connect_from(l->host, l->ctl_port, c->cfg.listen_addr,
		c->cfg.down_timeout_ms, c->tls, &l->ch);
	if (ret) {
		link_fail(l, "cannot reach its control port: %s", ret == -EPROTO ?
			ctl_last_error() : strerror(-ret));
		return -1;
	}
	l->last_recv_ms = clock_now_ms();
	wal_positions(c->wal, &head, NULL, NULL);
	memcpy(m.u.hello.cluster_uuid, c->id.cluster_uuid, 16);
	m.u.hello.node_id = c->id.node_id;
	m.u.hello.epoch = c->id.epoch;
	m.u.hello.ring_size = c->ring_size;
	m.u.hello.head = head;
	m.u.hello.incarnation = c->id.incarnation;
	m.u.hello.head_epoch = wal_epoch_before(c->wal, head.lsn);
	if (send_msg(l, &m) || recv_reply(l, CTL_HELLO_REPLY, &m))
		return -1;
	hr = m.u.hello_reply;
	if (hr.flags & CTL_HELLO_F_STALE) {
		snprintf(why, sizeof(why), "it follows epoch %llu, above this "
			"primary's %llu", (unsigned long long)hr.epoch,
			(unsigned long long)c->id.epoch);
		link_fenced(l, why);
		return -1;
	}
	/* it answers: from here on it is catching up, not down */
	cluster_lock(c);
	link_set_state(l, REPL_LINK_CATCHING_UP);
	l->node_id = hr.node_id;
	l->incarnation = hr.incarnation;
	/* it keeps what it stored, unless its log was made anew */
	if (hr.config_epoch < l->held)
		l->held = hr.config_epoch;
	l->acked = false;
	cluster_ms_place(c, l);
	cluster_unlock(c);
	/* an older copy of its log (a peer floor says): nothing goes to it */
	if (cluster_floor_check(c, l->host, l->ctl_port, &hr, why, sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	cluster_floor_promised(c, &hr, c->id.epoch);
	if (link_data_open(c, l->host, l->ch, &hr, &l->conn, &l->dst, why,
			sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	if (c->cfg.flush_method == REPL_FLUSH_APM &&
	    hr.backend != CTL_BACKEND_PMEM) {
		/* a READ after the writes reaches its memory, not its medium */
		link_fail(l, "APM is configured, but the replica keeps its ring in "
			"memory its CPU must persist (backend %u, not pmem)",
			(unsigned)hr.backend);
		return -1;
	}
	if (fabric_flush_apply(l->conn, c->cfg.flush_method, why, sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	note_connection(l, &hr);
	/*
	 * Its fd is not taken: the link waits with rpma_ext_cq_poll, so a
	 * completion writes the CQ's eventfd only while somebody sleeps.
	 */
	rpma_conn_get_cq(l->conn, &l->cq);
	rank_lock(&c->release_lock, LOCK_RANK_RELEASE);
	ret = catch_up(l, &hr);
	rank_unlock(&c->release_lock, LOCK_RANK_RELEASE);
	return ret;
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
	ret = shape_replica(l, CTL_SET_HEAD, &want, &ack);
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
	if (send_msg(l, &m))
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
	if (send_msg(l, &m) || recv_reply(l, CTL_ACK, &m))
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
	if (send_msg(l, &cm))
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
		if (send_msg(l, &hb))
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
