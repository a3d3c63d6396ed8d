/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin.c -- the admin socket's server (see admin.h, admin_proto.h): the
 * listener, a connection's requests and replies, and the thread of a
 * connection that does more than append; the loop is admin_loop.c, and
 * what both share is admin_conn.h.
 *
 * A client's appends are batched: every APPEND already received is
 * appended, then one repl_wait_durable covers them all before the replies
 * go out, in order.  The wait happens before the connection is read
 * again, so a client never waits for an acknowledgement that is only held
 * back by its own unsent bytes.
 *
 * Three threads' worth of roles:
 *  - the listener accepts, and looks (MSG_PEEK) at a new connection's
 *    first bytes: one that begins with APPEND joins the loop, any other
 *    gets a thread of its own;
 *  - the loop (one thread, epoll) serves every appending connection at
 *    once: what all of them sent is appended as one round, one wait
 *    covers the round, then its answers go out.  Rounds roll: while one
 *    round's flush travels, the next takes what the clients answered
 *    before send meanwhile, and is waited on after it, so the replica's
 *    flushes follow each other instead of waiting for the loop.  Clients
 *    that each keep one append in flight so share one wake-up and one
 *    flush per round instead of a thread's two wake-ups per record.  It
 *    never blocks on one client: a connection that sends another verb, or
 *    whose answers do not fit its socket, is handed to a thread of its own
 *    after its answers;
 *  - a connection's thread serves its requests in order, blocking (a
 *    control verb may take seconds: a promotion, a verification).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "admin.h"
#include "admin_conn.h"
#include "admin_ha.h"
#include "admin_proto.h"
#include "admin_req.h"
#include "admin_status.h"
#include "coordinator.h"
#include "json_out.h"
#include "log.h"
#include "reader.h"

int64_t
admin_time_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- replies ---- */

int
conn_out_flush(struct conn *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t n = write(c->fd, c->out + off, c->out_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;	/* the client went: its replies with it */
		off += (size_t)n;
	}
	c->out_len = 0;
	return 0;
}

/* a reply (taken; NULL when it could not be made) after those waiting */
static void
out_line(struct conn *c, json_t *reply)
{
	/* room for any reply; a client that went takes no more */
	if (OUT_CAP - c->out_len < ADMIN_REPLY_MAX && conn_out_flush(c) != 0) {
		json_decref(reply);
		return;
	}
	c->out_len += jo_line(reply, c->out + c->out_len, ADMIN_REPLY_MAX);
}

/*
 * An append's acknowledgement, the line jo_line makes of {"ok":true,
 * "lsn":N}, written here: no allocation per answer
 */
static void
out_ack(struct conn *c, uint64_t lsn)
{
	if (lsn > INT64_MAX) {
		out_line(c, json_pack("{s:b, s:o}", "ok", true, "lsn", jo_u64(lsn)));
		return;
	}
	if (OUT_CAP - c->out_len < ADMIN_REPLY_MAX && conn_out_flush(c) != 0)
		return;
	c->out_len += (size_t)snprintf(c->out + c->out_len, OUT_CAP - c->out_len,
		"{\"ok\":true,\"lsn\":%" PRIu64 "}\n", lsn);
}

/* an error reply: a protocol name (code 0) or a REPL_E_* code */
void
conn_reply_error(struct conn *c, const char *name, int code, const char *message)
{
	out_line(c, admin_error_where(c->a->node,
		admin_error_json(name, code, message)));
}

static void
reply_ok_msg(struct conn *c, const char *message)
{
	out_line(c, json_pack("{s:b, s:o}", "ok", true, "message", jo_str(message)));
}

const char *
admin_gate_message(int err)
{
	if (err == NODE_E_STOPPING)
		return "the daemon is stopping: nothing more is appended";
	if (err == NODE_E_WRONG_ROLE)
		return "this node is not the primary: append on the primary";
	if (err == NODE_E_REOPENING)
		return "the primary's log is closed: a membership change failed and "
			"it is reopening the log under its old membership (replctl "
			"status shows its attempts): retry";
	return NULL;	/* repl_strerror's */
}

/* ---- appends ---- */

