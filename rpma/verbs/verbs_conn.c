/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_conn.c -- connections on verbs: queue pairs over rdma_cm, events,
 * and the data-path operations (verbs.h says how slots and flush work).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conn_cfg.h"
#include "errormsg.h"
#include "fault_injection.h"
#include "log.h"
#include "mr.h"
#include "mr_remote.h"
#include "request.h"
#include "srq_cfg.h"
#include "verbs.h"

#define RAW_SIZE 8		/* an APM read's destination */
#define APM_READ_LEN 8

static void
cfg_read(const struct rpma_conn_cfg *cfg, uint32_t *cq, uint32_t *rcq,
		uint32_t *sq, uint32_t *rq, bool *shared, int *timeout,
		struct rpma_srq **srq, bool *gpspm)
{
	struct rpma_conn_cfg *tmp = NULL;

	if (cfg == NULL && rpma_conn_cfg_new(&tmp) == 0)
		cfg = tmp;
	if (cfg == NULL) {
		*cq = *sq = *rq = RPMA_CONN_CFG_DEFAULT_Q_SIZE;
		*rcq = 0;
		*shared = false;
		*timeout = RPMA_DEFAULT_TIMEOUT_MS;
		*srq = NULL;
		*gpspm = false;
		return;
	}
	rpma_conn_cfg_get_cq_size(cfg, cq);
	rpma_conn_cfg_get_rcq_size(cfg, rcq);
	rpma_conn_cfg_get_sq_size(cfg, sq);
	rpma_conn_cfg_get_rq_size(cfg, rq);
	rpma_conn_cfg_get_compl_channel(cfg, shared);
	rpma_conn_cfg_get_timeout(cfg, timeout);
	rpma_conn_cfg_get_srq(cfg, srq);
	rpma_ext_conn_cfg_get_gpspm(cfg, gpspm);
	rpma_conn_cfg_delete(&tmp);
}

/*
 * What flush can promise: visibility by APM; persistence by APM only where
 * the target declared direct write to PMem, else by the core's flush
 * service where the connection has it, else not at all.
 */
static void
verbs_flush_methods(struct rpma_conn *base)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;

	base->flush_method[RPMA_FLUSH_TYPE_VISIBILITY] = RPMA_EXT_FLUSH_APM;
	base->flush_method[RPMA_FLUSH_TYPE_PERSISTENT] =
		atomic_load(&base->direct_write_to_pmem) ? RPMA_EXT_FLUSH_APM :
		conn->gpspm ? RPMA_EXT_FLUSH_GPSPM : RPMA_EXT_FLUSH_NONE;
}

int
rpma_verbs_conn_new(struct verbs_peer *peer, struct rdma_cm_id *id,
		const struct rpma_conn_cfg *cfg, bool passive,
		struct verbs_conn **conn_ptr)
{
	uint32_t cq_size, rcq_size, sq_size, rq_size;
	struct ibv_qp_init_attr qp_attr;
	struct verbs_conn *conn;
	struct verbs_srq *srq;
	struct rpma_srq *srq_base;
	bool shared, gpspm;
	int timeout;
	int ret;

	cfg_read(cfg, &cq_size, &rcq_size, &sq_size, &rq_size, &shared, &timeout,
		&srq_base, &gpspm);
	srq = (struct verbs_srq *)srq_base;
	if (shared && srq && srq->rcq)
		return rpma_fail(RPMA_E_INVAL,
			"a shared completion channel cannot serve an SRQ with its own CQ");
	if (gpspm && (srq || shared))
		return rpma_fail(RPMA_E_INVAL,
			"the flush service owns the receive queue and the completions: "
			"no SRQ and no shared completion channel with it");

	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a connection");
	conn->peer = peer;
	conn->id = id;
	conn->passive = passive;
	conn->srq = srq_base;
	conn->base.peer = &peer->base;
	conn->base.ops = &rpma_verbs_conn_ops;
	conn->base.shared_channel = shared;
	atomic_init(&conn->base.direct_write_to_pmem, false);

	if ((ret = rpma_verbs_ring_init(&conn->sq, sq_size, true)) ||
	    (ret = rpma_verbs_ring_init(&conn->rq, rq_size, false)))
		goto err;

