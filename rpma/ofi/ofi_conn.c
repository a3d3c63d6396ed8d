/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_conn.c -- connections on libfabric: setup (requests, accept,
 * connect), the core's hello, the operation slots, and events.  The data
 * path is in ofi_data.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "conn_cfg.h"
#include "cq.h"
#include "errormsg.h"
#include "fault_injection.h"
#include "log.h"
#include "mr.h"
#include "mr_remote.h"
#include "ofi.h"

#define HELLO_MAGIC "RPMC"
#define HELLO_VERSION 1
#define MAX_PDATA_WITH_HELLO 256	/* what tcp and net carry in CM data */

uint32_t
rpma_ofi_qp_num(const struct ofi_conn *conn)
{
	return conn->base.qp_num;
}

/* ofi has no queue pair numbers: number connections in creation order */
static atomic_uint next_qp_num = 1;

void
rpma_ofi_hello_fill(const struct ofi_conn *conn, struct ofi_hello *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, HELLO_MAGIC, 4);
	h->version = HELLO_VERSION;
	h->nslots = htole16(conn->nslots);
	h->req_key = htole64(fi_mr_key(conn->req_mr));
	h->req_raddr = htole64(conn->peer->virt_addr ?
		(uint64_t)(uintptr_t)conn->req_area : 0);
}

int
rpma_ofi_hello_take(struct ofi_conn *conn, const void *data, size_t len,
		struct rpma_conn_private_data *user)
{
	struct ofi_hello h;

	if (len < sizeof(h))
		return rpma_fail(RPMA_E_PROVIDER,
			"peer sent %zu bytes of connection data, no core hello", len);
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, HELLO_MAGIC, 4) != 0 || h.version != HELLO_VERSION)
		return rpma_fail(RPMA_E_PROVIDER,
			"peer's connection data has no core hello of version %d",
			HELLO_VERSION);
	conn->remote_nslots = le16toh(h.nslots);
	conn->remote_req_key = le64toh(h.req_key);
	conn->remote_req_raddr = le64toh(h.req_raddr);
	if (conn->remote_nslots == 0)
		return rpma_fail(RPMA_E_PROVIDER, "peer serves no request slots");
	if (conn->remote_nslots > conn->nslots)
		conn->remote_nslots = conn->nslots;	/* our pending table's size */
	conn->have_remote_hello = true;
	return rpma_private_data_store(user, (const char *)data + sizeof(h),
			len - sizeof(h));
}

/* ---------------------------------------------------------------- */
/* setup                                                            */

static void
cfg_read(const struct rpma_conn_cfg *cfg, uint32_t *cq, uint32_t *rcq,
		uint32_t *sq, uint32_t *rq, bool *shared)
{
	struct rpma_conn_cfg *tmp = NULL;

	if (cfg == NULL) {
		if (rpma_conn_cfg_new(&tmp)) {
			*cq = *sq = *rq = RPMA_CONN_CFG_DEFAULT_Q_SIZE;
			*rcq = 0;
			*shared = false;
			return;
		}
		cfg = tmp;
	}
	rpma_conn_cfg_get_cq_size(cfg, cq);
	rpma_conn_cfg_get_rcq_size(cfg, rcq);
	rpma_conn_cfg_get_sq_size(cfg, sq);
	rpma_conn_cfg_get_rq_size(cfg, rq);
	rpma_conn_cfg_get_compl_channel(cfg, shared);
	rpma_conn_cfg_delete(&tmp);
}

