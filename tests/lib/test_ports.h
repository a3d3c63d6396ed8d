/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ports.h -- a block of loopback TCP ports that this test holds alone.
 *
 * Tests run in parallel (make -j2, and CI beside other jobs).  Ports drawn
 * from the pid collide with another test's, and above 32767 with the
 * ephemeral port of any connection on the machine.  Here the range
 * TEST_PORTS_LOW .. 32767 is cut into blocks of TEST_PORTS_BLOCK; a test
 * takes consecutive blocks by flock() on one file per block in
 * TEST_PORTS_DIR and keeps the locks until it exits (the kernel drops them
 * then, even after SIGKILL).  tests/lib/test_ports.sh does the same for the
 * shell tests with the same files.  A block where a port is already bound
 * is passed over.
 */
#ifndef TEST_PORTS_H
#define TEST_PORTS_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEST_PORTS_DIR "/tmp/rpma-repl-test-ports"
#define TEST_PORTS_LOW 12000
#define TEST_PORTS_BLOCK 64
#define TEST_PORTS_NBLOCKS ((32768 - TEST_PORTS_LOW) / TEST_PORTS_BLOCK)

/* whether nothing is bound to 127.0.0.1:port (TCP) */
static inline int
test_port_free(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

	if (fd < 0)
		return 0;
	/* as the engine binds: a port in TIME_WAIT counts as free */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return ok;
}

/* lock block b (its fd, kept open), or -1 when another test holds it */
static inline int
test_ports_lock(int b)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), TEST_PORTS_DIR "/%d", b);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	(void)fchmod(fd, 0666);	/* another user's tests share the files */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * test_ports -- the first of n consecutive free ports, held until exit;
 * exits 99 (a hard error to the test driver) when none are left.
 */
static inline int
test_ports(int n)
{
	int need = (n + TEST_PORTS_BLOCK - 1) / TEST_PORTS_BLOCK;
	int start = (int)(getpid() % TEST_PORTS_NBLOCKS);
	int fds[TEST_PORTS_NBLOCKS];

	if (n < 1 || need > TEST_PORTS_NBLOCKS)
		goto none;
	(void)mkdir(TEST_PORTS_DIR, 01777);
	(void)chmod(TEST_PORTS_DIR, 01777);
	for (int t = 0; t < TEST_PORTS_NBLOCKS; t++) {
		int b = (start + t) % TEST_PORTS_NBLOCKS, got = 0, ok = 1;

		if (b + need > TEST_PORTS_NBLOCKS)
			continue;
		while (got < need && (fds[got] = test_ports_lock(b + got)) >= 0)
			got++;
		int base = TEST_PORTS_LOW + b * TEST_PORTS_BLOCK;

		for (int p = 0; ok && got == need && p < n; p++)
			ok = test_port_free(base + p);
		if (got == need && ok)
			return base;	/* the fds stay open: the locks last */
		while (got > 0)
			close(fds[--got]);
	}
none:
	fprintf(stderr, "test_ports: no block of %d free ports in %d..32767\n",
		n, TEST_PORTS_LOW);
	exit(99);
}

#endif /* TEST_PORTS_H */