	if (gpspm) {
		if ((ret = rpma_verbs_gpspm_new(conn, sq_size, cq_size, rcq_size)))
			goto err;
	} else if (shared) {
		conn->shared_channel = ibv_create_comp_channel(peer->ctx);
		if (conn->shared_channel == NULL) {
			ret = rpma_verbs_err(errno, "ibv_create_comp_channel");
			goto err;
		}
	}
	if (!gpspm) {
		if ((ret = rpma_verbs_cq_new(peer, cq_size, conn->shared_channel,
				&conn->cq)))
			goto err;
		if (rcq_size && (ret = rpma_verbs_cq_new(peer, rcq_size,
				conn->shared_channel, &conn->rcq)))
			goto err;
		conn->cq->base.shared_channel = shared;
		if (conn->rcq)
			conn->rcq->base.shared_channel = shared;
		conn->base.cq = &conn->cq->base;
		conn->base.rcq = conn->rcq ? &conn->rcq->base : NULL;
	}
	verbs_flush_methods(&conn->base);

	/* the APM read's destination: a page of its own, safe across fork */
	conn->raw = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (conn->raw == MAP_FAILED) {
		conn->raw = NULL;
		ret = rpma_fail(RPMA_E_NOMEM, "cannot map the flush buffer");
		goto err;
	}
	conn->raw_mr = ibv_reg_mr(peer->pd, conn->raw, RAW_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (conn->raw_mr == NULL) {
		ret = rpma_verbs_err(errno, "ibv_reg_mr (flush buffer)");
		goto err;
	}

	memset(&qp_attr, 0, sizeof(qp_attr));
	qp_attr.qp_type = IBV_QPT_RC;
	if (gpspm) {
		/* room for the service's requests and answers beside ours */
		rpma_verbs_gpspm_cqs(conn, &qp_attr.send_cq, &qp_attr.recv_cq);
		qp_attr.cap.max_send_wr = 3 * sq_size;
		qp_attr.cap.max_recv_wr = sq_size;
	} else {
		qp_attr.send_cq = conn->cq->cq;
		qp_attr.recv_cq = conn->rcq ? conn->rcq->cq :
			(srq && srq->rcq) ? srq->rcq->cq : conn->cq->cq;
		qp_attr.srq = srq ? srq->srq : NULL;
		qp_attr.cap.max_send_wr = sq_size;
		qp_attr.cap.max_recv_wr = srq ? 0 : rq_size;
	}
	qp_attr.cap.max_send_sge = 1;
	qp_attr.cap.max_recv_sge = 1;
	qp_attr.cap.max_inline_data = RPMA_ATOMIC_WRITE_ALIGNMENT;
	qp_attr.sq_sig_all = 0;
	if (rdma_create_qp(id, peer->pd, &qp_attr)) {
		ret = rpma_verbs_err(errno, "rdma_create_qp");
		goto err;
	}
	conn->base.qp_num = id->qp->qp_num;
	if (gpspm && (ret = rpma_verbs_gpspm_start(conn)))
		goto err;
	*conn_ptr = conn;
	return 0;

err:
	conn->id = NULL;	/* the caller owns the id on failure */
	rpma_verbs_conn_free(conn);
	return ret;
}

void
rpma_verbs_conn_free(struct verbs_conn *conn)
{
	rpma_verbs_gpspm_delete(conn);	/* its QP before its CQs */
	if (conn->id) {
		if (conn->id->qp)
			rdma_destroy_qp(conn->id);
		rdma_destroy_id(conn->id);
	}
	if (conn->raw_mr)
		ibv_dereg_mr(conn->raw_mr);
	if (conn->raw)
		munmap(conn->raw, (size_t)sysconf(_SC_PAGESIZE));
	rpma_verbs_cq_delete(conn->rcq);
	rpma_verbs_cq_delete(conn->cq);
	if (conn->shared_channel)
		ibv_destroy_comp_channel(conn->shared_channel);
	if (conn->evch)
		rdma_destroy_event_channel(conn->evch);
	rpma_verbs_ring_fini(&conn->rq);
	rpma_verbs_ring_fini(&conn->sq);
	rpma_private_data_discard(&conn->base.pdata);
	free(conn);
}

/* ---------------------------------------------------------------- */
/* requests                                                         */

int
rpma_verbs_conn_req_new(struct rpma_peer *base, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct verbs_conn_req *req;
	struct rdma_cm_id *id = NULL;
	int timeout = RPMA_DEFAULT_TIMEOUT_MS;
	int ret;

	if (cfg)
		rpma_conn_cfg_get_timeout(cfg, &timeout);
	req = calloc(1, sizeof(*req));
	if (req == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a request");
	if (rdma_getaddrinfo(addr, port, &hints, &req->rai)) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot resolve %s:%s: %s", addr, port,
			strerror(errno));
		goto err_free;
	}
	/* no channel: address and route resolution complete synchronously */
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		ret = rpma_verbs_err(errno, "rdma_create_id");
		goto err_rai;
	}
	if (rdma_resolve_addr(id, req->rai->ai_src_addr, req->rai->ai_dst_addr, timeout) ||
	    rdma_resolve_route(id, timeout)) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot reach %s:%s over RDMA: %s", addr,
			port, strerror(errno));
		goto err_id;
	}
	ret = rpma_verbs_conn_new((struct verbs_peer *)base, id, cfg, false, &req->conn);
	if (ret)
		goto err_id;
	req->base.ops = &rpma_verbs_conn_req_ops;
	req->base.peer = base;
	*req_ptr = &req->base;
	return 0;