static void *
area_alloc(size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

int
rpma_ofi_conn_new(struct ofi_peer *peer, struct fi_info *info,
		const struct rpma_conn_cfg *cfg, bool passive,
		struct ofi_conn **conn_ptr)
{
	struct fi_eq_attr eq_attr = { .size = 16, .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_FD };
	uint32_t cq_size, rcq_size, sq_size, rq_size, nops;
	struct ofi_conn *conn;
	bool shared, polled = false;
	int ret;

	struct rpma_srq *srq = NULL;

	if (cfg)
		rpma_conn_cfg_get_srq(cfg, &srq);
	if (srq && srq->peer != &peer->base)
		return rpma_fail(RPMA_E_INVAL, "the SRQ belongs to another peer");
	cfg_read(cfg, &cq_size, &rcq_size, &sq_size, &rq_size, &shared);
	if (cfg)
		rpma_ext_conn_cfg_get_polled(cfg, &polled);
	if (polled && shared)
		return rpma_fail(RPMA_E_INVAL, "a polled connection has no "
			"completion channel to share");
	if (srq)
		rq_size = 0;	/* receives are the SRQ's */
	if (sq_size == 0 || cq_size == 0)
		return rpma_fail(RPMA_E_INVAL, "send and completion queues need at least 1 entry");

	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a connection");
	conn->peer = peer;
	conn->passive = passive;
	conn->polled = polled;
	conn->base.peer = &peer->base;
	conn->base.ops = &rpma_ofi_conn_ops;
	conn->base.shared_channel = shared;
	conn->base.qp_num = atomic_fetch_add(&next_qp_num, 1);
	/* the target's CPU serves both flush types (GPSPM) */
	conn->base.flush_method[RPMA_FLUSH_TYPE_PERSISTENT] = RPMA_EXT_FLUSH_GPSPM;
	conn->base.flush_method[RPMA_FLUSH_TYPE_VISIBILITY] = RPMA_EXT_FLUSH_GPSPM;
	atomic_init(&conn->base.direct_write_to_pmem, false);
	atomic_init(&conn->closed, false);
	conn->nslots = (uint16_t)(sq_size > UINT16_MAX ? UINT16_MAX : sq_size);
	pthread_mutex_init(&conn->ops_lock, NULL);
	pthread_mutex_init(&conn->drive_lock, NULL);
	conn->internal_op.kind = OFI_OP_INTERNAL;

	ret = RPMA_E_NOMEM;
	nops = sq_size + rq_size;
	conn->nops = nops;
	conn->ops = calloc(nops, sizeof(*conn->ops));
	if ((ret = rpma_req_table_init(&conn->pending, conn->nslots)))
		goto err;
	conn->req_area = area_alloc(conn->nslots * sizeof(struct rpma_req));
	conn->stage = area_alloc(conn->nslots * sizeof(struct rpma_req));
	if (!conn->ops || !conn->req_area || !conn->stage) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate connection state");
		goto err;
	}
	for (uint32_t i = 0; i < nops; i++) {
		conn->ops[i].next_free = conn->free_ops;
		conn->free_ops = &conn->ops[i];
	}

	ret = rpma_cq_new(cq_size, &conn->base.cq);
	if (ret)
		goto err;
	if (rcq_size) {
		ret = shared ? rpma_cq_new_shared(rcq_size, conn->base.cq, &conn->base.rcq)
			: rpma_cq_new(rcq_size, &conn->base.rcq);
		if (ret)
			goto err;
	}
	conn->base.cq->shared_channel = shared;
	conn->base.cq->drive = rpma_ofi_progress_drive;
	conn->base.cq->drive_fd = rpma_ofi_progress_wait_fd;
	conn->base.cq->drive_arg = conn;
	conn->base.cq->no_fd = polled;
	if (conn->base.rcq) {
		conn->base.rcq->shared_channel = shared;
		conn->base.rcq->drive = rpma_ofi_progress_drive;
		conn->base.rcq->drive_fd = rpma_ofi_progress_wait_fd;
		conn->base.rcq->drive_arg = conn;
		conn->base.rcq->no_fd = polled;
	}

	/*
	 * The 0-byte forms of write and read aim at the peer's request area
	 * from our stage: both need read access too, or a 0-byte read is a
	 * remote access error that breaks the connection.
	 */
	ret = rpma_ofi_mr_reg_raw(peer, conn->req_area,
			conn->nslots * sizeof(struct rpma_req),
			FI_REMOTE_WRITE | FI_REMOTE_READ, &conn->req_mr);
	if (ret)
		goto err;
	ret = rpma_ofi_mr_reg_raw(peer, conn->stage,
			conn->nslots * sizeof(struct rpma_req), FI_WRITE | FI_READ,
			&conn->stage_mr);
	if (ret)
		goto err;

	cq_attr.size = nops + 2u * conn->nslots + 16;
	if ((ret = fi_cq_open(peer->domain, &cq_attr, &conn->cq, NULL))) {
		ret = rpma_ofi_err(ret, "fi_cq_open");
		goto err;
	}
	if ((ret = fi_eq_open(peer->fabric, &eq_attr, &conn->eq, NULL))) {
		ret = rpma_ofi_err(ret, "fi_eq_open");
		goto err;
	}
	info->tx_attr->size = sq_size + conn->nslots + 1;
	info->rx_attr->size = rq_size ? rq_size : 1;
	if (srq)
		info->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	if ((ret = fi_endpoint(peer->domain, info, &conn->ep, NULL))) {
		ret = rpma_ofi_err(ret, "fi_endpoint");
		goto err;
	}
	if (srq) {
		conn->srq = (struct ofi_srq *)srq;
		atomic_fetch_add(&conn->srq->users, 1);
		if ((ret = fi_ep_bind(conn->ep, &conn->srq->srx->fid, 0))) {
			ret = rpma_ofi_err(ret, "binding the SRQ");
			goto err;
		}
	}
	if ((ret = fi_ep_bind(conn->ep, &conn->eq->fid, 0)) ||
	    /* sends: a completion only where a post asks (all but requests') */
	    (ret = fi_ep_bind(conn->ep, &conn->cq->fid, FI_TRANSMIT |
			FI_SELECTIVE_COMPLETION)) ||
	    (ret = fi_ep_bind(conn->ep, &conn->cq->fid, FI_RECV)) ||
	    (ret = fi_enable(conn->ep))) {
		ret = rpma_ofi_err(ret, "binding the endpoint");
		goto err;
	}
	if ((ret = fi_control(&conn->eq->fid, FI_GETWAIT, &conn->eq_fd)) ||
	    (ret = fi_control(&conn->cq->fid, FI_GETWAIT, &conn->cq_fd))) {
		ret = rpma_ofi_err(ret, "fi_control(FI_GETWAIT)");
		goto err;
	}
	*conn_ptr = conn;
	return 0;

err:
	rpma_ofi_conn_free(conn);
	return ret;
}

