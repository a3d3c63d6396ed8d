/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_data.c -- the data path of libfabric connections: posting the
 * application's operations, and the completions the progress thread (or
 * the application's own polling) reads back (ofi.h has the design).
 *
 * Every operation is posted with a completion so the core knows when a
 * local region is no longer in use; completions the application did not ask
 * for (RPMA_F_COMPLETION_ON_ERROR that succeeded) are dropped here.  Only
 * one thread at a time reads a connection's CQ (progress.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <sched.h>
#include <string.h>

#include "cq.h"
#include "errormsg.h"
#include "log.h"
#include "mr.h"
#include "mr_remote.h"
#include "ofi.h"
#include "request.h"

#define POST_RETRIES 1000	/* yields while a provider queue is full */

/* ---------------------------------------------------------------- */
/* posting                                                          */

/* retry while the provider's queue is momentarily full */
static bool
again(ssize_t ret, int *tries)
{
	if (ret != -FI_EAGAIN || ++*tries >= POST_RETRIES)
		return false;
	sched_yield();
	return true;
}

static int
post_failed(struct ofi_conn *conn, struct ofi_op *o, ssize_t ret, const char *what)
{
	rpma_ofi_op_put(conn, o);
	if (ret == -FI_EAGAIN)
		return rpma_fail(RPMA_E_PROVIDER, "%s: transmit queue stays full", what);
	return rpma_ofi_err((int)ret, what);
}

static int
post_rma(struct ofi_conn *conn, const struct rpma_op *op, bool is_read,
		bool with_imm)
{
	struct ofi_op *o = rpma_ofi_op_get(conn, is_read ? OFI_OP_READ : OFI_OP_WRITE, op);
	struct iovec iov;
	void *desc;
	struct fi_rma_iov rma;
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.rma_iov = &rma, .rma_iov_count = 1,
	};
	uint64_t flags = FI_COMPLETION;
	int tries = 0;
	ssize_t ret;

	if (o == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "send queue full: complete operations first");
	if (op->local) {
		iov.iov_base = op->local->ptr + op->local_offset;
		desc = op->local->prov_desc;
		rma.addr = op->remote->desc.raddr + op->remote_offset;
		rma.key = op->remote->desc.key;
	} else {
		/* the 0-byte form still orders: aim it at the peer's request area */
		iov.iov_base = conn->stage;
		desc = fi_mr_desc(conn->stage_mr);
		rma.addr = conn->remote_req_raddr;
		rma.key = conn->remote_req_key;
	}
	iov.iov_len = op->len;
	rma.len = op->len;
	msg.context = o;
	if (with_imm) {
		msg.data = OFI_DATA(OFI_TAG_USER, 0, op->imm);
		flags |= FI_REMOTE_CQ_DATA;
	}
	do
		ret = is_read ? fi_readmsg(conn->ep, &msg, flags) :
			fi_writemsg(conn->ep, &msg, flags);
	while (again(ret, &tries));
	return ret ? post_failed(conn, o, ret, is_read ? "fi_read" : "fi_write") : 0;
}

static int
ofi_read(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_rma((struct ofi_conn *)base, op, true, false);
}

static int
ofi_write(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_rma((struct ofi_conn *)base, op, false, false);
}

static int
ofi_write_with_imm(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_rma((struct ofi_conn *)base, op, false, true);
}

static int
post_send(struct ofi_conn *conn, const struct rpma_op *op, bool with_imm)
{
	struct ofi_op *o = rpma_ofi_op_get(conn, OFI_OP_SEND, op);
	struct iovec iov;
	void *desc = NULL;
	struct fi_msg msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1 };
	uint64_t flags = FI_COMPLETION;
	int tries = 0;
	ssize_t ret;

	if (o == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "send queue full: complete operations first");
	iov.iov_base = op->local ? op->local->ptr + op->local_offset : NULL;
	iov.iov_len = op->len;
	if (op->local)
		desc = op->local->prov_desc;
	else
		msg.iov_count = 0;
	msg.context = o;
	if (with_imm) {
		msg.data = op->imm;
		flags |= FI_REMOTE_CQ_DATA;
	}
	do
		ret = fi_sendmsg(conn->ep, &msg, flags);
	while (again(ret, &tries));
	return ret ? post_failed(conn, o, ret, "fi_send") : 0;
}

static int
ofi_send(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_send((struct ofi_conn *)base, op, false);
}

static int
ofi_send_with_imm(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_send((struct ofi_conn *)base, op, true);
}

