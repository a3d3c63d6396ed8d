/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_flush_refused.c -- the target, not only the initiator, checks the
 * core's requests: descriptors re-encoded (rpma/descriptor.h) to claim
 * what the target never registered pass the initiator's checks, and every
 * such flush or atomic write must complete with an error status, never
 * success -- a PERSISTENT flush on a region registered for VISIBILITY only
 * (also with RPMA_F_COMPLETION_ON_ERROR), an unknown key, a range beyond
 * the real region, an address below it.  The connection keeps working and
 * a refused atomic write leaves the target's memory alone.  Fencing: once
 * the target raised its epoch floor, flushes stamped with a lower epoch
 * (or none) complete with a remote access error; the new epoch's succeed.
 */
#include "descriptor.h"
#include "ofi_target.h"

#define REGION 65536

static int cases;

static struct rpma_mr_remote *
forge(const struct rpma_mr_desc *orig, int usage, uint64_t key, int64_t raddr_add,
		uint64_t size)
{
	struct rpma_mr_desc d = *orig;
	struct rpma_mr_remote *mr = NULL;
	unsigned char buf[RPMA_EXT_MR_DESC_SIZE_V1];

	d.usage = usage;
	d.key = key;
	d.raddr += (uint64_t)raddr_add;
	d.size = size;
	H_CHECK(rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, buf) == 0, "encode");
	H_CHECK(rpma_mr_remote_from_descriptor(buf, sizeof(buf), &mr) == 0, "forged");
	return mr;
}

static void
expect_refused(struct rpma_cq *cq, uint64_t ctx, const char *what)
{
	struct ibv_wc wc = h_wait_wc(cq, h_timeout_ms(5000));

	H_CHECK(wc.wr_id == ctx, "%s: completion of 0x%llx", what,
		(unsigned long long)wc.wr_id);
	H_CHECK(wc.status != IBV_WC_SUCCESS, "%s: the target acknowledged it", what);
	cases++;
}