void
rpma_ofi_conn_free(struct ofi_conn *conn)
{
	if (conn->ep)
		fi_close(&conn->ep->fid);
	if (conn->srq)
		atomic_fetch_sub(&conn->srq->users, 1);
	if (conn->eq)
		fi_close(&conn->eq->fid);
	if (conn->cq)
		fi_close(&conn->cq->fid);
	if (conn->stage_mr)
		fi_close(&conn->stage_mr->fid);
	if (conn->req_mr)
		fi_close(&conn->req_mr->fid);
	rpma_cq_delete(conn->base.rcq);
	rpma_cq_delete(conn->base.cq);
	rpma_private_data_discard(&conn->base.pdata);
	pthread_mutex_destroy(&conn->ops_lock);
	pthread_mutex_destroy(&conn->drive_lock);
	free(conn->stage);
	free(conn->req_area);
	rpma_req_table_fini(&conn->pending);
	free(conn->ops);
	free(conn);
}

int
rpma_ofi_conn_req_new(struct rpma_peer *base, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr)
{
	struct ofi_peer *peer = (struct ofi_peer *)base;
	struct ofi_conn_req *req;
	struct fi_info *hints;
	int ret;

	req = calloc(1, sizeof(*req));
	if (req == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a request");
	hints = rpma_ofi_hints(peer);
	if (hints == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate fabric hints");
		goto err_free;
	}
	ret = fi_getinfo(OFI_API_VERSION, addr, port, 0, hints, &req->info);
	fi_freeinfo(hints);
	if (ret) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot resolve %s:%s on %s: %s",
			addr, port, peer->info->fabric_attr->prov_name,
			fi_strerror(-ret));
		goto err_free;
	}
	ret = rpma_ofi_conn_new(peer, req->info, cfg, false, &req->conn);
	if (ret)
		goto err_info;
	req->base.ops = &rpma_ofi_conn_req_ops;
	req->base.peer = base;
	*req_ptr = &req->base;
	return 0;

err_info:
	fi_freeinfo(req->info);
err_free:
	free(req);
	return ret;
}

static int
ofi_conn_req_delete(struct rpma_conn_req *base)
{
	struct ofi_conn_req *req = (struct ofi_conn_req *)base;

	if (req->conn->passive) {
		fi_reject(req->ep->pep, req->info->handle, NULL, 0);
		rpma_ofi_ep_put(req->ep);
	}
	rpma_ofi_conn_free(req->conn);
	rpma_private_data_discard(&req->base.pdata);
	fi_freeinfo(req->info);
	free(req);
	return 0;
}

