/* SPDX-License-Identifier: BSD-3-Clause */
/* request.c -- serving the core's requests (request.h has the format) */
#include "config.h"

#include <endian.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "errormsg.h"
#include "log.h"
#include "mr.h"
#include "mr_remote.h"
#include "peer.h"
#include "provider.h"
#include "request.h"

void
rpma_req_fill(struct rpma_req *r, enum rpma_req_op op, const struct rpma_op *o,
		uint64_t epoch)
{
	memset(r, 0, sizeof(*r));
	r->op = (uint8_t)op;
	r->len = htole32((uint32_t)o->len);
	r->key = htole64(o->remote->desc.key);
	r->addr = htole64(o->remote->desc.raddr + o->remote_offset);
	if (o->atomic_src)
		memcpy(&r->value, o->atomic_src, 8);	/* raw bytes */
	else
		r->value = htole64(epoch);
}

/* a flush of an epoch the peer fenced off is refused (under fence_lock) */
static unsigned
serve_flush(struct rpma_peer *peer, struct rpma_mr_local *mr,
		const struct rpma_req *r, char *ptr, uint64_t len)
{
	unsigned status = RPMA_REQ_OK;

	pthread_rwlock_rdlock(&peer->fence_lock);
	if (le64toh(r->value) < peer->epoch_floor)
		status = RPMA_REQ_FENCED;
	else if (r->op == RPMA_REQ_FLUSH_PERSISTENT) {
		if (!(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
			status = RPMA_REQ_USAGE;
		else if (rpma_mr_persist(mr, ptr, (size_t)len) != 0)
			status = RPMA_REQ_PERSIST;
	} else {
		/* the writes were placed before this request arrived */
		if (!(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY))
			status = RPMA_REQ_USAGE;
		atomic_thread_fence(memory_order_seq_cst);
	}
	pthread_rwlock_unlock(&peer->fence_lock);
	return status;
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
	case RPMA_REQ_FLUSH_VISIBILITY:
		status = serve_flush(peer, mr, r, ptr, len);
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

/*
 * A run of PERSISTENT flushes under one fence_lock read side: each range
 * checked and written back (adjacent ones in one write), then one sync per
 * region; the run's flushes are OK only if their region's sync was.
 */
struct flush_run {
	struct rpma_mr_local *mr[RPMA_REQ_GROUP];	/* each flush's, or NULL */
	int n;
	/* the range not yet written back: ptr, len of region pend_mr */
	struct rpma_mr_local *pend_mr;
	char *pend_ptr;
	uint64_t pend_len;
	int pend_first;		/* its first request */
};

static void
run_write_back(struct flush_run *fr, unsigned *status)
{
	if (fr->pend_mr && rpma_mr_write_back(fr->pend_mr, fr->pend_ptr,
			(size_t)fr->pend_len) != 0)
		for (int i = fr->pend_first; i < fr->n; i++)
			if (fr->mr[i] == fr->pend_mr && status[i] == RPMA_REQ_OK)
				status[i] = RPMA_REQ_PERSIST;
	fr->pend_mr = NULL;
}

/* request i of the run: checked, then it joins the pending range or starts one */
static void
run_add(struct rpma_peer *peer, struct flush_run *fr, const struct rpma_req *r,
		unsigned *status, int i)
{
	uint64_t addr = le64toh(r->addr), len = le32toh(r->len), off;
	struct rpma_mr_local *mr = rpma_peer_mr_get(peer, le64toh(r->key));
	char *ptr;

	fr->mr[i] = NULL;
	fr->n = i + 1;
	if (mr == NULL) {
		status[i] = RPMA_REQ_NO_REGION;
		return;
	}
	off = addr - mr->raddr;
	if (addr < mr->raddr || off > mr->size || len > mr->size - off) {
		status[i] = RPMA_REQ_RANGE;
	} else if (le64toh(r->value) < peer->epoch_floor) {
		status[i] = RPMA_REQ_FENCED;
	} else if (!(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
		status[i] = RPMA_REQ_USAGE;
	} else {
		status[i] = RPMA_REQ_OK;
		fr->mr[i] = mr;
		ptr = mr->ptr + off;
		if (fr->pend_mr == mr && ptr >= fr->pend_ptr &&
		    ptr <= fr->pend_ptr + fr->pend_len) {
			/* overlaps or extends the pending range */
			uint64_t end = (uint64_t)(ptr - fr->pend_ptr) + len;

			if (end > fr->pend_len)
				fr->pend_len = end;
		} else {
			run_write_back(fr, status);
			fr->pend_mr = mr;
			fr->pend_ptr = ptr;
			fr->pend_len = len;
			fr->pend_first = i;
		}
		return;		/* its reference goes with the run */
	}
	rpma_peer_mr_put(mr);
}

/* the run's one barrier per region, then its references go */
static void
run_finish(struct flush_run *fr, unsigned *status, int from)
{
	run_write_back(fr, status);
	for (int i = from; i < fr->n; i++) {
		struct rpma_mr_local *mr = fr->mr[i];
		bool first = true;

		if (mr == NULL)
			continue;
		for (int j = from; j < i && first; j++)
			first = fr->mr[j] != mr;
		if (first && rpma_mr_sync(mr) != 0)
			for (int j = i; j < fr->n; j++)
				if (fr->mr[j] == mr && status[j] == RPMA_REQ_OK)
					status[j] = RPMA_REQ_PERSIST;
	}
	for (int i = from; i < fr->n; i++)
		if (fr->mr[i])
			rpma_peer_mr_put(fr->mr[i]);
}

void
rpma_req_serve_group(struct rpma_peer *peer, const struct rpma_req *r,
		unsigned *status, int n)
{
	struct flush_run fr = { .n = 0 };

	if (n > RPMA_REQ_GROUP)
		n = RPMA_REQ_GROUP;
	for (int i = 0; i < n;) {
		int from = i;

		if (r[i].op != RPMA_REQ_FLUSH_PERSISTENT) {
			status[i] = rpma_req_serve(peer, &r[i]);
			i++;
			continue;
		}
		/* a fence waits for the whole run: none of it is acknowledged
		 * under an epoch fenced off before its barrier */
		pthread_rwlock_rdlock(&peer->fence_lock);
		fr.pend_mr = NULL;
		for (; i < n && r[i].op == RPMA_REQ_FLUSH_PERSISTENT; i++)
			run_add(peer, &fr, &r[i], status, i);
		run_finish(&fr, status, from);
		pthread_rwlock_unlock(&peer->fence_lock);
		for (int j = from; j < i; j++)
			if (status[j] != RPMA_REQ_OK)
				RPMA_LOG_WARNING("refused request op %u on key 0x%llx: status %u",
					r[j].op, (unsigned long long)le64toh(r[j].key),
					status[j]);
	}
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

int
rpma_req_table_init(struct rpma_req_table *t, uint32_t n)
{
	t->slots = calloc(n ? n : 1, sizeof(*t->slots));
	if (t->slots == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate %u request slots", n);
	t->n = n;
	t->next = 0;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void
rpma_req_table_fini(struct rpma_req_table *t)
{
	if (t->slots == NULL)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t->slots);
	t->slots = NULL;
}

int
rpma_req_table_take(struct rpma_req_table *t, uint32_t limit,
		const struct rpma_op *op, enum rpma_req_op rop, uint32_t *slot)
{
	uint32_t taken = UINT32_MAX;

	if (limit > t->n)
		limit = t->n;
	pthread_mutex_lock(&t->lock);
	for (uint32_t i = 0; i < limit; i++) {
		uint32_t s = (t->next + i) % limit;
		if (!t->slots[s].in_use) {
			taken = s;
			t->next = s + 1;
			t->slots[s].in_use = true;
			t->slots[s].op_context = op->op_context;
			t->slots[s].carrier = NULL;
			t->slots[s].signaled =
				(op->flags & RPMA_F_COMPLETION_ALWAYS) ==
				RPMA_F_COMPLETION_ALWAYS || (op->flags & 2);
			t->slots[s].opcode = rop == RPMA_REQ_ATOMIC_WRITE ?
				IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (taken == UINT32_MAX)
		return rpma_fail(RPMA_E_PROVIDER,
			"all %u request slots are in flight: complete operations first",
			limit);
	*slot = taken;
	return 0;
}

void
rpma_req_table_set_carrier(struct rpma_req_table *t, uint32_t slot, void *carrier)
{
	pthread_mutex_lock(&t->lock);
	t->slots[slot].carrier = carrier;
	pthread_mutex_unlock(&t->lock);
}

void *
rpma_req_table_carrier(struct rpma_req_table *t, uint32_t slot)
{
	void *c = NULL;

	if (slot >= t->n)
		return NULL;
	pthread_mutex_lock(&t->lock);
	if (t->slots[slot].in_use) {
		c = t->slots[slot].carrier;
		t->slots[slot].carrier = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	return c;
}

void
rpma_req_table_untake(struct rpma_req_table *t, uint32_t slot)
{
	pthread_mutex_lock(&t->lock);
	t->slots[slot].in_use = false;
	pthread_mutex_unlock(&t->lock);
}

bool
rpma_req_table_complete(struct rpma_req_table *t, uint32_t slot,
		enum ibv_wc_status st, uint32_t vendor_err, uint32_t qp_num,
		struct ibv_wc *wc)
{
	struct rpma_req_pending p;

	if (slot >= t->n)
		return false;
	pthread_mutex_lock(&t->lock);
	p = t->slots[slot];
	t->slots[slot].in_use = false;
	pthread_mutex_unlock(&t->lock);
	if (!p.in_use || (st == IBV_WC_SUCCESS && !p.signaled))
		return false;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = (uint64_t)(uintptr_t)p.op_context;
	wc->status = st;
	wc->opcode = p.opcode;
	wc->vendor_err = vendor_err;
	wc->qp_num = qp_num;
	return true;
}