err_id:
	rdma_destroy_id(id);
err_rai:
	rdma_freeaddrinfo(req->rai);
err_free:
	free(req);
	return ret;
}

static int
verbs_conn_req_delete(struct rpma_conn_req *base)
{
	struct verbs_conn_req *req = (struct verbs_conn_req *)base;

	if (req->conn->passive)
		rdma_reject(req->conn->id, NULL, 0);
	rpma_verbs_conn_free(req->conn);
	rpma_private_data_discard(&req->base.pdata);
	if (req->rai)
		rdma_freeaddrinfo(req->rai);
	free(req);
	return 0;
}

static int
verbs_conn_req_connect(struct rpma_conn_req *base,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr)
{
	struct verbs_conn_req *req = (struct verbs_conn_req *)base;
	struct verbs_conn *conn = req->conn;
	struct rdma_conn_param param = {
		.responder_resources = RDMA_MAX_RESP_RES,
		.initiator_depth = RDMA_MAX_INIT_DEPTH,
		.flow_control = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	int ret;

	if (pdata) {
		param.private_data = pdata->ptr;
		param.private_data_len = pdata->len;
	}
	conn->evch = rdma_create_event_channel();
	if (conn->evch == NULL) {
		ret = rpma_verbs_err(errno, "rdma_create_event_channel");
		goto err;
	}
	if (conn->passive) {
		if (rdma_accept(conn->id, &param)) {
			ret = rpma_verbs_err(errno, "rdma_accept");
			goto err;
		}
		if (rdma_migrate_id(conn->id, conn->evch)) {
			ret = rpma_verbs_err(errno, "rdma_migrate_id");
			goto err;
		}
	} else {
		if (rdma_migrate_id(conn->id, conn->evch)) {
			ret = rpma_verbs_err(errno, "rdma_migrate_id");
			goto err;
		}
		if (rdma_connect(conn->id, &param)) {
			ret = rpma_verbs_err(errno, "rdma_connect");
			goto err;
		}
	}
	/* the initiator's private data moves from the request */
	conn->base.pdata = req->base.pdata;
	conn->have_pdata = conn->passive;
	req->base.pdata.ptr = NULL;
	req->base.pdata.len = 0;
	if (req->rai)
		rdma_freeaddrinfo(req->rai);
	free(req);
	*conn_ptr = &conn->base;
	return 0;

err:
	verbs_conn_req_delete(base);
	return ret;
}

static int post_recv(struct verbs_conn *conn, const struct rpma_op *op);

static int
verbs_conn_req_recv(struct rpma_conn_req *base, const struct rpma_op *op)
{
	return post_recv(((struct verbs_conn_req *)base)->conn, op);
}

const struct rpma_conn_req_ops rpma_verbs_conn_req_ops = {
	.delete = verbs_conn_req_delete,
	.connect = verbs_conn_req_connect,
	.recv = verbs_conn_req_recv,
};

/* ---------------------------------------------------------------- */
/* events                                                           */

static int
verbs_conn_next_event(struct rpma_conn *base, enum rpma_conn_event *event)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;
	struct rdma_cm_event *ev;
	enum rpma_conn_event mapped;
	int ret = 0;

	if (rdma_get_cm_event(conn->evch, &ev)) {
		if (errno == EAGAIN || errno == ENODATA)
			return RPMA_E_NO_EVENT;
		return rpma_verbs_err(errno, "rdma_get_cm_event");
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		mapped = RPMA_CONN_ESTABLISHED;
		if (!conn->have_pdata) {
			ret = rpma_private_data_store(&conn->base.pdata,
				ev->param.conn.private_data,
				ev->param.conn.private_data_len);
			conn->have_pdata = ret == 0;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		mapped = RPMA_CONN_CLOSED;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		mapped = RPMA_CONN_LOST;
		break;
	case RDMA_CM_EVENT_REJECTED:
		mapped = RPMA_CONN_REJECTED;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		mapped = RPMA_CONN_UNREACHABLE;
		break;
	default:
		ret = rpma_fail(RPMA_E_UNKNOWN, "unexpected connection event %s",
			rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		return ret;
	}
	rdma_ack_cm_event(ev);
	if (ret)
		return ret;
	if (mapped == RPMA_CONN_CLOSED || mapped == RPMA_CONN_LOST) {
		/*
		 * The peer is gone: put the QP in error so that everything
		 * still posted completes (with an error) instead of retrying
		 * into the void, and no flush request waits for an answer.
		 */
		if (!conn->disconnected && rdma_disconnect(conn->id) == 0)
			conn->disconnected = true;
		if (conn->gpspm)
			rpma_verbs_gpspm_closed(conn);
	}
	*event = mapped;
	RPMA_LOG_NOTICE("connection event: %s", rpma_utils_conn_event_2str(mapped));
	return 0;
}

static int
verbs_conn_get_event_fd(const struct rpma_conn *base, int *fd)
{
	*fd = ((const struct verbs_conn *)base)->evch->fd;
	return 0;
}

static int
verbs_conn_disconnect(struct rpma_conn *base)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;

	if (conn->disconnected)
		return 0;	/* done when the peer's disconnect arrived */
	if (rdma_disconnect(conn->id))
		return rpma_verbs_err(errno, "rdma_disconnect");
	conn->disconnected = true;
	return 0;
}

static int
verbs_conn_delete(struct rpma_conn *base)
{
	rpma_verbs_conn_free((struct verbs_conn *)base);
	return 0;
}

static int
verbs_conn_wait(struct rpma_conn *base, struct rpma_cq **cq, bool *is_rcq)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (ibv_get_cq_event(conn->shared_channel, &ev_cq, &ev_ctx))
		return rpma_fail(RPMA_E_NO_COMPLETION, "no completion event: %s",
			strerror(errno));
	ibv_ack_cq_events(ev_cq, 1);
	if (ibv_req_notify_cq(ev_cq, 0))
		return rpma_verbs_err(errno, "ibv_req_notify_cq");
	if (ev_cq == conn->cq->cq) {
		*cq = &conn->cq->base;
		if (is_rcq)
			*is_rcq = false;
	} else if (conn->rcq && ev_cq == conn->rcq->cq) {
		*cq = &conn->rcq->base;
		if (is_rcq)
			*is_rcq = true;
	} else {
		return rpma_fail(RPMA_E_UNKNOWN, "completion event from an unknown CQ");
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* the data path                                                    */

static int
post_send_wr(struct verbs_conn *conn, struct ibv_send_wr *wr,
		const struct rpma_op *op, const struct rpma_mr_local *mr)
{
	struct verbs_slot *slot = rpma_verbs_slot_get(&conn->sq, op->op_context, mr);
	struct ibv_send_wr *bad;
	int ret;

	if (slot == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "send queue full: complete operations first");
	wr->wr_id = (uint64_t)(uintptr_t)slot;
	if ((op->flags & RPMA_F_COMPLETION_ALWAYS) == RPMA_F_COMPLETION_ALWAYS ||
	    (op->flags & 2))
		wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(conn->id->qp, wr, &bad);
	if (ret) {
		rpma_verbs_slot_unget(slot);
		return rpma_verbs_err(ret, "ibv_post_send");
	}
	rpma_verbs_slot_submitted(slot);
	return 0;
}

/* op's one-sided request (the 0-byte form has no sge) */
static void
rma_wr(const struct rpma_op *op, enum ibv_wr_opcode opcode, struct ibv_sge *sge,
		struct ibv_send_wr *wr)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = opcode;
	if (op->local) {
		sge->addr = (uint64_t)(uintptr_t)(op->local->ptr + op->local_offset);
		sge->length = (uint32_t)op->len;
		sge->lkey = ((struct ibv_mr *)op->local->prov_handle)->lkey;
		wr->sg_list = sge;
		wr->num_sge = 1;
		wr->wr.rdma.remote_addr = op->remote->desc.raddr + op->remote_offset;
		wr->wr.rdma.rkey = (uint32_t)op->remote->desc.key;
	}
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr->imm_data = htonl(op->imm);
}

static int
post_rma(struct verbs_conn *conn, const struct rpma_op *op,
		enum ibv_wr_opcode opcode)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	rma_wr(op, opcode, &sge, &wr);
	return post_send_wr(conn, &wr, op, op->local);
}