static int
ofi_conn_req_connect(struct rpma_conn_req *base,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr)
{
	struct ofi_conn_req *req = (struct ofi_conn_req *)base;
	struct ofi_conn *conn = req->conn;
	unsigned char data[MAX_PDATA_WITH_HELLO];
	size_t len = sizeof(struct ofi_hello);
	int ret;

	rpma_ofi_hello_fill(conn, (struct ofi_hello *)data);
	if (pdata) {
		if (pdata->len > sizeof(data) - len) {
			ret = rpma_fail(RPMA_E_INVAL,
				"private data of %u bytes exceeds the %zu this transport carries",
				pdata->len, sizeof(data) - len);
			goto err;
		}
		memcpy(data + len, pdata->ptr, pdata->len);
		len += pdata->len;
	}
	ret = rpma_ofi_progress_add(conn->peer, conn);
	if (ret)
		goto err;
	if (conn->passive)
		ret = fi_accept(conn->ep, data, len);
	else
		ret = fi_connect(conn->ep, req->info->dest_addr, data, len);
	if (ret) {
		rpma_ofi_progress_remove(conn->peer, conn);
		ret = rpma_ofi_err(ret, conn->passive ? "fi_accept" : "fi_connect");
		goto err;
	}
	if (conn->passive)
		rpma_ofi_ep_put(req->ep);
	/* the passive side's copy of the initiator's private data moves over */
	conn->base.pdata = req->base.pdata;
	req->base.pdata.ptr = NULL;
	req->base.pdata.len = 0;
	fi_freeinfo(req->info);
	free(req);
	*conn_ptr = &conn->base;
	return 0;

err:
	ofi_conn_req_delete(base);
	return ret;
}

struct ofi_op *
rpma_ofi_op_get(struct ofi_conn *conn, enum ofi_op_kind kind, const struct rpma_op *op)
{
	struct ofi_op *o;

	pthread_mutex_lock(&conn->ops_lock);
	o = conn->free_ops;
	if (o)
		conn->free_ops = o->next_free;
	pthread_mutex_unlock(&conn->ops_lock);
	if (o == NULL)
		return NULL;
	o->op_context = op->op_context;
	o->srq = NULL;
	o->in_use = true;
	o->mr = op->local;
	o->kind = (uint8_t)kind;
	o->signaled = kind == OFI_OP_RECV ||
		(op->flags & RPMA_F_COMPLETION_ALWAYS) == RPMA_F_COMPLETION_ALWAYS ||
		(op->flags & 2);
	o->to_rcq = kind == OFI_OP_RECV && conn->base.rcq != NULL;
	rpma_mr_hold(o->mr);
	return o;
}

void
rpma_ofi_op_put(struct ofi_conn *conn, struct ofi_op *o)
{
	if (o->srq) {
		rpma_ofi_srq_op_put(o);
		return;
	}
	rpma_mr_release(o->mr);
	pthread_mutex_lock(&conn->ops_lock);
	o->in_use = false;
	o->next_free = conn->free_ops;
	conn->free_ops = o;
	pthread_mutex_unlock(&conn->ops_lock);
}

static int
ofi_conn_req_recv(struct rpma_conn_req *base, const struct rpma_op *op)
{
	struct ofi_conn_req *req = (struct ofi_conn_req *)base;
	return rpma_ofi_post_recv(req->conn, op);
}

const struct rpma_conn_req_ops rpma_ofi_conn_req_ops = {
	.delete = ofi_conn_req_delete,
	.connect = ofi_conn_req_connect,
	.recv = ofi_conn_req_recv,
};

/* ---------------------------------------------------------------- */
/* events                                                           */

static enum rpma_conn_event
event_of_error(int err)
{
	switch (err) {
	case FI_ECONNREFUSED:
		return RPMA_CONN_REJECTED;
	case FI_ETIMEDOUT:
	case FI_EHOSTUNREACH:
	case FI_ENETUNREACH:
		return RPMA_CONN_UNREACHABLE;
	default:
		return RPMA_CONN_LOST;
	}
}

