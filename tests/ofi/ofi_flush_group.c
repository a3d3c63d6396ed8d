/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_flush_group.c -- PERSISTENT flushes that reach a target together
 * share one barrier of its backend, and every one of them is durable when
 * acknowledged.
 *
 * Each round stops the target (SIGSTOP), posts BURST writes and flushes
 * to ranges apart from each other, lets it go on (SIGCONT): the requests
 * wait in its socket together, as they do behind a persist on a loaded
 * replica.  Once all are acknowledged, the target reports its backend's
 * counters (rpma_ext_mem_get_stats): every flush is a range, and fewer
 * barriers than ranges show the sharing; then it is SIGKILLed and its
 * crash-backend image must hold every acknowledged byte.
 */
#include <fcntl.h>

#include "ofi_harness.h"

#define REGION (1 << 20)
#define LEN 512
#define GAP 4096		/* ranges this far apart: none adjacent */
#define BURST 8
#define ROUNDS 16

static char image[64];

static void
target(int ready_fd, int ask_fd, int answer_fd, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_ext_mem *mem = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_ext_mem_stats st;
	unsigned char desc[64];
	size_t desc_size;
	struct rpma_conn_private_data pdata;
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	char c;

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_ext_mem_open(RPMA_EXT_MEM_CRASH, image, REGION,
		RPMA_EXT_MEM_CREATE, &mem) == 0, "crash backend");
	H_CHECK(rpma_ext_mr_reg_mem(peer, mem, usage, &mr) == 0, "reg mem");
	H_CHECK(rpma_mr_get_descriptor_size(mr, &desc_size) == 0, "descriptor size");
	H_CHECK(rpma_mr_get_descriptor(mr, desc) == 0, "descriptor");
	H_CHECK(rpma_ep_listen(peer, "127.0.0.1", port, &ep) == 0, "listen");
	H_CHECK(write(ready_fd, "L", 1) == 1, "ready");
	H_CHECK(rpma_ep_next_conn_req(ep, NULL, &req) == 0, "conn req");
	pdata.ptr = desc;
	pdata.len = (uint8_t)desc_size;
	H_CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	H_CHECK(h_next_event(conn, h_timeout_ms(5000)) == RPMA_CONN_ESTABLISHED,
		"established");
	/* the progress thread serves; asked, say what the backend did */
	H_CHECK(read(ask_fd, &c, 1) == 1, "asked for the counters");
	H_CHECK(rpma_ext_mem_get_stats(mem, &st) == 0, "stats");
	H_CHECK(write(answer_fd, &st, sizeof(st)) == (ssize_t)sizeof(st), "answer");
	for (;;)
		pause();	/* killed here */
}

int
main(void)
{
	int timeout = h_timeout_ms(5000);
	static unsigned char src[ROUNDS][BURST][LEN];
	unsigned char buf[LEN];
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data pdata;
	struct rpma_ext_mem_stats st;
	struct rpma_cq *cq = NULL;
	int ready[2], ask[2], answer[2], status, fd, missing = 0;
	char port[16], c;
	unsigned seed = h_seed();
	pid_t pid;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);
	snprintf(image, sizeof(image), "/dev/shm/rpma-ofi-group-%d", (int)getpid());
	h_port(port, sizeof(port));
	for (size_t i = 0; i < sizeof(src); i++)
		((unsigned char *)src)[i] = (unsigned char)rand_r(&seed);

	H_CHECK(pipe(ready) == 0 && pipe(ask) == 0 && pipe(answer) == 0, "pipes");
	pid = fork();
	H_CHECK(pid >= 0, "fork");
	if (pid == 0)
		target(ready[1], ask[0], answer[1], port);
	H_CHECK(read(ready[0], &c, 1) == 1, "target did not start listening");

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, sizeof(src), RPMA_MR_USAGE_WRITE_SRC,
		&src_mr) == 0, "reg");
	H_CHECK(rpma_conn_req_new(peer, "127.0.0.1", port, NULL, &req) == 0, "req");
	H_CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	H_CHECK(h_next_event(conn, timeout) == RPMA_CONN_ESTABLISHED, "established");
	H_CHECK(rpma_conn_get_private_data(conn, &pdata) == 0, "private data");
	H_CHECK(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &dst) == 0,
		"descriptor");
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	for (int r = 0; r < ROUNDS; r++) {
		H_CHECK(kill(pid, SIGSTOP) == 0, "stop the target");
		for (int i = 0; i < BURST; i++) {
			size_t off = ((size_t)r * BURST + (size_t)i) * GAP;

			H_CHECK(rpma_write(conn, dst, off, src_mr,
				((size_t)r * BURST + (size_t)i) * LEN, LEN,
				RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "write");
			H_CHECK(rpma_flush(conn, dst, off, LEN,
				RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
				(void *)(uintptr_t)(i + 1)) == 0, "flush");
		}
		usleep(20000);	/* the burst reaches the stopped target's socket */
		H_CHECK(kill(pid, SIGCONT) == 0, "go on");
		for (int i = 0; i < BURST; i++) {
			struct ibv_wc wc = h_wait_wc(cq, timeout);

			H_CHECK(wc.status == IBV_WC_SUCCESS, "flush %d of round %d: "
				"status %d", i, r, wc.status);
		}
	}
	H_CHECK(write(ask[1], "?", 1) == 1, "ask");
	H_CHECK(read(answer[0], &st, sizeof(st)) == (ssize_t)sizeof(st),
		"the target's counters");

	/* acknowledged: every byte must be in the image after a SIGKILL */
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fd = open(image, O_RDONLY);
	H_CHECK(fd >= 0, "open image");
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < BURST; i++) {
			off_t off = ((off_t)r * BURST + i) * GAP;

			H_CHECK(pread(fd, buf, LEN, off) == LEN, "read image");
			missing += memcmp(buf, src[r][i], LEN) != 0;
		}
	close(fd);
	unlink(image);

	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&dst);
	H_CHECK(rpma_mr_dereg(&src_mr) == 0, "dereg");
	rpma_peer_delete(&peer);

	printf("%d flushes: %llu ranges, %llu barriers\n", ROUNDS * BURST,
		(unsigned long long)st.ranges, (unsigned long long)st.barriers);
	H_CHECK(missing == 0, "%d acknowledged ranges missing from the image", missing);
	H_CHECK(st.ranges == ROUNDS * BURST, "every flush is one range");
	H_CHECK(st.barriers < st.ranges, "flushes that waited together did not "
		"share a barrier");
	printf("PASS: %d acknowledged flushes durable, %.1f per barrier\n",
		ROUNDS * BURST, (double)st.ranges / (double)st.barriers);
	return 0;
}
