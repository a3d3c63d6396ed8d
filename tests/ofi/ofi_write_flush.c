/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_write_flush.c -- rpma_ext_write_flush() over tcp: every range it
 * acknowledges is written and durable, its one completion is the flush's
 * (opcode RDMA_READ, the caller's context), and what it cannot do it
 * refuses before posting.
 *
 * The target keeps a crash-backend region (two regions: one registered for
 * PERSISTENT flushes, one not).  The initiator posts bursts of
 * write+flush of random ranges, some overlapping, from random sources,
 * waits for their completions, then SIGKILLs the target: the image must hold
 * the last bytes acknowledged at every offset.
 */
#include <fcntl.h>

#include "ofi_harness.h"

#define REGION (1 << 20)
#define MAXLEN 9000
#define BURST 8
#define ROUNDS 64

static char image[64];

static void
target(int ready_fd, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_ext_mem *mem = NULL;
	struct rpma_mr_local *mr = NULL, *plain = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	static char plain_buf[4096];
	unsigned char desc[2][64];
	size_t size[2];
	unsigned char pd[130];
	struct rpma_conn_private_data pdata;

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, image, REGION,
		RPMA_EXT_MEM_CREATE, &mem) == 0, "crash backend");
	H_CHECK(rpma_ext_mr_reg_mem(peer, mem, RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr) == 0, "reg mem");
	/* a region that takes writes but was not registered for flushes */
	H_CHECK(rpma_mr_reg(peer, plain_buf, sizeof(plain_buf),
		RPMA_MR_USAGE_WRITE_DST, &plain) == 0, "reg plain");
	H_CHECK(rpma_mr_get_descriptor_size(mr, &size[0]) == 0 &&
		rpma_mr_get_descriptor_size(plain, &size[1]) == 0, "descriptor sizes");
	H_CHECK(size[0] <= 64 && size[1] <= 64, "descriptors fit");
	H_CHECK(rpma_mr_get_descriptor(mr, desc[0]) == 0 &&
		rpma_mr_get_descriptor(plain, desc[1]) == 0, "descriptors");
	pd[0] = (unsigned char)size[0];
	memcpy(pd + 1, desc[0], size[0]);
	pd[1 + size[0]] = (unsigned char)size[1];
	memcpy(pd + 2 + size[0], desc[1], size[1]);
	H_CHECK(rpma_ep_listen(peer, "127.0.0.1", port, &ep) == 0, "listen");
	H_CHECK(write(ready_fd, "L", 1) == 1, "ready");
	H_CHECK(rpma_ep_next_conn_req(ep, NULL, &req) == 0, "conn req");
	pdata.ptr = pd;
	pdata.len = (uint8_t)(2 + size[0] + size[1]);
	H_CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED,
		"established");
	for (;;)
		pause();	/* the progress thread serves; killed here */
}