static int
verbs_read(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_rma((struct verbs_conn *)base, op, IBV_WR_RDMA_READ);
}

static int
verbs_write(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_rma((struct verbs_conn *)base, op, IBV_WR_RDMA_WRITE);
}

static int
verbs_write_with_imm(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_rma((struct verbs_conn *)base, op, IBV_WR_RDMA_WRITE_WITH_IMM);
}

/*
 * The emulated atomic write: an inline 8-byte RDMA WRITE, fenced so that it
 * waits for every earlier RDMA READ (an APM flush) to complete.
 */
static int
verbs_atomic_write(struct rpma_conn *base, const struct rpma_op *op)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)op->atomic_src, .length = 8, .lkey = 0,
	};
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_FENCE;
	wr.wr.rdma.remote_addr = op->remote->desc.raddr + op->remote_offset;
	wr.wr.rdma.rkey = (uint32_t)op->remote->desc.key;
	return post_send_wr(conn, &wr, op, NULL);
}

/*
 * APM: read the 8 bytes that end where the flushed range ends, clamped
 * into the region (librpma read at the range's start and so failed on a
 * region's last bytes).  RC serves the read after the earlier writes were
 * placed; with direct write to PMem that placement is persistence.
 */
static int
apm_read_wr(struct verbs_conn *conn, const struct rpma_op *op,
		struct ibv_sge *sge, struct ibv_send_wr *wr)
{
	uint64_t size = op->remote->desc.size;
	uint64_t end = op->remote_offset + op->len;

