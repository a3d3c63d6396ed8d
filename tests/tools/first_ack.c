/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * first_ack.c -- how long until some node acknowledges an append: the
 * failover tests' stopwatch.  Started right after the primary is killed,
 * it tries each admin socket in turn (a fresh connection, one APPEND,
 * at most POLL_MS for its answer) until one answers ok, and prints
 *
 *   INDEX MS LSN
 *
 * INDEX the socket's place among the arguments (from 1), MS the
 * milliseconds since it started, LSN the acknowledged record's.  A process
 * per attempt (replctl) would add its own start-up to every try; this
 * stays in one.
 *
 *   first_ack TIMEOUT_MS CLIENT_ID SOCK...
 *
 * Exit 0 on an acknowledgement, 1 when none came within TIMEOUT_MS.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 100		/* a node changing state holds an append */
#define PAUSE_MS 5		/* between rounds of the sockets */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* one try: the ack's LSN, or 0 */
static uint64_t
try_append(const char *path, const char *client_id)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char req[128], buf[1024];
	size_t have = 0;
	uint64_t lsn = 0;
	int fd, len;

	if (strlen(path) >= sizeof(sun.sun_path))
		return 0;
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
		goto out;
	len = snprintf(req, sizeof(req), "APPEND 5 %s\nprobe", client_id);
	if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len)
		goto out;
	while (have < sizeof(buf) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, POLL_MS) != 1)
			goto out;
		if ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) <= 0)
			goto out;
		have += (size_t)n;
		buf[have] = '\0';
		if (strchr(buf, '\n') != NULL)
			break;
	}
	if (strncmp(buf, "{\"ok\":true", 10) == 0 && strstr(buf, "\"lsn\":"))
		lsn = strtoull(strstr(buf, "\"lsn\":") + 6, NULL, 10);
out:
	close(fd);
	return lsn;
}

int
main(int argc, char **argv)
{
	uint64_t t0 = now_ms(), limit, lsn;
	char *end;

	if (argc < 4 || (limit = strtoull(argv[1], &end, 10)) == 0 || *end) {
		fprintf(stderr, "usage: first_ack TIMEOUT_MS CLIENT_ID SOCK...\n");
		return 2;
	}
	while (now_ms() - t0 < limit) {
		for (int i = 3; i < argc; i++)
			if ((lsn = try_append(argv[i], argv[2])) != 0) {
				printf("%d %llu %llu\n", i - 2,
					(unsigned long long)(now_ms() - t0),
					(unsigned long long)lsn);
				return 0;
			}
		usleep(PAUSE_MS * 1000);
	}
	fprintf(stderr, "first_ack: no acknowledgement in %llu ms\n",
		(unsigned long long)limit);
	return 1;
}