int
rpma_ofi_post_recv(struct ofi_conn *conn, const struct rpma_op *op)
{
	struct ofi_op *o = rpma_ofi_op_get(conn, OFI_OP_RECV, op);
	struct iovec iov;
	void *desc = NULL;
	struct fi_msg msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1 };
	int tries = 0;
	ssize_t ret;

	if (conn->srq) {
		if (o)
			rpma_ofi_op_put(conn, o);
		return rpma_fail(RPMA_E_INVAL,
			"the connection receives through an SRQ: use rpma_srq_recv()");
	}
	if (o == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "receive queue full");
	iov.iov_base = op->local ? op->local->ptr + op->local_offset : NULL;
	iov.iov_len = op->len;
	if (op->local)
		desc = op->local->prov_desc;
	else
		msg.iov_count = 0;
	msg.context = o;
	do
		ret = fi_recvmsg(conn->ep, &msg, FI_COMPLETION);
	while (again(ret, &tries));
	return ret ? post_failed(conn, o, ret, "fi_recv") : 0;
}

static int
ofi_recv(struct rpma_conn *base, const struct rpma_op *op)
{
	return rpma_ofi_post_recv((struct ofi_conn *)base, op);
}

static int
ofi_flush(struct rpma_conn *base, const struct rpma_op *op)
{
	return rpma_ofi_request_post((struct ofi_conn *)base, op,
		rpma_req_flush_op(op->flush_type), false);
}

/* one message where the endpoint takes two segments (tcp takes 4) */
static int
ofi_write_flush(struct rpma_conn *base, const struct rpma_op *op)
{
	struct ofi_conn *conn = (struct ofi_conn *)base;
	struct rpma_op w = *op;
	int ret;

	if (conn->peer->two_segments)
		return rpma_ofi_request_post(conn, op,
			rpma_req_flush_op(op->flush_type), true);
	w.flags = RPMA_F_COMPLETION_ON_ERROR;
	if ((ret = post_rma(conn, &w, false, false)))
		return ret;
	return ofi_flush(base, op);
}

static int
ofi_atomic_write(struct rpma_conn *base, const struct rpma_op *op)
{
	return rpma_ofi_request_post((struct ofi_conn *)base, op,
		RPMA_REQ_ATOMIC_WRITE, false);
}

const struct rpma_conn_ops rpma_ofi_conn_ops = {
	.next_event = rpma_ofi_conn_next_event,
	.get_event_fd = rpma_ofi_conn_get_event_fd,
	.disconnect = rpma_ofi_conn_disconnect,
	.delete = rpma_ofi_conn_delete,
	.read = ofi_read,
	.write = ofi_write,
	.write_with_imm = ofi_write_with_imm,
	.atomic_write = ofi_atomic_write,
	.flush = ofi_flush,
	.write_flush = ofi_write_flush,
	.send = ofi_send,
	.send_with_imm = ofi_send_with_imm,
	.recv = ofi_recv,
};

/* ---------------------------------------------------------------- */
/* completions (called by the progress thread only)                  */

