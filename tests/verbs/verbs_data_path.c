/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_data_path.c -- the verbs provider end to end, target and initiator
 * in two processes over rdma_cm at $RPMA_TESTING_IP (the VM rig sets it).
 * Without an RDMA device it exits 77 with the reason.
 *
 * Shown: connect with the target's format-0 descriptor in private data;
 * write then read back the region's last bytes; an APM flush of the last
 * bytes (librpma's read at the range start would fault there); PERSISTENT
 * refused without direct write to PMem and allowed after the peer cfg
 * declares it; an emulated atomic write the target sees; send/recv with an
 * immediate; write_with_imm; the checks librpma lacks fail before posting.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_harness.h"

#define REGION 65536
#define MSG 64


static char port[16];




/* the target: serves a region, checks what the initiator did to it */
static void
target(int to_parent, int from_parent)
{
	struct rpma_peer *peer = v_peer_new();
	struct rpma_mr_local *mr, *msg_mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	unsigned char desc[64];
	char *region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static char msgs[2 * MSG];
	size_t desc_size;
	char c;

	CHECK(region != MAP_FAILED, "mmap");
	CHECK(rpma_mr_reg(peer, region, REGION, RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr) == 0, "reg");
	CHECK(rpma_mr_reg(peer, msgs, sizeof(msgs), RPMA_MR_USAGE_RECV |
		RPMA_MR_USAGE_SEND, &msg_mr) == 0, "reg msgs");
	CHECK(rpma_mr_get_descriptor_size(mr, &desc_size) == 0 && desc_size == 21,
		"verbs descriptors are format 0 (%zu)", desc_size);
	CHECK(rpma_mr_get_descriptor(mr, desc) == 0, "descriptor");
	CHECK(rpma_ep_listen(peer, ip, port, &ep) == 0, "listen");
	CHECK(write(to_parent, "L", 1) == 1, "ready");
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req) == 0, "request");
	/* receives posted before accepting: nothing arriving early is lost */
	CHECK(rpma_conn_req_recv(req, msg_mr, 0, MSG, (void *)0x11) == 0, "recv 1");
	CHECK(rpma_conn_req_recv(req, msg_mr, MSG, MSG, (void *)0x12) == 0, "recv 2");
	pdata.ptr = desc;
	pdata.len = (uint8_t)desc_size;
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	CHECK(v_next_event(conn) == RPMA_CONN_ESTABLISHED, "established");
	CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	/* send_with_imm from the initiator */
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		wc.wr_id == 0x11 && (wc.wc_flags & IBV_WC_WITH_IMM) &&
		ntohl(wc.imm_data) == 0xCAFE && wc.byte_len == 5 &&
		memcmp(msgs, "hello", 5) == 0, "send_with_imm received");
	/* write_with_imm consumes the second receive */
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		wc.wr_id == 0x12 && ntohl(wc.imm_data) == 0xBEEF,
		"write_with_imm: opcode %d wr_id 0x%llx", wc.opcode,
		(unsigned long long)wc.wr_id);

	/* the initiator says when to check the region */
	CHECK(read(from_parent, &c, 1) == 1, "go");
	for (int i = 0; i < MSG; i++)
		CHECK(region[REGION - MSG + i] == (char)('a' + i % 26), "byte %d", i);
	CHECK(*(uint64_t *)(void *)(region + 64) == 0x0123456789ABCDEFull,
		"atomic write seen by the target");
	CHECK(write(to_parent, "K", 1) == 1, "verdict");
	CHECK(v_next_event(conn) == RPMA_CONN_CLOSED, "closed");
	rpma_conn_delete(&conn);
	rpma_ep_shutdown(&ep);
	CHECK(rpma_mr_dereg(&mr) == 0 && rpma_mr_dereg(&msg_mr) == 0, "dereg");
	CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	exit(0);
}


