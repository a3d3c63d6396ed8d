/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_write_read.c -- rpma_write then rpma_read back over ofi tcp, real
 * processes: random sizes and offsets (the region's last bytes included),
 * several queue depths with RPMA_F_COMPLETION_ON_ERROR on all but the last
 * operation; the target checks its own memory after a VISIBILITY flush,
 * and the initiator reads the same ranges back.  Also: reading what the
 * target wrote itself, and the 0-byte forms of write and read.
 */
#include "ofi_target.h"

#define REGION (1 << 20)
#define MAX_LEN (64 << 10)

static unsigned char src[REGION], dst[REGION];
static int cases;

struct range { size_t off, len; };

static void
pick_ranges(struct range *r, int qd, unsigned *seed, int round)
{
	size_t slice = REGION / (size_t)qd;

	for (int i = 0; i < qd; i++) {
		size_t max = slice < MAX_LEN ? slice : MAX_LEN;
		r[i].len = 1 + (size_t)rand_r(seed) % max;
		r[i].off = (size_t)i * slice + (size_t)rand_r(seed) % (slice - r[i].len + 1);
	}
	/* the region's last bytes: the whole tail, or the very last byte */
	if (round % 2 == 0)
		r[qd - 1].off = REGION - r[qd - 1].len;
	else {
		r[qd - 1].off = REGION - 1;
		r[qd - 1].len = 1;
	}
}

int
main(void)
{
	static const int qds[] = { 1, 4, 16, 63 };
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	};
	struct h_target t;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_mr_local *src_mr = NULL, *dst_mr = NULL;
	struct rpma_mr_remote *remote = NULL;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct range r[64];
	struct ibv_wc wc;
	unsigned seed = h_seed();

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING);
	h_target_start(&t, &tc);

	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	H_CHECK(rpma_mr_reg(peer, src, REGION, RPMA_MR_USAGE_WRITE_SRC, &src_mr) == 0, "reg src");
	H_CHECK(rpma_mr_reg(peer, dst, REGION, RPMA_MR_USAGE_READ_DST, &dst_mr) == 0, "reg dst");
	H_CHECK(rpma_conn_cfg_new(&cfg) == 0, "cfg");
	H_CHECK(rpma_conn_cfg_set_sq_size(cfg, 64) == 0 &&
		rpma_conn_cfg_set_cq_size(cfg, 64) == 0, "cfg sizes");
	conn = h_connect(peer, t.port, cfg, NULL, &remote);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	/* 1. read what the target put there itself: one 1 MiB read */
	{
		unsigned fill = (unsigned)rand_r(&seed);
		h_cmd(&t, H_CMD_FILL, fill, 0, 0);
		H_CHECK(rpma_read(conn, dst_mr, 0, remote, 0, REGION,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x11) == 0, "read all");
		wc = h_expect_wc(cq, 0x11, IBV_WC_SUCCESS);
		H_CHECK(wc.opcode == IBV_WC_RDMA_READ, "read opcode %d", wc.opcode);
		h_fill(src, REGION, fill);
		H_CHECK(memcmp(src, dst, REGION) == 0, "read differs from the target's bytes");
		cases++;
	}

	/* 2. write batches, check on the target, read back */
	for (int round = 0; round < 8; round++) {
		int qd = qds[round % 4];

		pick_ranges(r, qd, &seed, round);
		h_fill(src, REGION, (unsigned)rand_r(&seed));
		memset(dst, 0, REGION);
		for (int i = 0; i < qd; i++) {
			int last = i == qd - 1;
			H_CHECK(rpma_write(conn, remote, r[i].off, src_mr, r[i].off, r[i].len,
				last ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
				(void *)(uintptr_t)(0x1000 + i)) == 0,
				"write %d of %d [%zu, +%zu)", i, qd, r[i].off, r[i].len);
		}
		wc = h_expect_wc(cq, 0x1000 + (uint64_t)qd - 1, IBV_WC_SUCCESS);
		H_CHECK(wc.opcode == IBV_WC_RDMA_WRITE, "write opcode %d", wc.opcode);
		h_expect_empty(cq);	/* ON_ERROR ops that succeeded stay silent */
		H_CHECK(rpma_flush(conn, remote, 0, REGION, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x22) == 0, "flush");
		h_expect_wc(cq, 0x22, IBV_WC_SUCCESS);

		/* the target's own view */
		for (int i = 0; i < qd; i++) {
			struct h_rep rep = h_cmd(&t, H_CMD_HASH, r[i].off, r[i].len, 0);
			H_CHECK(rep.v[0] == h_hash(src + r[i].off, r[i].len),
				"round %d (qd %d): target's bytes at [%zu, +%zu) differ",
				round, qd, r[i].off, r[i].len);
		}
		/* and read back */
		for (int i = 0; i < qd; i++) {
			int last = i == qd - 1;
			H_CHECK(rpma_read(conn, dst_mr, r[i].off, remote, r[i].off, r[i].len,
				last ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
				(void *)(uintptr_t)(0x2000 + i)) == 0, "read %d", i);
		}
		wc = h_expect_wc(cq, 0x2000 + (uint64_t)qd - 1, IBV_WC_SUCCESS);
		H_CHECK(wc.opcode == IBV_WC_RDMA_READ, "read opcode %d", wc.opcode);
		h_expect_empty(cq);
		for (int i = 0; i < qd; i++)
			H_CHECK(memcmp(src + r[i].off, dst + r[i].off, r[i].len) == 0,
				"round %d (qd %d): read back [%zu, +%zu) differs",
				round, qd, r[i].off, r[i].len);
		cases++;
	}

	/* 3. the 0-byte forms: silent with ON_ERROR, completed with ALWAYS */
	H_CHECK(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR,
		(void *)0x30) == 0, "0-byte write (on error)");
	H_CHECK(rpma_read(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR,
		(void *)0x31) == 0, "0-byte read (on error)");
	H_CHECK(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
		(void *)0x32) == 0, "0-byte write");
	wc = h_expect_wc(cq, 0x32, IBV_WC_SUCCESS);
	H_CHECK(wc.opcode == IBV_WC_RDMA_WRITE, "0-byte write opcode %d", wc.opcode);
	H_CHECK(rpma_read(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS,
		(void *)0x33) == 0, "0-byte read");
	wc = h_expect_wc(cq, 0x33, IBV_WC_SUCCESS);
	H_CHECK(wc.opcode == IBV_WC_RDMA_READ, "0-byte read opcode %d", wc.opcode);
	h_expect_empty(cq);
	cases += 2;
	/* a 0-byte write did not touch the target's region */
	{
		struct h_rep rep = h_cmd(&t, H_CMD_HASH, 0, REGION, 0);
		unsigned char *copy = malloc(REGION);
		H_CHECK(copy != NULL, "malloc");
		H_CHECK(rpma_read(conn, dst_mr, 0, remote, 0, REGION,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x34) == 0, "read all");
		h_expect_wc(cq, 0x34, IBV_WC_SUCCESS);
		H_CHECK(rep.v[0] == h_hash(dst, REGION), "region changed or read differs");
		free(copy);
		cases++;
	}

	h_close(&conn);
	H_CHECK(rpma_mr_remote_delete(&remote) == 0, "remote delete");
	H_CHECK(rpma_mr_dereg(&src_mr) == 0 && rpma_mr_dereg(&dst_mr) == 0, "dereg");
	H_CHECK(rpma_conn_cfg_delete(&cfg) == 0, "cfg delete");
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	h_target_stop(&t);
	printf("PASS: %d cases\n", cases);
	return 0;
}
