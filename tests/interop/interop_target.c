/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop_target -- serves one region (device-dax when a path is given,
 * else anonymous memory), declares direct write to PMem, sends its
 * descriptors in private data, and after the client leaves verifies the
 * client's pattern in the region's last bytes and the atomic tail word.
 *
 *   interop_target IP PORT SEED [DEVDAX]
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "interop.h"

int
main(int argc, char *argv[])
{
	struct rpma_peer *peer;
	struct rpma_peer_cfg *pcfg;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data pdata;
	unsigned char data[64], want[PATTERN_LEN];
	size_t mr_size, pcfg_size, map_len = REGION;
	unsigned char *region;
	uint64_t tail;

	if (argc < 4) {
		fprintf(stderr, "usage: %s IP PORT SEED [DEVDAX]\n", argv[0]);
		return 2;
	}
	peer = interop_peer(argv[1]);
	if (argc > 4) {
		int fd = open(argv[4], O_RDWR);
		CHECK(fd >= 0, "open %s: %s", argv[4], strerror(errno));
		map_len = 2 << 20;	/* device-dax maps in its alignment */
		region = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	CHECK(region != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(region, 0, REGION);

	CHECK(rpma_mr_reg(peer, region, REGION, RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr) == 0, "rpma_mr_reg");
	CHECK(rpma_peer_cfg_new(&pcfg) == 0, "peer cfg");
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true) == 0, "direct write");
	CHECK(rpma_mr_get_descriptor_size(mr, &mr_size) == 0 && mr_size == 21,
		"MR descriptor is %zu bytes, want librpma's 21", mr_size);
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size) == 0 && pcfg_size == 1,
		"peer cfg descriptor");
	data[0] = (unsigned char)mr_size;
	data[1] = (unsigned char)pcfg_size;
	CHECK(rpma_mr_get_descriptor(mr, data + 2) == 0, "MR descriptor");
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, data + 2 + mr_size) == 0, "pcfg descriptor");

	CHECK(rpma_ep_listen(peer, argv[1], argv[2], &ep) == 0, "listen");
	printf("[%s] target listening on %s:%s\n", IMPL, argv[1], argv[2]);
	fflush(stdout);
	CHECK(rpma_ep_next_conn_req(ep, NULL, &req) == 0, "request");
	pdata.ptr = data;
	pdata.len = (uint8_t)(2 + mr_size + pcfg_size);
	CHECK(rpma_conn_req_connect(&req, &pdata, &conn) == 0, "accept");
	CHECK(interop_event(conn) == RPMA_CONN_ESTABLISHED, "established");
	CHECK(interop_event(conn) == RPMA_CONN_CLOSED, "closed");

	interop_pattern((unsigned)strtoul(argv[3], NULL, 0), want, PATTERN_LEN);
	CHECK(memcmp(region + PATTERN_OFF, want, PATTERN_LEN) == 0,
		"the client's pattern is not in the region's last bytes");
	memcpy(&tail, region + TAIL_OFF, 8);
	CHECK(tail == TAIL_VALUE, "atomic tail word 0x%" PRIx64, tail);
	printf("[%s] target: pattern and atomic tail verified\n", IMPL);

	rpma_conn_delete(&conn);
	rpma_ep_shutdown(&ep);
	rpma_mr_dereg(&mr);
	rpma_peer_cfg_delete(&pcfg);
	rpma_peer_delete(&peer);
	munmap(region, map_len);
	return 0;
}
