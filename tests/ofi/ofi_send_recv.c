/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_send_recv.c -- two-sided operations over ofi tcp, real processes:
 * send, send_with_imm (IBV_WC_WITH_IMM, imm_data in network order as in
 * librpma), write_with_imm (IBV_WC_RECV_RDMA_WITH_IMM at the target), a
 * 0-byte send; receives posted with rpma_conn_req_recv before accept and
 * before connect; the target's separate receive CQ (rcq_size > 0), the
 * initiator's shared completion channel (rpma_conn_get_compl_fd,
 * rpma_conn_wait).  Shared receive queues have their own test (ofi_srq).
 */
#include <arpa/inet.h>

#include "ofi_target.h"

#define BUF 65536
#define LEN_A 100
#define LEN_B 200
#define LEN_C 512
#define OFF_C 32768
#define LEN_D 300
#define IMM_B 0x12345678u
#define IMM_C 0xCAFEF00Du
#define IMM_D 0x0000ABCDu

static unsigned char msg_a[LEN_A], msg_b[LEN_B], msg_c[LEN_C], msg_d[LEN_D];
static int cases;

static void
make_messages(unsigned seed)
{
	h_fill(msg_a, LEN_A, seed + 1);
	h_fill(msg_b, LEN_B, seed + 2);
	h_fill(msg_c, LEN_C, seed + 3);
	h_fill(msg_d, LEN_D, seed + 4);
}

static struct rpma_conn_req *
next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, int expect)
{
	struct rpma_conn_req *req = NULL;
	struct pollfd pfd = { .events = POLLIN };
	int ret;

	H_CHECK(rpma_ep_get_fd(ep, &pfd.fd) == 0, "ep fd");
	h_nonblock(pfd.fd);
	for (;;) {
		H_CHECK(poll(&pfd, 1, h_timeout_ms(10000)) > 0, "no request");
		ret = rpma_ep_next_conn_req(ep, cfg, &req);
		if (ret != RPMA_E_NO_EVENT)
			break;
	}
	H_CHECK(ret == expect, "next_conn_req: %s, expected %s", rpma_err_2str(ret),
		rpma_err_2str(expect));
	return req;
}

/* the receive at wc: which of the posted buffers, and its bytes */
static void
check_recv(const struct ibv_wc *wc, const unsigned char *buf,
		const unsigned char *msg, uint32_t len, bool with_imm, uint32_t imm)
{
	H_CHECK(wc->status == IBV_WC_SUCCESS && wc->opcode == IBV_WC_RECV,
		"recv: status %s opcode %d", ibv_wc_status_str(wc->status), wc->opcode);
	H_CHECK(wc->wr_id >= 1 && wc->wr_id <= 4, "recv wr_id %llu",
		(unsigned long long)wc->wr_id);
	H_CHECK(wc->byte_len == len, "recv byte_len %u, sent %u", wc->byte_len, len);
	H_CHECK(memcmp(buf + (wc->wr_id - 1) * 4096, msg, len) == 0, "recv bytes differ");
	H_CHECK(!!(wc->wc_flags & IBV_WC_WITH_IMM) == with_imm, "wc_flags 0x%x",
		wc->wc_flags);
	if (with_imm)
		H_CHECK(ntohl(wc->imm_data) == imm, "imm 0x%08x (network order: 0x%08x)",
			ntohl(wc->imm_data), wc->imm_data);
}

