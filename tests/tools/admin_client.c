/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_client.c -- raw admin-socket clients for repld_admin_loop.sh, the
 * request patterns replctl never sends:
 *   mixed SOCK     one connection: 5 APPENDs, a STATUS and an APPEND in one
 *                  write; the answers come in request order (5 acks of
 *                  rising LSNs, the status of a primary, an ack after them)
 *   stall SOCK N   connection A sends N APPENDs and reads nothing; a
 *                  second connection's append is answered meanwhile
 *                  (within 2 s); then A reads all N acks, in order
 * Exit 0 when everything holds, 1 with the reason on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...) do { fprintf(stderr, "admin_client: " __VA_ARGS__); \
	fprintf(stderr, "\n"); exit(1); } while (0)

struct lines {
	int fd;
	char buf[1 << 16];
	size_t have;
};

static int
dial(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sun.sun_path))
		FAIL("socket %s", path);
	strcpy(sun.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
		FAIL("connect %s: %s", path, strerror(errno));
	return fd;
}

static void
send_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			FAIL("send: %s", strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

/* the next answer line (without its LF), within timeout_ms */
static char *
next_line(struct lines *l, int timeout_ms)
{
	static char line[1 << 16];

	for (;;) {
		char *nl = memchr(l->buf, '\n', l->have);
		struct pollfd p = { .fd = l->fd, .events = POLLIN };
		ssize_t n;

		if (nl) {
			size_t len = (size_t)(nl - l->buf);

			memcpy(line, l->buf, len);
			line[len] = '\0';
			memmove(l->buf, nl + 1, l->have - len - 1);
			l->have -= len + 1;
			return line;
		}
		if (poll(&p, 1, timeout_ms) != 1)
			FAIL("no answer in %d ms", timeout_ms);
		n = read(l->fd, l->buf + l->have, sizeof(l->buf) - l->have);
		if (n <= 0)
			FAIL("the daemon closed the connection");
		l->have += (size_t)n;
	}
}

/* an ack's LSN, or a failure naming what came instead */
static uint64_t
ack_lsn(const char *line, const char *what)
{
	const char *p = strstr(line, "\"lsn\":");

	if (strncmp(line, "{\"ok\":true", 10) != 0 || p == NULL)
		FAIL("%s: not an ack: %s", what, line);
	return strtoull(p + 6, NULL, 10);
}

static void
mixed(const char *path)
{
	char req[512];
	size_t len = 0;
	struct lines l = { .fd = dial(path) };
	uint64_t prev = 0, lsn;
	char *line;

	for (int i = 0; i < 5; i++)
		len += (size_t)snprintf(req + len, sizeof(req) - len, "APPEND 6\nmixed%d", i);
	len += (size_t)snprintf(req + len, sizeof(req) - len, "STATUS\nAPPEND 5\nafter");
	send_all(l.fd, req, len);
	for (int i = 0; i < 5; i++) {
		lsn = ack_lsn(next_line(&l, 10000), "append before the status");
		if (lsn <= prev)
			FAIL("append %d: LSN %" PRIu64 " after %" PRIu64, i, lsn, prev);
		prev = lsn;
	}
	line = next_line(&l, 10000);
	if (strstr(line, "\"role\":\"primary\"") == NULL)
		FAIL("the 6th answer is not a primary's status: %.200s", line);
	lsn = ack_lsn(next_line(&l, 10000), "append after the status");
	if (lsn <= prev)
		FAIL("the append after the status: LSN %" PRIu64 " after %" PRIu64, lsn, prev);
	close(l.fd);
	printf("mixed: 5 acks to LSN %" PRIu64 ", the status, then LSN %" PRIu64 "\n",
		prev, lsn);
}

static long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void
stall(const char *path, int n)
{
	static struct lines a, b;
	static char req[64 * 1024];
	uint64_t prev = 0, lsn;
	size_t len = 0;
	long t0;

	a.fd = dial(path);
	/* as much as the daemon takes: its answers fill A's socket */
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(req + len, sizeof(req) - len, "APPEND 8\nstall%03d",
			i % 1000);
		if (sizeof(req) - len < 64 || i == n - 1) {
			send_all(a.fd, req, len);
			len = 0;
		}
	}
	/* another client is not held up by the one that does not read */
	b.fd = dial(path);
	t0 = now_ms();
	send_all(b.fd, "APPEND 5\nother", 14);
	lsn = ack_lsn(next_line(&b, 2000), "the other client's append");
	printf("stall: the other client's append acknowledged at LSN %" PRIu64
		" in %ld ms\n", lsn, now_ms() - t0);
	close(b.fd);
	for (int i = 0; i < n; i++) {
		lsn = ack_lsn(next_line(&a, 10000), "the stalled client's append");
		if (lsn <= prev)
			FAIL("stalled append %d: LSN %" PRIu64 " after %" PRIu64, i, lsn, prev);
		prev = lsn;
	}
	close(a.fd);
	printf("stall: %d acks in order, the last LSN %" PRIu64 "\n", n, prev);
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "mixed") == 0)
		mixed(argv[2]);
	else if (argc == 4 && strcmp(argv[1], "stall") == 0)
		stall(argv[2], atoi(argv[3]));
	else
		FAIL("usage: admin_client mixed SOCK | stall SOCK N");
	return 0;
}
