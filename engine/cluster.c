/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster.c -- the primary's links to its replicas, and the quorum.
 *
 * Each replica's ring is identical in geometry to the local one, so a
 * record goes to the same offset there: a link copies the byte range
 * [sent, published) of the local ring with rpma_write (split where the ring
 * wraps), then rpma_flush(PERSISTENT) over the same range; the flush's
 * completion moves the link's flushed position.  Up to LINK_DEPTH batches
 * are in flight; a batch takes everything published when it is posted, so
 * appends that arrive meanwhile share the next one (group commit across
 * the network).
 *
 * An LSN is durable when the local log persisted it and `quorum` links
 * have flushed it.  The commit point (that LSN) goes to the replicas in
 * COMMIT messages together with each one's flushed position, which is its
 * tail hint: it is sent only after the flush completed.
 *
 * Catch-up, on every (re)connection: the link and the replica find the
 * last LSN whose chain position (offset, lap, chained CRC) both hold, by
 * binary search with QUERY messages; the replica is truncated after it
 * (records an earlier primary left there were never committed), and the
 * link resumes from there.  When the local ring no longer holds that
 * point, the replica restarts empty at the local checkpoint and receives
 * the whole ring from there (a full resync), chasing the live tail.  While
 * a link is up, space in the local ring is reused only below what it has
 * flushed, and only after its replica's checkpoint moved past it.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cluster.h"
#include "ctl_chan.h"
#include "log.h"

#define LINK_DEPTH 8			/* batches in flight per replica */
#define LINK_WRITE_MAX (4u << 20)	/* the largest single rpma_write */
#define COMMIT_EVERY_MS 2		/* commit point to replicas, at most */
#define LINK_SPIN_US 50			/* REPL_LINK_SPIN_US overrides it */

struct batch {
	uint64_t seq;
	struct wal_pos end;
	bool done;
};

struct link {
	struct cluster *c;
	int idx;
	const char *host;
	const char *ctl_port;
	pthread_t thread;
	int kick_fd;
	atomic_bool sleeping;

	/* shared, under c->lock */
	enum cluster_link_state state;
	uint64_t flushed_lsn;		/* next LSN not yet flushed on it */
	struct wal_pos flushed_pos;	/* the same as a position: its tail hint */
	uint64_t reconnects;
	char why[160];
	struct wal_pos head_req;	/* a checkpoint move asked by release */
	uint64_t head_req_seq, head_done_seq;
	int head_status;
	bool force_down;

	/*
	 * The data path (conn, cq, sent, batches) is under io_lock: the link
	 * thread and an appender waiting for durability both post and reap,
	 * so a lone client needs no hand-off to another thread.  io_ready says
	 * the connection is up (set after catch-up, cleared before teardown).
	 */
	pthread_mutex_t io_lock;
	bool io_ready;

	/* the link thread's own */
	struct ctl_chan *ch;
	struct rpma_conn *conn;
	struct rpma_mr_remote *dst;
	struct rpma_cq *cq;
	int cq_fd;
	struct wal_pos sent;
	struct batch inflight[LINK_DEPTH];
	uint64_t next_seq, oldest_seq;
	uint64_t last_send_ms, last_recv_ms, last_commit_ms, commit_sent;
	uint64_t last_report_ms;	/* progress of a long catch-up */
	uint32_t msg_seq;
};

struct cluster {
	struct cluster_cfg cfg;
	struct rpma_ext_mem *mem;
	struct wal *wal;
	uint64_t ring_size;
	struct wal_identity id;
	struct rpma_peer *peer;
	struct rpma_mr_local *src;

	pthread_mutex_t lock;
	pthread_cond_t cond;		/* durable moved, or a link changed */
	uint64_t durable_lsn;		/* next LSN not yet durable by the rule */
	_Atomic uint64_t durable_atomic;
	unsigned waiters;
	atomic_bool stopping;
	pthread_mutex_t release_lock;	/* release vs. a link's catch-up */
	uint64_t spin_ns;		/* a link polls its CQ this long */
	atomic_bool spinning;		/* a waiter polls the links */

