/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reader.c -- READ FROM [follow]: a connection's thread streams the
 * primary's committed records (admin_proto.h), and its position holds the
 * log's retention (retention.h) while it reads.
 *
 * Each round passes the node's gate only to look at the log: the commit
 * LSN, then the records up to it copied into the reader's buffer (at most
 * READ_BATCH bytes, so the log's lock is held briefly); the socket is
 * written outside the gate, so a slow reader holds back neither appends
 * nor a change of state.  A follower that has read everything committed
 * sleeps in poll() on its socket and an eventfd that the appenders' rounds
 * write once durable (reader_wake), so it costs nothing while it waits
 * and a write per round while it follows.
 *
 * What the reader has been sent is its own: its slot's position moves
 * past a batch once the batch is copied.  A batch copied after its slot
 * was lost (retention_reader_advance) may have skipped released records:
 * it is not sent.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "admin_conn.h"
#include "admin_status.h"
#include "json_out.h"
#include "reader.h"

#define READ_BATCH (256u << 10)		/* record bytes copied per round */
#define READ_HDR_MAX 64			/* {"ok":true,"lsn":N,"len":L} LF */
#define READ_BUF (READ_BATCH + ADMIN_RECORD_MAX + 2 * READ_HDR_MAX)
#define READ_SEND_TIMEOUT_S 30		/* a reader that stops reading */
#define READ_IDLE_MS 1000		/* a follower looks again at least this often */

enum { COPY_FULL = 1, COPY_PAST_COMMIT = 2, COPY_TOO_BIG = 3 };

struct copy {
	char *buf;
	size_t len;
	uint64_t commit;	/* copy no record past it */
	uint64_t last;		/* the last LSN copied (0: none) */
	size_t too_big;		/* the record that cannot be sent */
};

/* repl_iterate's callback: a record's header line, then its bytes */
static int
copy_record(void *arg, uint64_t lsn, const void *data, size_t len)
{
	struct copy *cp = arg;
	int n;

	if (lsn > cp->commit)
		return COPY_PAST_COMMIT;
	if (len > ADMIN_RECORD_MAX) {
		cp->too_big = len;
		cp->last = lsn;
		return COPY_TOO_BIG;
	}
	if (cp->len >= READ_BATCH)
		return COPY_FULL;
	n = snprintf(cp->buf + cp->len, READ_HDR_MAX,
		"{\"ok\":true,\"lsn\":%" PRIu64 ",\"len\":%zu}\n", lsn, len);
	memcpy(cp->buf + cp->len + (size_t)n, data, len);
	cp->len += (size_t)n + len;
	cp->last = lsn;
	return 0;
}

static int
send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* a reply line that also says where a later READ goes on */
static void
reply(struct conn *c, json_t *o, uint64_t next)
{
	if (o)
		json_object_set_new(o, "next", jo_u64(next));
	/* room for any reply; a client that went takes no more */
	if (OUT_CAP - c->out_len < ADMIN_REPLY_MAX && conn_out_flush(c) != 0) {
		json_decref(o);
		return;
	}
	c->out_len += jo_line(o, c->out + c->out_len, ADMIN_REPLY_MAX);
}

static void
reply_error(struct conn *c, const char *name, int code, const char *msg,
		uint64_t next)
{
	reply(c, admin_error_where(c->a->node, admin_error_json(name, code, msg)),
		next);
}

/* ---- the followers' wake-ups ---- */

