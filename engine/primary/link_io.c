/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_io.c -- a link's data path, under its io_lock: posting batches of
 * ring bytes (rpma_write, then rpma_flush over the same range) and reaping
 * their completions.  The link thread runs it (link.c), and so does an
 * appender waiting for durability (cluster.c), so a lone client needs no
 * hand-off to another thread.
 *
 * Below link.c: a failure here only closes the data path (io_ready false,
 * io_why says why) and wakes the link's thread, which takes the link down;
 * the link's state has that one writer.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "primary/primary.h"

void
link_note_waiting(struct link *l)
{
	uint64_t since = link_busy(l) ?
		l->inflight[l->oldest_seq % LINK_DEPTH].seen_ms : l->unsent_since_ms;

	atomic_store_explicit(&l->waiting_since_ms, since, memory_order_relaxed);
}

static void
io_fail(struct link *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* the data path is closed: its thread takes the link down */
static void
io_fail(struct link *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->io_why, sizeof(l->io_why), fmt, ap);
	va_end(ap);
	l->io_ready = false;
	link_kick(l);
}

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

uint64_t
link_piece_ops(uint64_t len)
{
	if (len <= LINK_WRITE_MAX)
		return 1;		/* one write-and-flush (or a bare flush) */
	return (len + LINK_WRITE_MAX - 1) / LINK_WRITE_MAX + 1;
}

uint64_t
link_batch_ops_max(uint64_t ring_size)
{
	/*
	 * Pieces: the range's cuts at LINK_FLUSH_MAX, plus one at the ring's
	 * end.  Each piece of p bytes costs at most p / W + 2 requests (its
	 * writes, rounded up, and its flush), and the pieces sum to at most
	 * the ring.
	 */
	uint64_t pieces = ring_size / LINK_FLUSH_MAX + 2;

	return ring_size / LINK_WRITE_MAX + 2 * pieces;
}

uint32_t
link_sq_depth(uint64_t ring_size)
{
	/* LINK_FLIGHT batches at once, and room for the core's own requests */
	uint64_t depth = LINK_FLIGHT * link_batch_ops_max(ring_size) + 8;

	if (depth < 4 * LINK_DEPTH + 8)
		depth = 4 * LINK_DEPTH + 8;
	return depth > UINT32_MAX ? UINT32_MAX : (uint32_t)depth;
}

/*
 * A counted write's completion context (a catch-up's, see delivered):
 * this bit, its batch's seq and its length; a flush's is seq + 1, far
 * below the bit.
 */
#define WRITE_TAG ((uint64_t)1 << 62)
#define WRITE_LEN_BITS 23		/* LINK_WRITE_MAX fits */
#define WRITE_SEQ_MASK ((WRITE_TAG >> WRITE_LEN_BITS) - 1)
_Static_assert(LINK_WRITE_MAX < (1u << WRITE_LEN_BITS), "a write's length fits");

static void *
write_ctx(uint64_t seq, uint64_t n)
{
	return (void *)(uintptr_t)(WRITE_TAG |
		((seq & WRITE_SEQ_MASK) << WRITE_LEN_BITS) | n);
}

/*
 * Write ring bytes [from, from + len) (no wrap inside), then flush them:
 * one post where it fits one write (one message on ofi, so the request
 * does not cost a send of its own), else the writes and then the flush.
 * During a catch-up each of those writes completes on its own, so that
 * the progress of a large batch shows before its flush.
 */
