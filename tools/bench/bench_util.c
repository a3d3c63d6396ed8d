/* SPDX-License-Identifier: BSD-3-Clause */
/* bench_util.c -- the pieces rpma-bench and repl-bench share */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

void
bench_say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void
bench_sort(uint64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
}

double
bench_pct(const uint64_t *v, long n, double p)
{
	return (double)v[(long)(p / 100.0 * (double)(n - 1) + 0.5)] / 1000.0;
}

struct bench_stats
bench_summarize(uint64_t *lat, long n)
{
	bench_sort(lat, n);
	return (struct bench_stats){ bench_pct(lat, n, 50), bench_pct(lat, n, 99),
		bench_pct(lat, n, 99.9) };
}

const char *
bench_fs_name(const char *dir)
{
	struct statfs st;

	if (statfs(dir, &st))
		return "?";
	switch ((unsigned long)st.f_type) {
	case 0x01021994: return "tmpfs";
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x794c7630: return "overlayfs";
	default: return "other";
	}
}

/* ---------------------------------------------------------------- */
/* the TCP round trip                                               */

/* a connected loopback pair: returns the client's end, *server_fd the other */
static int
tcp_connect_pair(int port, int *server_fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, l, c = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*server_fd = -1;
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0) {
		bench_say("tcp socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1)) {
		bench_say("tcp listen on %d: %s", port, strerror(errno));
		goto out;
	}
	if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)) ||
	    (*server_fd = accept(l, NULL, NULL)) < 0) {
		bench_say("tcp connect to %d: %s", port, strerror(errno));
		if (c >= 0)
			close(c);
		c = -1;
		goto out;
	}
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*server_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
out:
	close(l);
	return c;
}

static int
full_io(int fd, void *buf, size_t len, int is_write)
{
	char *p = buf;

	while (len) {
		ssize_t n = is_write ? send(fd, p, len, MSG_NOSIGNAL) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = 0;	/* the other side closed */
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
bench_tcp_round_trips(int port, size_t size, long ops, uint64_t *lat,
		uint64_t *total_ns)
{
	char *buf = malloc(size), ack[8] = { 0 };
	int s, c, status, ret = 0;
	uint64_t t0;
	pid_t pid;

	if (buf == NULL) {
		bench_say("out of memory");
		return -1;
	}
	memset(buf, 0x5a, size);
	if ((c = tcp_connect_pair(port, &s)) < 0) {
		free(buf);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {	/* the echo side: takes the payload, acknowledges */
		close(c);
		for (long i = 0; i < ops; i++)
			if (full_io(s, buf, size, 0) || full_io(s, ack, sizeof(ack), 1))
				_exit(1);
		_exit(0);
	}
	close(s);
	if (pid < 0) {
		bench_say("fork: %s", strerror(errno));
		close(c);
		free(buf);
		return -1;
	}
	t0 = bench_now_ns();
	for (long i = 0; i < ops; i++) {
		uint64_t t = bench_now_ns();

		if (full_io(c, buf, size, 1) || full_io(c, ack, sizeof(ack), 0)) {
			bench_say("tcp round trip %ld: %s", i, errno ? strerror(errno) : "closed");
			ret = -1;
			break;
		}
		lat[i] = bench_now_ns() - t;
	}
	*total_ns = bench_now_ns() - t0;
	close(c);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		if (ret == 0)
			bench_say("the tcp echo process failed");
		ret = -1;
	}
	free(buf);
	return ret;
}
