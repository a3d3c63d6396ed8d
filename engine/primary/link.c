/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.c -- one replica's link on the primary: its connection, catch-up
 * and streaming, run by its thread (and, for the data path, by appenders
 * waiting for durability).
 *
 * A link copies the byte range [sent, published) of the local ring with
 * rpma_write (split where the ring wraps), then rpma_flush(PERSISTENT) over
 * the same range; the flush's completion moves the link's flushed position.
 * Up to LINK_DEPTH batches are in flight; a batch takes everything
 * published when it is posted, so appends that arrive meanwhile share the
 * next one (group commit across the network).
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
/* a link's connection                                                */

/* publish since when the oldest unflushed bytes wait (under io_lock) */
static void
note_waiting(struct link *l)
{
	uint64_t since = l->oldest_seq < l->next_seq ?
		l->inflight[l->oldest_seq % LINK_DEPTH].seen_ms : l->unsent_since_ms;

	atomic_store_explicit(&l->waiting_since_ms, since, memory_order_relaxed);
}

static void
link_fail(struct link *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
link_fail(struct link *l, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&l->c->lock);
	if (l->state != LINK_DOWN || strcmp(l->why, why) != 0)
		REPL_LOG_WARNING("replica %s:%s is down: %s", l->host, l->ctl_port, why);
	snprintf(l->why, sizeof(l->why), "%s", why);
	if (l->state == LINK_STREAMING)
		l->left_ms = clock_now_ms();
	l->state = LINK_DOWN;
	pthread_cond_broadcast(&l->c->cond);
	pthread_mutex_unlock(&l->c->lock);
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

	pthread_mutex_lock(&c->lock);
	if (!atomic_exchange(&c->fenced, true)) {
		snprintf(c->fenced_why, sizeof(c->fenced_why), "%s", why);
		REPL_LOG_ERROR("this primary is fenced: replica %s:%s says %s; it "
			"acknowledges nothing more", l->host, l->ctl_port, why);
	}
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < c->n_links; i++)
		link_kick(&c->links[i]);
	link_fail(l, "fenced: %s", why);
}

