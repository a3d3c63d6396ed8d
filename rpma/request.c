/* SPDX-License-Identifier: BSD-3-Clause */
/* request.c -- serving the core's requests (request.h has the format) */
#include "config.h"

#include <endian.h>
#include <stdatomic.h>
#include <string.h>

#include "log.h"
#include "mr.h"
#include "mr_remote.h"
#include "peer.h"
#include "provider.h"
#include "request.h"

void
rpma_req_fill(struct rpma_req *r, enum rpma_req_op op, const struct rpma_op *o)
{
	memset(r, 0, sizeof(*r));
	r->op = (uint8_t)op;
	r->len = htole32((uint32_t)o->len);
	r->key = htole64(o->remote->desc.key);
	r->addr = htole64(o->remote->desc.raddr + o->remote_offset);
	if (o->atomic_src)
		memcpy(&r->value, o->atomic_src, 8);	/* raw bytes */
}

unsigned
rpma_req_serve(struct rpma_peer *peer, const struct rpma_req *r)
{
	uint64_t addr = le64toh(r->addr);
	uint64_t len = le32toh(r->len);
	struct rpma_mr_local *mr = rpma_peer_mr_get(peer, le64toh(r->key));
	unsigned status = RPMA_REQ_OK;
	uint64_t off;
	char *ptr;

	if (mr == NULL) {
		status = RPMA_REQ_NO_REGION;
		goto log;
	}
	off = addr - mr->raddr;
	if (addr < mr->raddr || off > mr->size || len > mr->size - off) {
		status = RPMA_REQ_RANGE;
		goto out;
	}
	ptr = mr->ptr + off;

	switch (r->op) {
	case RPMA_REQ_FLUSH_PERSISTENT:
		if (!(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
			status = RPMA_REQ_USAGE;
		else if (rpma_mr_persist(mr, ptr, (size_t)len) != 0)
			status = RPMA_REQ_PERSIST;
		break;
	case RPMA_REQ_FLUSH_VISIBILITY:
		/* the writes were placed before this request arrived */
		if (!(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY))
			status = RPMA_REQ_USAGE;
		atomic_thread_fence(memory_order_seq_cst);
		break;
	case RPMA_REQ_ATOMIC_WRITE: {
		uint64_t v;

		if (!(mr->usage & RPMA_MR_USAGE_WRITE_DST)) {
			status = RPMA_REQ_USAGE;
			break;
		}
		if (len != 8 || ((uintptr_t)ptr & 7)) {
			status = RPMA_REQ_BAD;
			break;
		}
		memcpy(&v, &r->value, 8);
		__atomic_store_n((uint64_t *)(void *)ptr, v, __ATOMIC_RELEASE);
		break;
	}
	default:
		status = RPMA_REQ_BAD;
	}
out:
	rpma_peer_mr_put(mr);
log:
	if (status != RPMA_REQ_OK)
		RPMA_LOG_WARNING("refused request op %u on key 0x%llx: status %u",
			r->op, (unsigned long long)le64toh(r->key), status);
	return status;
}

enum ibv_wc_status
rpma_req_wc_status(unsigned status)
{
	switch (status) {
	case RPMA_REQ_OK:	return IBV_WC_SUCCESS;
	case RPMA_REQ_PERSIST:	return IBV_WC_REM_OP_ERR;
	case RPMA_REQ_BAD:	return IBV_WC_REM_INV_REQ_ERR;
	default:		return IBV_WC_REM_ACCESS_ERR;
	}
}