int
main(void)
{
	struct h_target_cfg tc = {
		.size = REGION,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	};
	const int all = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	struct h_target t;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_remote *rem = NULL, *pers, *nokey, *bigger, *below;
	struct rpma_conn_private_data in;
	struct rpma_mr_desc d;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct h_rep r;
	enum rpma_ext_flush_method method;
	char v[8] = "refused";
	unsigned seed = h_seed();

	(void)seed;
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL);
	h_target_start(&t, &tc);
	H_CHECK(rpma_ext_peer_new_ofi("tcp", &peer) == 0, "peer");
	conn = h_connect(peer, t.port, NULL, NULL, &rem);
	H_CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");
	H_CHECK(rpma_ext_conn_get_flush_method(conn, RPMA_FLUSH_TYPE_PERSISTENT,
		&method) == 0 && method == RPMA_EXT_FLUSH_GPSPM, "flush method %d", method);
	H_CHECK(rpma_conn_get_private_data(conn, &in) == 0 &&
		rpma_mr_desc_decode(in.ptr, H_DESC_SIZE, &d) == 0, "decode");
	pers = forge(&d, all, d.key, 0, REGION);
	nokey = forge(&d, all, d.key ^ 0x5a5a5a5a5a5a5a5aull, 0, REGION);
	bigger = forge(&d, all, d.key, 0, 2 * REGION);
	/* offset-addressed regions (raddr 0) have nothing below them */
	below = d.raddr >= 4096 ? forge(&d, all, d.key, -4096, REGION + 4096) : NULL;

	/* the initiator's own check still refuses the honest descriptor */
	H_CHECK(rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, NULL) == RPMA_E_NOSUPP, "honest descriptor");
	cases++;

	/* PERSISTENT where the target registered VISIBILITY only */
	H_CHECK(rpma_flush(conn, pers, 0, 4096, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x1) == 0, "forged flush");
	expect_refused(cq, 0x1, "PERSISTENT flush of a VISIBILITY-only region");
	H_CHECK(rpma_flush(conn, pers, REGION - 8, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ON_ERROR, (void *)0x2) == 0, "forged flush");
	expect_refused(cq, 0x2, "the same with COMPLETION_ON_ERROR");
	/* no region with that key */
	H_CHECK(rpma_flush(conn, nokey, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x3) == 0, "forged flush");
	expect_refused(cq, 0x3, "flush of an unknown key");
	/* beyond the real region, and below it */
	H_CHECK(rpma_flush(conn, bigger, REGION - 8, 16, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x4) == 0, "forged flush");
	expect_refused(cq, 0x4, "flush past the region's end");
	if (below) {
		H_CHECK(rpma_flush(conn, below, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x5) == 0, "forged flush");
		expect_refused(cq, 0x5, "flush below the region's start");
	}
	/* atomic writes the target must not carry out */
	H_CHECK(rpma_atomic_write(conn, nokey, 0, v, RPMA_F_COMPLETION_ALWAYS,
		(void *)0x6) == 0, "forged atomic write");
	expect_refused(cq, 0x6, "atomic write to an unknown key");
	H_CHECK(rpma_atomic_write(conn, bigger, REGION, v, RPMA_F_COMPLETION_ON_ERROR,
		(void *)0x7) == 0, "forged atomic write");
	expect_refused(cq, 0x7, "atomic write past the region's end");
	h_expect_empty(cq);
	r = h_cmd(&t, H_CMD_GET8, 0, 0, 0);
	H_CHECK(r.v[0] == 0, "a refused atomic write changed the target");

	/* the connection still works */
	H_CHECK(rpma_atomic_write(conn, rem, 0, v, RPMA_F_COMPLETION_ON_ERROR, NULL) == 0 &&
		rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0x8) == 0, "valid ops");
	h_expect_wc(cq, 0x8, IBV_WC_SUCCESS);
	r = h_cmd(&t, H_CMD_GET8, 0, 0, 0);
	H_CHECK(memcmp(&r.v[0], v, 8) == 0, "the valid atomic write");
	cases++;

	/* fencing: an old epoch's flush is refused, the new one's is not */
	H_CHECK(rpma_ext_conn_set_epoch(conn, 7) == 0, "set epoch");
	H_CHECK(rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)0x9) == 0, "epoch 7 flush");
	h_expect_wc(cq, 0x9, IBV_WC_SUCCESS);
	r = h_cmd(&t, H_CMD_FENCE, 8, 0, 0);
	H_CHECK(r.st == 0, "fence");
	H_CHECK(rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
		RPMA_F_COMPLETION_ALWAYS, (void *)0xa) == 0, "epoch 7 flush");
	h_expect_wc(cq, 0xa, IBV_WC_REM_ACCESS_ERR);
	cases++;
	/* a lower floor does not lower it */
	r = h_cmd(&t, H_CMD_FENCE, 3, 0, 0);
	H_CHECK(rpma_ext_conn_set_epoch(conn, 5) == 0 &&
		rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ON_ERROR, (void *)0xb) == 0, "epoch 5 flush");
	h_expect_wc(cq, 0xb, IBV_WC_REM_ACCESS_ERR);
	cases++;
	H_CHECK(rpma_ext_conn_set_epoch(conn, 8) == 0 &&
		rpma_flush(conn, rem, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, (void *)0xc) == 0, "epoch 8 flush");
	h_expect_wc(cq, 0xc, IBV_WC_SUCCESS);
	cases++;
	H_CHECK(rpma_ext_conn_set_epoch(NULL, 1) == RPMA_E_INVAL &&
		rpma_ext_peer_fence(NULL, 1) == RPMA_E_INVAL, "NULL checks");

	h_close(&conn);
	rpma_mr_remote_delete(&rem);
	rpma_mr_remote_delete(&pers);
	rpma_mr_remote_delete(&nokey);
	rpma_mr_remote_delete(&bigger);
	if (below)
		rpma_mr_remote_delete(&below);
	H_CHECK(rpma_peer_delete(&peer) == 0, "peer delete");
	h_target_stop(&t);
	printf("PASS: %d cases\n", cases);
	return 0;
}
