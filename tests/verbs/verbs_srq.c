/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_srq.c -- a shared receive queue on verbs, real processes at
 * $RPMA_TESTING_IP (the VM rig; without an RDMA device it exits 77): two
 * initiators connect to one target whose two connections receive through
 * one SRQ with its own CQ.  Each message lands in a receive posted to the
 * SRQ, its completion on the SRQ's CQ with the receiving connection's
 * qp_num; a connection on an SRQ refuses rpma_recv; the SRQ cannot be
 * deleted while a connection uses it.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verbs_harness.h"







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
	CHECK(read(port_fd, &p, sizeof(p)) == sizeof(p), "port");
	snprintf(port, sizeof(port), "%d", p);
	peer = v_peer_new();
	snprintf(buf, sizeof(buf), "message from initiator %c", tag);
	CHECK(rpma_mr_reg(peer, buf, MSG, RPMA_MR_USAGE_SEND, &mr) == 0, "reg");
	for (int tries = 0;; tries++) {	/* a listener not up yet rejects */
		enum rpma_conn_event ev;

		CHECK(rpma_conn_req_new(peer, ip, port, NULL, &req) == 0, "req");
		CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
		ev = v_next_event(conn);
		if (ev == RPMA_CONN_ESTABLISHED)
			break;
		CHECK(tries < 20 && (ev == RPMA_CONN_REJECTED ||
			ev == RPMA_CONN_UNREACHABLE), "connect: %s",
			rpma_utils_conn_event_2str(ev));
		rpma_conn_delete(&conn);
		usleep(100000);
	}
	CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	CHECK(rpma_send(conn, mr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, buf) == 0, "send");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
	CHECK(v_next_event(conn) == RPMA_CONN_CLOSED, "closed");
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

	v_require_rdma();
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	/* the initiators fork first: no fabric state crosses fork */
	for (int i = 0; i < 2; i++) {
		CHECK(pipe(pipes[i]) == 0, "pipe");
		fflush(NULL);
		pid[i] = fork();
		CHECK(pid[i] >= 0, "fork");
		if (pid[i] == 0)
			initiator(pipes[i][0], (char)('A' + i));
	}

	peer = v_peer_new();
	CHECK(rpma_srq_cfg_new(&scfg) == 0 && rpma_srq_cfg_set_rq_size(scfg, 8) == 0 &&
		rpma_srq_cfg_set_rcq_size(scfg, 16) == 0, "srq cfg");
	CHECK(rpma_srq_new(peer, scfg, &srq) == 0, "srq_new");
	CHECK(rpma_srq_get_rcq(srq, &srq_cq) == 0 && srq_cq != NULL, "the SRQ's CQ");
	CHECK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_RECV, &mr) == 0, "reg");
	for (int i = 0; i < 4; i++)
		CHECK(rpma_srq_recv(srq, mr, (size_t)i * MSG, MSG,
			(void *)(uintptr_t)(i + 1)) == 0, "srq_recv %d", i);
	CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_conn_cfg_set_srq(cfg, srq) == 0,
		"conn cfg");

	for (p = 21000 + getpid() % 9000;; p++) {
		snprintf(port, sizeof(port), "%d", p);
		if (rpma_ep_listen(peer, ip, port, &ep) == 0)
			break;
		CHECK(p < 21000 + (int)(getpid() % 9000) + 50, "no free port");
	}
	for (int i = 0; i < 2; i++) {
		struct rpma_conn_req *req = NULL;

		CHECK(write(pipes[i][1], &p, sizeof(p)) == sizeof(p), "port to %d", i);
		CHECK(rpma_ep_next_conn_req(ep, cfg, &req) == 0, "request %d", i);
		CHECK(rpma_conn_req_connect(&req, NULL, &conn[i]) == 0, "accept %d", i);
		CHECK(v_next_event(conn[i]) == RPMA_CONN_ESTABLISHED,
			"established %d", i);
		CHECK(rpma_conn_get_qp_num(conn[i], &qp[i]) == 0, "qp num");
		CHECK(rpma_recv(conn[i], mr, 0, MSG, NULL) == RPMA_E_INVAL,
			"rpma_recv on a connection with an SRQ");
	}
	CHECK(qp[0] != qp[1], "two connections, two numbers");

	/* both messages arrive through the SRQ, on its CQ */
	for (int n = 0; n < 2; n++) {
		struct ibv_wc wc = v_wait_wc(srq_cq);
		const char *msg;
		int from;

		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			wc.byte_len == MSG && wc.wr_id >= 1 && wc.wr_id <= 4,
			"receive: %s opcode %d len %u wr_id %llu",
			ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
			(unsigned long long)wc.wr_id);
		msg = buf + (wc.wr_id - 1) * MSG;
		CHECK(strncmp(msg, "message from initiator ", 23) == 0, "content");
		from = msg[23] - 'A';
		CHECK(from == 0 || from == 1, "sender");
		CHECK(wc.qp_num == qp[from], "qp_num %u names its connection (%u)",
			wc.qp_num, qp[from]);
		seen[from]++;
	}
	CHECK(seen[0] == 1 && seen[1] == 1, "one message from each");
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc;

		CHECK(rpma_conn_get_cq(conn[i], &cq) == 0, "cq");
		CHECK(rpma_cq_get_wc(cq, 1, &wc, NULL) == RPMA_E_NO_COMPLETION,
			"nothing went to the connections' CQs");
	}
	CHECK(rpma_srq_delete(&srq) != 0 && srq != NULL,
		"an SRQ in use is not deleted");

	for (int i = 0; i < 2; i++) {
		CHECK(rpma_conn_disconnect(conn[i]) == 0, "disconnect");
		rpma_conn_delete(&conn[i]);
		CHECK(waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status) &&
			WEXITSTATUS(status) == 0, "initiator %d failed", i);
	}
	CHECK(rpma_srq_delete(&srq) == 0 && srq == NULL, "srq delete");
	CHECK(rpma_mr_dereg(&mr) == 0, "dereg");
	rpma_conn_cfg_delete(&cfg);
	rpma_srq_cfg_delete(&scfg);
	rpma_ep_shutdown(&ep);
	CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	printf("PASS: two verbs connections received through one SRQ\n");
	return 0;
}
