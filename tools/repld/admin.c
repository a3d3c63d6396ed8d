/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin.c -- the admin socket's server (see admin.h, admin_proto.h).
 *
 * A client's appends are batched: every APPEND already received is
 * appended, then one repl_wait_durable covers them all before the replies
 * go out, in order.  The wait happens before the thread blocks reading
 * again, so a client never waits for an acknowledgement that is only held
 * back by its own unsent bytes.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include "admin.h"
#include "admin_proto.h"
#include "admin_req.h"
#include "admin_status.h"
#include "json_out.h"

#define PENDING_MAX 256			/* appends answered by one wait */
#define APPEND_WAIT_MS 30000		/* then REPL_E_TIMEDOUT: outcome unknown */
#define IN_CAP (ADMIN_LINE_MAX + ADMIN_RECORD_MAX)
#define OUT_CAP (ADMIN_REPLY_MAX + PENDING_MAX * 160)
#define SEND_TIMEOUT_S 5		/* a client that reads no answers */

struct admin {
	struct node *node;
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t thread;
	atomic_bool quit;

	/* the connections' sockets, so a stop can end their reads */
	pthread_mutex_t lock;
	pthread_cond_t gone;
	int conn_fd[ADMIN_CLIENTS_MAX];
	int clients;
};

struct pending {
	int err;		/* of the append itself */
	uint64_t lsn;
};

struct conn {
	struct admin *a;
	int fd;
	char *in;
	size_t have;
	char *out;
	size_t out_len;
	struct repl *repl;	/* inside the gate while appends are pending */
	struct pending pend[PENDING_MAX];
	int npend;
	/*
	 * Settles left that look for input arrived meanwhile: set when one
	 * answered more than one append (the client keeps several in flight).
	 */
	int pipelined;
};

/* ---- replies ---- */

static int
out_flush(struct conn *c)
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
	if (OUT_CAP - c->out_len < ADMIN_REPLY_MAX && out_flush(c) != 0) {
		json_decref(reply);
		return;
	}
	c->out_len += jo_line(reply, c->out + c->out_len, ADMIN_REPLY_MAX);
}

/* an error reply: a protocol name (code 0) or a REPL_E_* code */
static void
reply_error(struct conn *c, const char *name, int code, const char *message)
{
	out_line(c, admin_error_json(name, code, message));
}

static void
reply_ok_msg(struct conn *c, const char *message)
{
	out_line(c, json_pack("{s:b, s:o}", "ok", true, "message", jo_str(message)));
}

static const char *
gate_message(int err)
{
	if (err == NODE_E_STOPPING)
		return "the daemon is stopping: nothing more is appended";
	if (err == NODE_E_WRONG_ROLE)
		return "this node is not the primary: append on the primary";
	return NULL;	/* repl_strerror's */
}

/* ---- appends ---- */

/* one wait for everything appended so far, then the replies in order */
static void
settle(struct conn *c)
{
	uint64_t last = 0;
	int wret = 0;

	if (c->npend == 0)
		return;
	for (int i = 0; i < c->npend; i++)
		if (c->pend[i].err == 0 && c->pend[i].lsn > last)
			last = c->pend[i].lsn;
	if (last)
		wret = repl_wait_durable(c->repl, last, APPEND_WAIT_MS);
	node_leave(c->a->node);
	c->repl = NULL;
	for (int i = 0; i < c->npend; i++) {
		int err = c->pend[i].err ? c->pend[i].err : wret;

		if (err)
			reply_error(c, NULL, err, NULL);
		else
			out_line(c, json_pack("{s:b, s:o}", "ok", true,
				"lsn", jo_u64(c->pend[i].lsn)));
	}
	c->npend = 0;
}

static void
append(struct conn *c, const struct admin_req *req)
{
	struct iovec iov = { (void *)req->data, req->len };
	struct pending *p;
	int err = 0;

	if (c->repl == NULL && (c->repl = node_enter(c->a->node, &err)) == NULL) {
		reply_error(c, NULL, err, gate_message(err));
		return;
	}
	p = &c->pend[c->npend++];
	p->lsn = 0;
	/*
	 * The log was full for the record before (after full_timeout_ms):
	 * the rest of the batch fails at once rather than each waiting as
	 * long, which would keep every answer from the client meanwhile.
	 */
	if (c->npend > 1 && p[-1].err == REPL_E_FULL)
		p->err = REPL_E_FULL;
	else
		p->err = repl_appendv(c->repl, &iov, 1, req->client_id, &p->lsn);
	if (c->npend == PENDING_MAX)
		settle(c);
}

