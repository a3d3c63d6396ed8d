/* SPDX-License-Identifier: BSD-3-Clause */
/* progress.c -- the per-peer progress thread (progress.h) */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "errormsg.h"
#include "progress.h"
#include "rpma.h"

/*
 * Keep polling this long after the last work where the machine has more
 * than two cores: on two, a spinning thread takes the CPU the peer needs.
 * RPMA_PROGRESS_SPIN_NS overrides it.
 */
#define SPIN_NS 20000
#define SLEEP_MS 100		/* bounded sleep: also re-checks stop */

struct rpma_progress {
	pthread_t thread;
	pthread_mutex_t lock;	/* items; held while working on them */
	struct rpma_progress_item *items;
	int nitems;
	int epfd;
	int wake_fd;
	atomic_bool stop;
	const struct rpma_progress_ops *ops;
	void *owner;
	uint64_t spin_ns;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void *
progress_main(void *arg)
{
	struct rpma_progress *p = arg;
	uint64_t idle_since = now_ns();

	(void)pthread_setname_np(pthread_self(), "rpma-progress");
	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		int work = 0, may_sleep;

		pthread_mutex_lock(&p->lock);
		for (struct rpma_progress_item *i = p->items; i; i = i->next)
			work += p->ops->sweep(i);
		pthread_mutex_unlock(&p->lock);
		if (work) {
			idle_since = now_ns();
			continue;
		}
		if (now_ns() - idle_since < p->spin_ns) {
			relax();
			continue;
		}
		pthread_mutex_lock(&p->lock);
		may_sleep = p->ops->prepare_sleep(p->owner, p->items);
		pthread_mutex_unlock(&p->lock);
		if (may_sleep) {
			struct epoll_event ev[8];
			int n = epoll_wait(p->epfd, ev, 8, SLEEP_MS);

			for (int k = 0; k < n; k++) {
				if (ev[k].data.fd == p->wake_fd) {
					uint64_t v;
					(void)!read(p->wake_fd, &v, sizeof(v));
				}
			}
			if (p->ops->after_wake) {
				pthread_mutex_lock(&p->lock);
				for (struct rpma_progress_item *i = p->items; i; i = i->next)
					p->ops->after_wake(i);
				pthread_mutex_unlock(&p->lock);
			}
		}
		idle_since = now_ns();
	}
	return NULL;
}

static void
wake(struct rpma_progress *p)
{
	uint64_t one = 1;

	(void)!write(p->wake_fd, &one, sizeof(one));
}

static int
progress_start(struct rpma_progress **pp, const struct rpma_progress_ops *ops,
		void *owner)
{
	struct rpma_progress *p = calloc(1, sizeof(*p));
	struct epoll_event ev = { .events = EPOLLIN };
	const char *env = getenv("RPMA_PROGRESS_SPIN_NS");
	int ret;

	if (p == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate the progress thread");
	p->ops = ops;
	p->owner = owner;
	p->spin_ns = env ? strtoull(env, NULL, 0) :
		sysconf(_SC_NPROCESSORS_ONLN) > 2 ? SPIN_NS : 0;
	pthread_mutex_init(&p->lock, NULL);
	atomic_init(&p->stop, false);
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.fd = p->wake_fd;
	if (p->epfd < 0 || p->wake_fd < 0 ||
	    epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->wake_fd, &ev) != 0) {
		ret = rpma_fail(RPMA_E_PROVIDER, "epoll/eventfd: %s", strerror(errno));
		goto err;
	}
	if ((ret = pthread_create(&p->thread, NULL, progress_main, p)) != 0) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot start the progress thread: %s",
			strerror(ret));
		goto err;
	}
	*pp = p;
	return 0;
err:
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return ret;
}

int
rpma_progress_add(struct rpma_progress **pp, const struct rpma_progress_ops *ops,
		void *owner, struct rpma_progress_item *item)
{
	/* connections of one peer may be set up from several threads at once */
	static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = item->fd };
	struct rpma_progress *p;
	int ret = 0;

	pthread_mutex_lock(&start_lock);
	if (*pp == NULL)
		ret = progress_start(pp, ops, owner);
	p = *pp;
	pthread_mutex_unlock(&start_lock);
	if (ret)
		return ret;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, item->fd, &ev) != 0)
		return rpma_fail(RPMA_E_PROVIDER, "epoll_ctl: %s", strerror(errno));
	pthread_mutex_lock(&p->lock);
	item->next = p->items;
	p->items = item;
	p->nitems++;
	pthread_mutex_unlock(&p->lock);
	wake(p);
	return 0;
}

void
rpma_progress_remove(struct rpma_progress *p, struct rpma_progress_item *item)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	for (struct rpma_progress_item **i = &p->items; *i; i = &(*i)->next) {
		if (*i == item) {
			*i = item->next;
			p->nitems--;
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, item->fd, NULL);
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

int
rpma_progress_count(struct rpma_progress *p)
{
	int n;

	if (p == NULL)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->nitems;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void
rpma_progress_drive(struct rpma_progress *p, struct rpma_progress_item *item)
{
	if (p == NULL || pthread_mutex_trylock(&p->lock) != 0)
		return;
	while (p->ops->sweep(item) > 0)
		;
	pthread_mutex_unlock(&p->lock);
}

void
rpma_progress_stop(struct rpma_progress **pp)
{
	struct rpma_progress *p = *pp;

	if (p == NULL)
		return;
	atomic_store(&p->stop, true);
	wake(p);
	pthread_join(p->thread, NULL);
	close(p->epfd);
	close(p->wake_fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
	*pp = NULL;
}
