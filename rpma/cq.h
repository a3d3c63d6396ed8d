/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.h -- a completion queue the core fills: a ring of struct ibv_wc that a
 * provider's progress thread pushes into and the application drains with
 * rpma_cq_get_wc().  Its fd (an eventfd) is readable when completions wait.
 */
#ifndef RPMA_CQ_H
#define RPMA_CQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpma.h"

/* a provider whose completions the application polls directly (verbs) */
struct rpma_cq_ops {
	int (*get_fd)(const struct rpma_cq *cq, int *fd);
	int (*wait)(struct rpma_cq *cq);
	int (*get_wc)(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc,
			int *num_entries_got);
};

struct rpma_cq {
	const struct rpma_cq_ops *ops;	/* NULL: the ring below */
	pthread_mutex_t lock;
	struct ibv_wc *ring;
	uint32_t mask;		/* capacity - 1; capacity a power of two */
	/*
	 * Changed under lock; get_wc's look for an empty ring before it
	 * drives progress reads them without it (relaxed: a stale answer
	 * only drives once more or once less).
	 */
	_Atomic uint64_t head;	/* next to pop */
	_Atomic uint64_t tail;	/* next to push */
	int efd;
	bool efd_owned;		/* false: efd belongs to the cq it shares with */
	bool waiter;		/* someone blocks on efd: signal pushes */
	bool fd_exported;	/* the application polls efd itself */
	/*
	 * fd_exported: the next push signals efd, once, as a completion
	 * channel's notification; rpma_cq_wait re-arms it.  So completions
	 * taken while nobody sleeps on the fd cost no write.
	 */
	bool armed;
	bool overrun;
	bool shared_channel;	/* the conn's cq and rcq share one fd */
	bool no_fd;		/* polled: rpma_cq_get_fd is NOSUPP */
	/*
	 * Optional: make progress in the caller's thread when the ring is
	 * empty, so a polling application does not wait for a hand-off.
	 */
	void (*drive)(void *arg);
	void *drive_arg;
	/*
	 * Optional: an fd that becomes readable when the provider has
	 * progress to make, so a waiting application wakes on it directly;
	 * -1 when it must not block now (progress is already pending).
	 */
	int (*drive_fd)(void *arg);
};

int rpma_cq_new(uint32_t min_entries, struct rpma_cq **cq_ptr);
/* a second ring signalling the first one's fd (a shared channel) */
int rpma_cq_new_shared(uint32_t min_entries, struct rpma_cq *with,
		struct rpma_cq **cq_ptr);
/* block until one of the rings (sharing cqs[0]'s fd) has completions */
int rpma_cq_block(struct rpma_cq *const *cqs, int n);
static inline bool
rpma_cq_has_entries(struct rpma_cq *cq)
{
	bool has;

	pthread_mutex_lock(&cq->lock);
	has = cq->tail != cq->head || cq->overrun;
	pthread_mutex_unlock(&cq->lock);
	return has;
}
void rpma_cq_delete(struct rpma_cq *cq);
/* producer side: append n completions and wake a waiter if needed */
void rpma_cq_push(struct rpma_cq *cq, const struct ibv_wc *wc, int n);

#endif
