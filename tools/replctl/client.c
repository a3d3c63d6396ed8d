/* SPDX-License-Identifier: BSD-3-Clause */
/* client.c -- replctl's admin socket client (see client.h) */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "admin_proto.h"
#include "client.h"
#include "repld_conf.h"
#include "replctl.h"

#define TIMEOUT_DEFAULT_MS 10000
#define ANSWERS_WAIT_MS 2000	/* client_answers' STATUS */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The end of a wait that starts now: every wait of a one-request command
 * shares the deadline client_open() set (--timeout bounds the command);
 * a stream of requests (append, bench) bounds each send and each reply.
 */
static int64_t
wait_end(const struct client *c)
{
	return c->whole ? c->deadline : now_ms() + c->timeout_ms;
}

/* poll fd for events until `end`: 1 ready, 0 the time is up, -1 errno */
static int
wait_fd(int fd, short events, int64_t end)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = end - now_ms();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r;
	}
}

void
live_opts_init(struct live_opts *o)
{
	*o = (struct live_opts){ .timeout_ms = TIMEOUT_DEFAULT_MS };
}

enum { OPT_JSON = 0x100, OPT_TIMEOUT };

static const struct option global_long[] = {
	{ "socket", required_argument, NULL, 's' },
	{ "config", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
};
#define GLOBAL_N (sizeof(global_long) / sizeof(global_long[0]))
#define OWN_MAX 8

/* what getopt_long refused (c: '?' or ':'), said as the user wrote it */
static void
refused(int c, char *argv[], const struct option *all)
{
	const char *a = argv[optind - 1], *eq = strchr(a, '=');
	const struct option *m = NULL;
	size_t n;
	int matches = 0;

	if (c == ':') {		/* only the last argument can lack its value */
		fprintf(stderr, "replctl: %s needs a value\n", a);
		return;
	}
	/* a short one (optopt), perhaps inside a group such as -xy */
	if (strncmp(a, "--", 2) != 0 || (optopt && eq == NULL)) {
		fprintf(stderr, "replctl: unknown option '-%c'\n", optopt);
		return;
	}
	/* a long one: unknown, the start of several, or one given a value */
	n = eq ? (size_t)(eq - a) - 2 : strlen(a) - 2;
	for (int i = 0; all[i].name; i++) {
		if (strncmp(all[i].name, a + 2, n) != 0)
			continue;
		m = &all[i];
		if (strlen(all[i].name) == n) {
			matches = 1;
			break;
		}
		matches++;
	}
	if (matches == 1 && eq)
		fprintf(stderr, "replctl: --%s takes no value\n", m->name);
	else if (matches > 1)
		fprintf(stderr, "replctl: ambiguous option '%s'\n", a);
	else
		fprintf(stderr, "replctl: unknown option '%s'\n", a);
}

int
live_getopt(int argc, char *argv[], bool before_command, const char *own_short,
		const struct option *own_long, struct live_opts *o)
{
	static struct option all[GLOBAL_N + OWN_MAX + 1];
	char shortopts[32];
	size_t n = GLOBAL_N;
	int c;

	/* ':' first: a missing value is told apart from an unknown option */
	snprintf(shortopts, sizeof(shortopts), "%s:s:c:%s", before_command ? "+" : "",
		own_short ? own_short : "");
	memcpy(all, global_long, sizeof(global_long));
	for (size_t i = 0; own_long && own_long[i].name && i < OWN_MAX; i++)
		all[n++] = own_long[i];
	all[n] = (struct option){ NULL, 0, NULL, 0 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, all, NULL)) != -1) {
		switch (c) {
		case 's':
			if (o->n_socks == LIVE_SOCKETS_MAX) {
				fprintf(stderr, "replctl: -s: at most %d sockets\n",
					LIVE_SOCKETS_MAX);
				return '?';
			}
			o->socks[o->n_socks++] = optarg;
			if (o->sock_arg == NULL)
				o->sock_arg = optarg;
			break;
		case 'c':
			o->conf_arg = optarg;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_TIMEOUT: {
			uint64_t v;

			if (!opt_u64("--timeout", optarg, 1, 3600000, &v))
				return '?';
			o->timeout_ms = (int)v;
			o->timeout_given = true;
			break;
		}
		case '?':
		case ':':
			refused(c, argv, all);
			return '?';
		default:
			return c;
		}
	}
	return -1;
}