static enum ibv_wc_status
status_of_error(int err)
{
	switch (err) {
	case FI_ECANCELED:
	case FI_ESHUTDOWN:
	case FI_ENOTCONN:
	case FI_ECONNRESET:
		return IBV_WC_WR_FLUSH_ERR;
	case FI_EACCES:
	case FI_EINVAL:
	case FI_ENOKEY:
		return IBV_WC_REM_ACCESS_ERR;
	case FI_ETRUNC:
	case FI_EMSGSIZE:
		return IBV_WC_LOC_LEN_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

static enum ibv_wc_opcode
opcode_of(uint8_t kind)
{
	switch (kind) {
	case OFI_OP_READ:	return IBV_WC_RDMA_READ;
	case OFI_OP_WRITE:	return IBV_WC_RDMA_WRITE;
	case OFI_OP_SEND:	return IBV_WC_SEND;
	default:		return IBV_WC_RECV;
	}
}

static void
deliver(struct ofi_conn *conn, bool to_rcq, const struct ibv_wc *wc)
{
	rpma_cq_push(to_rcq ? conn->base.rcq : conn->base.cq, wc, 1);
}

/* where a receive's completion goes: the SRQ's CQ, the rcq, or the cq */
static struct rpma_cq *
recv_cq_of(struct ofi_conn *conn, const struct ofi_op *o)
{
	if (o->srq && o->srq->base.rcq)
		return o->srq->base.rcq;
	return conn->base.rcq ? conn->base.rcq : conn->base.cq;
}

static void
complete_op(struct ofi_conn *conn, struct ofi_op *o, const struct fi_cq_data_entry *e,
		enum ibv_wc_status status, uint32_t vendor_err)
{
	struct ibv_wc wc;

	if (o->kind == OFI_OP_INTERNAL || o->kind == OFI_OP_WRITE_REQ) {
		/*
		 * A request or response write failed: the connection is
		 * broken.  A carrier of data goes with its request's answer,
		 * or here with the failing of every pending request.
		 */
		if (status != IBV_WC_SUCCESS) {
			RPMA_LOG_ERROR("core request write failed on a connection");
			rpma_ofi_conn_fail_pending(conn);
		}
		return;
	}
	if (status == IBV_WC_SUCCESS && !o->signaled) {
		rpma_ofi_op_put(conn, o);
		return;
	}
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = (uint64_t)(uintptr_t)o->op_context;
	wc.status = status;
	wc.opcode = opcode_of(o->kind);
	wc.vendor_err = vendor_err;
	wc.qp_num = rpma_ofi_qp_num(conn);
	if (e && o->kind == OFI_OP_RECV) {
		wc.byte_len = (uint32_t)e->len;
		if (e->flags & FI_REMOTE_CQ_DATA) {
			wc.wc_flags |= IBV_WC_WITH_IMM;
			wc.imm_data = htonl((uint32_t)e->data);
		}
	}
	struct rpma_cq *dest = o->kind == OFI_OP_RECV ? recv_cq_of(conn, o) :
		conn->base.cq;
	rpma_ofi_op_put(conn, o);
	rpma_cq_push(dest, &wc, 1);
}

static void
remote_data(struct ofi_conn *conn, const struct fi_cq_data_entry *e)
{
	uint64_t d = e->data;
	struct ibv_wc wc;

	switch (OFI_DATA_TAG(d)) {
	case OFI_TAG_RESP:
		rpma_ofi_request_answered(conn, OFI_DATA_SLOT(d), OFI_DATA_STATUS(d));
		return;
	case OFI_TAG_USER:
		/* write_with_imm: no posted receive is consumed on ofi */
		memset(&wc, 0, sizeof(wc));
		wc.status = IBV_WC_SUCCESS;
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = htonl((uint32_t)d);
		wc.byte_len = (uint32_t)e->len;
		wc.qp_num = rpma_ofi_qp_num(conn);
		deliver(conn, conn->base.rcq != NULL, &wc);
		return;
	default:
		RPMA_LOG_WARNING("dropped remote data with unknown tag 0x%02llx",
			(unsigned long long)OFI_DATA_TAG(d));
	}
}

static bool
is_request(const struct fi_cq_data_entry *e)
{
	return (e->flags & FI_REMOTE_CQ_DATA) && !(e->flags & FI_RECV) &&
		OFI_DATA_TAG(e->data) == OFI_TAG_REQ;
}

/*
 * Handle what the CQ holds; returns how many entries.  The requests read
 * together are served together (what arrived while the last persist ran
 * shares the next one), up to the next entry of another peer-visible
 * kind, so that what the initiator sees keeps its order.
 */
int
rpma_ofi_conn_progress(struct ofi_conn *conn)
{
	struct fi_cq_data_entry e[RPMA_REQ_GROUP];
	ssize_t n = fi_cq_read(conn->cq, e, RPMA_REQ_GROUP);
	uint64_t slots[RPMA_REQ_GROUP];
	int k = 0;

	if (n > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (is_request(&e[i])) {
				slots[k++] = OFI_DATA_SLOT(e[i].data);
				continue;
			}
			if ((e[i].flags & FI_REMOTE_CQ_DATA) && !(e[i].flags & FI_RECV)) {
				if (k)
					rpma_ofi_request_serve(conn, slots, k);
				k = 0;
				remote_data(conn, &e[i]);
			} else if (e[i].op_context) {
				complete_op(conn, e[i].op_context, &e[i], IBV_WC_SUCCESS, 0);
			}
		}
		if (k)
			rpma_ofi_request_serve(conn, slots, k);
		return (int)n;
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;

		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(conn->cq, &err, 0) == 1 && err.op_context)
			complete_op(conn, err.op_context, NULL,
				status_of_error(err.err), (uint32_t)err.prov_errno);
		return 1;
	}
	return 0;
}
