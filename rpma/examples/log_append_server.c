/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_append_server -- the target of log_append_client: a remote log in a
 * file-backed region laid out as [used: 8 bytes][entries...], where `used`
 * counts the bytes of entries that are durable.  Prints the log when the
 * client leaves.
 *
 *   log_append_server TRANSPORT ADDR PORT FILE
 */
#include "common.h"

#define REGION 65536

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
	uint64_t used;
	char *ptr;

	if (argc != 5) {
		fprintf(stderr, "usage: %s TRANSPORT ADDR PORT FILE\n", argv[0]);
		return 2;
	}
	peer = example_peer(argv[1], argv[2]);
	if (rpma_ext_mem_open(RPMA_EXT_MEM_FILE, argv[4], REGION,
			RPMA_EXT_MEM_CREATE, &mem))
		DIE("cannot open %s", argv[4]);
	rpma_ext_mem_get_ptr(mem, (void **)&ptr);
	memcpy(&used, ptr, 8);
	printf("log holds %llu bytes of entries from earlier runs\n",
		(unsigned long long)used);
	if (rpma_ext_mr_reg_mem(peer, mem, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr))
		DIE("rpma_ext_mr_reg_mem");
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
	example_expect_event(conn, RPMA_CONN_CLOSED);

	memcpy(&used, ptr, 8);
	printf("log (%llu bytes):\n", (unsigned long long)used);
	for (uint64_t off = 0; off < used && off < REGION - 8;) {
		const char *entry = ptr + 8 + off;
		size_t n = strnlen(entry, REGION - 8 - off);
		printf("  %s\n", entry);
		off += n + 1;
	}
	rpma_conn_delete(&conn);
	rpma_ep_shutdown(&ep);
	rpma_mr_dereg(&mr);
	rpma_ext_mem_close(&mem);
	rpma_peer_delete(&peer);
	return 0;
}