static int
post_piece(struct link *l, uint64_t from, uint64_t len, bool signal,
		uint64_t seq)
{
	int flags = signal ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
	void *ctx = signal ? (void *)(uintptr_t)(seq + 1) : NULL;
	size_t at = (size_t)(WAL_RING_OFF + from);
	bool counted = atomic_load_explicit(&l->count_writes, memory_order_relaxed);

	if (len > 0 && len <= LINK_WRITE_MAX)
		return rpma_ext_write_flush(l->conn, l->dst, at, l->c->src, at,
			(size_t)len, RPMA_FLUSH_TYPE_PERSISTENT, flags, ctx) ? -1 : 0;
	for (uint64_t done = 0; done < len;) {
		uint64_t n = len - done < LINK_WRITE_MAX ? len - done : LINK_WRITE_MAX;
		size_t off = at + (size_t)done;

		if (rpma_write(l->conn, l->dst, off, l->c->src, off, (size_t)n,
				counted ? RPMA_F_COMPLETION_ALWAYS :
				RPMA_F_COMPLETION_ON_ERROR,
				counted ? write_ctx(seq, n) : NULL))
			return -1;
		done += n;
	}
	return rpma_flush(l->conn, l->dst, at, (size_t)len,
		RPMA_FLUSH_TYPE_PERSISTENT, flags, ctx) ? -1 : 0;
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
	atomic_store_explicit(&l->batch_bytes, sp.left, memory_order_relaxed);
	if (!(more = link_split_next(&sp, &off, &len)))
		ret = post_piece(l, from->off, 0, true, l->next_seq);
	while (more && ret == 0) {
		uint64_t o = off, n = len;

		more = link_split_next(&sp, &off, &len);
		ret = post_piece(l, o, n, !more, l->next_seq);
	}
	if (ret) {
		io_fail(l, "cannot post a write: %s", rpma_ext_errormsg());
		return -1;
	}
	*b = (struct batch){ .seq = l->next_seq, .end = *pub,
		.seen_ms = l->unsent_since_ms, .posted_ns = clock_now_ns(),
		.bytes = atomic_load_explicit(&l->batch_bytes, memory_order_relaxed) };
	l->next_seq++;
	l->sent = *pub;
	l->unsent_since_ms = 0;
	link_count(&l->n.batches, 1);
	return 0;
}

/*
 * delivered has one writer (under io_lock) and readers that only load it:
 * a plain load and store, not a locked read-modify-write per batch
 */
static inline void
delivered_add(struct link *l, uint64_t n)
{
	atomic_store_explicit(&l->delivered, atomic_load_explicit(&l->delivered,
		memory_order_relaxed) + n, memory_order_relaxed);
}

/* a counted write completed: its bytes reached the replica */
static int
counted_write(struct link *l, uint64_t ctx)
{
	uint64_t seq = (ctx & ~WRITE_TAG) >> WRITE_LEN_BITS;
	uint64_t len = ctx & (((uint64_t)1 << WRITE_LEN_BITS) - 1);

	/* its batch is one in flight, not yet flushed */
	for (uint64_t s = l->oldest_seq; s != l->next_seq; s++) {
		struct batch *b = &l->inflight[s % LINK_DEPTH];

		if ((s & WRITE_SEQ_MASK) == seq && !b->done) {
			b->written += len;
			delivered_add(l, len);
			return 0;
		}
	}
	io_fail(l, "a write completed for no batch in flight");
	return -1;
}

