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
 *   large SOCK     one connection streams records of 1 B to 1 MiB (some
 *                  larger than the daemon's request buffer, some across
 *                  its end), in writes cut anywhere, a STATUS midway (the
 *                  rest is a thread's); every ack in order, then a READ
 *                  gives back each record byte for byte
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

/* record i's byte j: every record different, and its bytes too */
static unsigned char
large_byte(int i, size_t j)
{
	return (unsigned char)((size_t)i * 131 + j * 7 + (j >> 9));
}

static unsigned long lcg = 12345;

static size_t
rnd(size_t n)
{
	lcg = lcg * 6364136223846793005ul + 1442695040888963407ul;
	return (size_t)(lcg >> 33) % n;
}

/* buf[0, len) in writes cut at random: some of a few bytes, some large */
static void
send_cut(int fd, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		size_t n = rnd(4) == 0 ? 1 + rnd(16) : 1 + rnd(200000);

		if (n > len - off)
			n = len - off;
		send_all(fd, buf + off, n);
		off += n;
	}
}

/* exactly len bytes of the stream (after what l holds) */
static void
read_exact(struct lines *l, char *dst, size_t len)
{
	size_t got = l->have < len ? l->have : len;

	memcpy(dst, l->buf, got);
	memmove(l->buf, l->buf + got, l->have - got);
	l->have -= got;
	while (got < len) {
		ssize_t n = read(l->fd, dst + got, len - got);

		if (n <= 0)
			FAIL("READ: the stream ended inside a record");
		got += (size_t)n;
	}
}

static void
large(const char *path)
{
	/* the daemon's request buffer is 64 KiB + 512: records that fill it
	 * from its start (66033 with its line), one byte more, and larger */
	static const size_t sizes[] = { 1 << 20, 64, 65000, 66000, 1, 300000,
		1 << 20, 66033, 66034, 70000, 100, (1 << 20) - 1, 5, 1 << 20 };
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	static struct lines l, r;
	uint64_t lsn[2 * N], prev = 0;
	char *buf, *rec, *line;
	size_t len = 0, cap = 0;

	for (int i = 0; i < N; i++)
		cap += 2 * (sizes[i] + 32);
	if ((buf = malloc(cap + 16)) == NULL || (rec = malloc(1 << 20)) == NULL)
		FAIL("out of memory");
	/* the records twice: the loop's, then after the STATUS a thread's */
	for (int i = 0; i < 2 * N; i++) {
		size_t n = sizes[i % N];

		if (i == N)
			len += (size_t)sprintf(buf + len, "STATUS\n");
		len += (size_t)sprintf(buf + len, "APPEND %zu %d\n", n, i);
		for (size_t j = 0; j < n; j++)
			buf[len++] = (char)large_byte(i, j);
	}
	l.fd = dial(path);
	send_cut(l.fd, buf, len);
	for (int i = 0; i < 2 * N; i++) {
		if (i == N && strstr(next_line(&l, 10000), "\"role\":\"primary\"") == NULL)
			FAIL("the answer after %d acks is not a primary's status", N);
		lsn[i] = ack_lsn(next_line(&l, 10000), "a large append");
		if (lsn[i] <= prev)
			FAIL("append %d: LSN %" PRIu64 " after %" PRIu64, i, lsn[i], prev);
		prev = lsn[i];
	}
	close(l.fd);
	/* what the log holds is what was sent */
	r.fd = dial(path);
	len = (size_t)sprintf(buf, "READ %" PRIu64 "\n", lsn[0]);
	send_all(r.fd, buf, len);
	if (strncmp(next_line(&r, 10000), "{\"ok\":true", 10) != 0)
		FAIL("READ refused");
	for (int i = 0; i < 2 * N; i++) {
		const char *p;
		uint64_t at;
		size_t n;

		line = next_line(&r, 10000);
		if ((p = strstr(line, "\"lsn\":")) == NULL || (at = strtoull(p + 6, NULL,
				10)) != lsn[i] || (p = strstr(line, "\"len\":")) == NULL)
			FAIL("READ: record %d: %s (LSN %" PRIu64 " wanted)", i, line, lsn[i]);
		if ((n = strtoull(p + 6, NULL, 10)) != sizes[i % N])
			FAIL("READ: LSN %" PRIu64 ": %zu bytes, not %zu", at, n, sizes[i % N]);
		read_exact(&r, rec, n);
		for (size_t j = 0; j < n; j++)
			if ((unsigned char)rec[j] != large_byte(i, j))
				FAIL("READ: LSN %" PRIu64 ": byte %zu differs", at, j);
	}
	close(r.fd);
	free(buf);
	free(rec);
	printf("large: %d records of 1 B to 1 MiB, cut anywhere, acknowledged in order "
		"and read back whole (LSN %" PRIu64 "..%" PRIu64 ")\n", 2 * N, lsn[0], prev);
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "mixed") == 0)
		mixed(argv[2]);
	else if (argc == 4 && strcmp(argv[1], "stall") == 0)
		stall(argv[2], atoi(argv[3]));
	else if (argc == 3 && strcmp(argv[1], "large") == 0)
		large(argv[2]);
	else
		FAIL("usage: admin_client mixed SOCK | stall SOCK N | large SOCK");
	return 0;
}
