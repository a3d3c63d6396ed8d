/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_cq.c -- verbs completion queues, polled by the application, and the
 * slots that map a work request back to its op_context and region.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errormsg.h"
#include "log.h"
#include "mr.h"
#include "verbs.h"

int
rpma_verbs_ring_init(struct verbs_ring *ring, uint32_t nslots, bool in_order)
{
	ring->slots = calloc(nslots ? nslots : 1, sizeof(*ring->slots));
	if (ring->slots == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate %u work-request slots", nslots);
	ring->nslots = nslots ? nslots : 1;
	ring->posted = ring->retired = ring->submitted_upto = 0;
	ring->in_order = in_order;
	pthread_mutex_init(&ring->lock, NULL);
	return 0;
}

void
rpma_verbs_ring_fini(struct verbs_ring *ring)
{
	if (ring->slots == NULL)
		return;
	/* what never completed no longer uses its region */
	for (uint64_t s = ring->retired; s < ring->posted; s++) {
		struct verbs_slot *slot = &ring->slots[s % ring->nslots];
		if (slot->mr && !slot->done)
			rpma_mr_release(slot->mr);
	}
	pthread_mutex_destroy(&ring->lock);
	free(ring->slots);
	ring->slots = NULL;
}

struct verbs_slot *
rpma_verbs_slot_get(struct verbs_ring *ring, const void *op_context,
		const struct rpma_mr_local *mr)
{
	struct verbs_slot *slot;

	pthread_mutex_lock(&ring->lock);
	if (ring->posted - ring->retired >= ring->nslots) {
		pthread_mutex_unlock(&ring->lock);
		return NULL;
	}
	slot = &ring->slots[ring->posted % ring->nslots];
	slot->op_context = op_context;
	slot->mr = mr;
	slot->ring = ring;
	slot->seq = ring->posted++;
	slot->done = false;
	slot->submitted = false;
	pthread_mutex_unlock(&ring->lock);
	rpma_mr_hold(mr);
	return slot;
}

/* the post failed: the request never reached the queue */
void
rpma_verbs_slot_unget(struct verbs_slot *slot)
{
	struct verbs_ring *ring = slot->ring;

	rpma_mr_release(slot->mr);
	pthread_mutex_lock(&ring->lock);
	slot->mr = NULL;
	slot->done = true;
	if (slot->seq + 1 == ring->posted)
		ring->posted--;
	while (ring->retired < ring->posted &&
	       ring->slots[ring->retired % ring->nslots].done)
		ring->retired++;
	if (ring->submitted_upto > ring->posted)
		ring->submitted_upto = ring->posted;
	pthread_mutex_unlock(&ring->lock);
}

/* move submitted_upto over the prefix that reached the QP (under lock) */
static void
advance_submitted(struct verbs_ring *ring)
{
	if (ring->submitted_upto < ring->retired)
		ring->submitted_upto = ring->retired;
	while (ring->submitted_upto < ring->posted) {
		struct verbs_slot *x = &ring->slots[ring->submitted_upto % ring->nslots];

		if (!x->submitted && !x->done)
			break;
		ring->submitted_upto++;
	}
}

void
rpma_verbs_slot_submitted(struct verbs_slot *slot)
{
	struct verbs_ring *ring = slot->ring;

	pthread_mutex_lock(&ring->lock);
	slot->submitted = true;
	advance_submitted(ring);
	pthread_mutex_unlock(&ring->lock);
}

uint64_t
rpma_verbs_ring_mark(struct verbs_ring *ring)
{
	uint64_t mark;

	pthread_mutex_lock(&ring->lock);
	advance_submitted(ring);
	mark = ring->submitted_upto;
	pthread_mutex_unlock(&ring->lock);
	return mark;
}

void
rpma_verbs_ring_retire_before(struct verbs_ring *ring, uint64_t mark)
{
	pthread_mutex_lock(&ring->lock);
	for (uint64_t s = ring->retired; s < mark && s < ring->posted; s++) {
		struct verbs_slot *x = &ring->slots[s % ring->nslots];

		if (!x->done) {
			rpma_mr_release(x->mr);
			x->done = true;
		}
	}
	while (ring->retired < ring->posted &&
	       ring->slots[ring->retired % ring->nslots].done)
		ring->retired++;
	pthread_mutex_unlock(&ring->lock);
}

/*
 * A completion for slot: on a send queue every earlier request has
 * completed too (RC order); on a receive queue only this one.  (The
 * ring says which: an error completion's opcode is undefined.)
 */
static void
slot_retire(struct verbs_slot *slot)
{
	struct verbs_ring *ring = slot->ring;
	bool in_order = ring->in_order;

	pthread_mutex_lock(&ring->lock);
	if (in_order) {
		for (uint64_t s = ring->retired; s <= slot->seq; s++) {
			struct verbs_slot *x = &ring->slots[s % ring->nslots];
			if (!x->done) {
				rpma_mr_release(x->mr);
				x->done = true;
			}
		}
	} else if (!slot->done) {
		rpma_mr_release(slot->mr);
		slot->done = true;
	}
	while (ring->retired < ring->posted &&
	       ring->slots[ring->retired % ring->nslots].done)
		ring->retired++;
	pthread_mutex_unlock(&ring->lock);
}

static int
verbs_cq_get_fd(const struct rpma_cq *base, int *fd)
{
	*fd = ((const struct verbs_cq *)base)->channel->fd;
	return 0;
}

static int
verbs_cq_wait(struct rpma_cq *base)
{
	struct verbs_cq *cq = (struct verbs_cq *)base;
	struct ibv_cq *ev_cq;
	void *ev_ctx;

	if (ibv_get_cq_event(cq->channel, &ev_cq, &ev_ctx))
		return rpma_fail(RPMA_E_NO_COMPLETION, "no completion event: %s",
			strerror(errno));
	ibv_ack_cq_events(ev_cq, 1);
	if (ibv_req_notify_cq(ev_cq, 0))
		return rpma_verbs_err(errno, "ibv_req_notify_cq");
	return 0;
}

void
rpma_verbs_wc_translate(struct ibv_wc *wc)
{
	struct verbs_slot *slot = (struct verbs_slot *)(uintptr_t)wc->wr_id;

	if (slot == NULL)
		return;
	wc->wr_id = (uint64_t)(uintptr_t)slot->op_context;
	slot_retire(slot);
}

static int
verbs_cq_get_wc(struct rpma_cq *base, int num_entries, struct ibv_wc *wc,
		int *num_entries_got)
{
	struct verbs_cq *cq = (struct verbs_cq *)base;
	int n = ibv_poll_cq(cq->cq, num_entries, wc);

	if (n < 0)
		return rpma_verbs_err(-n, "ibv_poll_cq");
	if (n == 0)
		return RPMA_E_NO_COMPLETION;
	for (int i = 0; i < n; i++)
		rpma_verbs_wc_translate(&wc[i]);
	if (num_entries_got)
		*num_entries_got = n;
	return 0;
}

static const struct rpma_cq_ops verbs_cq_ops = {
	.get_fd = verbs_cq_get_fd,
	.wait = verbs_cq_wait,
	.get_wc = verbs_cq_get_wc,
};

int
rpma_verbs_cq_new(struct verbs_peer *peer, uint32_t size,
		struct ibv_comp_channel *shared, struct verbs_cq **cq_ptr)
{
	struct verbs_cq *cq = calloc(1, sizeof(*cq));
	int ret;

	if (cq == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a completion queue");
	cq->base.ops = &verbs_cq_ops;
	cq->base.efd = -1;
	pthread_mutex_init(&cq->base.lock, NULL);
	cq->channel = shared;
	if (cq->channel == NULL) {
		cq->channel = ibv_create_comp_channel(peer->ctx);
		if (cq->channel == NULL) {
			ret = rpma_verbs_err(errno, "ibv_create_comp_channel");
			goto err_free;
		}
		cq->channel_owned = true;
	}
	cq->cq = ibv_create_cq(peer->ctx, size > INT32_MAX ? INT32_MAX : (int)size,
			cq, cq->channel, 0);
	if (cq->cq == NULL) {
		ret = rpma_verbs_err(errno, "ibv_create_cq");
		goto err_channel;
	}
	if (ibv_req_notify_cq(cq->cq, 0)) {
		ret = rpma_verbs_err(errno, "ibv_req_notify_cq");
		goto err_cq;
	}
	*cq_ptr = cq;
	return 0;

err_cq:
	ibv_destroy_cq(cq->cq);
err_channel:
	if (cq->channel_owned)
		ibv_destroy_comp_channel(cq->channel);
err_free:
	pthread_mutex_destroy(&cq->base.lock);
	free(cq);
	return ret;
}

void
rpma_verbs_cq_delete(struct verbs_cq *cq)
{
	if (cq == NULL)
		return;
	ibv_destroy_cq(cq->cq);
	if (cq->channel_owned)
		ibv_destroy_comp_channel(cq->channel);
	pthread_mutex_destroy(&cq->base.lock);
	free(cq);
}
