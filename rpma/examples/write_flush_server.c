/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_flush_server -- the target of write_flush_client: serves one
 * region backed by a file (persist = copy to the file + fdatasync), lets
 * one client write and flush into it, then prints what the file holds.
 *
 *   write_flush_server TRANSPORT ADDR PORT FILE
 */
#include "common.h"

#define REGION 4096

int
main(int argc, char *argv[])
{
	struct rpma_peer *peer;
	struct rpma_ext_mem *mem;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	unsigned char desc[64];
	size_t desc_size;
	char *ptr;

	if (argc != 5) {
		fprintf(stderr, "usage: %s TRANSPORT ADDR PORT FILE\n", argv[0]);
		return 2;
	}
	peer = example_peer(argv[1], argv[2]);
	if (rpma_ext_mem_open(RPMA_EXT_MEM_FILE, argv[4], REGION,
			RPMA_EXT_MEM_CREATE, &mem))
		DIE("cannot open %s", argv[4]);
	if (rpma_ext_mr_reg_mem(peer, mem, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr))
		DIE("rpma_ext_mr_reg_mem");
	/* the descriptor goes to the client in the accept's private data */
	if (rpma_mr_get_descriptor_size(mr, &desc_size) ||
	    rpma_mr_get_descriptor(mr, desc))
		DIE("descriptor");
	if (rpma_ep_listen(peer, argv[2], argv[3], &ep))
		DIE("cannot listen on %s:%s", argv[2], argv[3]);
	printf("listening on %s:%s\n", argv[2], argv[3]);
	fflush(stdout);
	if (rpma_ep_next_conn_req(ep, NULL, &req))
		DIE("rpma_ep_next_conn_req");
	pdata.ptr = desc;
	pdata.len = (uint8_t)desc_size;
	if (rpma_conn_req_connect(&req, &pdata, &conn))
		DIE("accept");
	example_expect_event(conn, RPMA_CONN_ESTABLISHED);
	/* flushes are served by the core; wait for the client to leave */
	example_expect_event(conn, RPMA_CONN_CLOSED);

	rpma_ext_mem_get_ptr(mem, (void **)&ptr);
	printf("the region holds: \"%.*s\"\n", (int)strnlen(ptr, REGION), ptr);
	rpma_conn_delete(&conn);
	rpma_ep_shutdown(&ep);
	rpma_mr_dereg(&mr);
	rpma_ext_mem_close(&mem);
	rpma_peer_delete(&peer);
	return 0;
}