/*
 * The daemon at path's STATUS, asked within --timeout but at most
 * ANSWERS_WAIT_MS (long enough for a daemon that is only busy, short for a
 * script): the reply (json_decref), or NULL with why the daemon did not
 * answer.
 */
static json_t *
quick_status(const struct live_opts *o, const char *path, char *why, size_t len)
{
	struct live_opts quick = *o;
	struct client c;
	const char *r;
	json_t *d = NULL;
	char ignored[200];
	size_t n;

	quick.socket = path;
	if (quick.timeout_ms > ANSWERS_WAIT_MS)
		quick.timeout_ms = ANSWERS_WAIT_MS;
	if (client_open(&c, &quick) == 0)
		c.whole = true;
	if (c.fd >= 0 && client_send(&c, "STATUS", NULL, 0) == 0 &&
	    (r = client_reply(&c, &n)) != NULL)
		d = json_in_reply(r, n, "repld", ignored, sizeof(ignored));
	if (d == NULL)
		snprintf(why, len, "%s", c.why[0] ? c.why : "no reply to STATUS");
	client_close(&c);
	return d;
}

/*
 * Several -s: the primary among them, so that a script given every node
 * goes on across a failover; unless only a primary will do (any_else
 * false: NULL then), the first that answers when none is the primary (its
 * answer then says what it is), else the first.
 */
static const char *
primary_of(const struct live_opts *o, bool any_else)
{
	const char *answered = NULL;
	char why[300];

	for (int i = 0; i < o->n_socks; i++) {
		json_t *d = quick_status(o, o->socks[i], why, sizeof(why));
		bool primary = d != NULL && strcmp(jin_str(d, "role"), "primary") == 0;

		if (d != NULL && answered == NULL)
			answered = o->socks[i];
		json_decref(d);
		if (primary)
			return o->socks[i];
	}
	if (!any_else)
		return NULL;
	return answered ? answered : o->socks[0];
}

const char *
live_primary_among(const struct live_opts *o)
{
	return primary_of(o, false);
}

static const char *
primary_among(const struct live_opts *o)
{
	return primary_of(o, true);
}

int
live_opts_resolve(struct live_opts *o)
{
	static char from_conf[256];
	const char *sock = o->sock_arg;

	if (o->sock_arg && o->conf_arg) {
		fprintf(stderr, "replctl: -s and -c name the socket twice: give one\n");
		return EXIT_USAGE;
	}
	if (o->n_socks > 1) {
		if (o->one_node) {
			fprintf(stderr, "replctl: this command acts on the node it "
				"names: give one -s\n");
			return EXIT_USAGE;
		}
		o->socket = primary_among(o);
		return 0;
	}
	if (o->conf_arg) {
		struct repld_conf rc;
		char err[512];

		if (repld_conf_load(o->conf_arg, &rc, err, sizeof(err)) != 0) {
			fprintf(stderr, "replctl: %s\n", err);
			return EXIT_USAGE;
		}
		snprintf(from_conf, sizeof(from_conf), "%s", rc.admin_socket);
		repld_conf_free(&rc);
		sock = from_conf;
	}
	if (sock == NULL)
		sock = getenv("REPLD_SOCKET");
	o->socket = sock && *sock ? sock : REPLD_ADMIN_SOCKET_DEFAULT;
	return 0;
}

/*
 * connect() on a nonblocking UNIX socket: EAGAIN while the listener's
 * backlog is full (retried until the deadline), else done at once.
 * 0, or -1 with errno (ETIMEDOUT when the time ran out).
 */
