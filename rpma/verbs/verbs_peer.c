/* SPDX-License-Identifier: BSD-3-Clause */
/* verbs_peer.c -- device lookup, the verbs peer and memory registration */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "log.h"
#include "mr.h"
#include "verbs.h"

int
rpma_verbs_err(int err, const char *what)
{
	if (err == ENOMEM)
		return rpma_fail(RPMA_E_NOMEM, "%s: %s", what, strerror(err));
	RPMA_LOG_ERROR("%s: %s", what, strerror(err));
	return rpma_fail(err ? RPMA_E_PROVIDER : RPMA_E_UNKNOWN, "%s: %s", what,
		err ? strerror(err) : "failed without an errno");
}

/*
 * A lookup is also how a program asks whether RDMA is there at all (repld's
 * transport "auto"): its failure is the caller's to call an error, so it
 * says why only at debug and in the error message.
 */
static int
lookup_err(int err, const char *what)
{
	if (err == ENOMEM)
		return rpma_fail(RPMA_E_NOMEM, "%s: %s", what, strerror(err));
	RPMA_LOG_DEBUG("%s: %s", what, err ? strerror(err) : "failed");
	return rpma_fail(err ? RPMA_E_PROVIDER : RPMA_E_UNKNOWN, "%s: %s", what,
		err ? strerror(err) : "failed without an errno");
}

int
rpma_utils_get_ibv_context(const char *addr,
		enum rpma_util_ibv_context_type type,
		struct ibv_context **ibv_ctx_ptr)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *rai = NULL;
	struct rdma_cm_id *id = NULL;
	int ret;

	if (addr == NULL || ibv_ctx_ptr == NULL ||
	    (type != RPMA_UTIL_IBV_CONTEXT_LOCAL && type != RPMA_UTIL_IBV_CONTEXT_REMOTE))
		return RPMA_E_INVAL;
	if (type == RPMA_UTIL_IBV_CONTEXT_LOCAL)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, NULL, &hints, &rai))
		return lookup_err(errno, "rdma_getaddrinfo");
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP)) {
		ret = lookup_err(errno, "rdma_create_id (is there an RDMA device?)");
		goto out;
	}
	if (type == RPMA_UTIL_IBV_CONTEXT_LOCAL)
		ret = rdma_bind_addr(id, rai->ai_src_addr);
	else
		ret = rdma_resolve_addr(id, rai->ai_src_addr, rai->ai_dst_addr,
			RPMA_DEFAULT_TIMEOUT_MS);
	if (ret) {
		ret = lookup_err(errno, "no RDMA device serves that address");
		goto out;
	}
	if (id->verbs == NULL) {
		RPMA_LOG_DEBUG("no RDMA device serves %s", addr);
		ret = rpma_fail(RPMA_E_PROVIDER, "no RDMA device serves %s", addr);
		goto out;
	}
	*ibv_ctx_ptr = id->verbs;
	ret = 0;
out:
	if (id)
		rdma_destroy_id(id);
	rdma_freeaddrinfo(rai);
	return ret;
}

int
rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx,
		int *is_odp_capable)
{
	struct ibv_device_attr_ex attr;

	if (ibv_ctx == NULL || is_odp_capable == NULL)
		return RPMA_E_INVAL;
	memset(&attr, 0, sizeof(attr));
	if (ibv_query_device_ex(ibv_ctx, NULL, &attr))
		return rpma_verbs_err(errno, "ibv_query_device_ex");
	*is_odp_capable = (attr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
		(attr.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE) &&
		(attr.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_READ);
	return 0;
}

static int verbs_peer_delete(struct rpma_peer *base);
static int verbs_mr_reg(struct rpma_peer *base, struct rpma_mr_local *mr);
static int verbs_mr_dereg(struct rpma_mr_local *mr);
static int verbs_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags);

static const struct rpma_provider verbs_provider = {
	.name = "verbs",
	.transport = RPMA_EXT_TRANSPORT_VERBS,
	.peer_delete = verbs_peer_delete,
	.mr_reg = verbs_mr_reg,
	.mr_dereg = verbs_mr_dereg,
	.mr_advise = verbs_mr_advise,
	.ep_listen = rpma_verbs_ep_listen,
	.srq_new = rpma_verbs_srq_new,
	.conn_req_new = rpma_verbs_conn_req_new,
};

