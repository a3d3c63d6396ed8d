/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_request.c -- the core's requests between connected peers: flush
 * (both types) and 8-byte atomic write, served by the target's progress
 * thread in arrival order (ofi.h has the record and the CQ data layout).
 *
 * A PERSISTENT flush is acknowledged only after the target's region was
 * persisted by its backend (or its CPU caches flushed); a failure travels
 * back as an error completion, never as success.
 */
#include "config.h"

#include <endian.h>
#include <sched.h>
#include <string.h>

#include "cq.h"
#include "errormsg.h"
#include "log.h"
#include "mr.h"
#include "mr_remote.h"
#include "ofi.h"
#include "request.h"

#define RESPOND_RETRIES 100000

/*
 * Post a request; with data (a write and its flush in one post), the same
 * message first carries op's bytes to their place, so the request needs
 * no message of its own: the target sees its CQ data only after the whole
 * message landed.  The write's completion is the core's own (the region
 * stays held until it); its failure fails every pending request.
 */
int
rpma_ofi_request_post(struct ofi_conn *conn, const struct rpma_op *op,
		enum rpma_req_op rop, bool with_data)
{
	struct rpma_req *req;
	struct ofi_op *o = NULL;
	struct iovec iov[2];
	void *desc[2];
	struct fi_rma_iov rma[2];
	struct fi_msg_rma msg = {
		.msg_iov = iov, .desc = desc, .iov_count = 1,
		.rma_iov = rma, .rma_iov_count = 1, .context = &conn->internal_op,
	};
	/*
	 * No completion of its own on success (a failure is reported all the
	 * same): the answer is what completes the request, and the carrier
	 * of its data (holding the region) goes with the answer, for the
	 * answer means the message arrived whole.  So the provider signals
	 * nobody for the post.
	 */
	uint64_t flags = FI_REMOTE_CQ_DATA;
	int i = 0, tries = 0;
	uint32_t slot;
	ssize_t ret;

	if (atomic_load(&conn->closed) || !conn->have_remote_hello)
		return rpma_fail(RPMA_E_PROVIDER, "connection is not established");
	if (with_data) {
		struct rpma_op carrier = *op;

		carrier.flags = RPMA_F_COMPLETION_ON_ERROR;
		if ((o = rpma_ofi_op_get(conn, OFI_OP_WRITE_REQ, &carrier)) == NULL)
			return rpma_fail(RPMA_E_PROVIDER, "send queue full: complete operations first");
	}
	if ((ret = rpma_req_table_take(&conn->pending, conn->remote_nslots, op, rop, &slot))) {
		if (o)
			rpma_ofi_op_put(conn, o);
		return (int)ret;
	}

	req = &conn->stage[slot];
	rpma_req_fill(req, rop, op, atomic_load_explicit(&conn->base.epoch,
		memory_order_relaxed));
	if (with_data) {
		iov[0].iov_base = op->local->ptr + op->local_offset;
		iov[0].iov_len = op->len;
		desc[0] = op->local->prov_desc;
		rma[0].addr = op->remote->desc.raddr + op->remote_offset;
		rma[0].len = op->len;
		rma[0].key = op->remote->desc.key;
		msg.iov_count = msg.rma_iov_count = 2;
		msg.context = o;
		i = 1;
		/* before the post: the answer may be read by another thread */
		rpma_req_table_set_carrier(&conn->pending, slot, o);
	}
	iov[i].iov_base = req;
	iov[i].iov_len = sizeof(*req);
	desc[i] = fi_mr_desc(conn->stage_mr);
	rma[i].addr = conn->remote_req_raddr + slot * sizeof(*req);
	rma[i].len = sizeof(*req);
	rma[i].key = conn->remote_req_key;
	msg.data = OFI_DATA(OFI_TAG_REQ, 0, slot);
	/* never overtake the writes the request covers */
	if (!conn->peer->ordered_waw)
		flags |= FI_FENCE;

	do {
		ret = fi_writemsg(conn->ep, &msg, flags);
		if (ret == -FI_EAGAIN)
			sched_yield();
	} while (ret == -FI_EAGAIN && ++tries < 1000);
	if (ret) {
		if (o)
			o = rpma_req_table_carrier(&conn->pending, slot);
		rpma_req_table_untake(&conn->pending, slot);
		if (o)
			rpma_ofi_op_put(conn, o);
		return rpma_ofi_err((int)ret, "posting a flush request");
	}
	return 0;
}

static void
respond(struct ofi_conn *conn, uint64_t slot, unsigned status)
{
	struct fi_rma_iov rma = {
		.addr = conn->remote_req_raddr, .len = 0, .key = conn->remote_req_key,
	};
	struct fi_msg_rma msg = {
		.iov_count = 0, .rma_iov = &rma, .rma_iov_count = 1,
		.context = &conn->internal_op,
		.data = OFI_DATA(OFI_TAG_RESP, status, slot),
	};
	int tries = 0;
	ssize_t ret;

	do {
		/* no completion of its own on success: nothing waits for it */
		ret = fi_writemsg(conn->ep, &msg, FI_REMOTE_CQ_DATA);
		if (ret == -FI_EAGAIN) {
			/* our own completions may be what holds the queue */
			rpma_ofi_conn_progress(conn);
			sched_yield();
		}
	} while (ret == -FI_EAGAIN && ++tries < RESPOND_RETRIES);
	if (ret)
		RPMA_LOG_ERROR("cannot answer request %llu: %s",
			(unsigned long long)slot, fi_strerror((int)-ret));
}

void
rpma_ofi_request_serve(struct ofi_conn *conn, const uint64_t *slots, int n)
{
	struct rpma_req r[RPMA_REQ_GROUP] = { { 0 } };
	unsigned status[RPMA_REQ_GROUP] = { 0 };
	int k = 0;

	/* the requests that arrived together share one persist barrier */
	for (int i = 0; i < n && i < RPMA_REQ_GROUP; i++) {
		if (slots[i] >= conn->nslots) {
			RPMA_LOG_WARNING("request names slot %llu of %u",
				(unsigned long long)slots[i], conn->nslots);
			continue;
		}
		memcpy(&r[k++], &conn->req_area[slots[i]], sizeof(r[0]));
	}
	rpma_req_serve_group(&conn->peer->base, r, status, k);
	k = 0;
	for (int i = 0; i < n && i < RPMA_REQ_GROUP; i++)
		respond(conn, slots[i], slots[i] >= conn->nslots ? RPMA_REQ_BAD :
			status[k++]);
}

static void
complete_pending(struct ofi_conn *conn, uint32_t slot, enum ibv_wc_status st,
		unsigned vendor_err)
{
	struct ibv_wc wc;
	struct ofi_op *carrier = rpma_req_table_carrier(&conn->pending, slot);

	if (carrier)
		rpma_ofi_op_put(conn, carrier);
	if (rpma_req_table_complete(&conn->pending, slot, st, vendor_err,
			conn->base.qp_num, &wc))
		rpma_cq_push(conn->base.cq, &wc, 1);
}

void
rpma_ofi_request_answered(struct ofi_conn *conn, uint64_t slot, unsigned status)
{
	if (slot >= conn->nslots) {
		RPMA_LOG_WARNING("answer names slot %llu of %u",
			(unsigned long long)slot, conn->nslots);
		return;
	}
	complete_pending(conn, (uint32_t)slot, rpma_req_wc_status(status), status);
}

void
rpma_ofi_conn_fail_pending(struct ofi_conn *conn)
{
	for (uint32_t s = 0; s < conn->pending.n; s++)
		complete_pending(conn, s, IBV_WC_WR_FLUSH_ERR, 0);
}
