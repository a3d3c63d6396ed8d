/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * plug_port.c -- cut a stopped node off from new connections to one of its
 * ports, as a network partition would, without touching the host's
 * network configuration (the scenario tests' m1_reinit_no_floor.sh):
 *
 *   plug_port HOST PORT
 *
 * The node listening on HOST:PORT must be stopped (SIGSTOP) first: then
 * nothing accepts, and the kernel completes connections only until the
 * listener's accept queue is full.  plug_port connects until a connection
 * does not complete within 500 ms, holds the ones that did, and prints
 * "plugged N" (N connections held) on stdout: from then on a connection
 * to that port times out, as to an unreachable host.  It holds them until
 * SIGTERM, then closes them and exits 0.
 * Once the node runs again, it accepts the closed connections (each ends
 * at once) and is reachable again.
 *
 * Exit status: 0 after it held and released the port; 1 if the port is
 * not plugged after 4096 connections (the node accepts: it is not
 * stopped) or a connection is refused; 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HELD_MAX 4096
#define WAIT_MS 500

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* 1: connected, 0: still in progress after WAIT_MS (fd stays open), -1 */
static int
connect_one(const struct addrinfo *ai, int *fd)
{
	struct pollfd p = { .events = POLLOUT };
	int err = 0;
	socklen_t len = sizeof(err);

	*fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
		ai->ai_protocol);
	if (*fd < 0)
		return -1;
	if (connect(*fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 1;
	if (errno != EINPROGRESS)
		return -1;
	p.fd = *fd;
	if (poll(&p, 1, WAIT_MS) == 0)
		return 0;
	if (getsockopt(*fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
		errno = err;
		return -1;
	}
	return 1;
}

int
main(int argc, char *argv[])
{
	static int held[HELD_MAX];
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM }, *ai;
	struct sigaction sa = { .sa_handler = on_term };
	sigset_t term, old;
	int n = 0, fd, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: plug_port HOST PORT\n");
		return 2;
	}
	if ((ret = getaddrinfo(argv[1], argv[2], &hints, &ai)) != 0) {
		fprintf(stderr, "plug_port: %s:%s: %s\n", argv[1], argv[2],
			gai_strerror(ret));
		return 2;
	}
	/* blocked until sigsuspend: a SIGTERM is never missed */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigprocmask(SIG_BLOCK, &term, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (;;) {
		ret = connect_one(ai, &fd);
		if (ret < 0) {
			fprintf(stderr, "plug_port: %s:%s: %s\n", argv[1], argv[2],
				strerror(errno));
			return 1;
		}
		if (ret == 0) {
			/* a SYN not answered: the queue is full; no retries */
			close(fd);
			break;
		}
		if (n == HELD_MAX) {
			fprintf(stderr, "plug_port: %s:%s still accepts after %d "
				"connections: is its process stopped?\n", argv[1],
				argv[2], n);
			return 1;
		}
		held[n++] = fd;
	}
	freeaddrinfo(ai);
	printf("plugged %d\n", n);
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	for (int i = 0; i < n; i++)
		close(held[i]);
	return 0;
}
