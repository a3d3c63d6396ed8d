/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_flush_client -- write a message into a remote region and make it
 * persistent there: rpma_write, then rpma_flush(PERSISTENT), whose
 * completion means the bytes are durable on the target.
 *
 *   write_flush_client TRANSPORT ADDR PORT MESSAGE
 */
#include "common.h"

int
main(int argc, char *argv[])
{
	struct rpma_peer *peer;
	struct rpma_mr_local *src;
	struct rpma_mr_remote *dst;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	struct rpma_cq *cq;
	enum rpma_ext_flush_method method;
	static char buf[4096];
	size_t len;

	if (argc != 5) {
		fprintf(stderr, "usage: %s TRANSPORT ADDR PORT MESSAGE\n", argv[0]);
		return 2;
	}
	len = strlen(argv[4]) + 1;
	if (len > sizeof(buf))
		DIE("message longer than %zu bytes", sizeof(buf));
	memcpy(buf, argv[4], len);

	peer = example_peer(argv[1], argv[2]);
	if (rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_WRITE_SRC, &src))
		DIE("rpma_mr_reg");
	if (rpma_conn_req_new(peer, argv[2], argv[3], NULL, &req) ||
	    rpma_conn_req_connect(&req, NULL, &conn))
		DIE("cannot connect to %s:%s", argv[2], argv[3]);
	example_expect_event(conn, RPMA_CONN_ESTABLISHED);
	/* rdma_cm may pad private data: take the descriptor's own size */
	if (rpma_conn_get_private_data(conn, &pdata) ||
	    rpma_mr_remote_from_descriptor(pdata.ptr, example_desc_size(peer), &dst))
		DIE("the server's descriptor");
	rpma_conn_get_cq(conn, &cq);

	/* the write needs no completion of its own: the flush covers it */
	if (rpma_write(conn, dst, 0, src, 0, len, RPMA_F_COMPLETION_ON_ERROR, NULL))
		DIE("rpma_write");
	if (rpma_flush(conn, dst, 0, len, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, buf))
		DIE("rpma_flush");
	example_wait(cq, buf);
	rpma_ext_conn_get_flush_method(conn, RPMA_FLUSH_TYPE_PERSISTENT, &method);
	printf("%zu bytes written and persistent on the server (flush method %s)\n",
		len, method == RPMA_EXT_FLUSH_GPSPM ? "GPSPM" :
		method == RPMA_EXT_FLUSH_APM ? "APM" : "native");

	rpma_conn_disconnect(conn);
	example_expect_event(conn, RPMA_CONN_CLOSED);
	rpma_conn_delete(&conn);
	rpma_mr_remote_delete(&dst);
	rpma_mr_dereg(&src);
	rpma_peer_delete(&peer);
	return 0;
}
