/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_gpspm.c -- the core's flush service on verbs: a PERSISTENT flush
 * without direct write to PMem.  The target registers a region of the
 * memory+file backend (memory, and a file that only persist updates, with
 * fdatasync); the initiator writes
 * the region's last bytes, flushes them PERSISTENT (method GPSPM), gets the
 * acknowledgement, atomic-writes a tail word and flushes it, then SIGKILLs
 * the target and reads its image from this process: everything
 * acknowledged must be there.  Also: the service owns the receive queue
 * (rpma_recv is refused), and the connection reports its flush method;
 * many more unsignaled writes than the send queue holds, each followed by
 * a flush, go through (the service's requests retire the writes before
 * them).
 * Without an RDMA device it exits 77 (the VM rig runs it).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_harness.h"

#define REGION (1 << 20)
#define LEN 4096
#define OFFSET (REGION - LEN)
#define TAIL 0x5A5A5A5A12345678ull


static char port[16], image[64];


static struct rpma_conn_cfg *
gpspm_cfg(void)
{
	struct rpma_conn_cfg *cfg;

	CHECK(rpma_conn_cfg_new(&cfg) == 0, "cfg");
	CHECK(rpma_ext_conn_cfg_set_gpspm(cfg, true) == 0, "gpspm");
	return cfg;
}



static void
target(int ready_fd)
{
	struct rpma_peer *peer = v_peer_new();
	struct rpma_conn_cfg *cfg = gpspm_cfg();
	struct rpma_ext_mem *mem;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	unsigned char desc[64];
	size_t desc_size;

	CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_FILE, image, REGION,
		RPMA_EXT_MEM_CREATE, &mem) == 0, "memory+file backend");
	CHECK(rpma_ext_mr_reg_mem(peer, mem, RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr) == 0, "reg");
	CHECK(rpma_mr_get_descriptor_size(mr, &desc_size) == 0, "size");
	CHECK(rpma_mr_get_descriptor(mr, desc) == 0, "descriptor");
	CHECK(rpma_ep_listen(peer, ip, port, &ep) == 0, "listen");
	CHECK(write(ready_fd, "L", 1) == 1, "ready");
	CHECK(rpma_ep_next_conn_req(ep, cfg, &req) == 0, "request");
	{
		static char rbuf[8];
		struct rpma_mr_local *rmr;

		CHECK(rpma_mr_reg(peer, rbuf, sizeof(rbuf), RPMA_MR_USAGE_RECV, &rmr) == 0,
			"reg recv");
		CHECK(rpma_conn_req_recv(req, rmr, 0, 8, NULL) == RPMA_E_NOSUPP,
			"the service owns the receive queue");
		CHECK(rpma_mr_dereg(&rmr) == 0, "dereg recv");
	}
	pdata.ptr = desc;
	pdata.len = (uint8_t)desc_size;
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	CHECK(v_next_event(conn) == RPMA_CONN_ESTABLISHED, "established");
	for (;;)
		pause();	/* the core serves flushes; killed here */
}

static int
image_has(const unsigned char *pattern)
{
	unsigned char buf[LEN];
	uint64_t tail;
	int fd = open(image, O_RDONLY);

	CHECK(fd >= 0, "image");
	CHECK(pread(fd, buf, LEN, OFFSET) == LEN && pread(fd, &tail, 8, 0) == 8, "read");
	close(fd);
	return memcmp(buf, pattern, LEN) == 0 && tail == TAIL;
}


