/* SPDX-License-Identifier: BSD-3-Clause */
/* conn.h -- the generic parts of endpoints, requests and connections */
#ifndef RPMA_CONN_H
#define RPMA_CONN_H

#include <stdatomic.h>
#include <stdbool.h>

#include "provider.h"

struct rpma_ep {
	const struct rpma_ep_ops *ops;
	struct rpma_peer *peer;
};

struct rpma_conn_req {
	const struct rpma_conn_req_ops *ops;
	struct rpma_peer *peer;
	struct rpma_conn_private_data pdata;	/* owned copy; passive side */
};

struct rpma_conn {
	const struct rpma_conn_ops *ops;
	struct rpma_peer *peer;
	struct rpma_cq *cq;
	struct rpma_cq *rcq;			/* NULL: receives go to cq */
	bool shared_channel;
	struct rpma_conn_private_data pdata;	/* owned copy */
	/* the remote side declared direct write to PMem (peer cfg) */
	atomic_bool direct_write_to_pmem;
	/* verbs: the QP number completions carry; ofi: a per-connection id */
	uint32_t qp_num;
	/* how each flush type is reached (chosen by the provider) */
	enum rpma_ext_flush_method flush_method[2];
	/* carried by this connection's flush requests (fencing) */
	_Atomic uint64_t epoch;
};

/*
 * A message's local range: the region (NULL only in the 0-byte form) has
 * usage and holds [offset, offset + len); len fits 32 bits.
 */
struct rpma_mr_local;
int rpma_msg_range(const struct rpma_mr_local *mr, size_t offset, size_t len,
		int usage, const char *what);

/* copy [ptr, ptr + len) into pdata (len 0: none) */
int rpma_private_data_store(struct rpma_conn_private_data *pdata,
		const void *ptr, size_t len);
void rpma_private_data_discard(struct rpma_conn_private_data *pdata);

#endif
