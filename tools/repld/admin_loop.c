/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_loop.c -- the admin socket's loop: one thread (epoll) serves every
 * connection that only appends, in rolling rounds (admin.c says how the
 * server's threads share the work; design.md section 4.2 the rounds).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "admin_conn.h"
#include "reader.h"

static void
loop_drop(struct admin *a, int i)
{
	struct conn *c = a->lc[i];

	(void)epoll_ctl(a->ep, EPOLL_CTL_DEL, c->fd, NULL);
	a->lc[i] = a->lc[--a->nlc];
}

/* read what is there, without blocking */
static void
loop_read(struct conn *c)
{
	ssize_t r;

	if (c->eof || (r = conn_recv(c, MSG_DONTWAIT)) == -2)
		return;		/* gone, or a whole request waits for a later round */
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
		c->eof = true;
}

/*
 * The round's pass through the gate, once for all its appends: 1 in, 0
 * refused (c has the answer), -1 not now (a change is under way while the
 * old round waits: its answers come first, then a later round enters).
 */
static int
loop_gate(struct conn *c)
{
	struct admin *a = c->a;
	bool changing;
	int err = 0;

	if (a->round)
		return 1;
	if (a->old) {
		/* never block while holding the old round: the change waits for
		 * its answers, which only this thread gives */
		if ((a->round = node_try_enter(a->node, &changing)) == NULL)
			return -1;
	} else if ((a->round = node_enter(a->node, &err)) == NULL) {
		metrics_append_refused();
		conn_reply_error(c, NULL, err, admin_gate_message(err));	/* nothing pending */
		return 0;
	}
	a->round_since_ms = (uint64_t)admin_time_ms();
	return 1;
}

/*
 * Append the whole APPENDs buffered; stop at anything else (a thread
 * serves it, after the answers of these) and at PENDING_MAX.
 * true: a whole request is left that only a later round may take.
 */
static bool
loop_parse(struct conn *c)
{
	char why[256];
	size_t off = conn_start(c);
	bool left = false;

	while (!c->handoff) {
		struct admin_req req;
		struct iovec iov[2];
		size_t used;
		enum admin_parse p;
		int g, niov;

		/* answers to hold, or refusals to send first: a later round */
		if (c->npend == PENDING_MAX || c->out_len > OUT_CAP / 2) {
			left = c->have > off;
			break;
		}
		p = conn_parse(c, off, &req, &used, iov, &niov, why, sizeof(why));
		if (p == ADMIN_PARSE_MORE)
			break;
		if (p != ADMIN_PARSE_OK || req.verb != ADMIN_APPEND) {
			c->handoff = true;	/* left in the buffer for the thread */
			break;
		}
		if ((g = loop_gate(c)) < 0) {
			left = true;
			break;
		}
		if (g > 0)
			conn_append(c, &req, iov, niov);
		off += used;
	}
	conn_consumed(c, off);
	return left;
}

/* send the answers without blocking; what does not fit goes to a thread */
static void
loop_flush(struct conn *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t n = send(c->fd, c->out + off, c->out_len - off,
			MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			c->handoff = true;	/* its thread blocks, bounded */
			break;
		}
		if (n <= 0) {
			c->eof = true;		/* it went: its answers with it */
			off = c->out_len;
			break;
		}
		off += (size_t)n;
	}
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
}

/* the appending round becomes the one waited on: every append pending */
static void
loop_shift(struct admin *a)
{
	a->old = a->round;
	a->old_since_ms = a->round_since_ms;
	a->old_last = 0;
	a->round = NULL;
	a->looked = false;
	for (int i = 0; i < a->nlc; i++) {
		struct conn *c = a->lc[i];
		uint64_t l = conn_pend_last(c);

		c->nold = c->npend;
		c->repl = NULL;
		if (l > a->old_last)
			a->old_last = l;
	}
}

/*
 * One wait (a slice of it) for the old round; once it ends, its answers
 * and its pass through the gate.  false: still waiting.
 */
