/* SPDX-License-Identifier: BSD-3-Clause */
/* ofi_ep.c -- a listening endpoint: a passive endpoint and its event queue */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "errormsg.h"
#include "log.h"
#include "ofi.h"

bool
rpma_ofi_fd_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

int
rpma_ofi_ep_listen(struct rpma_peer *base, const char *addr, const char *port,
		struct rpma_ep **ep_ptr)
{
	struct ofi_peer *peer = (struct ofi_peer *)base;
	struct fi_eq_attr eq_attr = { .size = 64, .wait_obj = FI_WAIT_FD };
	struct fi_info *hints;
	struct ofi_ep *ep;
	int ret;

	ep = calloc(1, sizeof(*ep));
	if (ep == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate an endpoint");
	hints = rpma_ofi_hints(peer);
	if (hints == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate fabric hints");
		goto err_free;
	}
	ret = fi_getinfo(OFI_API_VERSION, addr, port, FI_SOURCE, hints, &ep->info);
	fi_freeinfo(hints);
	if (ret) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot listen on %s:%s: %s", addr,
			port, fi_strerror(-ret));
		goto err_free;
	}
	if ((ret = fi_eq_open(peer->fabric, &eq_attr, &ep->eq, NULL))) {
		ret = rpma_ofi_err(ret, "fi_eq_open");
		goto err_info;
	}
	if ((ret = fi_passive_ep(peer->fabric, ep->info, &ep->pep, NULL))) {
		ret = rpma_ofi_err(ret, "fi_passive_ep");
		goto err_eq;
	}
	if ((ret = fi_pep_bind(ep->pep, &ep->eq->fid, 0)) ||
	    (ret = fi_listen(ep->pep))) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot listen on %s:%s: %s", addr,
			port, fi_strerror(-ret));
		goto err_pep;
	}
	if ((ret = fi_control(&ep->eq->fid, FI_GETWAIT, &ep->eq_fd))) {
		ret = rpma_ofi_err(ret, "fi_control(FI_GETWAIT)");
		goto err_pep;
	}
	ep->base.ops = &rpma_ofi_ep_ops;
	ep->base.peer = base;
	ep->peer = peer;
	atomic_init(&ep->refs, 1);
	RPMA_LOG_INFO("listening on %s:%s (%s)", addr, port,
		peer->info->fabric_attr->prov_name);
	*ep_ptr = &ep->base;
	return 0;

err_pep:
	fi_close(&ep->pep->fid);
err_eq:
	fi_close(&ep->eq->fid);
err_info:
	fi_freeinfo(ep->info);
err_free:
	free(ep);
	return ret;
}

/*
 * Requests nobody took: the provider frees a request's handle only when
 * it is rejected or accepted, not when its endpoint closes.  One still
 * arriving becomes an event only after a few reads more (each read drives
 * the provider's progress once), so this reads until a few come empty.
 */
static void
reject_pending(struct ofi_ep *ep)
{
	struct {
		struct fi_eq_cm_entry entry;
		unsigned char data[512];
	} ev;
	uint32_t event;
	int empty = 0;

	for (int i = 0; i < 64 && empty < 4; i++) {
		ssize_t n = fi_eq_read(ep->eq, &event, &ev, sizeof(ev), 0);

		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			memset(&err, 0, sizeof(err));
			fi_eq_readerr(ep->eq, &err, 0);
			continue;
		}
		if (n < 0) {
			empty++;
			continue;
		}
		empty = 0;
		if (event == FI_CONNREQ && (size_t)n >= sizeof(ev.entry)) {
			fi_reject(ep->pep, ev.entry.info->handle, NULL, 0);
			fi_freeinfo(ev.entry.info);
		}
	}
}

void
rpma_ofi_ep_put(struct ofi_ep *ep)
{
	if (atomic_fetch_sub(&ep->refs, 1) != 1)
		return;
	reject_pending(ep);
	fi_close(&ep->pep->fid);
	fi_close(&ep->eq->fid);
	fi_freeinfo(ep->info);
	free(ep);
}

/* requests still pending keep the passive endpoint until they are done */
static int
ofi_ep_shutdown(struct rpma_ep *base)
{
	rpma_ofi_ep_put((struct ofi_ep *)base);
	return 0;
}

static int
ofi_ep_get_fd(const struct rpma_ep *base, int *fd)
{
	*fd = ((const struct ofi_ep *)base)->eq_fd;
	return 0;
}

static int
ofi_ep_next_conn_req(struct rpma_ep *base, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr)
{
	struct ofi_ep *ep = (struct ofi_ep *)base;
	struct {
		struct fi_eq_cm_entry entry;
		unsigned char data[512];
	} ev;
	struct fi_eq_err_entry err;
	struct ofi_conn_req *req;
	uint32_t event;
	ssize_t n;
	int ret;

	if (rpma_ofi_fd_nonblocking(ep->eq_fd))
		n = fi_eq_read(ep->eq, &event, &ev, sizeof(ev), 0);
	else
		do
			n = fi_eq_sread(ep->eq, &event, &ev, sizeof(ev), 1000, 0);
		while (n == -FI_EAGAIN || n == -FI_ETIMEDOUT);
	if (n == -FI_EAGAIN)
		return RPMA_E_NO_EVENT;
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_eq_readerr(ep->eq, &err, 0);
		return rpma_fail(RPMA_E_PROVIDER, "listening endpoint error: %s",
			fi_strerror(err.err));
	}
	if (n < 0)
		return rpma_ofi_err((int)n, "fi_eq_read");
	if (event != FI_CONNREQ || (size_t)n < sizeof(ev.entry)) {
		if (event == FI_CONNREQ)
			fi_freeinfo(ev.entry.info);
		return rpma_fail(RPMA_E_INVAL, "listening endpoint got event %u, not a request",
			event);
	}

	req = calloc(1, sizeof(*req));
	if (req == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate a request");
		goto err_reject;
	}
	req->base.ops = &rpma_ofi_conn_req_ops;
	req->base.peer = base->peer;
	req->ep = ep;
	atomic_fetch_add(&ep->refs, 1);
	req->info = ev.entry.info;
	ret = rpma_ofi_conn_new(ep->peer, ev.entry.info, cfg, true, &req->conn);
	if (ret)
		goto err_unref;
	/* the core's hello, then the application's private data */
	ret = rpma_ofi_hello_take(req->conn, ev.data, (size_t)n - sizeof(ev.entry),
			&req->base.pdata);
	if (ret)
		goto err_conn;
	*req_ptr = &req->base;
	return 0;

err_conn:
	rpma_ofi_conn_free(req->conn);
err_unref:
	atomic_fetch_sub(&ep->refs, 1);	/* also when the connection was refused */
	free(req);
err_reject:
	fi_reject(ep->pep, ev.entry.info->handle, NULL, 0);
	fi_freeinfo(ev.entry.info);
	return ret;
}

const struct rpma_ep_ops rpma_ofi_ep_ops = {
	.shutdown = ofi_ep_shutdown,
	.get_fd = ofi_ep_get_fd,
	.next_conn_req = ofi_ep_next_conn_req,
};
