/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_harness.h -- real processes over loopback for the ofi provider tests:
 * a target child that registers a region and serves it, and the parent as
 * initiator.  The region's descriptor travels in the accept's private data.
 * Timeouts scale with RPMA_TEST_TIMEOUT_SCALE; the port comes from the pid.
 */
#ifndef OFI_HARNESS_H
#define OFI_HARNESS_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpma.h"
#include "../lib/test_ports.h"

#define H_CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, " [%s]\n", rpma_ext_errormsg()); \
			exit(1); \
		} \
	} while (0)

static inline int
h_timeout_ms(int base_ms)
{
	const char *s = getenv("RPMA_TEST_TIMEOUT_SCALE");
	int scale = s ? atoi(s) : 1;

	return base_ms * (scale > 0 ? scale : 1);
}

/* a port of our own: tests of different processes run side by side */
static inline void
h_port(char *buf, size_t len)
{
	snprintf(buf, len, "%d", test_ports(1));
}

/* wait for one completion on cq, with a timeout; returns the wc */
static inline struct ibv_wc
h_wait_wc(struct rpma_cq *cq, int timeout_ms)
{
	struct ibv_wc wc;
	struct pollfd pfd;
	int fd, ret;

	H_CHECK(rpma_cq_get_fd(cq, &fd) == 0, "cq fd");
	pfd.fd = fd;
	pfd.events = POLLIN;
	for (;;) {
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			return wc;
		H_CHECK(ret == RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s",
			rpma_err_2str(ret));
		ret = poll(&pfd, 1, timeout_ms);
		H_CHECK(ret > 0, "no completion within %d ms", timeout_ms);
		H_CHECK(rpma_cq_wait(cq) == 0, "rpma_cq_wait");
	}
}

/* the next connection event, with a timeout */
static inline enum rpma_conn_event
h_next_event(struct rpma_conn *conn, int timeout_ms)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	struct pollfd pfd = { .events = POLLIN };

	H_CHECK(rpma_conn_get_event_fd(conn, &pfd.fd) == 0, "event fd");
	H_CHECK(poll(&pfd, 1, timeout_ms) > 0, "no connection event within %d ms",
		timeout_ms);
	H_CHECK(rpma_conn_next_event(conn, &ev) == 0, "next_event");
	return ev;
}

/* seed for random test data: printed, RPMA_TEST_SEED repeats it */
static inline unsigned
h_seed(void)
{
	const char *s = getenv("RPMA_TEST_SEED");
	unsigned seed = s ? (unsigned)strtoul(s, NULL, 0) :
		(unsigned)time(NULL) ^ (unsigned)getpid();

	printf("seed %u (set RPMA_TEST_SEED to repeat)\n", seed);
	return seed;
}

#endif
