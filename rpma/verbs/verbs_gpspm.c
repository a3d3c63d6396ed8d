/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_gpspm.c -- the core's flush service on verbs connections that ask
 * for it (rpma_ext_conn_cfg_set_gpspm): a PERSISTENT flush without direct
 * write to PMem.
 *
 * The initiator SENDs a request record (request.h) after the writes it
 * covers; an RC queue pair delivers the SEND only after those writes were
 * placed.  The target's core persists the range with the region's backend
 * and SENDs the record back with a status.  The receive queue belongs to
 * the service: every receive buffer is one of its slots.
 *
 * Such a connection's CQs are the core's: a progress thread per peer (or
 * the application's own rpma_cq_get_wc, when it polls) reads them, serves
 * requests, completes answered flushes and hands the application its
 * completions through rpma_cq rings.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cq.h"
#include "errormsg.h"
#include "log.h"
#include "mr.h"
#include "request.h"
#include "verbs.h"

/* internal work requests: tags above any user-space pointer */
#define WR_TAG_SHIFT 56
#define WR_REQ_SENT	(1ull << WR_TAG_SHIFT)	/* slot = our request */
#define WR_RESP_SENT	(2ull << WR_TAG_SHIFT)	/* index = recv buffer answered */
#define WR_RECV		(3ull << WR_TAG_SHIFT)	/* index = recv buffer */
#define WR_TAG(id)	((id) & (0xffull << WR_TAG_SHIFT))
#define WR_INDEX(id)	((uint32_t)(id))

struct verbs_gpspm {
	struct ibv_comp_channel *channel;
	struct ibv_cq *scq;
	struct ibv_cq *rcq;
	uint32_t nslots;
	struct rpma_req *recv_area;	/* [nslots] what arrives */
	struct rpma_req *resp_area;	/* [nslots] answers, by recv index */
	struct rpma_req *req_area;	/* [nslots] our requests, by slot */
	uint64_t *req_mark;		/* [nslots] the send ring's mark before each */
	uint64_t *resp_mark;		/* [nslots] the same for the answers */
	struct ibv_mr *mr;		/* the three areas */
	struct rpma_req_table pending;	/* ours, waiting for answers */
	atomic_bool closed;
	struct rpma_progress_item pitem;	/* the progress thread's */
	struct verbs_conn *conn;
};

/* ---------------------------------------------------------------- */
/* setup                                                            */

static int
post_service_recv(struct verbs_conn *conn, uint32_t idx)
{
	struct verbs_gpspm *g = conn->gpspm;
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)&g->recv_area[idx],
		.length = sizeof(struct rpma_req),
		.lkey = g->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = WR_RECV | idx, .sg_list = &sge,
		.num_sge = 1 }, *bad;
	int ret = ibv_post_recv(conn->id->qp, &wr, &bad);

	return ret ? rpma_verbs_err(ret, "ibv_post_recv (flush service)") : 0;
}

int
rpma_verbs_gpspm_new(struct verbs_conn *conn, uint32_t nslots, uint32_t cq_size,
		uint32_t rcq_size)
{
	struct verbs_peer *peer = conn->peer;
	struct verbs_gpspm *g;
	size_t area = nslots * sizeof(struct rpma_req);
	int ret;

	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate the flush service");
	conn->gpspm = g;
	g->nslots = nslots;
	atomic_init(&g->closed, false);
	if ((ret = rpma_req_table_init(&g->pending, nslots)))
		goto err;
	if (posix_memalign((void **)&g->recv_area, 64, 3 * area)) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate the flush service's slots");
		goto err;
	}
	memset(g->recv_area, 0, 3 * area);
	g->req_mark = calloc(2 * (size_t)nslots, sizeof(*g->req_mark));
	if (g->req_mark == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate the flush service's marks");
		goto err;
	}
	g->resp_mark = g->req_mark + nslots;
	g->resp_area = g->recv_area + nslots;
	g->req_area = g->resp_area + nslots;
	g->mr = ibv_reg_mr(peer->pd, g->recv_area, 3 * area, IBV_ACCESS_LOCAL_WRITE);
	if (g->mr == NULL) {
		ret = rpma_verbs_err(errno, "ibv_reg_mr (flush service)");
		goto err;
	}
	g->channel = ibv_create_comp_channel(peer->ctx);
	if (g->channel == NULL) {
		ret = rpma_verbs_err(errno, "ibv_create_comp_channel");
		goto err;
	}
	fcntl(g->channel->fd, F_SETFL, fcntl(g->channel->fd, F_GETFL) | O_NONBLOCK);
	/* sends: the application's and ours; receives: ours */
	g->scq = ibv_create_cq(peer->ctx, (int)(cq_size + 2 * nslots), conn,
			g->channel, 0);
	g->rcq = ibv_create_cq(peer->ctx, (int)nslots, conn, g->channel, 0);
	if (g->scq == NULL || g->rcq == NULL) {
		ret = rpma_verbs_err(errno, "ibv_create_cq (flush service)");
		goto err;
	}
	/* the application's completions come through rings the core fills */
	if ((ret = rpma_cq_new(cq_size, &conn->base.cq)))
		goto err;
	if (rcq_size && (ret = rpma_cq_new(rcq_size, &conn->base.rcq)))
		goto err;
	return 0;