static void
link_close(struct link *l)
{
	pthread_mutex_lock(&l->io_lock);
	l->io_ready = false;
	atomic_store(&l->waiting_since_ms, 0);
	pthread_mutex_unlock(&l->io_lock);
	link_data_close(&l->conn, &l->dst);
	ctl_chan_close(&l->ch);
	link_verify_reset(l);
	l->cq = NULL;
	pthread_mutex_lock(&l->c->lock);
	if (l->state == LINK_STREAMING)
		l->left_ms = clock_now_ms();
	l->state = LINK_DOWN;
	l->force_down = false;
	pthread_cond_broadcast(&l->c->cond);
	pthread_mutex_unlock(&l->c->lock);
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
	pthread_mutex_lock(&l->io_lock);
	l->sent = start;
	l->next_seq = l->oldest_seq = 0;
	l->unsent_since_ms = 0;
	note_waiting(l);
	l->io_ready = true;
	pthread_mutex_unlock(&l->io_lock);
	pthread_mutex_lock(&c->lock);
	l->flushed_lsn = start.lsn;
	l->flushed_pos = start;
	l->state = LINK_STREAMING;
	l->why[0] = '\0';
	cluster_quorum_update(c);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
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
	pthread_mutex_lock(&l->c->lock);
	snprintf(l->transport, sizeof(l->transport), "%s", l->c->cfg.provider);
	snprintf(l->flush_method, sizeof(l->flush_method), "%s",
		fabric_flush_method_name(fm));
	snprintf(l->backend, sizeof(l->backend), "%s",
		fabric_backend_name(hr->backend));
	pthread_mutex_unlock(&l->c->lock);
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

	ret = ctl_connect(l->host, l->ctl_port, c->cfg.down_timeout_ms, c->tls, &l->ch);
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
	pthread_mutex_lock(&c->lock);
	l->state = LINK_CATCHING_UP;
	l->node_id = hr.node_id;
	l->incarnation = hr.incarnation;
	/* it keeps what it stored, unless its log was made anew */
	if (hr.config_epoch < l->held)
		l->held = hr.config_epoch;
	l->acked = false;
	cluster_ms_place(c, l);
	pthread_mutex_unlock(&c->lock);
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
	rpma_conn_get_cq(l->conn, &l->cq);
	if (rpma_cq_get_fd(l->cq, &l->cq_fd)) {
		link_fail(l, "no completion fd");
		return -1;
	}
	pthread_mutex_lock(&c->release_lock);
	ret = catch_up(l, &hr);
	pthread_mutex_unlock(&c->release_lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* streaming                                                          */

void
link_split_init(struct link_split *s, uint64_t ring_size, uint64_t off,
		uint64_t len, uint64_t max)
{
	*s = (struct link_split){ .ring_size = ring_size, .max = max,
		.off = off, .left = len };
}

bool
link_split_next(struct link_split *s, uint64_t *off, uint64_t *len)
{
	uint64_t n = s->left;

	if (n == 0 || s->max == 0 || s->off >= s->ring_size)
		return false;
	if (n > s->ring_size - s->off)
		n = s->ring_size - s->off;	/* the rest starts at offset 0 */
	if (n > s->max)
		n = s->max;
	*off = s->off;
	*len = n;
	s->left -= n;
	s->off = s->off + n == s->ring_size ? 0 : s->off + n;
	return true;
}

/* write ring bytes [from, from + len) (no wrap inside), then flush them */
static int
post_piece(struct link *l, uint64_t from, uint64_t len, bool signal,
		uint64_t seq)
{
	for (uint64_t done = 0; done < len;) {
		uint64_t n = len - done < LINK_WRITE_MAX ? len - done : LINK_WRITE_MAX;
		size_t off = (size_t)(WAL_RING_OFF + from + done);

		if (rpma_write(l->conn, l->dst, off, l->c->src, off, (size_t)n,
				RPMA_F_COMPLETION_ON_ERROR, NULL))
			return -1;
		done += n;
	}
	return rpma_flush(l->conn, l->dst, (size_t)(WAL_RING_OFF + from), (size_t)len,
		RPMA_FLUSH_TYPE_PERSISTENT,
		signal ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
		signal ? (void *)(uintptr_t)(seq + 1) : NULL) ? -1 : 0;
}

/*
 * Post one batch: everything published since the last one, in pieces
 * that neither wrap nor pass LINK_FLUSH_MAX; only the last flush is
 * signalled (its completion means the earlier ones completed too).
 */
static int
post_batch(struct link *l, const struct log_pos *pub)
{
	struct batch *b = &l->inflight[l->next_seq % LINK_DEPTH];
	const struct log_pos *from = &l->sent;
	uint64_t ring = l->c->ring_size, off, len;
	struct link_split sp;
	bool more;
	int ret = 0;

	link_split_init(&sp, ring, from->off, from->lap == pub->lap ?
		pub->off - from->off : ring - from->off + pub->off,
		LINK_FLUSH_MAX);
	if (!(more = link_split_next(&sp, &off, &len)))
		ret = post_piece(l, from->off, 0, true, l->next_seq);
	while (more && ret == 0) {
		uint64_t o = off, n = len;

		more = link_split_next(&sp, &off, &len);
		ret = post_piece(l, o, n, !more, l->next_seq);
	}
	if (ret) {
		link_fail(l, "cannot post a write: %s", rpma_ext_errormsg());
		return -1;
	}
	*b = (struct batch){ .seq = l->next_seq, .end = *pub,
		.seen_ms = l->unsent_since_ms };
	l->next_seq++;
	l->sent = *pub;
	l->unsent_since_ms = 0;
	return 0;
}


/* completions: a batch's flush finished; move flushed over the done prefix */
static int
reap(struct link *l, bool *progress)
{
	struct ibv_wc wc[16];
	int n = 0, ret;
	uint64_t flushed = 0;
	struct log_pos end;

	ret = rpma_cq_get_wc(l->cq, 16, wc, &n);
	if (ret == RPMA_E_NO_COMPLETION)
		return 0;
	if (ret) {
		link_fail(l, "completion queue: %s", rpma_ext_errormsg());
		return -1;
	}
	for (int i = 0; i < n; i++) {
		uint64_t seq = (uint64_t)(uintptr_t)wc[i].wr_id;

		if (wc[i].status != IBV_WC_SUCCESS || seq == 0 ||
		    seq - 1 < l->oldest_seq || seq - 1 >= l->next_seq) {
			link_fail(l, "a write or flush failed: %s",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
		l->inflight[(seq - 1) % LINK_DEPTH].done = true;
	}
	while (l->oldest_seq < l->next_seq &&
	       l->inflight[l->oldest_seq % LINK_DEPTH].done) {
		end = l->inflight[l->oldest_seq % LINK_DEPTH].end;
		flushed = end.lsn;
		l->oldest_seq++;
	}
	if (flushed) {
		pthread_mutex_lock(&l->c->lock);
		l->flushed_lsn = flushed;
		l->flushed_pos = end;
		cluster_quorum_update(l->c);
		if (l->c->waiters)	/* a clean close waits for every replica */
			pthread_cond_broadcast(&l->c->cond);
		pthread_mutex_unlock(&l->c->lock);
		note_waiting(l);
		*progress = true;
	}
	return 0;
}

/*
 * Reap completions and, with post, send what was published since the last
 * batch (under io_lock).
 */
static int
data_path(struct link *l, bool post, bool *progress)
{
	struct log_pos pub;

	if (!l->io_ready)
		return -1;
	if (reap(l, progress))
		return -1;
	if (!post)
		return 0;
	wal_positions(l->c->wal, NULL, &pub, NULL);
	if (pos_equal(&pub, &l->sent))
		return 0;
	if (l->unsent_since_ms == 0) {
		/* new bytes to send: one clock read per batch, not per record */
		l->unsent_since_ms = clock_now_ms();
		note_waiting(l);
	}
	if (l->next_seq - l->oldest_seq >= LINK_DEPTH)
		return 0;
	if (post_batch(l, &pub))
		return -1;
	note_waiting(l);
	*progress = true;
	return 0;
}

/* an appender's turn at a link's data path, if nobody else has it */
void
link_help(struct link *l, bool post)
{
	bool progress = false;

	if (pthread_mutex_trylock(&l->io_lock) != 0)
		return;		/* its thread (or another appender) is at it */
	if (l->io_ready && data_path(l, post, &progress))
		l->io_ready = false;	/* failed: its thread reconnects */
	pthread_mutex_unlock(&l->io_lock);
}

static int
serve_head_request(struct link *l)
{
	struct cluster *c = l->c;
	struct log_pos want;
	struct ctl_ack ack;
	uint64_t seq;
	int ret;

	pthread_mutex_lock(&c->lock);
	seq = l->head_req_seq;
	want = l->head_req;
	pthread_mutex_unlock(&c->lock);
	if (seq == l->head_done_seq)
		return 0;
	ret = shape_replica(l, CTL_SET_HEAD, &want, &ack);
	pthread_mutex_lock(&c->lock);
	l->head_done_seq = seq;
	l->head_status = ret;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
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
	pthread_mutex_lock(&c->lock);
	want = l->state == LINK_STREAMING && (l->in_new || l->in_old) &&
		(!l->acked || l->held < c->ms.config_epoch) &&
		l->flushed_lsn >= c->durable_lsn && l->flushed_lsn > c->epoch_start_lsn;
	pthread_mutex_unlock(&c->lock);
	return want;
}

static int
give_membership(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m = { .type = CTL_MEMBERSHIP };
	struct membership ms;

	pthread_mutex_lock(&c->lock);
	ms = m.u.membership = c->ms;
	pthread_mutex_unlock(&c->lock);
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
	pthread_mutex_lock(&c->lock);
	l->held = ms.config_epoch;
	l->acked = true;
	cluster_ms_place(c, l);
	cluster_quorum_update(c);
	cluster_ms_advance(c);
	pthread_mutex_unlock(&c->lock);
	REPL_LOG_NOTICE("replica %s:%s caught up: a member (configuration epoch "
		"%llu%s, stored)", l->host, l->ctl_port,
		(unsigned long long)ms.config_epoch,
		(ms.flags & MEMBERSHIP_F_JOINT) ? ", joint" : "");
	return 0;
}

static int
stream(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m;
	struct log_pos pub;
	uint64_t t, durable;
	bool progress = false;
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = l->state == LINK_DOWN;	/* failed in an appender's hands */
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return -1;
	pthread_mutex_lock(&l->io_lock);
	ret = data_path(l, true, &progress);
	pthread_mutex_unlock(&l->io_lock);
	if (ret)
		return -1;
	wal_positions(c->wal, NULL, &pub, NULL);
	if (serve_head_request(l) || serve_verify(l))
		return -1;
	if (wants_membership(l) && give_membership(l))
		return -1;

	t = clock_now_ms();
	durable = atomic_load_explicit(&c->durable_atomic, memory_order_acquire);
	if (durable > l->commit_sent &&
	    (t - l->last_commit_ms >= COMMIT_EVERY_MS || l->next_seq == l->oldest_seq)) {
		struct ctl_msg cm = { .type = CTL_COMMIT };

		cm.u.commit.epoch = c->id.epoch;
		cm.u.commit.commit_lsn = durable - 1;
		pthread_mutex_lock(&c->lock);
		cm.u.commit.flushed = l->flushed_pos;
		pthread_mutex_unlock(&c->lock);
		if (send_msg(l, &cm))
			return -1;
		l->commit_sent = durable;
		l->last_commit_ms = t;
	}
	while ((ret = ctl_chan_recv(l->ch, &m, 0)) == 0) {
		l->last_recv_ms = clock_now_ms();
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
	/*
	 * A heartbeat when nothing else went out for a period, and also when
	 * nothing came in for one: the replica speaks only to answer, so
	 * under a steady load the COMMITs going out would otherwise keep it
	 * silent until it is taken for dead.
	 */
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
	if (t - l->last_report_ms >= 2000) {
		/* a long catch-up or resync: say how far it has come */
		uint64_t flushed;

		pthread_mutex_lock(&c->lock);
		flushed = l->flushed_lsn;
		pthread_mutex_unlock(&c->lock);
		/* flushed may be past this pub: appenders post too */
		if (pub.lsn > flushed && pub.lsn - flushed > 10000)
			REPL_LOG_NOTICE("replica %s:%s catching up: flushed up to LSN "
				"%llu, %llu records behind", l->host, l->ctl_port,
				(unsigned long long)flushed - 1,
				(unsigned long long)(pub.lsn - flushed));
		l->last_report_ms = t;
	}
	if (l->force_down) {
		link_fail(l, "did not move its checkpoint in time");
		return -1;
	}
	if (progress)
		return 0;

	/*
	 * Batches in flight: poll the completion queue a little first.  Polling
	 * makes progress in this thread, so a flush that completes soon costs
	 * no hand-off through the core's progress thread and no wake-up.
	 */
	if (l->next_seq != l->oldest_seq && c->spin_ns) {
		uint64_t until = clock_now_ns() + c->spin_ns;

		do {
			pthread_mutex_lock(&l->io_lock);
			ret = data_path(l, false, &progress);
			pthread_mutex_unlock(&l->io_lock);
			if (ret)
				return -1;
			if (progress)
				return 0;
		} while (clock_now_ns() < until);
	}

	/* nothing to do: sleep until a completion, a message or a kick */
	{
		struct pollfd pfd[3] = {
			{ .fd = ctl_chan_fd(l->ch), .events = POLLIN },
			{ .fd = l->kick_fd, .events = POLLIN },
			{ .fd = l->cq_fd, .events = POLLIN },
		};
		uint64_t v;
		bool idle, unsent;

		atomic_store(&l->sleeping, true);
		/* a publish or a head request between the check and the flag */
		wal_positions(c->wal, NULL, &pub, NULL);
		pthread_mutex_lock(&l->io_lock);
		idle = l->next_seq == l->oldest_seq;
		unsent = !pos_equal(&pub, &l->sent);
		pthread_mutex_unlock(&l->io_lock);
		if ((unsent && idle) || l->head_req_seq != l->head_done_seq ||
		    link_verify_waiting(l)) {
			atomic_store(&l->sleeping, false);
			return 0;
		}
		(void)poll(pfd, idle ? 2 : 3, c->cfg.heartbeat_ms);
		atomic_store(&l->sleeping, false);
		if (pfd[1].revents)
			(void)!read(l->kick_fd, &v, sizeof(v));
		if (pfd[2].revents)
			(void)!read(l->cq_fd, &v, sizeof(v));
	}
	return 0;
}

/* a node the committed change removed: its link ends */
static bool
retired(struct link *l)
{
	bool r;

	pthread_mutex_lock(&l->c->lock);
	r = l->retired;
	pthread_mutex_unlock(&l->c->lock);
	return r;
}

void *
link_main(void *arg)
{
	struct link *l = arg;
	struct cluster *c = l->c;
	int backoff = 50;

	while (!atomic_load(&c->stopping) && !atomic_load(&c->fenced) &&
	       !retired(l)) {
		if (link_connect(l) == 0) {
			backoff = 50;
			while (!atomic_load(&c->stopping) && !atomic_load(&c->fenced) &&
			       !retired(l) && stream(l) == 0)
				;
		}
		link_close(l);
		pthread_mutex_lock(&c->lock);
		l->reconnects++;
		pthread_mutex_unlock(&c->lock);
		if (atomic_load(&c->stopping) || atomic_load(&c->fenced) ||
		    retired(l))
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
	return NULL;
}
