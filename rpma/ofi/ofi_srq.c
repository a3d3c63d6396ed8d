/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_srq.c -- shared receive queues on libfabric: a shared receive
 * context (fi_srx_context) that connections bind to.  A message arriving on
 * any of them takes the next receive posted here; its completion comes
 * through the connection's CQ, and the core delivers it to the SRQ's own
 * CQ when it has one, else to the connection's receive CQ or CQ.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cq.h"
#include "errormsg.h"
#include "mr.h"
#include "ofi.h"
#include "srq_cfg.h"

static struct ofi_op *
srq_op_get(struct ofi_srq *srq, const struct rpma_op *op)
{
	struct ofi_op *o;

	pthread_mutex_lock(&srq->lock);
	o = srq->free_ops;
	if (o)
		srq->free_ops = o->next_free;
	pthread_mutex_unlock(&srq->lock);
	if (o == NULL)
		return NULL;
	o->op_context = op->op_context;
	o->mr = op->local;
	o->kind = OFI_OP_RECV;
	o->signaled = true;
	o->to_rcq = false;
	o->in_use = true;
	o->srq = srq;
	rpma_mr_hold(o->mr);
	return o;
}

void
rpma_ofi_srq_op_put(struct ofi_op *o)
{
	struct ofi_srq *srq = o->srq;

	rpma_mr_release(o->mr);
	pthread_mutex_lock(&srq->lock);
	o->in_use = false;
	o->next_free = srq->free_ops;
	srq->free_ops = o;
	pthread_mutex_unlock(&srq->lock);
}

static int
ofi_srq_recv(struct rpma_srq *base, const struct rpma_op *op)
{
	struct ofi_srq *srq = (struct ofi_srq *)base;
	struct ofi_op *o = srq_op_get(srq, op);
	struct iovec iov;
	void *desc = NULL;
	struct fi_msg msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1 };
	ssize_t ret;

	if (o == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "shared receive queue full");
	iov.iov_base = op->local ? op->local->ptr + op->local_offset : NULL;
	iov.iov_len = op->len;
	if (op->local)
		desc = op->local->prov_desc;
	else
		msg.iov_count = 0;
	msg.context = o;
	ret = fi_recvmsg(srq->srx, &msg, FI_COMPLETION);
	if (ret) {
		rpma_ofi_srq_op_put(o);
		return rpma_ofi_err((int)ret, "fi_recv (SRQ)");
	}
	return 0;
}

static int
ofi_srq_delete(struct rpma_srq *base)
{
	struct ofi_srq *srq = (struct ofi_srq *)base;
	int users = atomic_load(&srq->users);

	if (users)
		return rpma_fail(RPMA_E_INVAL,
			"the SRQ still serves %d connection(s): delete them first", users);
	fi_close(&srq->srx->fid);
	/* receives that never completed no longer use their regions */
	for (uint32_t i = 0; i < srq->nops; i++)
		if (srq->ops[i].in_use)
			rpma_mr_release(srq->ops[i].mr);
	rpma_cq_delete(srq->base.rcq);
	pthread_mutex_destroy(&srq->lock);
	free(srq->ops);
	free(srq);
	return 0;
}

static const struct rpma_srq_ops ofi_srq_ops = {
	.delete = ofi_srq_delete,
	.recv = ofi_srq_recv,
};

int
rpma_ofi_srq_new(struct rpma_peer *base, const struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr)
{
	struct ofi_peer *peer = (struct ofi_peer *)base;
	uint32_t rq_size = RPMA_SRQ_CFG_DEFAULT_SIZE, rcq_size = RPMA_SRQ_CFG_DEFAULT_SIZE;
	struct fi_rx_attr rx_attr;
	struct ofi_srq *srq;
	int ret;

	if (cfg) {
		rpma_srq_cfg_get_rq_size(cfg, &rq_size);
		rpma_srq_cfg_get_rcq_size(cfg, &rcq_size);
	}
	if (rq_size == 0)
		return rpma_fail(RPMA_E_INVAL, "an SRQ needs at least one receive");
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate an SRQ");
	srq->ops = calloc(rq_size, sizeof(*srq->ops));
	if (srq->ops == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate %u receive slots", rq_size);
		goto err_free;
	}
	srq->nops = rq_size;
	for (uint32_t i = 0; i < rq_size; i++) {
		srq->ops[i].next_free = srq->free_ops;
		srq->free_ops = &srq->ops[i];
	}
	pthread_mutex_init(&srq->lock, NULL);
	atomic_init(&srq->users, 0);
	rx_attr = *peer->info->rx_attr;
	rx_attr.size = rq_size;
	if ((ret = fi_srx_context(peer->domain, &rx_attr, &srq->srx, NULL))) {
		ret = rpma_ofi_err(ret, "fi_srx_context");
		goto err_lock;
	}
	if (rcq_size && (ret = rpma_cq_new(rcq_size, &srq->base.rcq)))
		goto err_srx;
	srq->base.ops = &ofi_srq_ops;
	srq->base.peer = base;
	srq->peer = peer;
	*srq_ptr = &srq->base;
	return 0;

err_srx:
	fi_close(&srq->srx->fid);
err_lock:
	pthread_mutex_destroy(&srq->lock);
err_free:
	free(srq->ops);
	free(srq);
	return ret;
}