static int
connect_within(struct client *c, const struct sockaddr_un *sun)
{
	for (;;) {
		int r;

		if (connect(c->fd, (const struct sockaddr *)sun, sizeof(*sun)) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EINPROGRESS)
			return -1;
		if (errno == EINPROGRESS) {
			int err = 0;
			socklen_t len = sizeof(err);

			if ((r = wait_fd(c->fd, POLLOUT, c->deadline)) <= 0) {
				errno = r == 0 ? ETIMEDOUT : errno;
				return -1;
			}
			if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
				return -1;
			errno = err;
			return err ? -1 : 0;
		}
		/* a full backlog does not wake a poller: retry a little later */
		if (now_ms() >= c->deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		(void)poll(NULL, 0, 10);
	}
}

int
client_open(struct client *c, const struct live_opts *o)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat sb;

	*c = (struct client){ .path = o->socket, .fd = -1,
		.timeout_ms = o->timeout_ms, .deadline = now_ms() + o->timeout_ms };
	if (strlen(o->socket) >= sizeof(sun.sun_path)) {
		snprintf(c->why, sizeof(c->why), "the socket path %s is too long",
			o->socket);
		return -1;
	}
	strcpy(sun.sun_path, o->socket);
	if (stat(o->socket, &sb) == 0 && !S_ISSOCK(sb.st_mode)) {
		snprintf(c->why, sizeof(c->why), "cannot reach repld at %s: it is "
			"not a socket (the daemon's admin_socket names one)", o->socket);
		return -1;
	}
	c->cap = ADMIN_REPLY_MAX;
	if ((c->in = malloc(c->cap)) == NULL) {
		snprintf(c->why, sizeof(c->why), "out of memory");
		return -1;
	}
	/*
	 * Nonblocking: a daemon that stopped accepting (frozen, or its
	 * backlog full) would otherwise hold connect() past the timeout.
	 */
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC |
			SOCK_NONBLOCK, 0)) < 0 ||
	    connect_within(c, &sun) != 0) {
		int e = errno;

		if (e == ETIMEDOUT) {
			snprintf(c->why, sizeof(c->why), "repld at %s: no answer in "
				"%d ms (--timeout): it does not accept connections",
				c->path, c->timeout_ms);
			client_close(c);
			return -1;
		}
		snprintf(c->why, sizeof(c->why), "cannot reach repld at %s: %s%s",
			o->socket, strerror(e),
			e == ENOENT ? " (is the daemon running? is this its "
				"admin_socket?)" :
			e == ECONNREFUSED ? " (no daemon listens: it stopped or "
				"died)" :
			e == EACCES ? " (the socket is the daemon's user's only)" : "");
		client_close(c);
		return -1;
	}
	return 0;
}

void
client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->in);
	c->in = NULL;
}

/*
 * Send what iov[0..n) holds, as few sends as the socket takes: one, unless
 * it is full.  A partial send resumes inside the vector.
 */
static int
send_all(struct client *c, struct iovec *iov, int n)
{
	int64_t end = wait_end(c);

	while (n > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t k = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		int r;

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((r = wait_fd(c->fd, POLLOUT, end)) > 0)
				continue;
			c->timed_out = r == 0;
			snprintf(c->why, sizeof(c->why), "repld at %s: sending: %s",
				c->path, r == 0 ? "no progress within --timeout" :
				strerror(errno));
			return -1;
		}
		if (k <= 0) {
			snprintf(c->why, sizeof(c->why), "repld at %s: sending: %s",
				c->path, k < 0 ? strerror(errno) : "closed");
			return -1;
		}
		/* past what went: whole buffers, then into the first one left */
		for (; n > 0 && (size_t)k >= iov->iov_len; iov++, n--)
			k -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

void
client_sndbuf(struct client *c, size_t bytes)
{
	int have = 0, want = bytes > INT_MAX / 2 ? INT_MAX / 2 : (int)bytes;
	socklen_t len = sizeof(have);

	/* the kernel reports twice what was set (its bookkeeping): compare so */
	if (getsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &have, &len) == 0 &&
	    have / 2 < want)
		(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
}

pid_t
client_peer_pid(const struct client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	/* the listener's creator; 0 when it is in a pid namespace not ours */
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return 0;
	return cred.pid;
}

int
client_send(struct client *c, const char *line, const void *data, size_t len)
{
	size_t n = strlen(line);
	char buf[ADMIN_LINE_MAX];
	/* the line and its record in one send: one segment, one wake-up */
	struct iovec iov[2] = { { buf, n + 1 }, { (void *)data, len } };

	if (n + 1 > sizeof(buf)) {
		snprintf(c->why, sizeof(c->why), "a request longer than %d bytes",
			ADMIN_LINE_MAX - 1);
		return -1;
	}
	memcpy(buf, line, n);
	buf[n] = '\n';
	return send_all(c, iov, len ? 2 : 1);
}

const char *
client_reply(struct client *c, size_t *len)
{
	int64_t end;
	char *lf;

	/* the line returned last goes now */
	if (c->line_len) {
		memmove(c->in, c->in + c->line_len, c->have - c->line_len);
		c->have -= c->line_len;
		c->line_len = 0;
	}
	end = wait_end(c);
	while ((lf = memchr(c->in, '\n', c->have)) == NULL) {
		ssize_t n;
		int r;

		if (c->have == c->cap) {
			snprintf(c->why, sizeof(c->why), "repld at %s: a reply longer "
				"than %zu bytes", c->path, c->cap);
			return NULL;
		}
		/* one deadline for the whole line: a trickle does not extend it */
		if ((r = wait_fd(c->fd, POLLIN, end)) < 0) {
			snprintf(c->why, sizeof(c->why), "repld at %s: poll: %s",
				c->path, strerror(errno));
			return NULL;
		}
		if (r == 0) {
			snprintf(c->why, sizeof(c->why), "repld at %s: no answer in "
				"%d ms (--timeout)", c->path, c->timeout_ms);
			c->timed_out = true;
			return NULL;
		}
		n = read(c->fd, c->in + c->have, c->cap - c->have);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			snprintf(c->why, sizeof(c->why), "repld at %s: the connection "
				"closed before the answer%s%s", c->path,
				n < 0 ? ": " : " (the daemon stopped?)",
				n < 0 ? strerror(errno) : "");
			return NULL;
		}
		c->have += (size_t)n;
	}
	*lf = '\0';
	*len = (size_t)(lf - c->in);
	c->line_len = *len + 1;
	return c->in;
}

