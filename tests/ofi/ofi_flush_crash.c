/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_flush_crash.c -- a PERSISTENT flush over ofi tcp is durable on the
 * target: the initiator writes, flushes, gets the acknowledgement, then
 * SIGKILLs the target at once and reads the target's crash-backend image
 * from this (another) process.  The written bytes must be there.
 *
 * Negative control (argument "no-persistence"): the target registers the
 * same memory without its persistence backend, so the flush reaches the
 * memory but not the image; the same check must then find the bytes
 * missing.  Both runs are in make check: the control shows the check can
 * fail.
 */
#include <fcntl.h>

#include "ofi_harness.h"

#define REGION (1 << 20)
#define LEN 4096
#define OFFSET (REGION - LEN)	/* the region's last bytes */

static char image[64];

static void
target(int ready_fd, const char *port, int persist)
{
	struct rpma_peer *peer = NULL;
	struct rpma_ext_mem *mem = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	unsigned char desc[64];
	size_t desc_size;
	struct rpma_conn_private_data pdata;
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, image, REGION,
		RPMA_EXT_MEM_CREATE, &mem) == 0, "crash backend");
	if (persist) {
		H_CHECK(rpma_ext_mr_reg_mem(peer, mem, usage, &mr) == 0, "reg mem");
	} else {
		void *ptr;
		rpma_ext_mem_get_ptr(mem, &ptr);
		H_CHECK(rpma_mr_reg(peer, ptr, REGION, usage, &mr) == 0, "reg plain");
	}
	H_CHECK(rpma_mr_get_descriptor_size(mr, &desc_size) == 0 && desc_size == 40,
		"descriptor size %zu", desc_size);
	H_CHECK(rpma_mr_get_descriptor(mr, desc) == 0, "descriptor");
	H_CHECK(rpma_ep_listen(peer, "127.0.0.1", port, &ep) == 0, "listen");
	H_CHECK(write(ready_fd, "L", 1) == 1, "ready");
	H_CHECK(rpma_ep_next_conn_req(ep, NULL, &req) == 0, "conn req");
	pdata.ptr = desc;
	pdata.len = (uint8_t)desc_size;
	H_CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED,
		"established");
	for (;;)
		pause();	/* the progress thread serves; killed here */
}

/* 1 if the image holds the pattern at OFFSET */
static int
image_has(const unsigned char *pattern)
{
	unsigned char buf[LEN];
	int fd = open(image, O_RDONLY);
	ssize_t n;

	H_CHECK(fd >= 0, "open image");
	n = pread(fd, buf, LEN, OFFSET);
	close(fd);
	H_CHECK(n == LEN, "read image");
	return memcmp(buf, pattern, LEN) == 0;
}

int
main(int argc, char *argv[])
{
	int persist = !(argc > 1 && strcmp(argv[1], "no-persistence") == 0);
	int timeout = h_timeout_ms(5000);
	static unsigned char src[LEN];
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ready[2], status, found;
	char port[16], c;
	unsigned seed = h_seed();
	pid_t pid;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);
	snprintf(image, sizeof(image), "/dev/shm/rpma-ofi-flush-%d", (int)getpid());
	h_port(port, sizeof(port));
	for (int i = 0; i < LEN; i++)
		src[i] = (unsigned char)rand_r(&seed);

	H_CHECK(pipe(ready) == 0, "pipe");
	pid = fork();
	H_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		close(ready[0]);
		target(ready[1], port, persist);
	}
	close(ready[1]);
	H_CHECK(read(ready[0], &c, 1) == 1, "target did not start listening");

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, LEN, RPMA_MR_USAGE_WRITE_SRC, &src_mr) == 0, "reg");
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", port, NULL, &req) == 0, "req");
	H_CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	H_CHECK(h_next_event(conn, timeout) == RPMA_CONN_ESTABLISHED, "established");
	H_CHECK(rpma_conn_get_private_data(conn, &pdata) == 0 && pdata.len == 40,
		"descriptor in private data (%u bytes)", pdata.len);
	H_CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &dst) == 0,
		"descriptor");
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	H_CHECK(rpma_write(conn, dst, OFFSET, src_mr, 0, LEN,
		RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "write");
	H_CHECK(rpma_flush(conn, dst, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)0xF1) == 0, "flush");
	wc = h_wait_wc(cq, timeout);
	H_CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 0xF1,
		"flush completion: status %d wr_id 0x%llx", wc.status,
		(unsigned long long)wc.wr_id);

	/* acknowledged: the target may die now and the bytes must survive */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	found = image_has(src);
	unlink(image);

	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&dst);
	H_CHECK(rpma_mr_dereg(&src_mr) == 0, "dereg");
	rpma_peer_delete(&peer);

	if (persist) {
		H_CHECK(found, "acknowledged bytes missing from the target's image");
		printf("PASS: %d acknowledged bytes survived SIGKILL of the target\n", LEN);
	} else {
		H_CHECK(!found, "negative control: bytes present without persistence");
		printf("PASS: negative control: without persistence the check fails\n");
	}
	return 0;
}
