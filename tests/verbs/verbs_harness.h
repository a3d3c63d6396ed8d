/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_harness.h -- shared by the verbs tests: the address from
 * $RPMA_TESTING_IP (the VM rig sets it), a peer on the device that serves
 * it, and bounded waits for a connection event and a completion.
 */
#ifndef VERBS_HARNESS_H
#define VERBS_HARNESS_H

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rpma.h"

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fprintf(stderr, " [%s]\n", rpma_ext_errormsg()); \
			exit(1); \
		} \
	} while (0)

static const char *ip;

/*
 * The address, or exit 77 with the reason.  The device is probed in a
 * child: librdmacm keeps the devices it opened for the life of a process,
 * and a process forked after that cannot use them (the kernel refuses a
 * device file opened under another process's credentials).
 */
static inline const char *
v_require_rdma(void)
{
	int status;
	pid_t pid;

	ip = getenv("RPMA_TESTING_IP");
	if (ip == NULL) {
		printf("SKIP: RPMA_TESTING_IP is not set (the VM rig sets it: make check-rdma)\n");
		exit(77);
	}
	pid = fork();
	if (pid == 0) {
		struct ibv_context *ctx;
		_exit(rpma_utils_get_ibv_context(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL,
			&ctx) == 0 ? 0 : 1);
	}
	if (!(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0)) {
		printf("SKIP: no RDMA device serves %s\n", ip);
		exit(77);
	}
	return ip;
}

static inline struct rpma_peer *
v_peer_new(void)
{
	struct ibv_context *ctx;
	struct rpma_peer *peer;

	CHECK(rpma_utils_get_ibv_context(ip, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx) == 0,
		"device for %s", ip);
	CHECK(rpma_peer_new(ctx, &peer) == 0, "peer");
	return peer;
}

static inline enum rpma_conn_event
v_next_event(struct rpma_conn *conn)
{
	enum rpma_conn_event ev;
	struct pollfd pfd = { .events = POLLIN };

	CHECK(rpma_conn_get_event_fd(conn, &pfd.fd) == 0, "event fd");
	CHECK(poll(&pfd, 1, 10000) == 1, "no connection event in 10 s");
	CHECK(rpma_conn_next_event(conn, &ev) == 0, "next_event");
	return ev;
}

static inline struct ibv_wc
v_wait_wc(struct rpma_cq *cq)
{
	struct ibv_wc wc;
	struct pollfd pfd = { .events = POLLIN };

	CHECK(rpma_cq_get_fd(cq, &pfd.fd) == 0, "cq fd");
	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			return wc;
		CHECK(ret == RPMA_E_NO_COMPLETION, "rpma_cq_get_wc: %s", rpma_err_2str(ret));
		CHECK(poll(&pfd, 1, 10000) == 1, "no completion in 10 s");
		CHECK(rpma_cq_wait(cq) == 0, "rpma_cq_wait");
	}
}

#endif