int
main(void)
{
	struct rpma_peer *peer;
	struct rpma_conn_cfg *cfg;
	struct rpma_mr_local *src;
	struct rpma_mr_remote *dst;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	enum rpma_ext_flush_method method;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	static unsigned char buf[LEN];
	uint64_t tail = TAIL;
	char word[8], c;
	int ready[2], status;
	pid_t pid;

	if (getenv("RPMA_DEBUG_STDERR")) {
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG);
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_DEBUG);
	}
	v_require_rdma();
	snprintf(port, sizeof(port), "%d", 8204 + (int)(getpid() % 1000));
	snprintf(image, sizeof(image), "/tmp/rpma-verbs-gpspm-%d", (int)getpid());
	for (int i = 0; i < LEN; i++)
		buf[i] = (unsigned char)(i * 7 + 3);

	CHECK(pipe(ready) == 0, "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0)
		target(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1, "target did not listen");

	peer = v_peer_new();
	cfg = gpspm_cfg();
	CHECK(rpma_mr_reg(peer, buf, LEN, RPMA_MR_USAGE_WRITE_SRC, &src) == 0, "reg");
	CHECK(rpma_conn_req_new(peer, ip, port, cfg, &req) == 0, "request");
	CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	CHECK(v_next_event(conn) == RPMA_CONN_ESTABLISHED, "established");
	CHECK(rpma_conn_get_private_data(conn, &pdata) == 0 && pdata.len >= 21, "pdata");
	CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, 21, &dst) == 0, "descriptor");
	CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	CHECK(rpma_ext_conn_get_flush_method(conn, RPMA_FLUSH_TYPE_PERSISTENT,
		&method) == 0 && method == RPMA_EXT_FLUSH_GPSPM,
		"PERSISTENT without direct write is GPSPM (method %d)", (int)method);
	CHECK(rpma_recv(conn, NULL, 0, 0, NULL) == RPMA_E_NOSUPP,
		"the service owns the receive queue");

	CHECK(rpma_write(conn, dst, OFFSET, src, 0, LEN, RPMA_F_COMPLETION_ON_ERROR,
		NULL) == 0, "write");
	CHECK(rpma_flush(conn, dst, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)1) == 0, "flush");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1, "flush: %s",
		ibv_wc_status_str(wc.status));
	/* rounds of 3 unsignaled writes + a flush: 10 times the send queue */
	{
		uint32_t sq = 0;

		CHECK(rpma_conn_cfg_get_sq_size(cfg, &sq) == 0 && sq > 0, "sq size");
		for (uint32_t i = 0; i < 10 * sq / 3 + 1; i++) {
			for (int w = 0; w < 3; w++)
				CHECK(rpma_write(conn, dst, OFFSET, src, 0, LEN,
					RPMA_F_COMPLETION_ON_ERROR, NULL) == 0,
					"write %u.%d: %s", i, w, rpma_ext_errormsg());
			CHECK(rpma_flush(conn, dst, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)1) == 0,
				"flush %u: %s", i, rpma_ext_errormsg());
			wc = v_wait_wc(cq);
			CHECK(wc.status == IBV_WC_SUCCESS, "flush %u: %s", i,
				ibv_wc_status_str(wc.status));
		}
	}
	memcpy(word, &tail, 8);
	CHECK(rpma_atomic_write(conn, dst, 0, word, RPMA_F_COMPLETION_ON_ERROR, NULL) == 0,
		"atomic write");
	CHECK(rpma_flush(conn, dst, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)2) == 0, "flush tail");
	wc = v_wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2, "flush tail: %s",
		ibv_wc_status_str(wc.status));

	/* acknowledged: the target dies now, the bytes must have survived */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK(image_has(buf), "acknowledged bytes missing from the target's image");
	unlink(image);

	/* the peer is gone: the connection says so, and no flush succeeds */
	{
		enum rpma_conn_event ev = v_next_event(conn);

		CHECK(ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST,
			"after the target died: %s", rpma_utils_conn_event_2str(ev));
	}
	if (rpma_flush(conn, dst, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, (void *)3) == 0) {
		wc = v_wait_wc(cq);
		CHECK(wc.status != IBV_WC_SUCCESS, "a flush to a dead target succeeded");
	}
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&dst);
	CHECK(rpma_mr_dereg(&src) == 0, "dereg");
	rpma_conn_cfg_delete(&cfg);
	CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	printf("PASS: GPSPM over verbs: acknowledged bytes survived SIGKILL of the target\n");
	return 0;
}