/* the last LSN of the appends waiting for an answer (0: none) */
uint64_t
conn_pend_last(const struct conn *c)
{
	uint64_t last = 0;

	for (int i = 0; i < c->npend; i++)
		if (c->pend[i].err == 0 && c->pend[i].lsn > last)
			last = c->pend[i].lsn;
	return last;
}

/* the replies of the first n appends waiting, in order, after a wait's outcome */
void
conn_answer_first(struct conn *c, int n, int wret)
{
	for (int i = 0; i < n; i++) {
		int err = c->pend[i].err ? c->pend[i].err : wret;

		metrics_append_answered(c->pend[i].received_ns, c->pend[i].bytes, err);
		if (err)
			conn_reply_error(c, NULL, err, NULL);
		else
			out_ack(c, c->pend[i].lsn);
	}
	memmove(c->pend, c->pend + n, (size_t)(c->npend - n) * sizeof(c->pend[0]));
	c->npend -= n;
}

static void
answer(struct conn *c, int wret)
{
	conn_answer_first(c, c->npend, wret);
}

/* a thread's: one wait for everything appended so far, then the replies */
static void
settle(struct conn *c)
{
	uint64_t last;
	int wret = 0;

	if (c->npend == 0)
		return;
	if ((last = conn_pend_last(c)))
		wret = repl_wait_durable(c->repl, last, APPEND_WAIT_MS);
	node_leave(c->a->node);
	if (last && wret == 0 && atomic_load_explicit(&c->a->n_followers,
			memory_order_relaxed))
		reader_wake_all(c->a);
	c->repl = NULL;
	answer(c, wret);
}

/* ---- a connection's requests ---- */

ssize_t
conn_recv(struct conn *c, int flags)
{
	size_t need = c->rec_len - c->rec_have;
	struct iovec iov[2];
	struct msghdr m = { .msg_iov = iov };
	ssize_t r;

	/* a large record's rest first, then whatever follows it, in one call */
	if (need)
		iov[m.msg_iovlen++] = (struct iovec){ c->rec + c->rec_have, need };
	if (c->have < IN_CAP)
		iov[m.msg_iovlen++] = (struct iovec){ c->in + c->have, IN_CAP - c->have };
	if (m.msg_iovlen == 0)
		return -2;
	c->filled = false;
	if ((r = recvmsg(c->fd, &m, flags)) <= 0)
		return r;
	c->filled = (size_t)r == need + (m.msg_iovlen > (need > 0) ? IN_CAP - c->have : 0);
	if ((size_t)r <= need) {
		c->rec_have += (size_t)r;
	} else {
		c->rec_have += need;
		c->have += (size_t)r - need;
	}
	return r;
}

/*
 * A record too large to end inside in from where its line begins: the
 * rest goes into rec, sized to it (kept for the next one: a stream of
 * large records allocates once).  false: no memory (the caller refuses).
 */
static bool
big_begin(struct conn *c, size_t off, const struct admin_req *req)
{
	size_t here = c->have - off - req->head;
	size_t rest = req->len - here;

	if (c->rec_cap < rest) {
		/* nothing in it to keep: no realloc's copy */
		free(c->rec);
		c->rec_cap = 0;
		if ((c->rec = malloc(rest)) == NULL)
			return false;
		c->rec_cap = rest;
	}
	c->big_at = off;
	c->big_end = c->have;
	c->big_head = req->head;
	c->big_client_id = req->client_id;
	c->rec_len = rest;
	c->rec_have = 0;
	return true;
}

enum admin_parse
conn_parse(struct conn *c, size_t off, struct admin_req *req, size_t *used,
		struct iovec iov[2], int *niov, char *why, size_t whylen)
{
	enum admin_parse p;

