/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_promote_parallel.c -- a promotion asks its peers at once: one that
 * accepts connections and never answers (a paused old primary: its kernel
 * still completes the handshake) does not hold it up while enough others
 * answer.
 *
 * A primary (node 1) and replicas 0 and 1 (nodes 10 and 11, k = 1) in one
 * process, down_timeout_ms large.  Replica 0 stops and a listening socket
 * that never accepts takes its control port; the primary, closed and
 * started again on its log, promotes: itself and replica 1 are the N - k
 * it needs, so it must be done well before the silent peer's answer
 * timeout (down_timeout_ms) would have ended.  Asked one after another,
 * replica 0 first, the promotion waited out that timeout.  Then the
 * primary appends and waits with replica 1, and every connection the
 * silent port received is closed once the primary is.
 */
#define TEST_NAME "repl_promote_parallel"
#include "repl_inproc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include "../lib/test_ports.h"

#define DOWN_MS 5000	/* the silent peer's answer timeout */

static long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* the primary, on its log: the first start (bootstrap) or a later one */
static int
primary(bool first, struct repl **repl)
{
	return inproc_primary_with(2, 1, first, DOWN_MS, 3 * DOWN_MS, repl);
}

static void
append_durable(struct repl *r, int n)
{
	uint64_t lsn = 0;

	for (int k = 0; k < n; k++)
		CHECK(repl_append(r, "parallel", 8, &lsn) == 0);
	CHECK(repl_wait_durable(r, lsn, 10000) == 0);
}

/* a socket listening on 127.0.0.1:port that nobody accepts from */
static int
silent_listener(const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)atoi(port)),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
		SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 16) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Every connection the silent port holds is (or becomes, within ms)
 * closed by its client: read to its end.  How many there were.
 */
static int
all_closed(int lfd, int ms)
{
	long until = now_ms() + ms;
	int n = 0, fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		char buf[512];
		bool end = false;

		n++;
		while (!end && now_ms() < until) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			ssize_t got;

			if (poll(&p, 1, 100) <= 0)
				continue;
			got = read(fd, buf, sizeof(buf));
			end = got == 0 || (got < 0 && errno != EAGAIN);
		}
		if (!end)
			fprintf(stderr, TEST_NAME ": connection %d to the silent "
				"port still open\n", n);
		CHECK(end);
		close(fd);
	}
	return n;
}

int
main(void)
{
	int base = test_ports(8), lfd = -1, conns;
	struct repl *r = NULL;
	long t0, took;

	inproc_rep_thread(0, base, NULL);
	inproc_rep_thread(1, base, NULL);
	usleep(300000);
	CHECK(primary(true, &r) == 0);
	if (r == NULL)
		goto out;
	append_durable(r, 10);
	CHECK(inproc_wait_member(r, 0, 10000) == 0);
	CHECK(inproc_wait_member(r, 1, 10000) == 0);
	CHECK(repl_close(&r) == 0);

	/* replica 0 pauses: its port accepts, nobody answers */
	inproc_reps[0].stop = 1;
	pthread_join(inproc_reps[0].thread, NULL);
	CHECK(inproc_reps[0].ret == 0);
	lfd = silent_listener(inproc_reps[0].ctl);
	CHECK(lfd >= 0);
	if (lfd < 0)
		goto out;

	t0 = now_ms();
	CHECK(primary(false, &r) == 0);
	took = now_ms() - t0;
	printf(TEST_NAME ": promoted with a silent peer in %ld ms (its answer "
		"timeout: %d ms)\n", took, DOWN_MS);
	if (took >= DOWN_MS)
		fprintf(stderr, TEST_NAME ": the promotion waited for the silent "
			"peer (%ld ms)\n", took);
	CHECK(took < DOWN_MS);
	if (r == NULL)
		goto out;
	append_durable(r, 10);		/* with replica 1: k = 1 */
	CHECK(repl_close(&r) == 0);

	/* the promotion's question to it went nowhere and was closed */
	conns = all_closed(lfd, 2 * DOWN_MS);
	printf(TEST_NAME ": %d connection(s) to the silent port, all closed\n",
		conns);
	CHECK(conns >= 1);
out:
	if (r)
		repl_close(&r);
	if (lfd >= 0)
		close(lfd);
	unlink(inproc_reps[0].path);
	inproc_rep_stop(1);
	unlink(inproc_ppath);
	printf(TEST_NAME ": %s\n", failed ? "FAIL" : "ok");
	return failed ? 1 : 0;
}
