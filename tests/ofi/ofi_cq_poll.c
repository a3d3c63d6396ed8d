/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_cq_poll.c -- rpma_ext_cq_poll over ofi tcp, a real target process:
 * its argument checks; the time-out with nothing pending; the caller's own
 * fd waking it with the CQ idle; a write's completion waking it well
 * before the bound (and rpma_cq_get_wc then has it); and a completion
 * taken by polling first leaves no event behind that would keep it awake
 * (nor counts as ready when no sleep is asked).
 */
#include <sys/eventfd.h>

#include "ofi_target.h"

#define REGION 4096

static unsigned char src[REGION];

static long
ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int
main(void)
{
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	};
	struct h_target t;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	struct timespec t0;
	struct pollfd pfd;
	uint64_t one = 1;
	int efd, ret, got, cases = 0;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);
	h_target_start(&t, &tc);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, REGION, RPMA_MR_USAGE_WRITE_SRC, &src_mr) == 0,
		"reg src");
	conn = h_connect(peer, t.port, NULL, NULL, &remote);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	H_CHECK(efd >= 0, "eventfd");
	pfd = (struct pollfd){ .fd = efd, .events = POLLIN };

	/* 1. the arguments */
	H_CHECK(rpma_ext_cq_poll(NULL, 0, NULL, 0, 0) == RPMA_E_INVAL, "nothing to poll");
	H_CHECK(rpma_ext_cq_poll(NULL, 1, NULL, 0, 0) == RPMA_E_INVAL, "NULL cqs");
	H_CHECK(rpma_ext_cq_poll(&cq, 1, NULL, 1, 0) == RPMA_E_INVAL, "NULL fds");
	H_CHECK(rpma_ext_cq_poll(&cq, 33, NULL, 0, 0) == RPMA_E_INVAL, "33 cqs");
	H_CHECK(rpma_ext_cq_poll(&cq, -1, NULL, 0, 0) == RPMA_E_INVAL, "-1 cqs");
	H_CHECK(rpma_ext_cq_poll(&cq, 1, NULL, 0, -2) == RPMA_E_INVAL, "timeout -2");
	cases++;

	/* 2. nothing pending: the bound */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = rpma_ext_cq_poll(&cq, 1, NULL, 0, 200);
	H_CHECK(ret == 0, "an idle CQ ready (%d)", ret);
	H_CHECK(ms_since(&t0) >= 190, "returned after %ld ms of 200", ms_since(&t0));
	cases++;

	/* 3. the caller's fd, the CQ idle */
	H_CHECK(write(efd, &one, sizeof(one)) == sizeof(one), "eventfd write");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = rpma_ext_cq_poll(&cq, 1, &pfd, 1, 5000);
	H_CHECK(ret == 1 && (pfd.revents & POLLIN), "the caller's fd: %d, revents %#x",
		ret, pfd.revents);
	H_CHECK(ms_since(&t0) < 1000, "the caller's fd woke it after %ld ms",
		ms_since(&t0));
	H_CHECK(read(efd, &one, sizeof(one)) == sizeof(one), "eventfd read");
	cases++;

	/* 4. a completion wakes it, and is there to take */
	for (int round = 0; round < 20; round++) {
		H_CHECK(rpma_write(conn, remote, 0, src_mr, 0, REGION,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(0x40 + round)) == 0,
			"write %d", round);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		got = 0;
		while (!got && ms_since(&t0) < 5000) {
			ret = rpma_ext_cq_poll(&cq, 1, &pfd, 1, 5000);
			H_CHECK(ret >= 0, "poll: %d", ret);
			H_CHECK(!(pfd.revents & POLLIN), "the idle caller's fd was ready");
			ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			if (ret == 0)
				got = 1;
			else
				H_CHECK(ret == RPMA_E_NO_COMPLETION, "get_wc %d", ret);
		}
		H_CHECK(got, "round %d: no completion in 5 s", round);
		H_CHECK(ms_since(&t0) < 2000, "round %d: the completion took %ld ms",
			round, ms_since(&t0));
		H_CHECK(wc.wr_id == (uint64_t)(0x40 + round) && wc.status == IBV_WC_SUCCESS,
			"round %d: wc %#lx status %d", round, (unsigned long)wc.wr_id, wc.status);
	}
	cases++;

	/* 5. taken by polling first: no event left that keeps it awake */
	H_CHECK(rpma_write(conn, remote, 0, src_mr, 0, REGION,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x60) == 0, "write");
	wc = h_expect_wc(cq, 0x60, IBV_WC_SUCCESS);
	(void)rpma_ext_cq_poll(&cq, 1, NULL, 0, 0);	/* takes what may be left */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = rpma_ext_cq_poll(&cq, 1, NULL, 0, 200);
	H_CHECK(ret == 0, "ready after its completion was taken (%d)", ret);
	H_CHECK(ms_since(&t0) >= 190, "returned after %ld ms of 200", ms_since(&t0));
	/* nothing there and no sleep asked: nothing is ready */
	ret = rpma_ext_cq_poll(&cq, 1, &pfd, 1, 0);
	H_CHECK(ret == 0, "an idle CQ ready without a sleep (%d)", ret);
	h_expect_empty(cq);
	cases++;

	close(efd);
	h_close(&conn);
	H_CHECK(rpma_mr_remote_delete(&remote) == 0, "remote delete");
	H_CHECK(rpma_mr_dereg(&src_mr) == 0, "dereg");
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	h_target_stop(&t);
	printf("PASS: %d cases\n", cases);
	return 0;
}
