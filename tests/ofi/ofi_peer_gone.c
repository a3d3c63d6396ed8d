/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_peer_gone.c -- the target dies (SIGKILL) with writes and flushes of
 * ours outstanding: it is stopped first, so none of the flushes can have
 * been served and the later writes cannot all have left.  Every operation
 * must complete, each flush with an error status (no flush is acknowledged
 * by a dead target), without the application having to read the
 * connection event first (as on verbs, where the QP's error state flushes
 * the work requests); the connection reports RPMA_CONN_LOST or CLOSED;
 * then everything is deleted cleanly (the local region is no longer held).
 */
#include "ofi_target.h"

#define REGION (8 << 20)
#define NOPS 8

static unsigned char src[REGION];

/* collect completions until n are in or the time is up */
static int
drain(struct rpma_cq *cq, struct ibv_wc *wc, int have, int n, int timeout_ms)
{
	int fd;
	struct pollfd pfd = { .events = POLLIN };

	H_CHECK(rpma_cq_get_fd(cq, &fd) == 0, "cq fd");
	pfd.fd = fd;
	for (int waited = 0; have < n && waited < timeout_ms; waited += 50) {
		int got = 0, ret = rpma_cq_get_wc(cq, n - have, wc + have, &got);

		if (ret == 0) {
			have += got;
			continue;
		}
		H_CHECK(ret == RPMA_E_NO_COMPLETION, "get_wc: %s", rpma_err_2str(ret));
		if (poll(&pfd, 1, 50) > 0)
			H_CHECK(rpma_cq_wait(cq) == 0, "cq_wait");
	}
	return have;
}

int
main(void)
{
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	};
	struct h_target t, t2;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn *conn, *conn2;
	struct rpma_mr_remote *remote2 = NULL;
	struct rpma_cq *cq, *cq2;
	struct ibv_wc wc[2 * NOPS];
	enum rpma_conn_event ev;
	int n, status, errors = 0, cases = 0;
	unsigned seed = h_seed();

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	h_fill(src, REGION, seed);
	h_target_start(&t, &tc);
	h_target_start(&t2, &tc);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, REGION, RPMA_MR_USAGE_WRITE_SRC, &mr) == 0, "reg");
	H_CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_conn_cfg_set_sq_size(cfg, 32) == 0 &&
		rpma_conn_cfg_set_cq_size(cfg, 32) == 0, "cfg");
	conn = h_connect(peer, t.port, cfg, NULL, &remote);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	/* working before */
	H_CHECK(rpma_write(conn, remote, 0, mr, 0, 4096, RPMA_F_COMPLETION_ON_ERROR,
		NULL) == 0, "write");
	H_CHECK(rpma_flush(conn, remote, 0, 4096, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)1) == 0, "flush");
	h_expect_wc(cq, 1, IBV_WC_SUCCESS);

	/* the target stops serving; 64 MiB of writes and 8 flushes pile up */
	h_freeze(t.pid);
	for (int i = 0; i < NOPS; i++) {
		H_CHECK(rpma_write(conn, remote, 0, mr, 0, REGION, RPMA_F_COMPLETION_ALWAYS,
			(void *)(uintptr_t)(0x100 + i)) == 0, "write %d", i);
		H_CHECK(rpma_flush(conn, remote, 0, REGION, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(0x200 + i)) == 0,
			"flush %d", i);
	}
	usleep(100000);
	n = drain(cq, wc, 0, 2 * NOPS, 0);
	for (int i = 0; i < n; i++)
		H_CHECK(wc[i].wr_id < 0x200, "flush 0x%llx completed with a stopped target",
			(unsigned long long)wc[i].wr_id);
	H_CHECK(kill(t.pid, SIGKILL) == 0, "SIGKILL");
	status = h_reap(t.pid, h_timeout_ms(5000));
	H_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "target status 0x%x",
		status);

	/* every operation completes, before anyone reads the event */
	n = drain(cq, wc, n, 2 * NOPS, h_timeout_ms(5000));
	H_CHECK(n == 2 * NOPS, "%d of %d operations completed after the target died",
		n, 2 * NOPS);
	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id >= 0x200)
			H_CHECK(wc[i].status != IBV_WC_SUCCESS,
				"flush 0x%llx acknowledged by a dead target",
				(unsigned long long)wc[i].wr_id);
		errors += wc[i].status != IBV_WC_SUCCESS;
	}
	H_CHECK(errors > NOPS, "only %d operations failed", errors);
	printf("%d of %d operations completed in error\n", errors, n);
	cases += 3;

	ev = h_next_event(conn, h_timeout_ms(5000));
	H_CHECK(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED, "event %s",
		rpma_utils_conn_event_2str(ev));
	h_expect_empty(cq);
	cases++;

	/*
	 * Only flushes outstanding: their request writes have left (and
	 * completed here) before the target dies, so nothing on the wire can
	 * fail them -- the core must still complete them in error.
	 */
	conn2 = h_connect(peer, t2.port, cfg, NULL, &remote2);
	H_CHECK(rpma_conn_get_cq(conn2, &cq2) == 0, "cq");
	h_freeze(t2.pid);
	for (int i = 0; i < 4; i++)
		H_CHECK(rpma_flush(conn2, remote2, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(0x300 + i)) == 0,
			"flush %d", i);
	usleep(100000);
	H_CHECK(kill(t2.pid, SIGKILL) == 0, "SIGKILL");
	status = h_reap(t2.pid, h_timeout_ms(5000));
	n = drain(cq2, wc, 0, 4, h_timeout_ms(5000));
	H_CHECK(n == 4, "%d of 4 flushes completed after the target died", n);
	for (int i = 0; i < n; i++)
		H_CHECK(wc[i].status != IBV_WC_SUCCESS, "flush 0x%llx acknowledged by a dead target",
			(unsigned long long)wc[i].wr_id);
	ev = h_next_event(conn2, h_timeout_ms(5000));
	H_CHECK(ev == RPMA_CONN_LOST || ev == RPMA_CONN_CLOSED, "event %s",
		rpma_utils_conn_event_2str(ev));
	h_expect_empty(cq2);
	H_CHECK(rpma_conn_delete(&conn2) == 0, "conn delete");
	H_CHECK(rpma_mr_remote_delete(&remote2) == 0, "remote delete");
	close(t2.cmd_fd);
	close(t2.rep_fd);
	cases += 2;

	/* clean teardown: nothing holds the region any more */
	H_CHECK(rpma_conn_disconnect(conn) == 0, "disconnect after loss");
	H_CHECK(rpma_conn_delete(&conn) == 0, "conn delete");
	H_CHECK(rpma_mr_remote_delete(&remote) == 0, "remote delete");
	H_CHECK(rpma_mr_dereg(&mr) == 0, "dereg: %s", rpma_ext_errormsg());
	H_CHECK(rpma_conn_cfg_delete(&cfg) == 0, "cfg delete");
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	close(t.cmd_fd);
	close(t.rep_fd);
	cases++;
	printf("PASS: %d cases\n", cases);
	return 0;
}
