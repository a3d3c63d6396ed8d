/* SPDX-License-Identifier: BSD-3-Clause */
/* srq.c -- rpma_srq: checks, then the provider (verbs only) */
#include "config.h"

#include "conn.h"
#include "errormsg.h"
#include "mr.h"
#include "peer.h"

int
rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr)
{
	if (peer == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;
	if (peer->prov->srq_new == NULL)
		return rpma_fail(RPMA_E_NOSUPP,
			"the %s provider has no shared receive queues", peer->prov->name);
	return peer->prov->srq_new(peer, cfg, srq_ptr);
}

int
rpma_srq_delete(struct rpma_srq **srq_ptr)
{
	int ret;

	if (srq_ptr == NULL)
		return RPMA_E_INVAL;
	if (*srq_ptr == NULL)
		return 0;
	ret = (*srq_ptr)->ops->delete(*srq_ptr);
	if (ret == 0)
		*srq_ptr = NULL;
	return ret;
}

int
rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context)
{
	struct rpma_op op = {
		.local = dst, .local_offset = offset, .len = len,
		.op_context = op_context,
	};

	int ret;

	if (srq == NULL)
		return RPMA_E_INVAL;
	if ((ret = rpma_msg_range(dst, offset, len, RPMA_MR_USAGE_RECV, "recv")))
		return ret;
	return srq->ops->recv(srq, &op);
}

int
rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr)
{
	if (srq == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;
	*rcq_ptr = srq->rcq;
	return 0;
}