	if (size < APM_READ_LEN)
		return rpma_fail(RPMA_E_NOSUPP,
			"a region under %d bytes cannot be flushed by a read", APM_READ_LEN);
	if (end < APM_READ_LEN)
		end = APM_READ_LEN;
	if (end > size)
		end = size;
	*sge = (struct ibv_sge){
		.addr = (uint64_t)(uintptr_t)conn->raw, .length = APM_READ_LEN,
		.lkey = conn->raw_mr->lkey,
	};
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IBV_WR_RDMA_READ;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = op->remote->desc.raddr + end - APM_READ_LEN;
	wr->wr.rdma.rkey = (uint32_t)op->remote->desc.key;
	return 0;
}

static int
verbs_flush(struct rpma_conn *base, const struct rpma_op *op)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	int ret;

	if (base->flush_method[op->flush_type] == RPMA_EXT_FLUSH_GPSPM)
		return rpma_verbs_gpspm_request(conn, op, rpma_req_flush_op(op->flush_type));
	if ((ret = apm_read_wr(conn, op, &sge, &wr)))
		return ret;
	return post_send_wr(conn, &wr, op, NULL);
}

/*
 * A write and its APM flush as two chained work requests: one
 * ibv_post_send, so one doorbell (one system call on rxe) instead of two.
 * Only the read can be signalled; an error of the write completes with its
 * slot's context (none: the engine's completion is the read's).  A GPSPM
 * flush is a send of the core's own, outside the slot ring, so it follows
 * the write as a second post.
 */