	*niov = 0;
	if (c->rec_len && off == c->big_at) {
		*used = 0;
		if (c->rec_have < c->rec_len)
			return ADMIN_PARSE_MORE;
		memset(req, 0, sizeof(*req));
		req->verb = ADMIN_APPEND;
		req->client_id = c->big_client_id;
		req->len = c->big_end - c->big_at - c->big_head + c->rec_len;
		if (c->big_end > c->big_at + c->big_head)
			iov[(*niov)++] = (struct iovec){ c->in + c->big_at + c->big_head,
				c->big_end - c->big_at - c->big_head };
		iov[(*niov)++] = (struct iovec){ c->rec, c->rec_len };
		*used = c->big_end - c->big_at;
		return ADMIN_PARSE_OK;	/* served once parsed past (conn_consumed) */
	}
	p = admin_req_parse(c->in + off, c->have - off, req, used, why, whylen);
	if (p == ADMIN_PARSE_OK && req->verb == ADMIN_APPEND) {
		iov[0] = (struct iovec){ (void *)req->data, req->len };
		*niov = 1;
	} else if (p == ADMIN_PARSE_MORE && req->head &&
		   off + req->head + req->len > IN_CAP && !big_begin(c, off, req)) {
		snprintf(why, whylen, "APPEND: no memory for a record of %zu "
			"bytes", req->len);
		return ADMIN_PARSE_FATAL;
	}
	return p;
}

void
conn_consumed(struct conn *c, size_t off)
{
	/* parsed past the large record: it was served, rec is free */
	if (c->rec_len && off > c->big_at)
		c->rec_len = c->rec_have = 0;
	/* one still being received stays where it is: its bytes never move */
	if (c->rec_len || off == 0)
		return;
	memmove(c->in, c->in + off, c->have - off);
	c->have -= off;
}

void
conn_append(struct conn *c, const struct admin_req *req, const struct iovec *iov,
		int niov)
{
	uint64_t received_ns = metrics_now_ns();
	struct pending *p;
	int err = 0;

	/* a loop's connection shares its round's pass (loop_gate) */
	if (c->in_loop)
		c->repl = c->a->round;
	if (c->repl == NULL && (c->repl = node_enter(c->a->node, &err)) == NULL) {
		metrics_append_refused();
		conn_reply_error(c, NULL, err, admin_gate_message(err));
		return;
	}
	p = &c->pend[c->npend++];
	p->lsn = 0;
	p->received_ns = received_ns;
	p->bytes = req->len;
	/*
	 * The log was full for the record before (after full_timeout_ms):
	 * the rest of the batch fails at once rather than each waiting as
	 * long, which would keep every answer from the client meanwhile.
	 */
	if (c->npend > 1 && p[-1].err == REPL_E_FULL)
		p->err = REPL_E_FULL;
	else
		p->err = repl_appendv(c->repl, iov, niov, req->client_id, &p->lsn);
	if (c->npend == PENDING_MAX && !c->in_loop)
		settle(c);	/* the loop stops reading it instead */
}

/* ---- the other requests ---- */

static void
change_reply(struct conn *c, int ret, const char *msg)
{
	if (ret == 0)
		reply_ok_msg(c, msg);
	else
		conn_reply_error(c, NULL, ret, msg);
}

/*
 * A change asked by a client that has closed its connection since (it
 * timed out while this daemon was stopped or busy, and told its user so)
 * is not made: nobody would hear its answer.  A client that only shut
 * down its sending side (socat, nc -U at the end of their input) still
 * reads: on a UNIX socket POLLHUP comes only once the peer closed both.
 */
static bool
asker_gone(struct conn *c, const struct admin_req *req)
{
	struct pollfd p = { .fd = c->fd };

	if (poll(&p, 1, 0) == 1 && (p.revents & POLLHUP)) {
		log_warning("admin: %s from a client that hung up before it was "
			"served: not done", admin_verb_name(req->verb));
		return true;
	}
	return false;
}

