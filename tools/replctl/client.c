/* SPDX-License-Identifier: BSD-3-Clause */
/* client.c -- replctl's admin socket client (see client.h) */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "admin_proto.h"
#include "client.h"
#include "repld_conf.h"
#include "replctl.h"

#define TIMEOUT_DEFAULT_MS 10000

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

int
live_opts_parse(int *argc, char *argv[], struct live_opts *o)
{
	static char from_conf[256];
	const char *conf = NULL, *sock = NULL;
	int out = 0;

	*o = (struct live_opts){ .timeout_ms = TIMEOUT_DEFAULT_MS };
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];

		if ((strcmp(a, "-s") == 0 || strcmp(a, "--socket") == 0 ||
		     strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0 ||
		     strcmp(a, "--timeout") == 0) && i + 1 >= *argc) {
			fprintf(stderr, "replctl: %s needs a value\n", a);
			return EXIT_USAGE;
		}
		if (strcmp(a, "-s") == 0 || strcmp(a, "--socket") == 0) {
			sock = argv[++i];
		} else if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
			conf = argv[++i];
		} else if (strcmp(a, "--json") == 0) {
			o->json = true;
		} else if (strcmp(a, "--timeout") == 0) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			if (*end || v <= 0 || v > 3600000) {
				fprintf(stderr, "replctl: --timeout takes milliseconds "
					"(1..3600000), not %s\n", argv[i]);
				return EXIT_USAGE;
			}
			o->timeout_ms = (int)v;
			o->timeout_given = true;
		} else {
			argv[out++] = argv[i];
		}
	}
	*argc = out;
	if (sock && conf) {
		fprintf(stderr, "replctl: -s and -c name the socket twice: give one\n");
		return EXIT_USAGE;
	}
	if (conf) {
		struct repld_conf rc;
		char err[512];

		if (repld_conf_load(conf, &rc, err, sizeof(err)) != 0) {
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

static int
write_all(struct client *c, const void *buf, size_t len)
{
	int64_t end = wait_end(c);
	const char *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((r = wait_fd(c->fd, POLLOUT, end)) > 0)
				continue;
			snprintf(c->why, sizeof(c->why), "repld at %s: sending: %s",
				c->path, r == 0 ? "no progress within --timeout" :
				strerror(errno));
			return -1;
		}
		if (n <= 0) {
			snprintf(c->why, sizeof(c->why), "repld at %s: sending: %s",
				c->path, n < 0 ? strerror(errno) : "closed");
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
client_send(struct client *c, const char *line, const void *data, size_t len)
{
	size_t n = strlen(line);
	char buf[ADMIN_LINE_MAX];

	if (n + 1 > sizeof(buf)) {
		snprintf(c->why, sizeof(c->why), "a request longer than %d bytes",
			ADMIN_LINE_MAX - 1);
		return -1;
	}
	memcpy(buf, line, n);
	buf[n++] = '\n';
	if (write_all(c, buf, n) != 0)
		return -1;
	return len ? write_all(c, data, len) : 0;
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

int
client_failed(const json_t *doc, const char *what)
{
	fprintf(stderr, "replctl: %s: %s: %s\n", what, jin_str(doc, "error"),
		jin_str(doc, "message"));
	return EXIT_FAILED;
}