int
rpma_ofi_conn_next_event(struct rpma_conn *base, enum rpma_conn_event *event)
{
	struct ofi_conn *conn = (struct ofi_conn *)base;
	struct {
		struct fi_eq_cm_entry entry;
		unsigned char data[512];
	} ev;
	struct fi_eq_err_entry err;
	uint32_t type;
	ssize_t n;

	if (rpma_ofi_fd_nonblocking(conn->eq_fd))
		n = fi_eq_read(conn->eq, &type, &ev, sizeof(ev), 0);
	else
		do
			n = fi_eq_sread(conn->eq, &type, &ev, sizeof(ev), 1000, 0);
		while (n == -FI_EAGAIN || n == -FI_ETIMEDOUT);
	if (n == -FI_EAGAIN)
		return RPMA_E_NO_EVENT;
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_eq_readerr(conn->eq, &err, 0);
		atomic_store(&conn->closed, true);
		rpma_ofi_conn_fail_pending(conn);
		*event = event_of_error(err.err);
		/*
		 * Before FI_CONNECTED the peer was reached, so a failure is a
		 * refusal (fi_reject); tcp reports it with whatever errno
		 * its socket read left behind (EINPROGRESS, EIO, ECONNRESET).
		 */
		if (!conn->passive && !conn->established && *event == RPMA_CONN_LOST)
			*event = RPMA_CONN_REJECTED;
		RPMA_LOG_NOTICE("connection event: %s (%s)",
			rpma_utils_conn_event_2str(*event), fi_strerror(err.err));
		return 0;
	}
	if (n < 0)
		return rpma_ofi_err((int)n, "fi_eq_read");

	switch (type) {
	case FI_CONNECTED:
		if (!conn->passive && !conn->have_remote_hello) {
			int ret = rpma_ofi_hello_take(conn, ev.data,
					(size_t)n > sizeof(ev.entry) ? (size_t)n - sizeof(ev.entry) : 0,
					&conn->base.pdata);
			if (ret) {
				/* not our core on the other side: no flush service */
				fi_shutdown(conn->ep, 0);
				atomic_store(&conn->closed, true);
				return ret;
			}
		}
		conn->established = true;
		*event = RPMA_CONN_ESTABLISHED;
		break;
	case FI_SHUTDOWN:
		atomic_store(&conn->closed, true);
		rpma_ofi_conn_fail_pending(conn);
		*event = RPMA_CONN_CLOSED;
		break;
	default:
		return rpma_fail(RPMA_E_UNKNOWN, "unexpected connection event %u", type);
	}
	RPMA_LOG_NOTICE("connection event: %s", rpma_utils_conn_event_2str(*event));
	return 0;
}

/*
 * The progress thread, before it blocks: a request of ours waits for an
 * answer that no operation of libfabric's stands for, so when the peer is
 * gone nothing would ever complete it.  Peek at the connection's events
 * (the application still reads them) and fail the requests once the
 * connection is shut down or broken, as a QP in error flushes its work.
 */
void
rpma_ofi_conn_watch(struct ofi_conn *conn)
{
	struct {
		struct fi_eq_cm_entry entry;
		unsigned char data[512];
	} ev;
	bool waiting = false;
	uint32_t type;
	ssize_t n;

	if (atomic_load(&conn->closed))
		return;
	pthread_mutex_lock(&conn->pending.lock);
	for (uint32_t s = 0; s < conn->pending.n && !waiting; s++)
		waiting = conn->pending.slots[s].in_use;
	pthread_mutex_unlock(&conn->pending.lock);
	if (!waiting)
		return;
	n = fi_eq_read(conn->eq, &type, &ev, sizeof(ev), FI_PEEK);
	if (n == -FI_EAVAIL || (n >= 0 && type == FI_SHUTDOWN)) {
		atomic_store(&conn->closed, true);
		rpma_ofi_conn_fail_pending(conn);
	}
}

int
rpma_ofi_conn_get_event_fd(const struct rpma_conn *base, int *fd)
{
	*fd = ((const struct ofi_conn *)base)->eq_fd;
	return 0;
}

int
rpma_ofi_conn_disconnect(struct rpma_conn *base)
{
	struct ofi_conn *conn = (struct ofi_conn *)base;
	int ret = fi_shutdown(conn->ep, 0);

	if (ret && ret != -FI_ENOTCONN)
		return rpma_ofi_err(ret, "fi_shutdown");
	return 0;
}


int
rpma_ofi_conn_delete(struct rpma_conn *base)
{
	struct ofi_conn *conn = (struct ofi_conn *)base;

	rpma_ofi_progress_remove(conn->peer, conn);
	if (!atomic_load(&conn->closed))
		fi_shutdown(conn->ep, 0);
	/* what already completed, then release what never will */
	for (int i = 0; i < 64 && rpma_ofi_conn_progress(conn) > 0; i++)
		;
	/* first: failing a request lets go of the data it carries */
	rpma_ofi_conn_fail_pending(conn);
	for (uint32_t i = 0; i < conn->nops; i++)
		if (conn->ops[i].in_use)
			rpma_mr_release(conn->ops[i].mr);
	rpma_ofi_conn_free(conn);
	return 0;
}