static int
verbs_write_flush(struct rpma_conn *base, const struct rpma_op *op)
{
	struct verbs_conn *conn = (struct verbs_conn *)base;
	struct rpma_op w = *op;
	struct ibv_sge wsge, rsge;
	struct ibv_send_wr wr[2], *bad;
	struct verbs_slot *ws, *rs;
	int ret;

	w.flags = RPMA_F_COMPLETION_ON_ERROR;
	w.op_context = NULL;
	if (base->flush_method[op->flush_type] == RPMA_EXT_FLUSH_GPSPM ||
	    op->remote->desc.size < APM_READ_LEN) {
		if ((ret = post_rma(conn, &w, IBV_WR_RDMA_WRITE)))
			return ret;
		return verbs_flush(base, op);
	}
	rma_wr(&w, IBV_WR_RDMA_WRITE, &wsge, &wr[0]);
	(void)apm_read_wr(conn, op, &rsge, &wr[1]);	/* the size was checked */
	if ((ws = rpma_verbs_slot_get(&conn->sq, NULL, op->local)) == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "send queue full: complete operations first");
	if ((rs = rpma_verbs_slot_get(&conn->sq, op->op_context, NULL)) == NULL) {
		rpma_verbs_slot_unget(ws);
		return rpma_fail(RPMA_E_PROVIDER, "send queue full: complete operations first");
	}
	wr[0].wr_id = (uint64_t)(uintptr_t)ws;
	wr[0].next = &wr[1];
	wr[1].wr_id = (uint64_t)(uintptr_t)rs;
	if ((op->flags & RPMA_F_COMPLETION_ALWAYS) == RPMA_F_COMPLETION_ALWAYS ||
	    (op->flags & 2))
		wr[1].send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(conn->id->qp, wr, &bad);
	if (ret) {
		/* bad names the first request the QP did not take */
		if (bad == &wr[0]) {
			rpma_verbs_slot_unget(rs);
			rpma_verbs_slot_unget(ws);
			return rpma_verbs_err(ret, "ibv_post_send");
		}
		rpma_verbs_slot_submitted(ws);
		rpma_verbs_slot_unget(rs);
		return rpma_verbs_err(ret, "ibv_post_send (the flush after a write)");
	}
	rpma_verbs_slot_submitted(ws);
	rpma_verbs_slot_submitted(rs);
	return 0;
}

static int
post_send(struct verbs_conn *conn, const struct rpma_op *op, bool with_imm)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	if (with_imm)
		wr.imm_data = htonl(op->imm);
	if (op->local) {
		sge.addr = (uint64_t)(uintptr_t)(op->local->ptr + op->local_offset);
		sge.length = (uint32_t)op->len;
		sge.lkey = ((struct ibv_mr *)op->local->prov_handle)->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	return post_send_wr(conn, &wr, op, op->local);
}

static int
verbs_send(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_send((struct verbs_conn *)base, op, false);
}

static int
verbs_send_with_imm(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_send((struct verbs_conn *)base, op, true);
}

static int
fill_recv(struct ibv_recv_wr *wr, struct ibv_sge *sge, const struct rpma_op *op,
		struct verbs_slot *slot)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = (uint64_t)(uintptr_t)slot;
	if (op->local) {
		sge->addr = (uint64_t)(uintptr_t)(op->local->ptr + op->local_offset);
		sge->length = (uint32_t)op->len;
		sge->lkey = ((struct ibv_mr *)op->local->prov_handle)->lkey;
		wr->sg_list = sge;
		wr->num_sge = 1;
	}
	return 0;
}

static int
post_recv(struct verbs_conn *conn, const struct rpma_op *op)
{
	struct verbs_slot *slot;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int ret;

	if (conn->srq)
		return rpma_fail(RPMA_E_INVAL,
			"the connection receives through an SRQ: use rpma_srq_recv()");
	if (conn->gpspm)
		return rpma_fail(RPMA_E_NOSUPP,
			"the flush service owns this connection's receive queue");
	slot = rpma_verbs_slot_get(&conn->rq, op->op_context, op->local);
	if (slot == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "receive queue full");
	fill_recv(&wr, &sge, op, slot);
	ret = ibv_post_recv(conn->id->qp, &wr, &bad);
	if (ret) {
		rpma_verbs_slot_unget(slot);
		return rpma_verbs_err(ret, "ibv_post_recv");
	}
	return 0;
}

