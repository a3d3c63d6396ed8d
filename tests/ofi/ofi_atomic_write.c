/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_atomic_write.c -- rpma_atomic_write over ofi tcp, real processes:
 * the target finds the 8 bytes in its memory once the completion (or a
 * following flush) is in, at the region's first and last words too; and
 * the log-append pattern (write a record, flush it, atomic-write the tail
 * word, flush it; several appends in flight) watched from inside the
 * target: whenever the tail moves, every record below it is complete.
 */
#include "ofi_target.h"

#define REGION (1 << 20)
#define NREC 300
#define RECSIZE 1000		/* not a multiple of 8 on purpose */
#define WINDOW 3		/* appends in flight: 9 of the target's 10 request slots */

static unsigned char log_src[NREC * RECSIZE];
static int cases;

int
main(void)
{
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
	};
	struct h_target t;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_mr_local *log_mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	struct h_rep r;
	unsigned seed = h_seed();
	unsigned log_seed = (unsigned)rand_r(&seed);
	char v[8];

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);
	h_target_start(&t, &tc);

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_conn_cfg_new(&cfg) == 0 && rpma_conn_cfg_set_sq_size(cfg, 32) == 0 &&
		rpma_conn_cfg_set_cq_size(cfg, 32) == 0, "cfg");
	conn = h_connect(peer, t.port, cfg, NULL, &remote);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	/* 1. seen by the target once completed: first, last and random words */
	for (int i = 0; i < 10; i++) {
		size_t off = i == 0 ? 0 : i == 1 ? REGION - 8 :
			(size_t)(rand_r(&seed) % (REGION / 8)) * 8;

		h_fill(v, 8, (unsigned)rand_r(&seed));
		H_CHECK(rpma_atomic_write(conn, remote, off, v, RPMA_F_COMPLETION_ALWAYS,
			(void *)(uintptr_t)(0x100 + i)) == 0, "atomic write at %zu", off);
		wc = h_expect_wc(cq, 0x100 + (uint64_t)i, IBV_WC_SUCCESS);
		H_CHECK(wc.opcode == IBV_WC_RDMA_WRITE, "atomic write opcode %d", wc.opcode);
		r = h_cmd(&t, H_CMD_GET8, off, 0, 0);
		H_CHECK(memcmp(&r.v[0], v, 8) == 0, "the target has 0x%016llx at %zu",
			(unsigned long long)r.v[0], off);
		cases++;
	}
	/* silent on success; a following flush makes it visible */
	h_fill(v, 8, (unsigned)rand_r(&seed));
	H_CHECK(rpma_atomic_write(conn, remote, 4096, v, RPMA_F_COMPLETION_ON_ERROR,
		(void *)0x200) == 0, "atomic write");
	H_CHECK(rpma_flush(conn, remote, 4096, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x201) == 0, "flush");
	h_expect_wc(cq, 0x201, IBV_WC_SUCCESS);
	h_expect_empty(cq);
	r = h_cmd(&t, H_CMD_GET8, 4096, 0, 0);
	H_CHECK(memcmp(&r.v[0], v, 8) == 0, "atomic write + flush not seen");
	cases++;

	/* 2. the log-append pattern, WINDOW appends in flight */
	for (uint64_t i = 0; i < NREC; i++)
		h_record(log_src + i * RECSIZE, RECSIZE, i, log_seed);
	H_CHECK(rpma_mr_reg(peer, log_src, sizeof(log_src), RPMA_MR_USAGE_WRITE_SRC,
		&log_mr) == 0, "reg log");
	r = h_cmd(&t, H_CMD_WATCH_START, NREC, RECSIZE, log_seed);
	for (uint64_t i = 0; i < NREC; i++) {
		size_t off = 64 + i * RECSIZE;
		uint64_t tail = i + 1;

		H_CHECK(rpma_write(conn, remote, off, log_mr, i * RECSIZE, RECSIZE,
			RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "write record %llu",
			(unsigned long long)i);
		H_CHECK(rpma_flush(conn, remote, off, RECSIZE, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "flush record");
		H_CHECK(rpma_atomic_write(conn, remote, 0, (const char *)&tail,
			RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "tail");
		H_CHECK(rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(0x1000 + i)) == 0,
			"flush tail");
		if (i + 1 >= WINDOW)
			h_expect_wc(cq, 0x1000 + i + 1 - WINDOW, IBV_WC_SUCCESS);
	}
	for (uint64_t i = NREC + 1 - WINDOW; i < NREC; i++)
		h_expect_wc(cq, 0x1000 + i, IBV_WC_SUCCESS);
	h_expect_empty(cq);
	r = h_cmd(&t, H_CMD_GET8, 0, 0, 0);
	H_CHECK(r.v[0] == NREC, "tail %llu after %d appends", (unsigned long long)r.v[0], NREC);
	r = h_cmd(&t, H_CMD_WATCH_STOP, 0, 0, 0);
	printf("log append: the target saw the tail move %llu times\n",
		(unsigned long long)r.v[1]);
	H_CHECK(r.v[0] == 0, "%llu times the tail was visible before its record",
		(unsigned long long)r.v[0]);
	H_CHECK(r.v[2] == NREC && r.v[1] >= 1, "watcher: last tail %llu, %llu changes",
		(unsigned long long)r.v[2], (unsigned long long)r.v[1]);
	r = h_cmd(&t, H_CMD_HASH, 64, sizeof(log_src), 0);
	H_CHECK(r.v[0] == h_hash(log_src, sizeof(log_src)), "the log differs");
	cases += 2;

	h_close(&conn);
	H_CHECK(rpma_mr_remote_delete(&remote) == 0, "remote delete");
	H_CHECK(rpma_mr_dereg(&log_mr) == 0, "dereg");
	H_CHECK(rpma_conn_cfg_delete(&cfg) == 0, "cfg delete");
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	h_target_stop(&t);
	printf("PASS: %d cases\n", cases);
	return 0;
}
