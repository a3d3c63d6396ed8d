/* SPDX-License-Identifier: BSD-3-Clause */
/* ofi_peer.c -- a peer on a libfabric provider: fabric, domain, regions */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "log.h"
#include "mr.h"
#include "ofi.h"

int
rpma_ofi_err(int fi_ret, const char *what)
{
	if (fi_ret == -FI_ENOMEM)
		return rpma_fail(RPMA_E_NOMEM, "%s: %s", what, fi_strerror(-fi_ret));
	RPMA_LOG_ERROR("%s: %s", what, fi_strerror(-fi_ret));
	return rpma_fail(RPMA_E_PROVIDER, "%s: %s", what, fi_strerror(-fi_ret));
}

static int ofi_peer_delete(struct rpma_peer *base);
static int ofi_mr_reg(struct rpma_peer *base, struct rpma_mr_local *mr);
static int ofi_mr_dereg(struct rpma_mr_local *mr);

#define OFI_PROVIDER(t, n) { \
	.name = n, .transport = t, .peer_delete = ofi_peer_delete, \
	.mr_reg = ofi_mr_reg, .mr_dereg = ofi_mr_dereg, \
	.ep_listen = rpma_ofi_ep_listen, .conn_req_new = rpma_ofi_conn_req_new, \
	.srq_new = rpma_ofi_srq_new, \
}

static const struct rpma_provider ofi_tcp = OFI_PROVIDER(RPMA_EXT_TRANSPORT_OFI_TCP, "tcp");
static const struct rpma_provider ofi_net = OFI_PROVIDER(RPMA_EXT_TRANSPORT_OFI_NET, "net");

/* what the core asks of a fabric */
static struct fi_info *
hints_new(const char *provider)
{
	struct fi_info *h = fi_allocinfo();

	if (h == NULL)
		return NULL;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA;
	h->mode = 0;	/* contexts are ours: no FI_CONTEXT */
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
		FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->threading = FI_THREAD_SAFE;
	/*
	 * Data moves when the core reads a CQ (its progress thread, or the
	 * application polling): no provider thread between a socket and us.
	 */
	if (getenv("RPMA_OFI_AUTO_PROGRESS") == NULL)
		h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	h->tx_attr->msg_order = FI_ORDER_RMA_WAW | FI_ORDER_WAW | FI_ORDER_SAW;
	h->fabric_attr->prov_name = strdup(provider);
	if (h->fabric_attr->prov_name == NULL) {
		fi_freeinfo(h);
		return NULL;
	}
	return h;
}

/* the peer's hints narrowed to its own fabric and domain */
struct fi_info *
rpma_ofi_hints(const struct ofi_peer *peer)
{
	struct fi_info *h = hints_new(peer->info->fabric_attr->prov_name);

	if (h == NULL)
		return NULL;
	h->domain_attr->name = strdup(peer->info->domain_attr->name);
	h->fabric_attr->name = strdup(peer->info->fabric_attr->name);
	if (h->domain_attr->name == NULL || h->fabric_attr->name == NULL) {
		fi_freeinfo(h);
		return NULL;
	}
	return h;
}