int
main(void)
{
	struct rpma_peer *peer;
	struct rpma_mr_local *src, *dst_local;
	struct rpma_mr_remote *dst;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_peer_cfg *pcfg;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	static char buf[2 * REGION];
	int to_parent[2], from_parent[2], status;
	char c;
	pid_t pid;

	v_require_rdma();
	snprintf(port, sizeof(port), "%d", 7204 + (int)(getpid() % 1000));
	CHECK(pipe(to_parent) == 0 && pipe(from_parent) == 0, "pipes");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		target(to_parent[1], from_parent[0]);
	CHECK(read(to_parent[0], &c, 1) == 1, "target did not listen");

	peer = v_peer_new();
	CHECK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_SRC |
		RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND, &src) == 0, "reg");
	dst_local = src;
	CHECK(rpma_conn_req_new(peer, ip, port, NULL, &req) == 0, "request");
	CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	CHECK(v_next_event(conn) == RPMA_CONN_ESTABLISHED, "established");
	CHECK(rpma_conn_get_private_data(conn, &pdata) == 0 && pdata.len >= 21,
		"descriptor (%u bytes)", pdata.len);
	/* rdma_cm may pad private data: the descriptor is its first 21 bytes */
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, 21, &dst) == 0, "descriptor");
	CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	/* messages first: the target waits for them */
	memcpy(buf, "hello", 5);
	CHECK(rpma_send_with_imm(conn, src, 0, 5, RPMA_F_COMPLETION_ALWAYS, 0xCAFE,
		(void *)1) == 0, "send_with_imm");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 1,
		"send completion");
	CHECK(rpma_write_with_imm(conn, dst, 0, src, 0, 8, RPMA_F_COMPLETION_ALWAYS,
		0xBEEF, (void *)2) == 0, "write_with_imm");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2, "write_with_imm completion");

	/* the checks librpma lacks fail at once */
	CHECK(rpma_write(conn, dst, REGION - 8, src, 0, 16, RPMA_F_COMPLETION_ALWAYS,
		NULL) == RPMA_E_INVAL, "write past the remote region");
	CHECK(rpma_atomic_write(conn, dst, 4, buf, RPMA_F_COMPLETION_ALWAYS, NULL) ==
		RPMA_E_INVAL, "unaligned atomic write");
	CHECK(rpma_flush(conn, dst, 0, 8, (enum rpma_flush_type)7,
		RPMA_F_COMPLETION_ALWAYS, NULL) == RPMA_E_INVAL, "unknown flush type");
	CHECK(rpma_flush(conn, dst, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, NULL) == RPMA_E_NOSUPP,
		"PERSISTENT without direct write to PMem");
	CHECK(rpma_write(conn, dst, 0, src, sizeof(buf) - 8, 16,
		RPMA_F_COMPLETION_ALWAYS, NULL) == RPMA_E_INVAL, "write past the local region");
	CHECK(rpma_read(conn, dst_local, 0, dst, 0, (size_t)UINT32_MAX + 1,
		RPMA_F_COMPLETION_ALWAYS, NULL) == RPMA_E_INVAL, "len over 2^32 - 1");
	CHECK(rpma_atomic_write(conn, dst, REGION, buf, RPMA_F_COMPLETION_ALWAYS, NULL) ==
		RPMA_E_INVAL, "atomic write past the region");
	CHECK(rpma_send(conn, src, 0, 8, 0, NULL) == RPMA_E_INVAL, "flags 0");
	{
		struct rpma_mr_local *nowrite;

		/* a region without WRITE_SRC cannot be a write's source */
		CHECK(rpma_mr_reg(peer, buf, 64, RPMA_MR_USAGE_READ_DST, &nowrite) == 0, "reg");
		CHECK(rpma_write(conn, dst, 0, nowrite, 0, 8, RPMA_F_COMPLETION_ALWAYS,
			NULL) == RPMA_E_INVAL, "usage mismatch");
		CHECK(rpma_mr_dereg(&nowrite) == 0, "dereg");
	}

	/* write the last bytes, flush them (APM), read them back */
	for (int i = 0; i < MSG; i++)
		buf[i] = (char)('a' + i % 26);
	CHECK(rpma_write(conn, dst, REGION - MSG, src, 0, MSG,
		RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "write");
	CHECK(rpma_flush(conn, dst, REGION - MSG, MSG, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)3) == 0, "flush");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 3 &&
		wc.opcode == IBV_WC_RDMA_READ, "APM flush of the last bytes: status %d",
		wc.status);
	CHECK(rpma_read(conn, dst_local, REGION, dst, REGION - MSG, MSG,
		RPMA_F_COMPLETION_ALWAYS, (void *)4) == 0, "read");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 4 &&
		memcmp(buf + REGION, buf, MSG) == 0, "read back");

	/* declared direct write: PERSISTENT is an APM read too */
	CHECK(rpma_peer_cfg_new(&pcfg) == 0, "pcfg");
	rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true);
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg) == 0, "apply");
	rpma_peer_cfg_delete(&pcfg);
	{
		uint64_t v = 0x0123456789ABCDEFull;
		char word[8];
		memcpy(word, &v, 8);
		CHECK(rpma_atomic_write(conn, dst, 64, word, RPMA_F_COMPLETION_ON_ERROR,
			NULL) == 0, "atomic write");
	}
	CHECK(rpma_flush(conn, dst, 64, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)5) == 0, "persistent flush");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 5, "persistent flush completion");

	CHECK(write(from_parent[1], "G", 1) == 1, "go");
	CHECK(read(to_parent[0], &c, 1) == 1 && c == 'K', "target's verdict");
	CHECK(rpma_conn_disconnect(conn) == 0, "disconnect");
	CHECK(v_next_event(conn) == RPMA_CONN_CLOSED, "closed");
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&dst);
	CHECK(rpma_mr_dereg(&src) == 0, "dereg");
	CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target failed");
	/* what this build and device use, for the rig's record */
	printf("native flush: %s; atomic write: emulated (inline, fenced RDMA WRITE)\n",
		HAVE_DECL_IBV_WR_FLUSH ? "declared by rdma-core, not used" :
		"absent (rdma-core has no ibv_wr_flush)");
	printf("PASS: verbs data path\n");
	return 0;
}