	struct link *links;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
to_ctl(struct ctl_pos *c, const struct wal_pos *w)
{
	*c = (struct ctl_pos){ .lsn = w->lsn, .off = w->off, .lap = w->lap,
		.crc = w->crc };
}

static void
from_ctl(struct wal_pos *w, const struct ctl_pos *c)
{
	*w = (struct wal_pos){ .lsn = c->lsn, .off = c->off, .lap = c->lap,
		.crc = c->crc };
}

static bool
pos_equal(const struct wal_pos *a, const struct wal_pos *b)
{
	return a->lsn == b->lsn && a->off == b->off && a->lap == b->lap &&
		a->crc == b->crc;
}

/* ------------------------------------------------------------------ */
/* the quorum                                                         */

/* recompute durable_lsn (under c->lock); wake waiters if it moved */
static void
quorum_update(struct cluster *c)
{
	struct wal_pos durable;
	uint64_t flushed[64], d;
	int n = 0;

	wal_positions(c->wal, NULL, NULL, &durable);
	d = durable.lsn;
	if (c->cfg.quorum > 0) {
		for (int i = 0; i < c->cfg.n_replicas; i++)
			if (c->links[i].state == LINK_STREAMING)
				flushed[n++] = c->links[i].flushed_lsn;
		if (n < c->cfg.quorum) {
			d = c->durable_lsn;	/* cannot move without a quorum */
		} else {
			/* the quorum-th largest flushed position */
			for (int i = 0; i < c->cfg.quorum; i++)
				for (int j = i + 1; j < n; j++)
					if (flushed[j] > flushed[i]) {
						uint64_t t = flushed[i];
						flushed[i] = flushed[j];
						flushed[j] = t;
					}
			if (flushed[c->cfg.quorum - 1] < d)
				d = flushed[c->cfg.quorum - 1];
		}
	}
	if (d > c->durable_lsn) {
		c->durable_lsn = d;
		atomic_store_explicit(&c->durable_atomic, d, memory_order_release);
		if (c->waiters)
			pthread_cond_broadcast(&c->cond);
	}
}

static void
kick(struct link *l)
{
	uint64_t one = 1;

	/* a syscall only for a link that sleeps: not one per record */
	if (atomic_exchange(&l->sleeping, false))
		(void)!write(l->kick_fd, &one, sizeof(one));
}

static struct timespec
deadline(int timeout_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static void help_link(struct link *l, bool post);

int
cluster_wait_durable(struct cluster *c, uint64_t lsn, int timeout_ms)
{
	struct timespec until;
	int ret;

	if (atomic_load_explicit(&c->durable_atomic, memory_order_acquire) > lsn)
		return 0;
	/* post our batch ourselves where the link is free: no hand-off */
	for (int i = 0; i < c->cfg.n_replicas; i++)
		help_link(&c->links[i], true);
	/* the local persist runs while the flushes travel */
	if ((ret = wal_sync(c->wal, lsn)))
		return ret;
	pthread_mutex_lock(&c->lock);
	quorum_update(c);
	pthread_mutex_unlock(&c->lock);
	if (!atomic_exchange(&c->spinning, true)) {
		/*
		 * Reap the completions ourselves for a while: no wake-up.  One
		 * waiter at a time: more would only take the CPU from the
		 * threads doing the work.
		 */
		uint64_t spin_until = now_ns() + c->spin_ns;

		while (atomic_load_explicit(&c->durable_atomic, memory_order_acquire) <= lsn &&
		       now_ns() < spin_until)
			for (int i = 0; i < c->cfg.n_replicas; i++)
				help_link(&c->links[i], true);
		atomic_store(&c->spinning, false);
	}
	if (atomic_load_explicit(&c->durable_atomic, memory_order_acquire) > lsn)
		return 0;
	/* then leave it to the links, asleep until they are done */
	for (int i = 0; i < c->cfg.n_replicas; i++)
		kick(&c->links[i]);
	if (timeout_ms >= 0)
		until = deadline(timeout_ms);
	pthread_mutex_lock(&c->lock);
	quorum_update(c);
	while (c->durable_lsn <= lsn) {
		c->waiters++;
		if (timeout_ms < 0)
			ret = pthread_cond_wait(&c->cond, &c->lock);
		else
			ret = pthread_cond_timedwait(&c->cond, &c->lock, &until);
		c->waiters--;
		if (ret == ETIMEDOUT && c->durable_lsn <= lsn) {
			pthread_mutex_unlock(&c->lock);
			return WAL_E_TIMEDOUT;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

uint64_t
cluster_durable_lsn(struct cluster *c)
{
	return atomic_load_explicit(&c->durable_atomic, memory_order_acquire) - 1;
}

/* ------------------------------------------------------------------ */
/* a link's connection                                                */

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
		RPMA_LOG_WARNING("replica %s:%s is down: %s", l->host, l->ctl_port, why);
	snprintf(l->why, sizeof(l->why), "%s", why);
	l->state = LINK_DOWN;
	pthread_cond_broadcast(&l->c->cond);
	pthread_mutex_unlock(&l->c->lock);
}

static void
link_close(struct link *l)
{
	enum rpma_conn_event ev;

	pthread_mutex_lock(&l->io_lock);
	l->io_ready = false;
	pthread_mutex_unlock(&l->io_lock);
	if (l->conn) {
		rpma_conn_disconnect(l->conn);
		while (rpma_conn_next_event(l->conn, &ev) == 0 &&
		       ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST)
			;
		rpma_conn_delete(&l->conn);
	}
	if (l->dst)
		rpma_mr_remote_delete(&l->dst);
	ctl_chan_close(&l->ch);
	l->cq = NULL;
	pthread_mutex_lock(&l->c->lock);
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
	l->last_send_ms = now_ms();
	return 0;
}

/* wait for a reply of type `want`, answering heartbeats meanwhile */
static int
recv_reply(struct link *l, enum ctl_type want, struct ctl_msg *m)
{
	uint64_t until = now_ms() + (uint64_t)l->c->cfg.down_timeout_ms;

	for (;;) {
		int left = (int)(until - now_ms());
		int ret = ctl_chan_recv(l->ch, m, left > 0 ? left : 0);

		if (ret == 0) {
			l->last_recv_ms = now_ms();
			if (m->type == want)
				return 0;
			if (m->type == CTL_HEARTBEAT)
				continue;
			if (m->type == CTL_ERROR)
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

/* does the replica's chain hold the same position after lsn as ours? */
static int
agrees(struct link *l, uint64_t lsn, bool *yes)
{
	struct ctl_msg m = { .type = CTL_QUERY };
	struct wal_pos ours, theirs;

	*yes = false;
	if (wal_pos_after(l->c->wal, lsn, &ours))
		return 0;
	m.u.query.lsn = lsn;
	if (send_msg(l, &m) || recv_reply(l, CTL_QUERY_REPLY, &m))
		return -1;
	from_ctl(&theirs, &m.u.query_reply.after);
	*yes = m.u.query_reply.found && pos_equal(&ours, &theirs);
	return 0;
}

static int
shape_replica(struct link *l, enum ctl_type type, const struct wal_pos *p,
		struct ctl_ack *ack)
{
	struct ctl_msg m = { .type = type };

	to_ctl(&m.u.pos, p);
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
	struct wal_pos head, pub, start;
	struct ctl_ack ack;
	uint64_t lo, hi, r_first = hr->head.lsn, r_last = hr->tail.lsn - 1;
	bool yes = false;

	wal_positions(c->wal, &head, &pub, NULL);
	lo = (r_first > head.lsn ? r_first : head.lsn) - 1;
	hi = r_last < pub.lsn - 1 ? r_last : pub.lsn - 1;
	if (lo <= hi && agrees(l, lo, &yes))
		return -1;
	if (lo > hi || !yes) {
		/* nothing in common that we still hold: a full resync */
		start = head;
		RPMA_LOG_NOTICE("replica %s:%s: full resync from LSN %llu", l->host,
			l->ctl_port, (unsigned long long)head.lsn);
	} else {
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo + 1) / 2;

			if (agrees(l, mid, &yes))
				return -1;
			if (yes)
				lo = mid;
			else
				hi = mid - 1;
		}
		if (wal_pos_after(c->wal, lo, &start)) {
			link_fail(l, "lost LSN %llu during catch-up", (unsigned long long)lo);
			return -1;
		}
		if (r_last > lo)
			RPMA_LOG_NOTICE("replica %s:%s: dropping its LSNs %llu..%llu "
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
	l->io_ready = true;
	pthread_mutex_unlock(&l->io_lock);
	pthread_mutex_lock(&c->lock);
	l->flushed_lsn = start.lsn;
	l->flushed_pos = start;
	l->state = LINK_STREAMING;
	l->why[0] = '\0';
	quorum_update(c);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	RPMA_LOG_NOTICE("replica %s:%s is up, resuming at LSN %llu (%llu to send)",
		l->host, l->ctl_port, (unsigned long long)start.lsn,
		(unsigned long long)(pub.lsn - start.lsn));
	return 0;
}

static int
link_connect(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m = { .type = CTL_HELLO };
	struct ctl_hello_reply hr;
	struct rpma_conn_cfg *ccfg = NULL;
	struct rpma_conn_req *req = NULL;
	enum rpma_conn_event ev;
	struct wal_pos head;
	char port[8];
	size_t size;
	int ret, ft;

	ret = ctl_connect(l->host, l->ctl_port, c->cfg.down_timeout_ms, &l->ch);
	if (ret) {
		link_fail(l, "cannot reach its control port: %s", strerror(-ret));
		return -1;
	}
	l->last_recv_ms = now_ms();
	wal_positions(c->wal, &head, NULL, NULL);
	memcpy(m.u.hello.cluster_uuid, c->id.cluster_uuid, 16);
	m.u.hello.node_id = c->id.node_id;
	m.u.hello.epoch = c->id.epoch;
	m.u.hello.ring_size = c->ring_size;
	to_ctl(&m.u.hello.head, &head);
	if (send_msg(l, &m) || recv_reply(l, CTL_HELLO_REPLY, &m))
		return -1;
	hr = m.u.hello_reply;
	/* it answers: from here on it is catching up, not down */
	pthread_mutex_lock(&c->lock);
	l->state = LINK_CATCHING_UP;
	pthread_mutex_unlock(&c->lock);
	if (memcmp(hr.cluster_uuid, c->id.cluster_uuid, 16) != 0 ||
	    hr.ring_size != c->ring_size) {
		link_fail(l, "its log belongs to another cluster or has another size");
		return -1;
	}
	if (rpma_mr_remote_from_descriptor(hr.desc, hr.desc_len, &l->dst) ||
	    rpma_mr_remote_get_size(l->dst, &size) ||
	    rpma_mr_remote_get_flush_type(l->dst, &ft)) {
		link_fail(l, "its region descriptor is not valid");
		return -1;
	}
	if (size < WAL_RING_OFF + c->ring_size ||
	    !(ft & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
		link_fail(l, "its region is %zu bytes%s; %llu and persistent flushes "
			"are needed", size, (ft & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ?
			"" : " without persistent flushes",
			(unsigned long long)(WAL_RING_OFF + c->ring_size));
		return -1;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)hr.data_port);
	if (rpma_conn_cfg_new(&ccfg) == 0) {
		rpma_conn_cfg_set_sq_size(ccfg, 4 * LINK_DEPTH + 8);
		rpma_conn_cfg_set_cq_size(ccfg, 4 * LINK_DEPTH + 8);
		rpma_conn_cfg_set_timeout(ccfg, c->cfg.down_timeout_ms);
	}
	ret = rpma_conn_req_new(c->peer, l->host, port, ccfg, &req);
	rpma_conn_cfg_delete(&ccfg);
	if (ret == 0)
		ret = rpma_conn_req_connect(&req, NULL, &l->conn);
	if (ret == 0)
		ret = rpma_conn_next_event(l->conn, &ev);
	if (ret || ev != RPMA_CONN_ESTABLISHED) {
		link_fail(l, "cannot open the data connection to port %s", port);
		return -1;
	}
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

/* write and flush ring bytes [from, from + len) (no wrap inside) */
static int
post_range(struct link *l, uint64_t from, uint64_t len, bool signal,
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

/* post one batch: everything published since the last one */
static int
post_batch(struct link *l, const struct wal_pos *pub)
{
	struct batch *b = &l->inflight[l->next_seq % LINK_DEPTH];
	const struct wal_pos *from = &l->sent;
	int ret;

	if (from->lap == pub->lap) {
		ret = post_range(l, from->off, pub->off - from->off, true, l->next_seq);
	} else {
		ret = post_range(l, from->off, l->c->ring_size - from->off,
			pub->off == 0, l->next_seq);
		if (ret == 0 && pub->off)
			ret = post_range(l, 0, pub->off, true, l->next_seq);
	}
	if (ret) {
		link_fail(l, "cannot post a write: %s", rpma_ext_errormsg());
		return -1;
	}
	*b = (struct batch){ .seq = l->next_seq, .end = *pub };
	l->next_seq++;
	l->sent = *pub;
	return 0;
}

/* completions: a batch's flush finished; move flushed over the done prefix */
static int
reap(struct link *l, bool *progress)
{
	struct ibv_wc wc[16];
	int n = 0, ret;
	uint64_t flushed = 0;
	struct wal_pos end;

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
		quorum_update(l->c);
		if (l->c->waiters)	/* a clean close waits for every replica */
			pthread_cond_broadcast(&l->c->cond);
		pthread_mutex_unlock(&l->c->lock);
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
	struct wal_pos pub;

	if (!l->io_ready)
		return -1;
	if (reap(l, progress))
		return -1;
	if (!post || l->next_seq - l->oldest_seq >= LINK_DEPTH)
		return 0;
	wal_positions(l->c->wal, NULL, &pub, NULL);
	if (pos_equal(&pub, &l->sent))
		return 0;
	if (post_batch(l, &pub))
		return -1;
	*progress = true;
	return 0;
}

/* an appender's turn at a link's data path, if nobody else has it */
static void
help_link(struct link *l, bool post)
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
	struct wal_pos want;
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

static int
stream(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m;
	struct wal_pos pub;
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
	if (serve_head_request(l))
		return -1;

	t = now_ms();
	durable = atomic_load_explicit(&c->durable_atomic, memory_order_acquire);
	if (durable > l->commit_sent &&
	    (t - l->last_commit_ms >= COMMIT_EVERY_MS || l->next_seq == l->oldest_seq)) {
		struct ctl_msg cm = { .type = CTL_COMMIT };

		cm.u.commit.epoch = c->id.epoch;
		cm.u.commit.commit_lsn = durable - 1;
		pthread_mutex_lock(&c->lock);
		to_ctl(&cm.u.commit.flushed, &l->flushed_pos);
		pthread_mutex_unlock(&c->lock);
		if (send_msg(l, &cm))
			return -1;
		l->commit_sent = durable;
		l->last_commit_ms = t;
	}
	while ((ret = ctl_chan_recv(l->ch, &m, 0)) == 0) {
		l->last_recv_ms = now_ms();
		if (m.type == CTL_ERROR) {
			link_fail(l, "the replica reports: %s", m.u.error.text);
			return -1;
		}
		if (m.type != CTL_HEARTBEAT) {
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
	if (t - l->last_send_ms >= (uint64_t)c->cfg.heartbeat_ms) {
		struct ctl_msg hb = { .type = CTL_HEARTBEAT };

		hb.u.heartbeat.time_ns = t * 1000000;
		if (send_msg(l, &hb))
			return -1;
	}
	t = now_ms();	/* messages above may have moved last_recv_ms past t */
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
		if (pub.lsn - flushed > 10000)
			RPMA_LOG_NOTICE("replica %s:%s catching up: flushed up to LSN "
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
		uint64_t until = now_ns() + c->spin_ns;

		do {
			pthread_mutex_lock(&l->io_lock);
			ret = data_path(l, false, &progress);
			pthread_mutex_unlock(&l->io_lock);
			if (ret)
				return -1;
			if (progress)
				return 0;
		} while (now_ns() < until);
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
		if ((unsent && idle) || l->head_req_seq != l->head_done_seq) {
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

static void *
link_main(void *arg)
{
	struct link *l = arg;
	struct cluster *c = l->c;
	int backoff = 50;

	while (!atomic_load(&c->stopping)) {
		if (link_connect(l) == 0) {
			backoff = 50;
			while (!atomic_load(&c->stopping) && stream(l) == 0)
				;
		}
		link_close(l);
		pthread_mutex_lock(&c->lock);
		l->reconnects++;
		pthread_mutex_unlock(&c->lock);
		if (atomic_load(&c->stopping))
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

/* ------------------------------------------------------------------ */
/* release                                                            */

int
cluster_release(struct cluster *c, uint64_t lsn)
{
	struct wal_pos head, at;
	uint64_t want[64];
	struct timespec until;
	int ret = 0;

	pthread_mutex_lock(&c->release_lock);
	pthread_mutex_lock(&c->lock);
	quorum_update(c);
	if (lsn >= c->durable_lsn)
		lsn = c->durable_lsn - 1;
	for (int i = 0; i < c->cfg.n_replicas; i++)
		if (c->links[i].state == LINK_STREAMING &&
		    lsn >= c->links[i].flushed_lsn)
			lsn = c->links[i].flushed_lsn - 1;
	pthread_mutex_unlock(&c->lock);
	wal_positions(c->wal, &head, NULL, NULL);
	if (lsn < head.lsn || wal_pos_after(c->wal, lsn, &at))
		goto out;

	/* every live replica's checkpoint first */
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->cfg.n_replicas; i++) {
		struct link *l = &c->links[i];

		want[i] = 0;
		if (l->state != LINK_STREAMING)
			continue;
		l->head_req = at;
		want[i] = ++l->head_req_seq;
		kick(l);
	}
	until = deadline(c->cfg.down_timeout_ms);
	for (int i = 0; i < c->cfg.n_replicas; i++) {
		struct link *l = &c->links[i];

		while (want[i] && l->state != LINK_DOWN && l->head_done_seq < want[i]) {
			c->waiters++;
			ret = pthread_cond_timedwait(&c->cond, &c->lock, &until);
			c->waiters--;
			if (ret == ETIMEDOUT) {
				/* it must not keep a checkpoint we overwrite */
				l->force_down = true;
				kick(l);
				until = deadline(c->cfg.down_timeout_ms);
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	ret = wal_release(c->wal, lsn);
out:
	pthread_mutex_unlock(&c->release_lock);
	return ret;
}

/* ------------------------------------------------------------------ */

int
cluster_link_status(struct cluster *c, int i, struct cluster_link_status *st)
{
	struct wal_pos pub;

	if (c == NULL || st == NULL || i < 0 || i >= c->cfg.n_replicas)
		return RPMA_E_INVAL;
	wal_positions(c->wal, NULL, &pub, NULL);
	pthread_mutex_lock(&c->lock);
	st->state = c->links[i].state;
	st->flushed_lsn = c->links[i].state == LINK_STREAMING ?
		c->links[i].flushed_lsn - 1 : 0;
	st->lag_records = c->links[i].state == LINK_STREAMING ?
		pub.lsn - c->links[i].flushed_lsn : 0;
	st->reconnects = c->links[i].reconnects;
	snprintf(st->why, sizeof(st->why), "%s", c->links[i].why);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

int
cluster_links_up(struct cluster *c)
{
	int n = 0;

	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->cfg.n_replicas; i++)
		n += c->links[i].state == LINK_STREAMING;
	pthread_mutex_unlock(&c->lock);
	return n;
}

int
cluster_start(const struct cluster_cfg *cfg, struct rpma_ext_mem *mem,
		struct wal *wal, struct cluster **c_ptr)
{
	struct cluster *c;
	struct wal_pos durable;
	pthread_condattr_t ca;
	int ret;

	if (cfg == NULL || mem == NULL || wal == NULL || c_ptr == NULL ||
	    cfg->n_replicas < 0 || cfg->n_replicas > 64 || cfg->quorum < 0 ||
	    cfg->quorum > cfg->n_replicas || cfg->provider == NULL)
		return RPMA_E_INVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return RPMA_E_NOMEM;
	c->cfg = *cfg;
	if (c->cfg.heartbeat_ms <= 0)
		c->cfg.heartbeat_ms = 100;
	if (c->cfg.down_timeout_ms <= 0)
		c->cfg.down_timeout_ms = 2000;
	c->mem = mem;
	c->wal = wal;
	{
		const char *spin = getenv("REPL_LINK_SPIN_US");

		c->spin_ns = (spin ? strtoull(spin, NULL, 0) : LINK_SPIN_US) * 1000;
	}
	wal_identity(wal, &c->id, &c->ring_size);
	wal_positions(wal, NULL, NULL, &durable);
	c->durable_lsn = durable.lsn;
	atomic_init(&c->durable_atomic, durable.lsn);
	atomic_init(&c->stopping, false);
	atomic_init(&c->spinning, false);
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->release_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);

	c->links = calloc((size_t)(cfg->n_replicas ? cfg->n_replicas : 1),
		sizeof(*c->links));
	if (c->links == NULL) {
		ret = RPMA_E_NOMEM;
		goto err;
	}
	if ((ret = rpma_ext_peer_new_ofi(cfg->provider, &c->peer)) ||
	    (ret = rpma_ext_mr_reg_mem(c->peer, mem, RPMA_MR_USAGE_WRITE_SRC, &c->src))) {
		RPMA_LOG_ERROR("cannot prepare the %s fabric for replication",
			cfg->provider);
		goto err;
	}
	for (int i = 0; i < cfg->n_replicas; i++) {
		struct link *l = &c->links[i];

		l->c = c;
		l->idx = i;
		l->host = cfg->replicas[i].host;
		l->ctl_port = cfg->replicas[i].ctl_port;
		l->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_mutex_init(&l->io_lock, NULL);
		snprintf(l->why, sizeof(l->why), "not connected yet");
		if (l->kick_fd < 0 || pthread_create(&l->thread, NULL, link_main, l)) {
			if (l->kick_fd >= 0)
				close(l->kick_fd);
			c->cfg.n_replicas = i;
			cluster_stop(&c);
			return RPMA_E_PROVIDER;
		}
	}
	*c_ptr = c;
	return 0;
err:
	if (c->src)
		rpma_mr_dereg(&c->src);
	if (c->peer)
		rpma_peer_delete(&c->peer);
	free(c->links);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->release_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return ret;
}

void
cluster_stop(struct cluster **c_ptr)
{
	struct cluster *c;

	if (c_ptr == NULL || (c = *c_ptr) == NULL)
		return;
	{
		/*
		 * A clean close: give streaming replicas what was published
		 * (bounded by the down timeout), so no flush is cut off.
		 */
		struct timespec until = deadline(c->cfg.down_timeout_ms);
		struct wal_pos pub;
		bool pending = true;

		wal_positions(c->wal, NULL, &pub, NULL);
		pthread_mutex_lock(&c->lock);
		while (pending) {
			pending = false;
			for (int i = 0; i < c->cfg.n_replicas; i++) {
				struct link *l = &c->links[i];

				if (l->state == LINK_STREAMING && l->flushed_lsn < pub.lsn) {
					pending = true;
					kick(l);
				}
			}
			if (pending) {
				c->waiters++;
				pending = pthread_cond_timedwait(&c->cond, &c->lock,
					&until) != ETIMEDOUT;
				c->waiters--;
			}
		}
		pthread_mutex_unlock(&c->lock);
	}
	atomic_store(&c->stopping, true);
	for (int i = 0; i < c->cfg.n_replicas; i++) {
		uint64_t one = 1;

		(void)!write(c->links[i].kick_fd, &one, sizeof(one));
	}
	for (int i = 0; i < c->cfg.n_replicas; i++) {
		pthread_join(c->links[i].thread, NULL);
		close(c->links[i].kick_fd);
		pthread_mutex_destroy(&c->links[i].io_lock);
	}
	rpma_mr_dereg(&c->src);
	rpma_peer_delete(&c->peer);
	free(c->links);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->release_lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
	*c_ptr = NULL;
}
