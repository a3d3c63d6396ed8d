/* SPDX-License-Identifier: BSD-3-Clause */
/* cq.c -- rpma_cq: the completion ring and its wake-up fd */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cq.h"
#include "errormsg.h"
#include "log.h"

static int
cq_new(uint32_t min_entries, struct rpma_cq *with, struct rpma_cq **cq_ptr)
{
	struct rpma_cq *cq;
	uint32_t cap = 64;

	while (cap < min_entries && cap < (1u << 30))
		cap <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a completion queue");
	cq->ring = calloc(cap, sizeof(*cq->ring));
	if (cq->ring == NULL) {
		free(cq);
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate %u completions", cap);
	}
	cq->efd_owned = with == NULL;
	cq->efd = with ? with->efd : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cq->efd < 0) {
		free(cq->ring);
		free(cq);
		return rpma_fail(RPMA_E_PROVIDER, "eventfd: %s", strerror(errno));
	}
	cq->mask = cap - 1;
	pthread_mutex_init(&cq->lock, NULL);
	*cq_ptr = cq;
	return 0;
}

int
rpma_cq_new(uint32_t min_entries, struct rpma_cq **cq_ptr)
{
	return cq_new(min_entries, NULL, cq_ptr);
}

int
rpma_cq_new_shared(uint32_t min_entries, struct rpma_cq *with,
		struct rpma_cq **cq_ptr)
{
	return cq_new(min_entries, with, cq_ptr);
}

void
rpma_cq_delete(struct rpma_cq *cq)
{
	if (cq == NULL)
		return;
	pthread_mutex_destroy(&cq->lock);
	if (cq->efd_owned)
		close(cq->efd);
	free(cq->ring);
	free(cq);
}

void
rpma_cq_push(struct rpma_cq *cq, const struct ibv_wc *wc, int n)
{
	bool wake;

	pthread_mutex_lock(&cq->lock);
	for (int i = 0; i < n; i++) {
		uint64_t t = atomic_load_explicit(&cq->tail, memory_order_relaxed);

		if (t - atomic_load_explicit(&cq->head, memory_order_relaxed) >
				cq->mask) {
			/* like a hardware CQ overrun: the queue is broken */
			cq->overrun = true;
			break;
		}
		cq->ring[t & cq->mask] = wc[i];
		atomic_store_explicit(&cq->tail, t + 1, memory_order_relaxed);
	}
	wake = cq->waiter || cq->armed;
	cq->waiter = false;
	cq->armed = false;
	pthread_mutex_unlock(&cq->lock);

	if (wake) {
		uint64_t one = 1;
		if (write(cq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			RPMA_LOG_ERROR("cannot signal a completion queue: %s",
				strerror(errno));
	}
}

int
rpma_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	if (cq == NULL || fd == NULL)
		return RPMA_E_INVAL;
	if (cq->ops)
		return cq->ops->get_fd(cq, fd);
	if (cq->no_fd)
		return rpma_fail(RPMA_E_NOSUPP, "the connection is polled "
			"(rpma_ext_conn_cfg_set_polled): its CQ has no fd to wait on");
	pthread_mutex_lock(&((struct rpma_cq *)cq)->lock);
	((struct rpma_cq *)cq)->fd_exported = true;
	((struct rpma_cq *)cq)->armed = true;
	pthread_mutex_unlock(&((struct rpma_cq *)cq)->lock);
	*fd = cq->efd;
	return 0;
}

/* after a wait's read of efd: the next completion signals it again */
static void
rearm(struct rpma_cq *const *cqs, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&cqs[i]->lock);
		cqs[i]->armed = cqs[i]->fd_exported;
		pthread_mutex_unlock(&cqs[i]->lock);
	}
}

int
rpma_cq_block(struct rpma_cq *const *cqs, int n)
{
	struct pollfd pfd[2] = {
		{ .fd = cqs[0]->efd, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
	};
	uint64_t v;

	/* progress made here may already be what the caller waits for */
	if (cqs[0]->drive)
		cqs[0]->drive(cqs[0]->drive_arg);

	/* announce the wait on every ring before the last look at them */
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&cqs[i]->lock);
		if (atomic_load_explicit(&cqs[i]->tail, memory_order_relaxed) !=
		    atomic_load_explicit(&cqs[i]->head, memory_order_relaxed) ||
		    cqs[i]->overrun) {
			pthread_mutex_unlock(&cqs[i]->lock);
			/* consume a pending wake-up so the fd reflects the rings */
			(void)!read(pfd[0].fd, &v, sizeof(v));
			rearm(cqs, n);
			return 0;
		}
		cqs[i]->waiter = true;
		pthread_mutex_unlock(&cqs[i]->lock);
	}
	/* wake on the provider's own fd too: no hand-off to a thread */
	if (cqs[0]->drive_fd) {
		pfd[1].fd = cqs[0]->drive_fd(cqs[0]->drive_arg);
		if (pfd[1].fd < 0) {
			rearm(cqs, n);
			return 0;	/* progress pending: let the caller poll */
		}
	}
	while (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, -1) < 0) {
		if (errno != EINTR)
			return rpma_fail(RPMA_E_NO_COMPLETION, "poll: %s", strerror(errno));
	}
	if (pfd[0].revents)
		(void)!read(pfd[0].fd, &v, sizeof(v));
	rearm(cqs, n);
	return 0;
}