int
client_call(const struct live_opts *o, const char *line, json_t **doc,
		char **reply)
{
	struct client c;
	const char *r;
	char from[sizeof(c.why)], why[sizeof(c.why) + 200];
	size_t len;

	*doc = NULL;
	*reply = NULL;
	if (client_open(&c, o) == 0)
		c.whole = true;		/* connect, send and reply: one --timeout */
	if (c.fd < 0 || client_send(&c, line, NULL, 0) != 0 ||
	    (r = client_reply(&c, &len)) == NULL) {
		fprintf(stderr, "replctl: %s\n", c.why);
		client_close(&c);
		return EXIT_UNREACHABLE;
	}
	snprintf(from, sizeof(from), "repld at %s", o->socket);
	if ((*doc = json_in_reply(r, len, from, why, sizeof(why))) == NULL ||
	    (*reply = strndup(r, len)) == NULL) {
		fprintf(stderr, "replctl: %s\n", *doc ? "out of memory" : why);
		client_close(&c);
		json_decref(*doc);
		*doc = NULL;
		return EXIT_FAILED;
	}
	client_close(&c);
	return 0;
}

bool
client_answers(const struct live_opts *o, char *why, size_t len)
{
	json_t *d = quick_status(o, o->socket, why, len);

	if (d == NULL)
		return false;
	if (strcmp(jin_str(d, "role"), "primary") == 0 &&
	    json_object_get(d, "replicas_up"))
		snprintf(why, len, "it answers, as the primary with %" PRIu64 " "
			"replicas streaming for a quorum of %" PRIu64, jin_u64(d,
			"replicas_up", 0), jin_u64(d, "quorum", 0));
	else
		snprintf(why, len, "it answers, role %s", jin_str(d, "role"));
	json_decref(d);
	return true;
}

int
client_not_acked(const struct live_opts *o, struct client *c, const char *what)
{
	char why[300];

	if (!c->timed_out) {
		fprintf(stderr, "replctl: %s: %s\n", what, c->why);
		return EXIT_UNREACHABLE;
	}
	if (!client_answers(o, why, sizeof(why))) {
		fprintf(stderr, "replctl: %s: %s; a STATUS gets no answer either: "
			"%s\n", what, c->why, why);
		return EXIT_UNREACHABLE;
	}
	fprintf(stderr, "replctl: %s: %s: not acknowledged durable, the outcome "
		"unknown (%s)\n", what, c->why, why);
	return EXIT_UNACKED;
}

int
client_error_exit(const json_t *doc)
{
	static const char *const unknown[] = { "REPL_E_TIMEDOUT", "REPL_E_UNKNOWN" };
	const char *e = jin_str(doc, "error");

	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		if (strcmp(e, unknown[i]) == 0)
			return EXIT_UNACKED;
	return EXIT_FAILED;
}

int
client_failed(const json_t *doc, const char *what)
{
	fprintf(stderr, "replctl: %s: %s: %s\n", what, jin_str(doc, "error"),
		jin_str(doc, "message"));
	return EXIT_FAILED;
}