int
rpma_ext_peer_new_ofi(const char *provider, struct rpma_peer **peer_ptr)
{
	const struct rpma_provider *prov;
	struct ofi_peer *peer;
	struct fi_info *hints;
	int ret;

	if (provider == NULL || peer_ptr == NULL)
		return rpma_fail(RPMA_E_INVAL, "provider or peer_ptr is NULL");
	if (strcmp(provider, "tcp") == 0)
		prov = &ofi_tcp;
	else if (strcmp(provider, "net") == 0)
		prov = &ofi_net;
	else if (strcmp(provider, "shm") == 0)
		return rpma_fail(RPMA_E_NOSUPP,
			"libfabric's shm offers no connected (FI_EP_MSG) endpoints");
	else
		return rpma_fail(RPMA_E_INVAL, "unknown libfabric provider \"%s\" (tcp or net)",
			provider);

	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	peer = calloc(1, sizeof(*peer));
	if (peer == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a peer");
	hints = hints_new(provider);
	if (hints == NULL) {
		ret = rpma_fail(RPMA_E_NOMEM, "cannot allocate fabric hints");
		goto err_free;
	}
	ret = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &peer->info);
	fi_freeinfo(hints);
	if (ret) {
		ret = rpma_fail(RPMA_E_PROVIDER,
			"libfabric provider %s offers no connected RMA endpoint: %s",
			provider, fi_strerror(-ret));
		goto err_free;
	}
	if (peer->info->domain_attr->cq_data_size < 8) {
		ret = rpma_fail(RPMA_E_NOSUPP,
			"provider %s carries %zu bytes of CQ data; the core needs 8",
			provider, peer->info->domain_attr->cq_data_size);
		goto err_info;
	}
	ret = fi_fabric(peer->info->fabric_attr, &peer->fabric, NULL);
	if (ret) {
		ret = rpma_ofi_err(ret, "fi_fabric");
		goto err_info;
	}
	ret = fi_domain(peer->fabric, peer->info, &peer->domain, NULL);
	if (ret) {
		ret = rpma_ofi_err(ret, "fi_domain");
		goto err_fabric;
	}
	peer->virt_addr = (peer->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
	peer->prov_key = (peer->info->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
	peer->ordered_waw = (peer->info->tx_attr->msg_order & FI_ORDER_RMA_WAW) ||
		(peer->info->tx_attr->msg_order & FI_ORDER_WAW);
	peer->two_segments = peer->info->tx_attr->iov_limit >= 2 &&
		peer->info->tx_attr->rma_iov_limit >= 2;
	ret = rpma_peer_init(&peer->base, prov);
	if (ret)
		goto err_domain;
	RPMA_LOG_INFO("ofi peer on %s, domain %s, %s-addressed regions, %s writes",
		provider, peer->info->domain_attr->name,
		peer->virt_addr ? "address" : "offset",
		peer->ordered_waw ? "ordered" : "unordered");
	*peer_ptr = &peer->base;
	return 0;

err_domain:
	fi_close(&peer->domain->fid);
err_fabric:
	fi_close(&peer->fabric->fid);
err_info:
	fi_freeinfo(peer->info);
err_free:
	free(peer);
	return ret;
}

static int
ofi_peer_delete(struct rpma_peer *base)
{
	struct ofi_peer *peer = (struct ofi_peer *)base;
	int conns = rpma_ofi_progress_count(peer);

	if (conns)
		return rpma_fail(RPMA_E_INVAL,
			"peer still has %d connection(s): delete them first", conns);
	rpma_ofi_progress_stop(peer);
	rpma_peer_fini(&peer->base);
	fi_close(&peer->domain->fid);
	fi_close(&peer->fabric->fid);
	fi_freeinfo(peer->info);
	free(peer);
	return 0;
}

int
rpma_ext_peer_get_transport(const struct rpma_peer *peer,
		enum rpma_ext_transport *transport)
{
	if (peer == NULL || transport == NULL)
		return RPMA_E_INVAL;
	*transport = peer->prov->transport;
	return 0;
}

static uint64_t
usage_to_access(int usage)
{
	uint64_t access = 0;

	if (usage & RPMA_MR_USAGE_READ_SRC)
		access |= FI_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_READ_DST)
		access |= FI_READ;
	if (usage & RPMA_MR_USAGE_WRITE_SRC)
		access |= FI_WRITE;
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= FI_REMOTE_WRITE;
	if (usage & RPMA_MR_USAGE_SEND)
		access |= FI_SEND;
	if (usage & RPMA_MR_USAGE_RECV)
		access |= FI_RECV;
	/* flush usage needs no access: the target's CPU serves flushes */
	return access ? access : FI_SEND;
}

/*
 * Register [ptr, ptr + size).  Where the application may pick keys, pick
 * 64 random bits: a guessable key is an open door (ReDMArk).
 */
int
rpma_ofi_mr_reg_raw(struct ofi_peer *peer, void *ptr, size_t size,
		uint64_t access, struct fid_mr **mr_out)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		uint64_t key = 0;
		int ret;

		if (!peer->prov_key &&
		    getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key))
			return rpma_fail(RPMA_E_PROVIDER, "no random key available");
		ret = fi_mr_reg(peer->domain, ptr, size, access, 0, key, 0, mr_out, NULL);
		if (ret == -FI_ENOKEY)
			continue;	/* taken: draw another */
		if (ret)
			return rpma_ofi_err(ret, "fi_mr_reg");
		return 0;
	}
	return rpma_fail(RPMA_E_PROVIDER, "fi_mr_reg: no free key after 8 draws");
}

static int
ofi_mr_reg(struct rpma_peer *base, struct rpma_mr_local *mr)
{
	struct ofi_peer *peer = (struct ofi_peer *)base;
	struct fid_mr *fmr;
	int ret = rpma_ofi_mr_reg_raw(peer, mr->ptr, mr->size,
			usage_to_access(mr->usage), &fmr);

	if (ret)
		return ret;
	mr->key = fi_mr_key(fmr);
	mr->raddr = peer->virt_addr ? (uint64_t)(uintptr_t)mr->ptr : 0;
	mr->prov_handle = fmr;
	mr->prov_desc = fi_mr_desc(fmr);
	return 0;
}

static int
ofi_mr_dereg(struct rpma_mr_local *mr)
{
	int ret = fi_close(&((struct fid_mr *)mr->prov_handle)->fid);

	return ret ? rpma_ofi_err(ret, "fi_close(mr)") : 0;
}