static int
follower_add(struct admin *a, int efd)
{
	int ret = -1;

	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < RETENTION_READERS_MAX; i++) {
		if (a->follower_fd[i] < 0) {
			a->follower_fd[i] = efd;
			atomic_fetch_add(&a->n_followers, 1);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

static void
follower_remove(struct admin *a, int efd)
{
	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < RETENTION_READERS_MAX; i++) {
		if (a->follower_fd[i] == efd) {
			a->follower_fd[i] = -1;
			atomic_fetch_sub(&a->n_followers, 1);
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

void
reader_wake_all(struct admin *a)
{
	uint64_t one = 1;

	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < RETENTION_READERS_MAX; i++)
		if (a->follower_fd[i] >= 0 &&
		    write(a->follower_fd[i], &one, sizeof(one)) < 0) {
			/* already readable: the follower will look */
		}
	pthread_mutex_unlock(&a->lock);
}

/*
 * A follower that has read everything committed: wait for a round to be
 * durable, the client to speak or go, or READ_IDLE_MS.  false: the stream
 * ends (the client sent a request or went, or the daemon stops).
 */
static bool
follow_wait(struct conn *c, int efd)
{
	struct pollfd p[2] = {
		{ .fd = c->fd, .events = POLLIN | POLLRDHUP },
		{ .fd = efd, .events = POLLIN },
	};
	int n;

	do
		n = poll(p, 2, READ_IDLE_MS);
	while (n < 0 && errno == EINTR);
	if (atomic_load(&c->a->quit))
		return false;
	return !(p[0].revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

/* ---- the stream ---- */

/* the first look: where the reader starts; 0, or an error replied */
static int
start(struct conn *c, const struct admin_req *req, int *slot, uint64_t *next)
{
	struct node *n = c->a->node;
	struct repl_status st;
	struct repl *repl;
	char msg[256];
	uint64_t id;
	int err = 0;

	if ((repl = node_enter(n, &err)) == NULL) {
		reply_error(c, NULL, err,
			err == NODE_E_WRONG_ROLE ? "READ: this node is not the "
			"primary: read on the primary" : admin_gate_message(err),
			req->from);
		return -1;
	}
	if (retention_reader_open(&n->retention, req->from, slot, &id, msg,
			sizeof(msg)) != 0) {
		node_leave(n);
		reply_error(c, "BUSY", 0, msg, req->from);
		return -1;
	}
	/* from now on nothing it reads is released: is it all still there? */
	if ((err = repl_status(repl, &st)) != 0) {
		node_leave(n);
		retention_reader_close(&n->retention, *slot);
		reply_error(c, NULL, err, NULL, req->from);
		return -1;
	}
	node_leave(n);
	*next = req->from;
	if (req->from == 0 || req->from < st.first_lsn) {
		if (req->from != 0) {
			snprintf(msg, sizeof(msg), "READ: the records before LSN %" PRIu64
				" were released (retention); read from %" PRIu64 " or later",
				st.first_lsn, st.first_lsn);
			retention_reader_close(&n->retention, *slot);
			reply_error(c, "RELEASED", 0, msg, st.first_lsn);
			return -1;
		}
		/* 0: the oldest kept */
		*next = st.first_lsn ? st.first_lsn : 1;
		retention_reader_advance(&n->retention, *slot, *next);
	}
	reply(c, json_pack("{s:b, s:o, s:o, s:o, s:b}", "ok", true,
		"reader", jo_u64(id), "first_lsn", jo_u64(st.first_lsn),
		"commit_lsn", jo_u64(st.commit_lsn), "follow", req->follow), *next);
	return 0;
}

/*
 * One round: copy what is committed from *next on into buf (inside the
 * gate).  The number of bytes to send, 0 when nothing new is committed,
 * or -1 with an error replied into c->out.
 */
static ssize_t
round_copy(struct conn *c, int slot, char *buf, uint64_t *next)
{
	struct node *n = c->a->node;
	struct copy cp = { .buf = buf };
	struct repl_status st;
	struct repl *repl;
	char msg[200];
	int err = 0, ret;

	if ((repl = node_enter(n, &err)) == NULL) {
		reply_error(c, NULL, err,
			err == NODE_E_WRONG_ROLE ? "READ: this node is no longer the "
			"primary: read on the new one from \"next\"" :
			admin_gate_message(err), *next);
		return -1;
	}
	if ((ret = repl_status(repl, &st)) != 0 || st.commit_lsn < *next) {
		node_leave(n);
		if (ret == 0)
			return 0;
		reply_error(c, NULL, ret, NULL, *next);
		return -1;
	}
	cp.commit = st.commit_lsn;
	ret = repl_iterate(repl, *next, copy_record, &cp);
	node_leave(n);
	if (ret == COPY_TOO_BIG) {
		snprintf(msg, sizeof(msg), "READ: record %" PRIu64 " has %zu bytes, "
			"more than a reply carries (%u)", cp.last, cp.too_big,
			ADMIN_RECORD_MAX);
		reply_error(c, "BAD_REQUEST", 0, msg, cp.last);
		return -1;
	}
	if (ret < 0) {
		reply_error(c, NULL, ret, NULL, *next);
		return -1;
	}
	/* the whole log up to the commit LSN was seen (epoch starts skipped) */
	*next = ret == COPY_FULL ? cp.last + 1 : st.commit_lsn + 1;
	if (!retention_reader_advance(&n->retention, slot, *next)) {
		snprintf(msg, sizeof(msg), "READ: this reader fell more than "
			"retention.reader_max_lag (%" PRIu64 " bytes) behind the newest "
			"record, and records it had not read may have been released",
			n->conf.retention.reader_max_lag);
		reply_error(c, "READER_LOST", 0, msg, cp.last ? cp.last : *next);
		return -1;
	}
	return (ssize_t)cp.len;
}

void
reader_serve(struct conn *c, const struct admin_req *req)
{
	struct timeval send_timeout = { .tv_sec = READ_SEND_TIMEOUT_S };
	struct node *n = c->a->node;
	char *buf = malloc(READ_BUF);
	int slot, efd = -1;
	uint64_t next;
	bool open = true;

	if (buf == NULL) {
		conn_reply_error(c, "BUSY", 0, "READ: out of memory");
		return;
	}
	if (req->follow && ((efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    follower_add(c->a, efd) != 0)) {
		if (efd >= 0)
			close(efd);
		free(buf);
		conn_reply_error(c, "BUSY", 0, "READ: no room for another follower");
		return;
	}
	if (start(c, req, &slot, &next) != 0)
		goto out;
	/* a reader reads in bursts: more slack than an appender gets */
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout,
		sizeof(send_timeout));
	for (;;) {
		ssize_t len;
		uint64_t drained;

		if (conn_out_flush(c) != 0) {
			open = false;
			break;
		}
		/* wake-ups before the look: one after it is kept for the wait */
		if (efd >= 0 && read(efd, &drained, sizeof(drained)) < 0) {
			/* none pending */
		}
		if ((len = round_copy(c, slot, buf, &next)) < 0)
			break;
		if (len > 0) {
			if (send_all(c->fd, buf, (size_t)len) != 0) {
				open = false;
				break;
			}
			continue;
		}
		if (!req->follow || !follow_wait(c, efd)) {
			reply(c, json_pack("{s:b, s:b}", "ok", true, "end", true), next);
			break;
		}
	}
	retention_reader_close(&n->retention, slot);
	if (open)
		(void)conn_out_flush(c);
	{
		struct timeval t = { .tv_sec = SEND_TIMEOUT_S };

		(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof(t));
	}
out:
	if (efd >= 0) {
		follower_remove(c->a, efd);
		close(efd);
	}
	free(buf);
}