/*
 * rpma_ext_cq_poll -- poll(2) over the caller's fds and n CQs at once: a
 * thread that also waits for its own messages sleeps on the provider's fd
 * itself where the provider has one, so a completion wakes it directly
 * and not through the progress thread.  It never blocks on an event
 * another thread took: every CQ's event is taken without blocking.
 */
#define CQ_POLL_MAX 32

/* whether cq has completions; if not, the next push signals efd */
static bool
cq_ready(struct rpma_cq *cq)
{
	bool ready;

	pthread_mutex_lock(&cq->lock);
	ready = atomic_load_explicit(&cq->tail, memory_order_relaxed) !=
		atomic_load_explicit(&cq->head, memory_order_relaxed) || cq->overrun;
	if (!ready)
		cq->waiter = true;
	pthread_mutex_unlock(&cq->lock);
	return ready;
}

int
rpma_ext_cq_poll(struct rpma_cq *const *cqs, int n, struct pollfd *fds,
		int nfds, int timeout_ms)
{
	struct pollfd pfd[2 * CQ_POLL_MAX + CQ_POLL_MAX];
	bool had[CQ_POLL_MAX] = { false };	/* ready before the poll */
	int np = 0, ret, ready = 0;
	uint64_t v;

	if (n < 0 || n > CQ_POLL_MAX || nfds < 0 || nfds > CQ_POLL_MAX ||
	    (n && cqs == NULL) || (nfds && fds == NULL) || n + nfds == 0 ||
	    timeout_ms < -1)
		return RPMA_E_INVAL;
	for (int i = 0; i < n; i++) {
		if (cqs[i] == NULL)
			return RPMA_E_INVAL;
		if (cqs[i]->shared_channel)
			return RPMA_E_SHARED_CHANNEL;
	}
	for (int i = 0; i < nfds; i++) {
		fds[i].revents = 0;
		pfd[np++] = fds[i];
	}
	for (int i = 0; i < n; i++) {
		struct rpma_cq *cq = cqs[i];
		int fd = -1;

		if (cq->ops) {
			if (cq->ops->get_fd(cq, &fd))
				return RPMA_E_PROVIDER;
			pfd[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
			continue;
		}
		/* the provider's own wait check makes progress too (ofi's
		 * fi_trywait): driving before it would cost a second look */
		if (cq->drive && !cq->drive_fd)
			cq->drive(cq->drive_arg);
		had[i] = cq_ready(cq);
		pfd[np++] = (struct pollfd){ .fd = cq->efd, .events = POLLIN };
		if (cq->drive_fd) {
			if ((fd = cq->drive_fd(cq->drive_arg)) < 0)
				had[i] = true;	/* progress pending */
			pfd[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
		if (had[i])
			timeout_ms = 0;		/* there already: do not sleep */
	}
	while ((ret = poll(pfd, (nfds_t)np, timeout_ms)) < 0) {
		if (errno != EINTR)
			return rpma_fail(RPMA_E_PROVIDER, "poll: %s", strerror(errno));
	}
	for (int i = 0; i < nfds; i++)
		if ((fds[i].revents = pfd[i].revents))
			ready++;
	/* take the CQs' events (none blocks: efd is non-blocking), re-arm */
	for (int i = 0, k = nfds; i < n; i++) {
		struct rpma_cq *cq = cqs[i];
		bool hit = had[i];

		if (cq->ops) {
			if (pfd[k++].revents) {
				if (cq->ops->wait(cq))
					return RPMA_E_PROVIDER;
				ready++;
			}
			continue;
		}
		/* a signal not taken now wakes the next poll at once: harmless */
		if (pfd[k++].revents) {
			hit = true;
			(void)!read(cq->efd, &v, sizeof(v));
		}
		if (cq->drive_fd)
			hit |= pfd[k++].revents != 0;
		pthread_mutex_lock(&cq->lock);
		cq->waiter = false;
		cq->armed = cq->fd_exported;
		pthread_mutex_unlock(&cq->lock);
		ready += hit;
	}
	return ready;
}

int
rpma_cq_wait(struct rpma_cq *cq)
{
	if (cq == NULL)
		return RPMA_E_INVAL;
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;
	if (cq->ops)
		return cq->ops->wait(cq);
	return rpma_cq_block(&cq, 1);
}

int
rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc,
		int *num_entries_got)
{
	int n = 0;

	if (cq == NULL || wc == NULL || num_entries < 1 ||
	    (num_entries_got == NULL && num_entries != 1))
		return RPMA_E_INVAL;
	if (cq->ops)
		return cq->ops->get_wc(cq, num_entries, wc, num_entries_got);

	if (cq->drive &&
	    atomic_load_explicit(&cq->head, memory_order_relaxed) ==
	    atomic_load_explicit(&cq->tail, memory_order_relaxed))
		cq->drive(cq->drive_arg);

	pthread_mutex_lock(&cq->lock);
	{
		uint64_t h = atomic_load_explicit(&cq->head, memory_order_relaxed);
		uint64_t t = atomic_load_explicit(&cq->tail, memory_order_relaxed);

		while (n < num_entries && h != t)
			wc[n++] = cq->ring[h++ & cq->mask];
		atomic_store_explicit(&cq->head, h, memory_order_relaxed);
	}
	if (n == 0 && cq->overrun) {
		pthread_mutex_unlock(&cq->lock);
		return rpma_fail(RPMA_E_PROVIDER,
			"completion queue overrun: completions were lost");
	}
	pthread_mutex_unlock(&cq->lock);
	if (n == 0)
		return RPMA_E_NO_COMPLETION;
	if (num_entries_got)
		*num_entries_got = n;
	return 0;
}