int
rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr)
{
	struct verbs_peer *peer;
	int odp = 0;
	int ret;

	if (ibv_ctx == NULL || peer_ptr == NULL)
		return RPMA_E_INVAL;
	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	peer = calloc(1, sizeof(*peer));
	if (peer == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a peer");
	peer->ctx = ibv_ctx;
	peer->iwarp = ibv_ctx->device->transport_type == IBV_TRANSPORT_IWARP;
	if (rpma_utils_ibv_context_is_odp_capable(ibv_ctx, &odp) == 0)
		peer->odp = odp != 0;
	errno = 0;
	peer->pd = ibv_alloc_pd(ibv_ctx);
	if (peer->pd == NULL) {
		ret = rpma_verbs_err(errno, "ibv_alloc_pd");
		goto err_free;
	}
	ret = rpma_peer_init(&peer->base, &verbs_provider);
	if (ret)
		goto err_pd;
	RPMA_LOG_INFO("verbs peer on %s (%s, on-demand paging %s)",
		ibv_get_device_name(ibv_ctx->device),
		peer->iwarp ? "iWARP" : "IB/RoCE", peer->odp ? "yes" : "no");
	*peer_ptr = &peer->base;
	return 0;

err_pd:
	ibv_dealloc_pd(peer->pd);
err_free:
	free(peer);
	return ret;
}

static int
verbs_peer_delete(struct rpma_peer *base)
{
	struct verbs_peer *peer = (struct verbs_peer *)base;
	int conns = rpma_verbs_progress_count(peer);
	int ret;

	if (conns)
		return rpma_fail(RPMA_E_INVAL,
			"peer still has %d connection(s): delete them first", conns);
	rpma_verbs_progress_stop(peer);
	ret = ibv_dealloc_pd(peer->pd);

	if (ret)
		return rpma_verbs_err(ret, "ibv_dealloc_pd (objects still use the peer?)");
	rpma_peer_fini(&peer->base);
	free(peer);
	return 0;
}

static int
usage_to_access(const struct verbs_peer *peer, int usage)
{
	int access = 0;

	if (usage & RPMA_MR_USAGE_READ_SRC)
		access |= IBV_ACCESS_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_READ_DST) {
		access |= IBV_ACCESS_LOCAL_WRITE;
		if (peer->iwarp)	/* an iWARP read lands as a remote write */
			access |= IBV_ACCESS_REMOTE_WRITE;
	}
	if (usage & RPMA_MR_USAGE_WRITE_SRC)
		access |= IBV_ACCESS_LOCAL_WRITE;
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	/* APM reads the flushed range's last bytes */
	if (usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		access |= IBV_ACCESS_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_RECV)
		access |= IBV_ACCESS_LOCAL_WRITE;
	return access;
}

static int
verbs_mr_reg(struct rpma_peer *base, struct rpma_mr_local *mr)
{
	struct verbs_peer *peer = (struct verbs_peer *)base;
	int access = usage_to_access(peer, mr->usage);
	struct ibv_mr *imr;

	errno = 0;
	imr = ibv_reg_mr(peer->pd, mr->ptr, mr->size, access);
	if (imr == NULL && errno == EOPNOTSUPP && peer->odp)
		imr = ibv_reg_mr(peer->pd, mr->ptr, mr->size,
			access | IBV_ACCESS_ON_DEMAND);
	if (imr == NULL)
		return rpma_verbs_err(errno, errno == EOPNOTSUPP ?
			"ibv_reg_mr (a file mapping? register device-dax or anonymous memory)" :
			"ibv_reg_mr");
	mr->key = imr->rkey;
	mr->raddr = (uint64_t)(uintptr_t)imr->addr;
	mr->prov_handle = imr;
	mr->prov_desc = NULL;
	return 0;
}

static int
verbs_mr_dereg(struct rpma_mr_local *mr)
{
	int ret = ibv_dereg_mr(mr->prov_handle);

	return ret ? rpma_verbs_err(ret, "ibv_dereg_mr") : 0;
}

static int
verbs_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len,
		int advice, uint32_t flags)
{
	struct verbs_peer *peer = (struct verbs_peer *)mr->peer;
	struct ibv_mr *imr = mr->prov_handle;
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)(mr->ptr + offset),
		.length = (uint32_t)len,
		.lkey = imr->lkey,
	};
	int ret = ibv_advise_mr(peer->pd, (enum ib_uverbs_advise_mr_advice)advice,
			flags, &sge, 1);

	switch (ret) {
	case 0:
		return 0;
	case EOPNOTSUPP:
		return rpma_fail(RPMA_E_NOSUPP, "the device takes no memory advice");
	case EFAULT:
	case EINVAL:
		return rpma_fail(RPMA_E_INVAL, "ibv_advise_mr: %s", strerror(ret));
	default:
		return rpma_verbs_err(ret, "ibv_advise_mr");
	}
}
