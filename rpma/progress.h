/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.h -- one thread per peer that makes progress on the peer's
 * connections where the application does not: it serves the flush
 * requests the peer receives, completes the answers to the ones it sent
 * and delivers completions.  A provider gives the work (sweep) and how to
 * sleep safely (prepare_sleep); the thread spins while there is work, for a
 * short while after where the machine has cores to spare, then sleeps in
 * epoll on the items' fds.
 */
#ifndef RPMA_PROGRESS_H
#define RPMA_PROGRESS_H

#include <stddef.h>

/* what the thread serves: embedded in a provider's connection */
struct rpma_progress_item {
	struct rpma_progress_item *next;
	int fd;			/* readable when the item has work */
};

struct rpma_progress_ops {
	/* make progress on one item; returns how much was done */
	int (*sweep)(struct rpma_progress_item *item);
	/* before sleeping, under the thread's lock: arm the items' fds and
	 * return 1 only if nothing can slip past them */
	int (*prepare_sleep)(void *owner, struct rpma_progress_item *items);
	/* optional, after waking, under the lock (e.g. consume fd events) */
	void (*after_wake)(struct rpma_progress_item *item);
};

struct rpma_progress;

/* serve item (starting the thread with the first one) */
int rpma_progress_add(struct rpma_progress **pp, const struct rpma_progress_ops *ops,
		void *owner, struct rpma_progress_item *item);
/* after this the thread never touches item again */
void rpma_progress_remove(struct rpma_progress *p, struct rpma_progress_item *item);
int rpma_progress_count(struct rpma_progress *p);
void rpma_progress_stop(struct rpma_progress **pp);
/* sweep item in the caller's thread, unless the thread is at it */
void rpma_progress_drive(struct rpma_progress *p, struct rpma_progress_item *item);

#define rpma_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#endif