static void
serve(struct conn *c, const struct admin_req *req)
{
	struct node *n = c->a->node;
	char msg[640] = "";

	switch (req->verb) {
	case ADMIN_PROMOTE:
	case ADMIN_FENCE:
	case ADMIN_ADD:
	case ADMIN_REMOVE:
	case ADMIN_RELOAD:
	case ADMIN_SWITCHOVER:
	case ADMIN_FAILOVER:
	case ADMIN_MAINTENANCE:
		if (asker_gone(c, req))
			return;
		break;
	default:
		break;
	}
	switch (req->verb) {
	case ADMIN_STATUS:
		out_line(c, admin_status_json(n));
		return;
	case ADMIN_VERIFY:
		out_line(c, admin_verify_json(n, req->from, req->to));
		return;
	case ADMIN_PROMOTE:
		change_reply(c, node_promote(n, req->force, false, msg, sizeof(msg)), msg);
		return;
	case ADMIN_FENCE:
		change_reply(c, node_fence(n, msg, sizeof(msg)), msg);
		return;
	case ADMIN_ADD:
		change_reply(c, node_add(n, req->host, req->port, req->quorum, msg,
			sizeof(msg)), msg);
		return;
	case ADMIN_REMOVE:
		change_reply(c, node_remove(n, req->host, req->port, req->quorum,
			msg, sizeof(msg)), msg);
		return;
	case ADMIN_RELOAD:
		change_reply(c, node_reload(n, msg, sizeof(msg)), msg);
		return;
	case ADMIN_RELEASE:
		if (node_role(n) != NODE_PRIMARY)
			conn_reply_error(c, NULL, NODE_E_WRONG_ROLE, "RELEASE: this node "
				"is not the primary");
		else if (retention_checkpoint(&n->retention, req->lsn, msg,
				sizeof(msg)) != 0)
			conn_reply_error(c, "BAD_REQUEST", 0, msg);
		else
			reply_ok_msg(c, msg);
		return;
	case ADMIN_READ:
		reader_serve(c, req);
		return;
	case ADMIN_SWITCHOVER:
	case ADMIN_FAILOVER: {
		struct coord_answer a;

		coordinator_switchover(atomic_load(&n->coord), req->node_id,
			req->verb == ADMIN_FAILOVER, &a);
		if (a.error != NULL)
			conn_reply_error(c, a.error, 0, a.message);
		else
			out_line(c, json_pack("{s:b, s:I, s:I, s:o, s:s}", "ok", true,
				"from", (json_int_t)a.from, "to", (json_int_t)a.to,
				"epoch", jo_u64(a.epoch), "message", a.message));
		return;
	}
	case ADMIN_MAINTENANCE:
		out_line(c, admin_maintenance_json(atomic_load(&n->coord),
			req->maintenance_on, req->reason));
		return;
	case ADMIN_HISTORY:
		out_line(c, admin_history_json(atomic_load(&n->coord)));
		return;
	case ADMIN_APPEND:
		break;
	}
}

/* ---- a connection ---- */

