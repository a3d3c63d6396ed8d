/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_polled.c -- a polled connection (rpma_ext_conn_cfg_set_polled) over
 * ofi tcp, a real target process: the setting's checks; no core progress
 * thread is started for it (one is for an ordinary connection, the
 * control); its CQ has no fd; a write and its flush complete, with the
 * bytes in place, whether the application spins on rpma_cq_get_wc, sleeps
 * in rpma_cq_wait or in rpma_ext_cq_poll; and with the target gone, the
 * flushes it never answered complete in error for a thread that waits.
 */
#include <dirent.h>

#include "ofi_target.h"

#define REGION 65536

static unsigned char src[REGION];

/* how many threads of this process are named name */
static int
threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	H_CHECK(d != NULL, "/proc/self/task");
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		n += strcmp(comm, name) == 0;
	}
	closedir(d);
	return n;
}

enum how { SPIN, WAIT, POLL };

/* the next completion, taken the way how says, within timeout_ms */
static struct ibv_wc
take(struct rpma_cq *cq, enum how how, int timeout_ms)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			return wc;
		H_CHECK(ret == RPMA_E_NO_COMPLETION, "get_wc: %s", rpma_err_2str(ret));
		clock_gettime(CLOCK_MONOTONIC, &t);
		H_CHECK((t.tv_sec - t0.tv_sec) * 1000 +
			(t.tv_nsec - t0.tv_nsec) / 1000000 < timeout_ms,
			"no completion within %d ms", timeout_ms);
		if (how == WAIT)
			H_CHECK(rpma_cq_wait(cq) == 0, "rpma_cq_wait");
		else if (how == POLL)
			H_CHECK(rpma_ext_cq_poll(&cq, 1, NULL, 0, 100) >= 0,
				"rpma_ext_cq_poll");
	}
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
	struct rpma_conn_req *req = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL, *remote2 = NULL;
	struct rpma_conn *conn, *conn2;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	struct h_rep r;
	bool polled = false;
	int fd, status, cases = 0;
	unsigned seed = h_seed();

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	h_target_start(&t, &tc);
	h_target_start(&t2, &tc);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, REGION, RPMA_MR_USAGE_WRITE_SRC, &mr) == 0, "reg");

	/* 1. the setting */
	H_CHECK(rpma_conn_cfg_new(&cfg) == 0, "cfg");
	H_CHECK(rpma_ext_conn_cfg_set_polled(NULL, true) == RPMA_E_INVAL, "NULL cfg");
	H_CHECK(rpma_ext_conn_cfg_get_polled(cfg, NULL) == RPMA_E_INVAL, "NULL out");
	H_CHECK(rpma_ext_conn_cfg_get_polled(cfg, &polled) == 0 && !polled,
		"polled by default");
	H_CHECK(rpma_ext_conn_cfg_set_polled(cfg, true) == 0 &&
		rpma_ext_conn_cfg_get_polled(cfg, &polled) == 0 && polled, "set");
	/* a shared completion channel is an fd: refused with polling */
	H_CHECK(rpma_conn_cfg_set_compl_channel(cfg, true) == 0, "shared");
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", t.port, cfg, &req) ==
		RPMA_E_INVAL, "polled with a shared channel accepted");
	H_CHECK(rpma_conn_cfg_set_compl_channel(cfg, false) == 0, "not shared");
	cases++;

	/* 2. connected: no progress thread, no fd */
	conn = h_connect(peer, t.port, cfg, NULL, &remote);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	H_CHECK(threads_named("rpma-progress") == 0,
		"a progress thread runs for a polled connection");
	H_CHECK(rpma_cq_get_fd(cq, &fd) == RPMA_E_NOSUPP, "a polled CQ gave an fd");
	cases++;

	/* 3. writes and their flushes, reaped three ways; the bytes land */
	for (int round = 0; round < 30; round++) {
		enum how how = (enum how)(round % 3);
		size_t len = 64 + (size_t)(rand_r(&seed) % (REGION - 64));

		h_fill(src, len, seed + (unsigned)round);
		H_CHECK(rpma_ext_write_flush(conn, remote, 0, mr, 0, len,
			RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			(void *)(uintptr_t)(0x10 + round)) == 0, "write_flush %d", round);
		wc = take(cq, how, h_timeout_ms(5000));
		H_CHECK(wc.wr_id == (uint64_t)(0x10 + round) && wc.status == IBV_WC_SUCCESS,
			"round %d: wr_id %#llx status %s", round,
			(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
		r = h_cmd(&t, H_CMD_HASH, 0, len, 0);
		H_CHECK(r.v[0] == h_hash(src, len), "round %d: the target's %zu bytes "
			"differ", round, len);
	}
	H_CHECK(threads_named("rpma-progress") == 0, "a progress thread started");
	cases++;

	/* 4. the control: an ordinary connection has the core's thread */
	conn2 = h_connect(peer, t2.port, NULL, NULL, &remote2);
	/* the thread names itself once it runs: give a loaded machine time */
	for (int i = 0; i < 200 && threads_named("rpma-progress") == 0; i++)
		usleep(10000);
	H_CHECK(threads_named("rpma-progress") == 1, "%d progress threads for an "
		"ordinary connection", threads_named("rpma-progress"));
	h_close(&conn2);
	H_CHECK(rpma_mr_remote_delete(&remote2) == 0, "remote delete");
	h_target_stop(&t2);
	cases++;

	/* 5. the target stops, then dies: a waiter gets its flushes failed
	 * (a bounded wait: without the failing it would wait forever) */
	h_freeze(t.pid);
	for (int i = 0; i < 4; i++)
		H_CHECK(rpma_flush(conn, remote, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(0x300 + i)) == 0,
			"flush %d", i);
	usleep(100000);
	H_CHECK(kill(t.pid, SIGKILL) == 0, "SIGKILL");
	status = h_reap(t.pid, h_timeout_ms(5000));
	H_CHECK(WIFSIGNALED(status), "target status 0x%x", status);
	for (int i = 0; i < 4; i++) {
		wc = take(cq, POLL, h_timeout_ms(5000));
		H_CHECK(wc.wr_id >= 0x300 && wc.status != IBV_WC_SUCCESS,
			"flush %#llx acknowledged by a dead target",
			(unsigned long long)wc.wr_id);
	}
	h_expect_empty(cq);
	close(t.cmd_fd);
	close(t.rep_fd);
	cases++;

	H_CHECK(rpma_conn_delete(&conn) == 0, "conn delete");
	H_CHECK(rpma_mr_remote_delete(&remote) == 0, "remote delete");
	H_CHECK(rpma_mr_dereg(&mr) == 0, "dereg: %s", rpma_ext_errormsg());
	H_CHECK(rpma_conn_cfg_delete(&cfg) == 0, "cfg delete");
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	printf("PASS: %d cases\n", cases);
	return 0;
}
