/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the examples share: a peer from a transport name
 * ("tcp", "net" for libfabric, or "verbs" for an RDMA device serving the
 * address), and blocking waits for an event and a completion.
 */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpma.h"

#define DIE(...) \
	do { \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, " (%s)\n", rpma_ext_errormsg()); \
		exit(1); \
	} while (0)

static inline struct rpma_peer *
example_peer(const char *transport, const char *addr)
{
	struct rpma_peer *peer = NULL;

	if (strcmp(transport, "verbs") == 0) {
		struct ibv_context *ctx;
		if (rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx))
			DIE("no RDMA device serves %s", addr);
		if (rpma_peer_new(ctx, &peer))
			DIE("rpma_peer_new");
	} else if (rpma_ext_peer_new_ofi(transport, &peer)) {
		DIE("libfabric provider %s", transport);
	}
	return peer;
}

/* verbs descriptors are librpma's 21 bytes, libfabric ones 40 */
static inline size_t
example_desc_size(const struct rpma_peer *peer)
{
	enum rpma_ext_transport t = RPMA_EXT_TRANSPORT_VERBS;

	rpma_ext_peer_get_transport(peer, &t);
	return t == RPMA_EXT_TRANSPORT_VERBS ? RPMA_EXT_MR_DESC_SIZE_V0 :
		RPMA_EXT_MR_DESC_SIZE_V1;
}

static inline void
example_expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;

	if (rpma_conn_next_event(conn, &ev))
		DIE("rpma_conn_next_event");
	if (ev != want)
		DIE("expected \"%s\", got \"%s\"", rpma_utils_conn_event_2str(want),
			rpma_utils_conn_event_2str(ev));
}

/* wait for the completion of op_context; anything else is an error */
static inline void
example_wait(struct rpma_cq *cq, const void *op_context)
{
	struct ibv_wc wc;

	for (;;) {
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			if (rpma_cq_wait(cq))
				DIE("rpma_cq_wait");
			continue;
		}
		if (ret)
			DIE("rpma_cq_get_wc");
		if (wc.status != IBV_WC_SUCCESS)
			DIE("operation failed: %s", ibv_wc_status_str(wc.status));
		if (wc.wr_id == (uint64_t)(uintptr_t)op_context)
			return;
	}
}

#endif
