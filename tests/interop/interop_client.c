/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop_client -- connects to interop_target, takes the descriptors from
 * the (possibly padded) private data, writes the pattern into the region's
 * last bytes, flushes it (PERSISTENT: the target declared direct write),
 * reads it back, atomic-writes the tail word and flushes that.
 *
 *   interop_client IP PORT SEED
 */
#include "interop.h"

int
main(int argc, char *argv[])
{
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *dst;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	static unsigned char buf[2 * PATTERN_LEN];
	const unsigned char *d;
	uint64_t tail = TAIL_VALUE;
	size_t size;
	int flush_type;
	char word[8];

	if (argc != 4) {
		fprintf(stderr, "usage: %s IP PORT SEED\n", argv[0]);
		return 2;
	}
	interop_pattern((unsigned)strtoul(argv[3], NULL, 0), buf, PATTERN_LEN);
	peer = interop_peer(argv[1]);
	CHECK(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_SRC |
		RPMA_MR_USAGE_READ_DST, &mr) == 0, "rpma_mr_reg");
	CHECK(rpma_conn_req_new(peer, argv[1], argv[2], NULL, &req) == 0, "request");
	CHECK(rpma_conn_req_connect(&req, NULL, &conn) == 0, "connect");
	CHECK(interop_event(conn) == RPMA_CONN_ESTABLISHED, "established");

	CHECK(rpma_conn_get_private_data(conn, &pdata) == 0, "private data");
	d = pdata.ptr;
	CHECK(pdata.len >= 2 && pdata.len >= 2 + d[0] + d[1],
		"private data of %u bytes is shorter than its descriptors", pdata.len);
	printf("[%s] client: %u bytes of private data (%d sent)\n", IMPL, pdata.len,
		2 + d[0] + d[1]);
	CHECK(rpma_mr_remote_from_descriptor(d + 2, d[0], &dst) == 0, "MR descriptor");
	CHECK(rpma_peer_cfg_from_descriptor(d + 2 + d[0], d[1], &pcfg) == 0, "pcfg");
	CHECK(rpma_conn_apply_remote_peer_cfg(conn, pcfg) == 0, "apply pcfg");
	CHECK(rpma_mr_remote_get_size(dst, &size) == 0 && size == REGION, "size %zu", size);
	CHECK(rpma_mr_remote_get_flush_type(dst, &flush_type) == 0 &&
		(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT), "flush type");
	CHECK(rpma_conn_get_cq(conn, &cq) == 0, "cq");

	CHECK(rpma_write(conn, dst, PATTERN_OFF, mr, 0, PATTERN_LEN,
		RPMA_F_COMPLETION_ON_ERROR, NULL) == 0, "write");
	CHECK(rpma_flush(conn, dst, PATTERN_OFF, PATTERN_LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)1) == 0, "flush");
	wc = interop_wait(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1, "flush: %s",
		ibv_wc_status_str(wc.status));
	CHECK(rpma_read(conn, mr, PATTERN_LEN, dst, PATTERN_OFF, PATTERN_LEN,
		RPMA_F_COMPLETION_ALWAYS, (void *)2) == 0, "read");
	wc = interop_wait(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 2, "read: %s",
		ibv_wc_status_str(wc.status));
	CHECK(memcmp(buf, buf + PATTERN_LEN, PATTERN_LEN) == 0, "read-back differs");

	memcpy(word, &tail, 8);
	CHECK(rpma_atomic_write(conn, dst, TAIL_OFF, word, RPMA_F_COMPLETION_ON_ERROR,
		NULL) == 0, "atomic write");
	CHECK(rpma_flush(conn, dst, TAIL_OFF, 8, RPMA_FLUSH_TYPE_PERSISTENT,
		RPMA_F_COMPLETION_ALWAYS, (void *)3) == 0, "flush tail");
	wc = interop_wait(cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 3, "flush tail: %s",
		ibv_wc_status_str(wc.status));
	printf("[%s] client: wrote, flushed, read back and atomic-wrote\n", IMPL);

	CHECK(rpma_conn_disconnect(conn) == 0, "disconnect");
	CHECK(interop_event(conn) == RPMA_CONN_CLOSED, "closed");
	rpma_conn_delete(&conn);
	rpma_peer_cfg_delete(&pcfg);
	rpma_mr_remote_delete(&dst);
	rpma_mr_dereg(&mr);
	rpma_peer_delete(&peer);
	return 0;
}