/* count it in, or -1 when ADMIN_CLIENTS_MAX are served already */
static int
conn_register(struct admin *a, int fd)
{
	int ret = -1;

	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < ADMIN_CLIENTS_MAX && !atomic_load(&a->quit); i++) {
		if (a->conn_fd[i] < 0) {
			a->conn_fd[i] = fd;
			a->clients++;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	return ret;
}

static void
conn_forget(struct admin *a, int fd)
{
	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < ADMIN_CLIENTS_MAX; i++) {
		if (a->conn_fd[i] == fd) {
			a->conn_fd[i] = -1;
			if (--a->clients == 0)
				pthread_cond_broadcast(&a->gone);
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

void
conn_free(struct conn *c)
{
	conn_forget(c->a, c->fd);
	close(c->fd);
	free(c->in);
	free(c->rec);
	free(c->out);
	free(c);
}

/*
 * A thread's round: serve the whole requests buffered, then (settled)
 * send the answers.  false: the connection is to be closed.
 */
static bool
conn_round(struct conn *c)
{
	char why[256];
	bool open = true;
	size_t off;

more:
	off = conn_start(c);
	for (;;) {
		struct admin_req req;
		struct iovec iov[2];
		size_t used;
		int niov;
		enum admin_parse p = conn_parse(c, off, &req, &used, iov, &niov,
			why, sizeof(why));

		if (p == ADMIN_PARSE_MORE)
			break;
		if (p != ADMIN_PARSE_OK) {
			settle(c);
			conn_reply_error(c, "BAD_REQUEST", 0, why);
			if (p == ADMIN_PARSE_FATAL) {
				open = false;
				break;
			}
			off += used;
			continue;
		}
		if (req.verb == ADMIN_APPEND) {
			conn_append(c, &req, iov, niov);
		} else {
			settle(c);
			serve(c, &req);
		}
		off += used;
	}
	conn_consumed(c, off);
	/*
	 * A client with several appends in flight sends the next ones as its
	 * answers arrive: those here by now join this batch (one flush for
	 * all) instead of waiting for the next.  A client of one append at a
	 * time never pays for the look.
	 */
	if (open && c->npend > 0 && c->npend < PENDING_MAX && c->pipelined > 0 &&
	    conn_recv(c, MSG_DONTWAIT) > 0)
		goto more;
	c->pipelined = c->npend > 1 ? 8 : c->pipelined - (c->pipelined > 0);
	/* before blocking on the client again: its answers */
	settle(c);
	return conn_out_flush(c) == 0 && open;
}

/* a connection's own thread (it may come from the loop, mid-stream) */
static void *
conn_main(void *arg)
{
	struct conn *c = arg;

	(void)pthread_setname_np(pthread_self(), "repld-conn");
	if (conn_out_flush(c) == 0 && (c->have == 0 || conn_round(c))) {
		for (;;) {
			ssize_t r = conn_recv(c, 0);

			if (r == -1 && errno == EINTR)
				continue;
			if (r <= 0)
				break;	/* -2 cannot be: a round leaves room */
			if (!conn_round(c))
				break;
		}
	}
	settle(c);
	(void)conn_out_flush(c);
	conn_free(c);
	return NULL;
}

/* give c a thread of its own; false: none could be started */
bool
conn_thread(struct conn *c)
{
	pthread_attr_t attr;
	pthread_t t;
	bool ok;

	c->in_loop = false;
	c->repl = NULL;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&t, &attr, conn_main, c) == 0;
	pthread_attr_destroy(&attr);
	return ok;
}

static void
refuse(int fd, const char *message)
{
	char buf[256];
	size_t len = jo_line(admin_error_json("BUSY", 0, message), buf, sizeof(buf));

	if (len && write(fd, buf, len) < 0) {
		/* it is going away either way */
	}
	close(fd);
}

/* ---- the listener ---- */

static void
accept_one(struct admin *a)
{
	/* a client that stops reading cannot hold a thread (or a stop) forever */
	struct timeval send_timeout = { .tv_sec = SEND_TIMEOUT_S };
	struct conn *c;
	int fd = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout,
		sizeof(send_timeout));
	/* a client's buffers, once per connection, not per request */
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->in = malloc(IN_CAP)) == NULL || (c->out = malloc(OUT_CAP)) == NULL) {
		if (c) {
			free(c->in);
			free(c);
		}
		refuse(fd, "out of memory");
		return;
	}
	c->a = a;
	c->fd = fd;
	if (conn_register(a, fd) != 0) {
		free(c->in);
		free(c->out);
		free(c);
		refuse(fd, "too many admin connections: retry later");
		return;
	}
	a->fresh[a->nfresh++] = c;
}

/*
 * A new connection's first bytes came: an appender's join the loop, any
 * other gets a thread.  They are only looked at: its server reads them.
 */
static void
classify(struct admin *a, int i)
{
	struct conn *c = a->fresh[i];
	char head[PEEK_LEN];
	ssize_t n = recv(c->fd, head, sizeof(head), MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	a->fresh[i] = a->fresh[--a->nfresh];
	if (n <= 0) {
		conn_free(c);	/* gone before a word */
		return;
	}
	if (n == PEEK_LEN && memcmp(head, "APPEND ", PEEK_LEN) == 0 && loop_join(a, c))
		return;
	/* another verb, a short first read (rare), or no room in the loop */
	if (!conn_thread(c)) {
		conn_free(c);
		return;
	}
}

static void *
listen_main(void *arg)
{
	struct admin *a = arg;
	struct pollfd p[1 + ADMIN_CLIENTS_MAX];

	(void)pthread_setname_np(pthread_self(), "repld-admin");
	while (!atomic_load(&a->quit)) {
		int n = a->nfresh;

		p[0] = (struct pollfd){ .fd = a->fd, .events = POLLIN };
		for (int i = 0; i < n; i++)
			p[1 + i] = (struct pollfd){ .fd = a->fresh[i]->fd, .events = POLLIN };
		if (poll(p, (nfds_t)(1 + n), 100) <= 0)
			continue;
		/* from the last: classify() moves the last into a freed slot */
		for (int i = n - 1; i >= 0; i--)
			if (p[1 + i].revents)
				classify(a, i);
		if (p[0].revents & POLLIN)
			accept_one(a);
	}
	while (a->nfresh > 0)
		conn_free(a->fresh[--a->nfresh]);
	return NULL;
}

/* a socket file at path that a live daemon answers on */
static bool
in_use(const struct sockaddr_un *sun)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0;
	close(fd);
	return live;
}