/* ---- the other requests ---- */

static void
change_reply(struct conn *c, int ret, const char *msg)
{
	if (ret == 0)
		reply_ok_msg(c, msg);
	else
		reply_error(c, NULL, ret, msg);
}

static void
serve(struct conn *c, const struct admin_req *req)
{
	struct node *n = c->a->node;
	char msg[640] = "";

	switch (req->verb) {
	case ADMIN_STATUS:
		out_line(c, admin_status_json(n));
		return;
	case ADMIN_VERIFY:
		out_line(c, admin_verify_json(n, req->from, req->to));
		return;
	case ADMIN_PROMOTE:
		change_reply(c, node_promote(n, req->force, msg, sizeof(msg)), msg);
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

static void *
conn_main(void *arg)
{
	struct conn *c = arg;
	char why[256];
	bool open = true;

	(void)pthread_setname_np(pthread_self(), "repld-conn");
	while (open) {
		ssize_t r = read(c->fd, c->in + c->have, IN_CAP - c->have);
		size_t off = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		c->have += (size_t)r;
more:
		for (;;) {
			struct admin_req req;
			size_t used;
			enum admin_parse p = admin_req_parse(c->in + off,
				c->have - off, &req, &used, why, sizeof(why));

			if (p == ADMIN_PARSE_MORE)
				break;
			if (p != ADMIN_PARSE_OK) {
				settle(c);
				reply_error(c, "BAD_REQUEST", 0, why);
				if (p == ADMIN_PARSE_FATAL) {
					open = false;
					break;
				}
				off += used;
				continue;
			}
			if (req.verb == ADMIN_APPEND) {
				append(c, &req);
			} else {
				settle(c);
				serve(c, &req);
			}
			off += used;
		}
		memmove(c->in, c->in + off, c->have - off);
		c->have -= off;
		off = 0;
		/*
		 * A client with several appends in flight sends the next ones
		 * as its answers arrive: those here by now join this batch (one
		 * flush for all) instead of waiting for the next.  A client of
		 * one append at a time never pays for the look.
		 */
		if (open && c->npend > 0 && c->npend < PENDING_MAX && c->pipelined > 0 &&
		    c->have < IN_CAP) {
			r = recv(c->fd, c->in + c->have, IN_CAP - c->have, MSG_DONTWAIT);
			if (r > 0) {
				c->have += (size_t)r;
				goto more;
			}
		}
		c->pipelined = c->npend > 1 ? 8 : c->pipelined - (c->pipelined > 0);
		/* before blocking on the client again: its answers */
		settle(c);
		if (out_flush(c) != 0)
			break;
	}
	settle(c);
	(void)out_flush(c);
	conn_forget(c->a, c->fd);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	return NULL;
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

static void
accept_one(struct admin *a)
{
	/* a client that stops reading cannot hold a thread (or a stop) forever */
	struct timeval send_timeout = { .tv_sec = SEND_TIMEOUT_S };
	pthread_attr_t attr;
	pthread_t t;
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
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, conn_main, c) != 0) {
		conn_forget(a, fd);
		free(c->in);
		free(c->out);
		free(c);
		refuse(fd, "cannot start a thread for the connection");
	}
	pthread_attr_destroy(&attr);
}

static void *
listen_main(void *arg)
{
	struct admin *a = arg;

	(void)pthread_setname_np(pthread_self(), "repld-admin");
	while (!atomic_load(&a->quit)) {
		struct pollfd p = { .fd = a->fd, .events = POLLIN };

		if (poll(&p, 1, 100) > 0 && (p.revents & POLLIN))
			accept_one(a);
	}
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
	if (pthread_create(&a->thread, NULL, listen_main, a) != 0) {
		snprintf(err, errlen, "cannot start the admin socket's thread");
		close(a->fd);
		unlink(path);
		free(a);
		return -1;
	}
	*admin_ptr = a;
	return 0;
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