err:
	rpma_verbs_gpspm_delete(conn);
	return ret;
}

void
rpma_verbs_gpspm_cqs(struct verbs_conn *conn, struct ibv_cq **scq,
		struct ibv_cq **rcq)
{
	*scq = conn->gpspm->scq;
	*rcq = conn->gpspm->rcq;
}

static int progress_add(struct verbs_conn *conn);

/* the QP exists: fill the receive queue and join the progress thread */
int
rpma_verbs_gpspm_start(struct verbs_conn *conn)
{
	for (uint32_t i = 0; i < conn->gpspm->nslots; i++) {
		int ret = post_service_recv(conn, i);
		if (ret)
			return ret;
	}
	return progress_add(conn);
}

static void progress_remove(struct verbs_conn *conn);
static void fail_pending(struct verbs_conn *conn);
static void drain_events(struct verbs_conn *conn);

void
rpma_verbs_gpspm_delete(struct verbs_conn *conn)
{
	struct verbs_gpspm *g = conn->gpspm;

	if (g == NULL)
		return;
	progress_remove(conn);
	if (g->channel)
		drain_events(conn);
	fail_pending(conn);
	rpma_cq_delete(conn->base.rcq);
	rpma_cq_delete(conn->base.cq);
	conn->base.cq = conn->base.rcq = NULL;
	/* the QP goes first (conn free), the CQs it used after */
	if (conn->id && conn->id->qp) {
		rdma_destroy_qp(conn->id);
		conn->id->qp = NULL;
	}
	if (g->scq)
		ibv_destroy_cq(g->scq);
	if (g->rcq)
		ibv_destroy_cq(g->rcq);
	if (g->channel)
		ibv_destroy_comp_channel(g->channel);
	if (g->mr)
		ibv_dereg_mr(g->mr);
	free(g->recv_area);
	free(g->req_mark);
	rpma_req_table_fini(&g->pending);
	free(g);
	conn->gpspm = NULL;
}

/* ---------------------------------------------------------------- */
/* requests                                                         */

static int
post_service_send(struct verbs_conn *conn, struct rpma_req *rec, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)rec,
		.length = sizeof(*rec),
		.lkey = conn->gpspm->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret = ibv_post_send(conn->id->qp, &wr, &bad);

	return ret ? rpma_verbs_err(ret, "ibv_post_send (flush service)") : 0;
}

int
rpma_verbs_gpspm_request(struct verbs_conn *conn, const struct rpma_op *op,
		int req_op)
{
	struct verbs_gpspm *g = conn->gpspm;
	uint32_t slot;
	int ret;

	if (atomic_load(&g->closed))
		return rpma_fail(RPMA_E_PROVIDER, "connection is closed");
	if ((ret = rpma_req_table_take(&g->pending, g->nslots, op,
			(enum rpma_req_op)req_op, &slot)))
		return ret;
	rpma_req_fill(&g->req_area[slot], (enum rpma_req_op)req_op, op,
		atomic_load_explicit(&conn->base.epoch, memory_order_relaxed));
	g->req_area[slot].slot = htole16((uint16_t)slot);
	g->req_mark[slot] = rpma_verbs_ring_mark(&conn->sq);
	ret = post_service_send(conn, &g->req_area[slot], WR_REQ_SENT | slot);
	if (ret)
		rpma_req_table_untake(&g->pending, slot);
	return ret;
}

static void
complete_pending(struct verbs_conn *conn, uint32_t slot, enum ibv_wc_status st,
		uint32_t vendor_err)
{
	struct ibv_wc wc;

	if (rpma_req_table_complete(&conn->gpspm->pending, slot, st, vendor_err,
			conn->base.qp_num, &wc))
		rpma_cq_push(conn->base.cq, &wc, 1);
}

/* no answer will come: the connection broke, as a QP in error flushes */
static void
fail_pending(struct verbs_conn *conn)
{
	atomic_store(&conn->gpspm->closed, true);
	for (uint32_t s = 0; s < conn->gpspm->pending.n; s++)
		complete_pending(conn, s, IBV_WC_WR_FLUSH_ERR, 0);
}

void
rpma_verbs_gpspm_closed(struct verbs_conn *conn)
{
	fail_pending(conn);
}

/* ---------------------------------------------------------------- */
/* completions                                                      */