int
main(void)
{
	int timeout = h_timeout_ms(5000);
	static unsigned char src[BURST][MAXLEN], expect[REGION], buf[REGION];
	unsigned char *pd;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst = NULL, *plain = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq = NULL;
	int ready[2], status, fd, ret, acked = 0;
	size_t written = 0;
	char port[16], c;
	unsigned seed = h_seed();
	pid_t pid;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);
	snprintf(image, sizeof(image), "/dev/shm/rpma-ofi-wf-%d", (int)getpid());
	h_port(port, sizeof(port));

	H_CHECK(pipe(ready) == 0, "pipe");
	pid = fork();
	H_CHECK(pid >= 0, "fork");
	if (pid == 0)
		target(ready[1], port);
	H_CHECK(read(ready[0], &c, 1) == 1, "target did not start listening");

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, sizeof(src), RPMA_MR_USAGE_WRITE_SRC,
		&src_mr) == 0, "reg");
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", port, NULL, &req) == 0, "req");
	H_CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	H_CHECK(h_next_event(conn, timeout) == RPMA_CONN_ESTABLISHED, "established");
	H_CHECK(rpma_conn_get_private_data(conn, &pdata) == 0, "private data");
	pd = pdata.ptr;
	H_CHECK(rpma_mr_remote_from_descriptor(pd + 1, pd[0], &dst) == 0,
		"descriptor");
	H_CHECK(rpma_mr_remote_from_descriptor(pd + 2 + pd[0], pd[1 + pd[0]],
		&plain) == 0, "plain descriptor");
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	/* refused before anything is posted */
	ret = rpma_ext_write_flush(conn, dst, 0, src_mr, 0, 0,
		RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, NULL);
	H_CHECK(ret == RPMA_E_INVAL, "len 0: %d", ret);
	ret = rpma_ext_write_flush(conn, dst, 0, NULL, 0, 8,
		RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, NULL);
	H_CHECK(ret == RPMA_E_INVAL, "no source: %d", ret);
	ret = rpma_ext_write_flush(conn, dst, REGION - 8, src_mr, 0, 16,
		RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, NULL);
	H_CHECK(ret == RPMA_E_INVAL, "past the remote region: %d", ret);
	ret = rpma_ext_write_flush(conn, dst, 0, src_mr, sizeof(src) - 8, 16,
		RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, NULL);
	H_CHECK(ret == RPMA_E_INVAL, "past the local region: %d", ret);
	ret = rpma_ext_write_flush(conn, dst, 0, src_mr, 0, 8,
		(enum rpma_flush_type)7, RPMA_F_COMPLETION_ALWAYS, NULL);
	H_CHECK(ret == RPMA_E_INVAL, "unknown flush type: %d", ret);
	ret = rpma_ext_write_flush(conn, plain, 0, src_mr, 0, 8,
		RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, NULL);
	H_CHECK(ret == RPMA_E_NOSUPP, "region without flush usage: %d", ret);
	H_CHECK(rpma_cq_get_wc(cq, 1, &(struct ibv_wc){ 0 }, NULL) ==
		RPMA_E_NO_COMPLETION, "a refused call completed something");

	for (int r = 0; r < ROUNDS; r++) {
		size_t off[BURST], len[BURST];

		/* a burst in flight together; later ones may overlap earlier */
		for (int i = 0; i < BURST; i++) {
			len[i] = 1 + (size_t)rand_r(&seed) % MAXLEN;
			off[i] = (size_t)rand_r(&seed) % (REGION - len[i] + 1);
			for (size_t k = 0; k < len[i]; k++)
				src[i][k] = (unsigned char)rand_r(&seed);
			H_CHECK(rpma_ext_write_flush(conn, dst, off[i], src_mr,
				(size_t)i * MAXLEN, len[i], RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(i + 1)) == 0,
				"write_flush %d of round %d", i, r);
		}
		for (int i = 0; i < BURST; i++) {
			struct ibv_wc wc = h_wait_wc(cq, timeout);

			H_CHECK(wc.status == IBV_WC_SUCCESS, "round %d: status %d",
				r, wc.status);
			H_CHECK(wc.opcode == IBV_WC_RDMA_READ,
				"the completion is the flush's: opcode %d", wc.opcode);
			/* requests are served in order: contexts come in order */
			H_CHECK(wc.wr_id == (uint64_t)(i + 1),
				"completion %d carries context %llu", i,
				(unsigned long long)wc.wr_id);
			acked++;
		}
		/* RC order: the later of two overlapping writes lands last */
		for (int i = 0; i < BURST; i++) {
			memcpy(expect + off[i], src[i], len[i]);
			written += len[i];
		}
	}

	/* acknowledged: every byte must be in the image after a SIGKILL */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fd = open(image, O_RDONLY);
	H_CHECK(fd >= 0, "open image");
	H_CHECK(pread(fd, buf, REGION, 0) == REGION, "read image");
	close(fd);
	unlink(image);
	for (size_t k = 0; k < REGION; k++)
		H_CHECK(buf[k] == expect[k], "byte %zu of the image is %u, "
			"acknowledged %u", k, buf[k], expect[k]);

	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&plain);
	rpma_mr_remote_delete(&dst);
	H_CHECK(rpma_mr_dereg(&src_mr) == 0, "dereg");
	rpma_peer_delete(&peer);
	printf("PASS: %d write+flush acknowledged (%zu bytes), all durable\n",
		acked, written);
	return 0;
}