static void
target(int ready_fd)
{
	static unsigned char buf[BUF];
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq, *rcq;
	struct rpma_conn_private_data pdata;
	unsigned char desc[H_DESC_SIZE];
	struct ibv_wc wc;
	int port, fd;

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "target peer");
	H_CHECK(rpma_mr_reg(peer, buf, BUF, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND |
		RPMA_MR_USAGE_WRITE_DST, &mr) == 0, "target reg");
	H_CHECK(rpma_mr_get_descriptor(mr, desc) == 0, "descriptor");
	H_CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_conn_cfg_set_rcq_size(cfg, 16) == 0 &&
		rpma_conn_cfg_set_rq_size(cfg, 16) == 0, "cfg");
	port = h_listen(peer, &ep);
	H_CHECK(write(ready_fd, &port, sizeof(port)) == sizeof(port), "ready");

	/* 1. receives posted before accept, into the separate receive CQ */
	req = next_req(ep, cfg, 0);
	for (int i = 1; i <= 4; i++)
		H_CHECK(rpma_conn_req_recv(req, mr, (size_t)(i - 1) * 4096, 4096,
			(void *)(uintptr_t)i) == 0, "recv %d before accept", i);
	pdata.ptr = desc;
	pdata.len = sizeof(desc);
	H_CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED,
		"established");
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0 && rpma_conn_get_rcq(conn, &rcq) == 0 &&
		rcq != NULL && rcq != cq, "cq and a separate rcq");
	H_CHECK(rpma_conn_get_compl_fd(conn, &fd) == RPMA_E_NOT_SHARED_CHNL,
		"compl fd without a shared channel");

	wc = h_wait_wc(rcq, h_timeout_ms(5000));
	check_recv(&wc, buf, msg_a, LEN_A, false, 0);
	wc = h_wait_wc(rcq, h_timeout_ms(5000));
	check_recv(&wc, buf, msg_b, LEN_B, true, IMM_B);
	wc = h_wait_wc(rcq, h_timeout_ms(5000));
	H_CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		(wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == IMM_C,
		"write_with_imm: status %s opcode %d flags 0x%x imm 0x%08x",
		ibv_wc_status_str(wc.status), wc.opcode, wc.wc_flags, ntohl(wc.imm_data));
	H_CHECK(memcmp(buf + OFF_C, msg_c, LEN_C) == 0,
		"write_with_imm: data not in place at its completion");
	wc = h_wait_wc(rcq, h_timeout_ms(5000));
	check_recv(&wc, buf, msg_d, 0, false, 0);	/* the 0-byte send */
	h_expect_empty(cq);	/* receives never land in the main CQ */
	h_expect_empty(rcq);	/* write_with_imm consumed no receive */

	/* 3. answer: send_with_imm, its completion on the main CQ */
	memcpy(buf + 40000, msg_d, LEN_D);
	H_CHECK(rpma_send_with_imm(conn, mr, 40000, LEN_D, RPMA_F_COMPLETION_ALWAYS,
		IMM_D, (void *)0x5E) == 0, "send_with_imm");
	wc = h_expect_wc(cq, 0x5E, IBV_WC_SUCCESS);
	H_CHECK(wc.opcode == IBV_WC_SEND, "send opcode %d", wc.opcode);

	/* the receive left over completes in error when the peer closes */
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_CLOSED, "closed");
	h_expect_wc(rcq, 4, IBV_WC_WR_FLUSH_ERR);
	h_expect_empty(rcq);
	h_expect_empty(cq);
	H_CHECK(rpma_conn_delete(&conn) == 0, "delete");
	H_CHECK(rpma_mr_dereg(&mr) == 0, "dereg");
	rpma_conn_cfg_delete(&cfg);
	H_CHECK(rpma_ep_shutdown(&ep) == 0 && rpma_peer_delete(&peer) == 0, "cleanup");
	exit(0);
}

/* one completion from the shared channel: which CQ it was on */
static struct ibv_wc
wait_shared(struct rpma_conn *conn, bool expect_rcq)
{
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	bool is_rcq = !expect_rcq;

	alarm((unsigned)h_timeout_ms(10));	/* rpma_conn_wait has no timeout */
	H_CHECK(rpma_conn_wait(conn, 0, &cq, &is_rcq) == 0, "conn_wait");
	alarm(0);
	H_CHECK(is_rcq == expect_rcq, "conn_wait: is_rcq %d", is_rcq);
	H_CHECK(rpma_cq_get_wc(cq, 1, &wc, NULL) == 0, "get_wc after conn_wait");
	return wc;
}