static void
on_recv(struct verbs_conn *conn, const struct ibv_wc *wc)
{
	struct verbs_gpspm *g = conn->gpspm;
	uint32_t idx = WR_INDEX(wc->wr_id);
	struct rpma_req rec;

	RPMA_LOG_DEBUG("flush service: receive %u status %s, %u bytes", idx,
		ibv_wc_status_str(wc->status), wc->byte_len);
	if (wc->status != IBV_WC_SUCCESS || idx >= g->nslots) {
		/* a QP in error flushes its receives: the peer is gone */
		fail_pending(conn);
		return;
	}
	memcpy(&rec, &g->recv_area[idx], sizeof(rec));
	if (rec.op == RPMA_REQ_RESPONSE) {
		uint32_t slot = le16toh(rec.slot);
		if (slot < g->nslots)
			complete_pending(conn, slot, rpma_req_wc_status(rec.status),
				rec.status);
		post_service_recv(conn, idx);
		return;
	}
	/* a request: serve it, answer from this buffer's answer slot */
	g->resp_area[idx] = rec;
	g->resp_area[idx].op = RPMA_REQ_RESPONSE;
	g->resp_area[idx].status = (uint8_t)(wc->byte_len == sizeof(rec) ?
		rpma_req_serve(&conn->peer->base, &rec) : RPMA_REQ_BAD);
	/* the buffer is posted again once the answer has left */
	g->resp_mark[idx] = rpma_verbs_ring_mark(&conn->sq);
	if (post_service_send(conn, &g->resp_area[idx], WR_RESP_SENT | idx))
		fail_pending(conn);
}

static void
on_send(struct verbs_conn *conn, struct ibv_wc *wc)
{
	uint64_t tag = WR_TAG(wc->wr_id);

	RPMA_LOG_DEBUG("flush service: send completion tag %llu status %s",
		(unsigned long long)(tag >> WR_TAG_SHIFT), ibv_wc_status_str(wc->status));
	if (tag == WR_RESP_SENT) {
		if (wc->status == IBV_WC_SUCCESS) {
			rpma_verbs_ring_retire_before(&conn->sq,
				conn->gpspm->resp_mark[WR_INDEX(wc->wr_id)]);
			post_service_recv(conn, WR_INDEX(wc->wr_id));
		} else {
			fail_pending(conn);
		}
		return;
	}
	if (tag == WR_REQ_SENT) {
		if (wc->status != IBV_WC_SUCCESS)
			complete_pending(conn, WR_INDEX(wc->wr_id), wc->status,
				wc->vendor_err);
		else
			/* the application's writes before it completed too */
			rpma_verbs_ring_retire_before(&conn->sq,
				conn->gpspm->req_mark[WR_INDEX(wc->wr_id)]);
		return;
	}
	/* the application's operation */
	rpma_verbs_wc_translate(wc);
	rpma_cq_push(conn->base.cq, wc, 1);
}

/* read both CQs once; returns how many completions */
static int
conn_progress(struct verbs_conn *conn)
{
	struct verbs_gpspm *g = conn->gpspm;
	struct ibv_wc wc[16];
	int n, total = 0;

	n = ibv_poll_cq(g->rcq, 16, wc);
	for (int i = 0; i < n; i++)
		on_recv(conn, &wc[i]);
	total += n > 0 ? n : 0;
	n = ibv_poll_cq(g->scq, 16, wc);
	for (int i = 0; i < n; i++)
		on_send(conn, &wc[i]);
	total += n > 0 ? n : 0;
	return total;
}

/* ---------------------------------------------------------------- */
/* the progress thread (progress.h)                                 */

static int
sweep(struct rpma_progress_item *item)
{
	return conn_progress(rpma_container_of(item, struct verbs_gpspm, pitem)->conn);
}

/* arm every CQ, then look once more: nothing may slip between */
static int
prepare_sleep(void *owner, struct rpma_progress_item *items)
{
	int work = 0;

	(void)owner;
	for (struct rpma_progress_item *i = items; i; i = i->next) {
		struct verbs_gpspm *g = rpma_container_of(i, struct verbs_gpspm, pitem);

		ibv_req_notify_cq(g->scq, 0);
		ibv_req_notify_cq(g->rcq, 0);
		work += conn_progress(g->conn);
	}
	return work == 0;
}

static void
drain_events(struct verbs_conn *conn)
{
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(conn->gpspm->channel, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
}

static void
after_wake(struct rpma_progress_item *item)
{
	drain_events(rpma_container_of(item, struct verbs_gpspm, pitem)->conn);
}

static const struct rpma_progress_ops verbs_progress_ops = {
	.sweep = sweep,
	.prepare_sleep = prepare_sleep,
	.after_wake = after_wake,
};

/* the application polls: serve here unless the thread is at it */
static void
drive(void *arg)
{
	struct verbs_conn *conn = arg;

	rpma_progress_drive(conn->peer->progress, &conn->gpspm->pitem);
}

static int
progress_add(struct verbs_conn *conn)
{
	struct verbs_gpspm *g = conn->gpspm;

	g->conn = conn;
	g->pitem.fd = g->channel->fd;
	conn->base.cq->drive = drive;
	conn->base.cq->drive_arg = conn;
	return rpma_progress_add(&conn->peer->progress, &verbs_progress_ops,
		conn->peer, &g->pitem);
}

static void
progress_remove(struct verbs_conn *conn)
{
	rpma_progress_remove(conn->peer->progress, &conn->gpspm->pitem);
}

int
rpma_verbs_progress_count(struct verbs_peer *peer)
{
	return rpma_progress_count(peer->progress);
}

void
rpma_verbs_progress_stop(struct verbs_peer *peer)
{
	rpma_progress_stop(&peer->progress);
}