int
admin_start(struct node *node, const char *path, struct admin **admin_ptr,
		char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct admin *a;
	struct stat sb;
	mode_t old_mask;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "the admin socket path %s is too long", path);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(err, errlen, "the admin socket path %s exists and is "
				"not a socket", path);
			return -1;
		}
		if (in_use(&sun)) {
			snprintf(err, errlen, "another daemon answers on the admin "
				"socket %s", path);
			return -1;
		}
		unlink(path);	/* a dead daemon's */
	}
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->node = node;
	snprintf(a->path, sizeof(a->path), "%s", path);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->gone, NULL);
	for (int i = 0; i < ADMIN_CLIENTS_MAX; i++)
		a->conn_fd[i] = -1;
	for (int i = 0; i < RETENTION_READERS_MAX; i++)
		a->follower_fd[i] = -1;
	if ((a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		snprintf(err, errlen, "admin socket: %s", strerror(errno));
		free(a);
		return -1;
	}
	/* born 0600: no moment in which others may connect */
	old_mask = umask(0177);
	if (bind(a->fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    listen(a->fd, 16) != 0) {
		snprintf(err, errlen, "the admin socket %s: %s", path, strerror(errno));
		umask(old_mask);
		close(a->fd);
		free(a);
		return -1;
	}
	umask(old_mask);
	if ((a->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		goto no_ep;
	}
	if (pthread_create(&a->loop_thread, NULL, loop_main, a) != 0)
		goto no_thread;
	if (pthread_create(&a->thread, NULL, listen_main, a) != 0) {
		atomic_store(&a->quit, true);
		pthread_join(a->loop_thread, NULL);
		goto no_thread;
	}
	*admin_ptr = a;
	return 0;
no_thread:
	snprintf(err, errlen, "cannot start the admin socket's threads");
	close(a->ep);
no_ep:
	close(a->fd);
	unlink(path);
	free(a);
	return -1;
}

bool
admin_stop(struct admin **admin_ptr)
{
	struct admin *a = *admin_ptr;
	struct timespec until;

	if (a == NULL)
		return true;
	atomic_store(&a->quit, true);
	pthread_join(a->thread, NULL);
	/* the loop answers what it holds (the node is stopped) and closes */
	pthread_join(a->loop_thread, NULL);
	close(a->ep);
	close(a->fd);
	unlink(a->path);
	/*
	 * The node is stopped: nothing more is acknowledged.  End the
	 * connections' reads so each thread writes the answers it holds and
	 * goes; a client that does not read them gets SEND_TIMEOUT_S.
	 */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SEND_TIMEOUT_S + 1;
	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < ADMIN_CLIENTS_MAX; i++)
		if (a->conn_fd[i] >= 0)
			(void)shutdown(a->conn_fd[i], SHUT_RD);
	while (a->clients > 0 &&
	       pthread_cond_timedwait(&a->gone, &a->lock, &until) == 0)
		;
	if (a->clients > 0) {
		/* still in a write: they keep this struct until the exit */
		pthread_mutex_unlock(&a->lock);
		*admin_ptr = NULL;
		return false;
	}
	pthread_mutex_unlock(&a->lock);
	pthread_cond_destroy(&a->gone);
	pthread_mutex_destroy(&a->lock);
	free(a);
	*admin_ptr = NULL;
	return true;
}
