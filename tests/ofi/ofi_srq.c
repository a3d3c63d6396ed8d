/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_srq.c -- a shared receive queue over ofi tcp, real processes: two
 * initiators connect to one target whose two connections receive through
 * one SRQ with its own CQ.  Each message lands in a receive posted to the
 * SRQ, its completion on the SRQ's CQ with the receiving connection's
 * qp_num; a connection on an SRQ refuses rpma_recv; the SRQ cannot be
 * deleted while a connection uses it.
 */
#include <sys/prctl.h>

#include "ofi_target.h"

#define MSG 64

/* an initiator: connect, send its message, wait for the target to close */
static void
initiator(int port_fd, char tag)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq;
	static char buf[MSG];
	char port[16];
	int p;
	struct ibv_wc wc;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	H_CHECK(read(port_fd, &p, sizeof(p)) == sizeof(p), "port");
	snprintf(port, sizeof(port), "%d", p);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	snprintf(buf, sizeof(buf), "message from initiator %c", tag);
	H_CHECK(rpma_mr_reg(peer, buf, MSG, RPMA_MR_USAGE_SEND, &mr) == 0, "reg");
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", port, NULL, &req) == 0, "req");
	H_CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED,
		"established");
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	H_CHECK(rpma_send(conn, mr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, buf) == 0, "send");
	wc = h_wait_wc(cq, h_timeout_ms(5000));
	H_CHECK(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	H_CHECK(h_next_event(conn, h_timeout_ms(10000)) == RPMA_CONN_CLOSED, "closed");
	rpma_conn_delete(&conn);
	rpma_mr_dereg(&mr);
	rpma_peer_delete(&peer);
	_exit(0);
}

int
main(void)
{
	struct rpma_peer *peer = NULL;
	struct rpma_srq_cfg *scfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn[2] = { NULL, NULL };
	struct rpma_cq *srq_cq = NULL, *cq;
	static char buf[4 * MSG];
	int pipes[2][2], seen[2] = { 0, 0 }, p, status;
	uint32_t qp[2];
	char port[16];
	pid_t pid[2];

	h_seed();
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	/* the initiators fork first: no fabric state crosses fork */
	for (int i = 0; i < 2; i++) {
		H_CHECK(pipe(pipes[i]) == 0, "pipe");
		fflush(NULL);
		pid[i] = fork();
		H_CHECK(pid[i] >= 0, "fork");
		if (pid[i] == 0)
			initiator(pipes[i][0], (char)('A' + i));
	}

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_srq_cfg_new(&scfg) == 0 && rpma_srq_cfg_set_rq_size(scfg, 8) == 0 &&
		rpma_srq_cfg_set_rcq_size(scfg, 16) == 0, "srq cfg");
	H_CHECK(rpma_srq_new(peer, scfg, &srq) == 0, "srq_new");
	H_CHECK(rpma_srq_get_rcq(srq, &srq_cq) == 0 && srq_cq != NULL, "the SRQ's CQ");
	H_CHECK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_RECV, &mr) == 0, "reg");
	for (int i = 0; i < 4; i++)
		H_CHECK(rpma_srq_recv(srq, mr, (size_t)i * MSG, MSG,
			(void *)(uintptr_t)(i + 1)) == 0, "srq_recv %d", i);
	H_CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_conn_cfg_set_srq(cfg, srq) == 0,
		"conn cfg");

	p = h_listen(peer, &ep);
	snprintf(port, sizeof(port), "%d", p);
	for (int i = 0; i < 2; i++) {
		struct rpma_conn_req *req = NULL;

		H_CHECK(write(pipes[i][1], &p, sizeof(p)) == sizeof(p), "port to %d", i);
		H_CHECK(rpma_ep_next_conn_req(ep, cfg, &req) == 0, "request %d", i);
		H_CHECK(rpma_conn_req_connect(&req, NULL, &conn[i]) == 0, "accept %d", i);
		H_CHECK(h_next_event(conn[i], h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED,
			"established %d", i);
		H_CHECK(rpma_conn_get_qp_num(conn[i], &qp[i]) == 0, "qp num");
		H_CHECK(rpma_recv(conn[i], mr, 0, MSG, NULL) == RPMA_E_INVAL,
			"rpma_recv on a connection with an SRQ");
	}
	H_CHECK(qp[0] != qp[1], "two connections, two numbers");

	/* both messages arrive through the SRQ, on its CQ */
	for (int n = 0; n < 2; n++) {
		struct ibv_wc wc = h_wait_wc(srq_cq, h_timeout_ms(5000));
		const char *msg;
		int from;

		H_CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			wc.byte_len == MSG && wc.wr_id >= 1 && wc.wr_id <= 4,
			"receive: %s opcode %d len %u wr_id %llu",
			ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
			(unsigned long long)wc.wr_id);
		msg = buf + (wc.wr_id - 1) * MSG;
		H_CHECK(strncmp(msg, "message from initiator ", 23) == 0, "content");
		from = msg[23] - 'A';
		H_CHECK(from == 0 || from == 1, "sender");
		H_CHECK(wc.qp_num == qp[from], "qp_num %u names its connection (%u)",
			wc.qp_num, qp[from]);
		seen[from]++;
	}
	H_CHECK(seen[0] == 1 && seen[1] == 1, "one message from each");
	for (int i = 0; i < 2; i++) {
		H_CHECK(rpma_conn_get_cq(conn[i], &cq) == 0, "cq");
		h_expect_empty(cq);	/* nothing went to the connections' CQs */
	}
	H_CHECK(rpma_srq_delete(&srq) == RPMA_E_INVAL && srq != NULL,
		"an SRQ in use is not deleted");

	for (int i = 0; i < 2; i++) {
		H_CHECK(rpma_conn_disconnect(conn[i]) == 0, "disconnect");
		rpma_conn_delete(&conn[i]);
		H_CHECK(waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0, "initiator %d failed", i);
	}
	H_CHECK(rpma_srq_delete(&srq) == 0 && srq == NULL, "srq delete");
	H_CHECK(rpma_mr_dereg(&mr) == 0, "dereg");
	rpma_conn_cfg_delete(&cfg);
	rpma_srq_cfg_delete(&scfg);
	rpma_ep_shutdown(&ep);
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	printf("PASS: two connections received through one SRQ\n");
	return 0;
}