/* completions: a batch's flush finished; move flushed over the done prefix */
static int
reap(struct link *l, bool *progress)
{
	struct ibv_wc wc[16];
	int n = 0, ret;
	uint64_t flushed = 0, done = 0, posted = 0;
	struct log_pos end;

	ret = rpma_cq_get_wc(l->cq, 16, wc, &n);
	if (ret == RPMA_E_NO_COMPLETION)
		return 0;
	if (ret) {
		io_fail(l, "completion queue: %s", rpma_ext_errormsg());
		return -1;
	}
	for (int i = 0; i < n; i++) {
		uint64_t seq = (uint64_t)(uintptr_t)wc[i].wr_id;

		if (wc[i].status == IBV_WC_SUCCESS && (seq & WRITE_TAG)) {
			if (counted_write(l, seq))
				return -1;
			continue;
		}
		if (wc[i].status != IBV_WC_SUCCESS || seq == 0 ||
		    seq - 1 < l->oldest_seq || seq - 1 >= l->next_seq) {
			io_fail(l, "a write or flush failed: %s",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
		l->inflight[(seq - 1) % LINK_DEPTH].done = true;
	}
	while (link_busy(l) && l->inflight[l->oldest_seq % LINK_DEPTH].done) {
		const struct batch *b = &l->inflight[l->oldest_seq % LINK_DEPTH];

		/* what its counted writes did not already count */
		delivered_add(l, b->bytes - (b->written < b->bytes ? b->written :
			b->bytes));
		end = l->inflight[l->oldest_seq % LINK_DEPTH].end;
		posted = l->inflight[l->oldest_seq % LINK_DEPTH].posted_ns;
		flushed = end.lsn;
		l->oldest_seq++;
		done++;
	}
	if (flushed) {
		uint64_t now = clock_now_ns(), rtt = now > posted ? now - posted : 0;
		uint64_t avg = atomic_load_explicit(&l->rtt_ns, memory_order_relaxed);

		/* one clock read per reap that moved: busy polling's yardstick */
		atomic_store_explicit(&l->rtt_ns, avg ? avg - avg / 8 + rtt / 8 : rtt,
			memory_order_relaxed);
		avg = atomic_load_explicit(&l->rtt_lo_ns, memory_order_relaxed);
		atomic_store_explicit(&l->rtt_lo_ns, avg == 0 || rtt < avg ? rtt :
			avg + (rtt - avg) / 64, memory_order_relaxed);
		link_count(&l->n.flushes, done);
		cluster_lock(l->c);
		l->flushed_lsn = flushed;
		l->flushed_pos = end;
		cluster_quorum_update(l->c);
		if (l->c->waiters)	/* a clean close waits for every replica */
			pthread_cond_broadcast(&l->c->cond);
		cluster_unlock(l->c);
		link_note_waiting(l);
		*progress = true;
	}
	return 0;
}

int
link_data_path(struct link *l, bool post, bool *progress)
{
	struct log_pos pub;

	if (!l->io_ready)
		return -1;
	/* nothing in flight, nothing to reap: on ofi a look is a syscall */
	if (link_busy(l) && reap(l, progress))
		return -1;
	if (!post)
		return 0;
	wal_positions(l->c->wal, NULL, &pub, NULL);
	if (pos_equal(&pub, &l->sent))
		return 0;
	if (l->unsent_since_ms == 0) {
		/* new bytes to send: one clock read per batch, not per record */
		l->unsent_since_ms = clock_now_ms();
		link_note_waiting(l);
	}
	/*
	 * Group commit: while LINK_FLIGHT batches travel, what is published
	 * meanwhile waits to ride the next one, posted by whoever reaps.
	 */
	if (l->next_seq - l->oldest_seq >= LINK_FLIGHT)
		return 0;
	if (post_batch(l, &pub))
		return -1;
	link_note_waiting(l);
	*progress = true;
	return 0;
}

uint64_t
cluster_poll_budget_ns(struct cluster *c, bool appender)
{
	uint64_t rtt = 0;

	if (c->poll_cap_ns == 0 || !c->poll_auto)
		return c->poll_cap_ns;
	/* more waiters than CPUs: polling takes the CPU from the work */
	if (atomic_load_explicit(&c->n_waiting, memory_order_relaxed) >= c->ncpu)
		return 0;
	for (int i = 0; i < c->n_links; i++) {
		uint64_t r = atomic_load_explicit(&c->links[i].rtt_ns,
			memory_order_relaxed);

		if (r && (rtt == 0 || r < rtt))
			rtt = r;
	}
	if (rtt == 0)
		return c->poll_cap_ns;	/* nothing measured yet */
	/*
	 * Longer than the bound: an appender still polls the bound (its
	 * flush may end within it, and a wake-up through the link thread
	 * costs more than the poll here); a link thread does not.
	 */
	if (rtt > c->poll_cap_ns)
		return appender ? c->poll_cap_ns : 0;
	return 2 * rtt < c->poll_cap_ns ? 2 * rtt : c->poll_cap_ns;
}

void
link_help(struct link *l, bool post)
{
	bool progress = false;

	if (link_io_trylock(l) != 0)
		return;		/* its thread (or another appender) is at it */
	if (l->io_ready)
		(void)link_data_path(l, post, &progress);
	link_io_unlock(l);
}

bool
link_lead_step(struct link *l, struct rpma_cq **cq)
{
	bool progress = false, busy;

	if (link_io_trylock(l) != 0)
		return true;	/* its thread or an appender is at it */
	busy = l->io_ready && link_data_path(l, true, &progress) == 0 &&
		link_busy(l);
	if (busy && cq) {
		atomic_fetch_add(&l->cq_sleepers, 1);
		*cq = l->cq;
	}
	link_io_unlock(l);
	return busy;
}

/*
 * A batch above this is still being sent while the leader waits: on
 * libfabric's tcp only a look at the completions sends its rest, so the
 * leader looks on (1 MiB records: 1.7x the floor with paced looks, 1.2x
 * looking on).
 */
#define LOOK_QUIET_BYTES_MAX (64u << 10)

uint64_t
cluster_first_look_ns(struct cluster *c, uint64_t posted_ns)
{
	uint64_t lo = 0;

	for (int i = 0; i < c->n_links; i++) {
		const struct link *l = &c->links[i];
		uint64_t r = atomic_load_explicit(&l->rtt_lo_ns, memory_order_relaxed);

		if (atomic_load_explicit(&l->batch_bytes, memory_order_relaxed) >
		    LOOK_QUIET_BYTES_MAX)
			return 0;
		if (r && (lo == 0 || r < lo))
			lo = r;
	}
	return posted_ns + lo;
}
