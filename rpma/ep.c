/* SPDX-License-Identifier: BSD-3-Clause */
/* ep.c -- rpma_ep and rpma_conn_req: checks, then the provider */
#include "config.h"

#include "conn.h"
#include "errormsg.h"
#include "mr.h"
#include "peer.h"

int
rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_ep **ep_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || ep_ptr == NULL)
		return RPMA_E_INVAL;
	return peer->prov->ep_listen(peer, addr, port, ep_ptr);
}

int
rpma_ep_shutdown(struct rpma_ep **ep_ptr)
{
	int ret;

	if (ep_ptr == NULL)
		return RPMA_E_INVAL;
	if (*ep_ptr == NULL)
		return 0;
	ret = (*ep_ptr)->ops->shutdown(*ep_ptr);
	*ep_ptr = NULL;
	return ret;
}

int
rpma_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	if (ep == NULL || fd == NULL)
		return RPMA_E_INVAL;
	return ep->ops->get_fd(ep, fd);
}

int
rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr)
{
	if (ep == NULL || req_ptr == NULL)
		return RPMA_E_INVAL;
	return ep->ops->next_conn_req(ep, cfg, req_ptr);
}

int
rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	if (peer == NULL || addr == NULL || port == NULL || req_ptr == NULL)
		return RPMA_E_INVAL;
	return peer->prov->conn_req_new(peer, addr, port, cfg, req_ptr);
}

int
rpma_conn_req_delete(struct rpma_conn_req **req_ptr)
{
	int ret;

	if (req_ptr == NULL)
		return RPMA_E_INVAL;
	if (*req_ptr == NULL)
		return 0;
	ret = (*req_ptr)->ops->delete(*req_ptr);
	*req_ptr = NULL;
	return ret;
}

int
rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
		const struct rpma_conn_private_data *pdata,
		struct rpma_conn **conn_ptr)
{
	struct rpma_conn_req *req;
	int ret;

	if (req_ptr == NULL || *req_ptr == NULL || conn_ptr == NULL)
		return RPMA_E_INVAL;
	req = *req_ptr;
	if (pdata != NULL && (pdata->ptr == NULL || pdata->len == 0)) {
		/* as in librpma, the request is consumed either way */
		req->ops->delete(req);
		*req_ptr = NULL;
		return rpma_fail(RPMA_E_INVAL, "private data with a NULL pointer or length 0");
	}
	ret = req->ops->connect(req, pdata, conn_ptr);
	*req_ptr = NULL;
	return ret;
}

int
rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst,
		size_t offset, size_t len, const void *op_context)
{
	struct rpma_op op = {
		.local = dst, .local_offset = offset, .len = len,
		.op_context = op_context,
	};

	int ret;

	/* unlike rpma_recv, no 0-byte form before the connection exists */
	if (req == NULL || dst == NULL)
		return RPMA_E_INVAL;
	if ((ret = rpma_msg_range(dst, offset, len, RPMA_MR_USAGE_RECV, "recv")))
		return ret;
	return req->ops->recv(req, &op);
}

int
rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
		struct rpma_conn_private_data *pdata)
{
	if (req == NULL || pdata == NULL)
		return RPMA_E_INVAL;
	*pdata = req->pdata;
	return 0;
}
