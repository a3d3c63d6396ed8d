/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tcp_proxy.c -- a TCP relay the tests put between two nodes (or a node
 * and etcd) to cut the network between them on demand:
 *
 *   tcp_proxy [--only-from ADDR] LISTEN_PORT [TARGET_ADDR:]TARGET_PORT [PIDFILE]
 *
 * listens on 127.0.0.1:LISTEN_PORT and relays each connection to
 * TARGET_ADDR (an IPv4 address, 127.0.0.1 by default):TARGET_PORT, both
 * ways.  With --only-from, the modes below cut only the connections that
 * come from ADDR (a node that listens there and connects from there), and
 * the others always pass: one relay cuts a link one node has to a peer but
 * not the link another node has to the same peer.  Signals switch its mode:
 *
 *   SIGUSR2   pass (the start): bytes flow
 *   SIGUSR1   blackhole: connections stay open and new ones are accepted,
 *             but no byte moves either way (a silent partition: only
 *             timeouts notice it)
 *   SIGHUP    refuse: every connection is reset, and new ones are reset
 *             as they arrive (a peer that is gone)
 *   SIGTERM   exit 0
 *
 * Bytes read while blackholed are dropped, as a partitioned network
 * drops them.  Each mode change prints one line on stdout ("mode pass").
 * Hand-written: socat and the like relay, but cannot switch a live
 * connection between these modes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAIRS_MAX 64

enum mode { MODE_PASS, MODE_BLACKHOLE, MODE_REFUSE };

static const char *const mode_names[] = { "pass", "blackhole", "refuse" };

static volatile sig_atomic_t want = MODE_PASS, stop;

struct pair {
	int fd[2];	/* 0: the client's side, 1: the target's */
	bool cut;	/* the mode applies to it (--only-from) */
};

static struct in_addr target_addr = { .s_addr = 0 };
static struct in_addr only_from;
static bool has_only_from;

static struct pair pairs[PAIRS_MAX];
static int n_pairs;

static void
on_signal(int sig)
{
	if (sig == SIGUSR2)
		want = MODE_PASS;
	else if (sig == SIGUSR1)
		want = MODE_BLACKHOLE;
	else if (sig == SIGHUP)
		want = MODE_REFUSE;
	else
		stop = 1;
}

/* close with a reset, as a vanished peer's host answers */
static void
reset_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static void
drop_pair(int i, bool reset)
{
	for (int k = 0; k < 2; k++) {
		if (reset)
			reset_close(pairs[i].fd[k]);
		else
			close(pairs[i].fd[k]);
	}
	pairs[i] = pairs[--n_pairs];
}

static int
dial(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr = target_addr };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* [ADDR:]PORT: the port, ADDR into target_addr; -1 if it is neither */
static int
parse_target(const char *arg)
{
	const char *colon = strchr(arg, ':');
	char a[INET_ADDRSTRLEN];

	if (colon == NULL)
		return atoi(arg);
	if ((size_t)(colon - arg) >= sizeof(a))
		return -1;
	memcpy(a, arg, (size_t)(colon - arg));
	a[colon - arg] = '\0';
	if (inet_pton(AF_INET, a, &target_addr) != 1)
		return -1;
	return atoi(colon + 1);
}

static int
listen_on(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(fd, 64) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* move what fd has to its partner; false when the pair is done */
static bool
relay(int from, int to, enum mode mode)
{
	char buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN);
	if (mode == MODE_BLACKHOLE)
		return true;	/* dropped on the floor */
	for (ssize_t done = 0; done < n;) {
		ssize_t w = write(to, buf + done, (size_t)(n - done));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		done += w;
	}
	return true;
}

static void
accept_one(int lfd, int target, enum mode mode)
{
	struct sockaddr_in from;
	socklen_t len = sizeof(from);
	int c = accept4(lfd, (struct sockaddr *)&from, &len, SOCK_CLOEXEC), t,
		one = 1;
	bool cut;

	if (c < 0)
		return;
	cut = !has_only_from || (from.sin_family == AF_INET &&
		from.sin_addr.s_addr == only_from.s_addr);
	if ((cut && mode == MODE_REFUSE) || n_pairs == PAIRS_MAX ||
	    (t = dial(target)) < 0) {
		reset_close(c);
		return;
	}
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pairs[n_pairs++] = (struct pair){ { c, t }, cut };
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	enum mode mode = MODE_PASS;
	int lfd, target;

	target_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (argc >= 3 && strcmp(argv[1], "--only-from") == 0) {
		if (inet_pton(AF_INET, argv[2], &only_from) != 1) {
			fprintf(stderr, "tcp_proxy: --only-from %s: not an IPv4 "
				"address\n", argv[2]);
			return 2;
		}
		has_only_from = true;
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: tcp_proxy [--only-from ADDR] LISTEN_PORT "
			"[TARGET_ADDR:]TARGET_PORT [PIDFILE]\n");
		return 2;
	}
	if ((target = parse_target(argv[2])) < 0) {
		fprintf(stderr, "tcp_proxy: %s: not [ADDR:]PORT with an IPv4 "
			"address\n", argv[2]);
		return 2;
	}
	if ((lfd = listen_on(atoi(argv[1]))) < 0) {
		fprintf(stderr, "tcp_proxy: cannot listen on port %s: %s\n",
			argv[1], strerror(errno));
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4) {
		FILE *f = fopen(argv[3], "w");

		if (f == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 ||
		    fclose(f) != 0) {
			fprintf(stderr, "tcp_proxy: cannot write %s\n", argv[3]);
			return 1;
		}
	}
	printf("mode pass\n");
	fflush(stdout);
	while (!stop) {
		struct pollfd pfd[1 + 2 * PAIRS_MAX];
		int n = 0;

		if ((enum mode)want != mode) {
			mode = (enum mode)want;
			if (mode == MODE_REFUSE)
				for (int i = n_pairs - 1; i >= 0; i--)
					if (pairs[i].cut)
						drop_pair(i, true);
			printf("mode %s\n", mode_names[mode]);
			fflush(stdout);
		}
		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < n_pairs; i++)
			for (int k = 0; k < 2; k++)
				pfd[n++] = (struct pollfd){ .fd = pairs[i].fd[k],
					.events = POLLIN };
		if (poll(pfd, (nfds_t)n, 100) < 0) {
			if (errno == EINTR)
				continue;
			perror("tcp_proxy: poll");
			return 1;
		}
		if ((enum mode)want != mode)
			continue;	/* switch before moving another byte */
		/* pairs first: accepting may move the array's entries */
		for (int i = n_pairs - 1; i >= 0; i--) {
			bool ok = true;

			for (int k = 0; k < 2 && ok; k++)
				if (pfd[1 + 2 * i + k].revents)
					ok = relay(pairs[i].fd[k], pairs[i].fd[1 - k],
						pairs[i].cut ? mode : MODE_PASS);
			if (!ok)
				drop_pair(i, false);
		}
		if (pfd[0].revents & POLLIN)
			accept_one(lfd, target, mode);
	}
	while (n_pairs > 0)
		drop_pair(n_pairs - 1, false);
	close(lfd);
	return 0;
}
