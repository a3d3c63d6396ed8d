/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_ep.c -- a listening rdma_cm id and the requests it receives */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errormsg.h"
#include "log.h"
#include "verbs.h"

int
rpma_verbs_ep_listen(struct rpma_peer *base, const char *addr, const char *port,
		struct rpma_ep **ep_ptr)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
		.ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *rai = NULL;
	struct verbs_ep *ep;
	int ret;

	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate an endpoint");
	ep->evch = rdma_create_event_channel();
	if (ep->evch == NULL) {
		ret = rpma_verbs_err(errno, "rdma_create_event_channel");
		goto err_free;
	}
	if (rdma_create_id(ep->evch, &ep->id, NULL, RDMA_PS_TCP)) {
		ret = rpma_verbs_err(errno, "rdma_create_id");
		goto err_channel;
	}
	if (rdma_getaddrinfo(addr, port, &hints, &rai)) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot resolve %s:%s: %s", addr, port,
			strerror(errno));
		goto err_id;
	}
	if (rdma_bind_addr(ep->id, rai->ai_src_addr) || rdma_listen(ep->id, 0)) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot listen on %s:%s: %s", addr, port,
			strerror(errno));
		goto err_id;
	}
	rdma_freeaddrinfo(rai);
	ep->base.ops = &rpma_verbs_ep_ops;
	ep->base.peer = base;
	ep->peer = (struct verbs_peer *)base;
	*ep_ptr = &ep->base;
	return 0;

err_id:
	rdma_freeaddrinfo(rai);
	rdma_destroy_id(ep->id);
err_channel:
	rdma_destroy_event_channel(ep->evch);
err_free:
	free(ep);
	return ret;
}

static int
verbs_ep_shutdown(struct rpma_ep *base)
{
	struct verbs_ep *ep = (struct verbs_ep *)base;
	int ret = rdma_destroy_id(ep->id) ? rpma_verbs_err(errno, "rdma_destroy_id") : 0;

	rdma_destroy_event_channel(ep->evch);
	free(ep);
	return ret;
}

static int
verbs_ep_get_fd(const struct rpma_ep *base, int *fd)
{
	*fd = ((const struct verbs_ep *)base)->evch->fd;
	return 0;
}

static int
verbs_ep_next_conn_req(struct rpma_ep *base, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr)
{
	struct verbs_ep *ep = (struct verbs_ep *)base;
	struct rdma_cm_event *ev;
	struct verbs_conn_req *req;
	int ret;

	if (rdma_get_cm_event(ep->evch, &ev)) {
		/* an O_NONBLOCK channel with nothing queued: no event, not a failure */
		if (errno == EAGAIN || errno == ENODATA)
			return RPMA_E_NO_EVENT;
		return rpma_verbs_err(errno, "rdma_get_cm_event");
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = rpma_fail(RPMA_E_INVAL, "listening endpoint got %s, not a request",
			rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		return ret;
	}
	req = calloc(1, sizeof(*req));
	if (req == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate a request");
		goto err_reject;
	}
	req->base.ops = &rpma_verbs_conn_req_ops;
	req->base.peer = base->peer;
	ret = rpma_private_data_store(&req->base.pdata,
		ev->param.conn.private_data, ev->param.conn.private_data_len);
	if (ret)
		goto err_free;
	ret = rpma_verbs_conn_new(ep->peer, ev->id, cfg, true, &req->conn);
	if (ret)
		goto err_pdata;
	rdma_ack_cm_event(ev);
	*req_ptr = &req->base;
	return 0;

err_pdata:
	rpma_private_data_discard(&req->base.pdata);
err_free:
	free(req);
err_reject:
	{
		struct rdma_cm_id *id = ev->id;

		rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
	}
	return ret;
}

const struct rpma_ep_ops rpma_verbs_ep_ops = {
	.shutdown = verbs_ep_shutdown,
	.get_fd = verbs_ep_get_fd,
	.next_conn_req = verbs_ep_next_conn_req,
};