int
main(void)
{
	static unsigned char buf[BUF];
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data in;
	struct rpma_cq *cq, *rcq;
	struct ibv_wc wc[2];
	char port[16];
	int ready[2], p, fd, status;
	unsigned seed = h_seed();
	pid_t pid, parent = getpid();

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	make_messages(seed);
	H_CHECK(pipe(ready) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	H_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(5);
		close(ready[0]);
		target(ready[1]);
	}
	close(ready[1]);
	{
		struct pollfd pfd = { .fd = ready[0], .events = POLLIN };
		H_CHECK(poll(&pfd, 1, h_timeout_ms(10000)) > 0 &&
			read(ready[0], &p, sizeof(p)) == sizeof(p), "target start");
	}
	snprintf(port, sizeof(port), "%d", p);

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, buf, BUF, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV |
		RPMA_MR_USAGE_WRITE_SRC, &mr) == 0, "reg");

	H_CHECK(rpma_conn_cfg_new(&cfg) == 0, "cfg");

	/* 2. shared channel with a receive CQ; a receive posted before connect */
	H_CHECK(rpma_conn_cfg_set_compl_channel(cfg, true) == 0 &&
		rpma_conn_cfg_set_rcq_size(cfg, 8) == 0, "cfg");
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", port, cfg, &req) == 0, "req");
	H_CHECK(rpma_conn_req_recv(req, mr, 50000, 4096, (void *)0x11) == 0,
		"recv before connect");
	H_CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED, "established");
	H_CHECK(rpma_conn_get_private_data(conn, &in) == 0 && in.len == H_DESC_SIZE, "pdata");
	H_CHECK(rpma_mr_remote_from_descriptor(in.ptr, in.len, &remote) == 0, "remote");
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0 && rpma_conn_get_rcq(conn, &rcq) == 0 &&
		rcq != NULL, "cqs");
	H_CHECK(rpma_conn_get_compl_fd(conn, &fd) == 0 && fd >= 0, "compl fd");
	H_CHECK(rpma_cq_wait(cq) == RPMA_E_SHARED_CHANNEL, "cq_wait on a shared channel");
	cases += 2;

	/* 3. send, send_with_imm, write_with_imm, 0-byte send */
	memcpy(buf, msg_a, LEN_A);
	memcpy(buf + 4096, msg_b, LEN_B);
	memcpy(buf + 8192, msg_c, LEN_C);
	H_CHECK(rpma_send(conn, mr, 0, LEN_A, RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "send");
	H_CHECK(rpma_send_with_imm(conn, mr, 4096, LEN_B, RPMA_F_COMPLETION_ON_ERROR,
		IMM_B, NULL) == 0, "send_with_imm");
	H_CHECK(rpma_write_with_imm(conn, remote, OFF_C, mr, 8192, LEN_C,
		RPMA_F_COMPLETION_ALWAYS, IMM_C, (void *)0x3C) == 0, "write_with_imm");
	H_CHECK(rpma_send(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, (void *)0x0B) == 0,
		"0-byte send");
	wc[0] = wait_shared(conn, false);
	H_CHECK(wc[0].wr_id == 0x3C && wc[0].status == IBV_WC_SUCCESS &&
		wc[0].opcode == IBV_WC_RDMA_WRITE, "write_with_imm completion 0x%llx %s %d",
		(unsigned long long)wc[0].wr_id, ibv_wc_status_str(wc[0].status), wc[0].opcode);
	if (rpma_cq_get_wc(cq, 1, &wc[1], NULL) != 0)
		wc[1] = wait_shared(conn, false);
	H_CHECK(wc[1].wr_id == 0x0B && wc[1].status == IBV_WC_SUCCESS &&
		wc[1].opcode == IBV_WC_SEND, "send completion 0x%llx %s %d",
		(unsigned long long)wc[1].wr_id, ibv_wc_status_str(wc[1].status), wc[1].opcode);
	cases += 4;

	/* 4. the target's answer arrives on the receive CQ */
	wc[0] = wait_shared(conn, true);
	H_CHECK(wc[0].wr_id == 0x11 && wc[0].status == IBV_WC_SUCCESS &&
		wc[0].opcode == IBV_WC_RECV && wc[0].byte_len == LEN_D &&
		(wc[0].wc_flags & IBV_WC_WITH_IMM) && ntohl(wc[0].imm_data) == IMM_D,
		"answer: 0x%llx %s opcode %d len %u flags 0x%x imm 0x%08x",
		(unsigned long long)wc[0].wr_id, ibv_wc_status_str(wc[0].status),
		wc[0].opcode, wc[0].byte_len, wc[0].wc_flags, ntohl(wc[0].imm_data));
	H_CHECK(memcmp(buf + 50000, msg_d, LEN_D) == 0, "answer bytes differ");
	h_expect_empty(cq);
	h_expect_empty(rcq);
	cases += 2;

	h_close(&conn);
	status = h_reap(pid, h_timeout_ms(10000));
	H_CHECK(status == 0, "target exit status 0x%x", status);
	cases += 5;	/* the target's checks: 4 receives, its send */
	H_CHECK(rpma_mr_remote_delete(&remote) == 0, "remote delete");
	H_CHECK(rpma_mr_dereg(&mr) == 0, "dereg");
	rpma_conn_cfg_delete(&cfg);
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	printf("PASS: %d cases\n", cases);
	return 0;
}