static bool
loop_wait_old(struct admin *a, bool quit)
{
	int wret = 0;

	if (a->old_last) {
		int64_t left = APPEND_WAIT_MS - (admin_time_ms() - (int64_t)a->old_since_ms);

		wret = repl_wait_durable(a->old, a->old_last, left <= 0 ? 0 :
			quit || left < LOOP_SLICE_MS ? (int)left : LOOP_SLICE_MS);
		/* not yet: look at the clients, then wait again */
		if (wret == REPL_E_TIMEDOUT && left > LOOP_SLICE_MS && !quit)
			return false;
	}
	node_leave(a->node);
	if (a->old_last && wret == 0 && atomic_load_explicit(&a->n_followers,
			memory_order_relaxed))
		reader_wake_all(a);
	a->old = NULL;
	a->last_round = 0;
	a->last_conns = 0;
	for (int i = 0; i < a->nlc; i++) {
		struct conn *c = a->lc[i];

		a->last_round += c->nold;
		if (c->nold) {
			a->last_conns++;
			conn_answer_first(c, c->nold, wret);
		}
		c->nold = 0;
	}
	return true;
}

/*
 * Rounds roll: the old round's wait covers its appends while the next
 * round takes what the clients answered before sent meanwhile, so one
 * flush travels while the next batch forms (and rides the flush after,
 * posted as soon as this one completes).  After a round of one client's
 * several appends, the next first looks once more and takes what arrived
 * into itself, then waits: one client refilling its window request by
 * request so keeps it in one flush, not two halves.  After a round of one
 * append it waits at once: a lone client pays no extra pass.
 * quit: every round is waited for and answered.
 */
static void
loop_settle(struct admin *a, bool quit)
{
	for (;;) {
		if (a->old == NULL) {
			if (a->round == NULL)
				break;
			if (!quit && a->last_round > 1 && a->last_conns == 1 &&
			    !a->looked) {
				a->looked = true;
				break;
			}
			loop_shift(a);
			/* several clients: what they send by the next look rolls */
			if (!quit && a->last_conns > 1)
				break;
		}
		if (!loop_wait_old(a, quit))
			break;
		if (a->round == NULL)
			break;
		/* appended while the old one travelled: waited on after a look */
		loop_shift(a);
		if (!quit)
			break;
	}
	for (int i = 0; i < a->nlc; i++)
		if (a->lc[i]->out_len)
			loop_flush(a->lc[i]);
}

void *
loop_main(void *arg)
{
	struct admin *a = arg;
	struct epoll_event ev[LOOP_EVENTS];
	bool left = false;

	(void)pthread_setname_np(pthread_self(), "repld-loop");
	for (;;) {
		bool quit = atomic_load(&a->quit);
		bool busy = a->old != NULL || a->round != NULL;
		int n = epoll_wait(a->ep, ev, LOOP_EVENTS,
			quit || busy || left ? 0 : 100);

		/* the listener's new ones, before any event of theirs is read */
		pthread_mutex_lock(&a->lock);
		while (a->njoining > 0)
			a->lc[a->nlc++] = a->joining[--a->njoining];
		pthread_mutex_unlock(&a->lock);
		for (int i = 0; i < n; i++)
			loop_read(ev[i].data.ptr);
		left = false;
		for (int i = 0; i < a->nlc && !quit; i++) {
			struct conn *c = a->lc[i];

			/*
			 * A read that filled all the room it had leaves more
			 * behind (a stream of large records): read on into this
			 * round, not one record a round with a wait between.
			 */
			for (int k = 0; c->have; k++) {
				bool more = c->filled;

				c->filled = false;
				if (loop_parse(c)) {
					left = true;
					break;
				}
				if (!more || k == LOOP_REREADS || c->handoff || c->eof)
					break;
				loop_read(c);
			}
		}
		loop_settle(a, quit);
		/* a connection leaves only with nothing pending */
		for (int i = a->nlc - 1; i >= 0; i--) {
			struct conn *c = a->lc[i];

			if (c->npend)
				continue;
			if (quit || c->eof) {
				loop_drop(a, i);
				(void)conn_out_flush(c);	/* bounded: SEND_TIMEOUT_S */
				conn_free(c);
			} else if (c->handoff) {
				loop_drop(a, i);
				c->handoff = false;
				if (!conn_thread(c))
					conn_free(c);
			}
		}
		if (quit)
			break;
	}
	return NULL;
}

/*
 * The listener's: c joins the loop; false: it cannot.  Added and queued
 * under the lock the loop takes before it reads its events, so an event
 * of c is never read before c is in the loop's list.
 */
bool
loop_join(struct admin *a, struct conn *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	bool ok;

	c->in_loop = true;
	pthread_mutex_lock(&a->lock);
	if ((ok = epoll_ctl(a->ep, EPOLL_CTL_ADD, c->fd, &ev) == 0))
		a->joining[a->njoining++] = c;
	pthread_mutex_unlock(&a->lock);
	if (!ok)
		c->in_loop = false;	/* never the loop's: still ours alone */
	return ok;
}