static int
verbs_recv(struct rpma_conn *base, const struct rpma_op *op)
{
	return post_recv((struct verbs_conn *)base, op);
}

const struct rpma_conn_ops rpma_verbs_conn_ops = {
	.next_event = verbs_conn_next_event,
	.get_event_fd = verbs_conn_get_event_fd,
	.disconnect = verbs_conn_disconnect,
	.delete = verbs_conn_delete,
	.peer_cfg_applied = verbs_flush_methods,
	.wait = verbs_conn_wait,
	.read = verbs_read,
	.write = verbs_write,
	.write_with_imm = verbs_write_with_imm,
	.atomic_write = verbs_atomic_write,
	.flush = verbs_flush,
	.write_flush = verbs_write_flush,
	.send = verbs_send,
	.send_with_imm = verbs_send_with_imm,
	.recv = verbs_recv,
};

/* ---------------------------------------------------------------- */
/* shared receive queues                                            */

static int
verbs_srq_delete(struct rpma_srq *base)
{
	struct verbs_srq *srq = (struct verbs_srq *)base;

	/* refused while a queue pair still uses it: nothing is freed then */
	if (ibv_destroy_srq(srq->srq))
		return rpma_verbs_err(errno, "ibv_destroy_srq (connections still use it?)");
	rpma_verbs_cq_delete(srq->rcq);
	rpma_verbs_ring_fini(&srq->ring);
	free(srq);
	return 0;
}

static int
verbs_srq_recv(struct rpma_srq *base, const struct rpma_op *op)
{
	struct verbs_srq *srq = (struct verbs_srq *)base;
	struct verbs_slot *slot = rpma_verbs_slot_get(&srq->ring, op->op_context,
			op->local);
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int ret;

	if (slot == NULL)
		return rpma_fail(RPMA_E_PROVIDER, "shared receive queue full");
	fill_recv(&wr, &sge, op, slot);
	ret = ibv_post_srq_recv(srq->srq, &wr, &bad);
	if (ret) {
		rpma_verbs_slot_unget(slot);
		return rpma_verbs_err(ret, "ibv_post_srq_recv");
	}
	return 0;
}

static const struct rpma_srq_ops verbs_srq_ops = {
	.delete = verbs_srq_delete,
	.recv = verbs_srq_recv,
};

int
rpma_verbs_srq_new(struct rpma_peer *base, const struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr)
{
	struct verbs_peer *peer = (struct verbs_peer *)base;
	struct ibv_srq_init_attr attr;
	struct rpma_srq_cfg *tmp = NULL;
	uint32_t rq_size = RPMA_SRQ_CFG_DEFAULT_SIZE;
	uint32_t rcq_size = RPMA_SRQ_CFG_DEFAULT_SIZE;
	struct verbs_srq *srq;
	int ret;

	if (cfg == NULL && rpma_srq_cfg_new(&tmp) == 0)
		cfg = tmp;
	if (cfg) {
		rpma_srq_cfg_get_rq_size(cfg, &rq_size);
		rpma_srq_cfg_get_rcq_size(cfg, &rcq_size);
	}
	rpma_srq_cfg_delete(&tmp);

	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate an SRQ");
	if ((ret = rpma_verbs_ring_init(&srq->ring, rq_size, false)))
		goto err_free;
	memset(&attr, 0, sizeof(attr));
	attr.attr.max_wr = rq_size;
	attr.attr.max_sge = 1;
	srq->srq = ibv_create_srq(peer->pd, &attr);
	if (srq->srq == NULL) {
		ret = rpma_verbs_err(errno, "ibv_create_srq");
		goto err_ring;
	}
	if (rcq_size && (ret = rpma_verbs_cq_new(peer, rcq_size, NULL, &srq->rcq)))
		goto err_srq;
	srq->base.ops = &verbs_srq_ops;
	srq->base.peer = base;
	srq->base.rcq = srq->rcq ? &srq->rcq->base : NULL;
	*srq_ptr = &srq->base;
	return 0;

err_srq:
	ibv_destroy_srq(srq->srq);
err_ring:
	rpma_verbs_ring_fini(&srq->ring);
err_free:
	free(srq);
	return ret;
}
