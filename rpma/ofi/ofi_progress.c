/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_progress.c -- one thread per peer reads every connection's CQ: it
 * delivers the application's completions, serves the requests the peer
 * receives and completes the answers to the requests it sent.
 *
 * It spins while there is work and for a short while after (a completion
 * then costs no wake-up), then blocks in epoll on the CQs' wait fds, after
 * fi_trywait() says it is safe to.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "errormsg.h"
#include "log.h"
#include "ofi.h"

/*
 * Keep polling this long after the last work, where cores allow: on two
 * cores a spinning thread takes the CPU the peer's threads need.
 */
#define SPIN_NS 20000
#define BLOCK_MS 100		/* bounded sleep: also re-checks stop */

struct ofi_progress {
	pthread_t thread;
	pthread_mutex_t lock;	/* conns; held during a sweep */
	struct ofi_conn *conns;
	int nconns;
	int epfd;
	int wake_fd;
	atomic_bool stop;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* every CQ may be waited on: returns 1 if the thread may block */
static int
may_block(struct ofi_peer *peer, struct ofi_progress *p)
{
	struct fid *fids[64];
	int n = 0, ret;

	pthread_mutex_lock(&p->lock);
	for (struct ofi_conn *c = p->conns; c && n < 64; c = c->next)
		fids[n++] = &c->cq->fid;
	ret = n ? fi_trywait(peer->fabric, fids, n) : FI_SUCCESS;
	pthread_mutex_unlock(&p->lock);
	return ret == FI_SUCCESS;
}

static void *
progress_main(void *arg)
{
	struct ofi_peer *peer = arg;
	struct ofi_progress *p = peer->progress;
	uint64_t idle_since = now_ns();
	const char *env = getenv("RPMA_OFI_SPIN_NS");
	uint64_t spin_ns = env ? strtoull(env, NULL, 0) :
		sysconf(_SC_NPROCESSORS_ONLN) > 2 ? SPIN_NS : 0;

	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		int work = 0;

		pthread_mutex_lock(&p->lock);
		for (struct ofi_conn *c = p->conns; c; c = c->next)
			work += rpma_ofi_conn_progress(c);
		pthread_mutex_unlock(&p->lock);

		if (work) {
			idle_since = now_ns();
			continue;
		}
		if (now_ns() - idle_since < spin_ns) {
			__builtin_ia32_pause();
			continue;
		}
		/* requests whose peer is gone will never be answered */
		pthread_mutex_lock(&p->lock);
		for (struct ofi_conn *c = p->conns; c; c = c->next)
			rpma_ofi_conn_watch(c);
		pthread_mutex_unlock(&p->lock);
		if (may_block(peer, p)) {
			struct epoll_event ev[8];
			int n = epoll_wait(p->epfd, ev, 8, BLOCK_MS);
			for (int i = 0; i < n; i++) {
				if (ev[i].data.fd == p->wake_fd) {
					uint64_t v;
					(void)!read(p->wake_fd, &v, sizeof(v));
				}
			}
		}
		idle_since = now_ns();
	}
	return NULL;
}

static int
progress_start(struct ofi_peer *peer)
{
	struct ofi_progress *p = calloc(1, sizeof(*p));
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	if (p == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate the progress thread");
	pthread_mutex_init(&p->lock, NULL);
	atomic_init(&p->stop, false);
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->epfd < 0 || p->wake_fd < 0) {
		ret = rpma_fail(RPMA_E_PROVIDER, "epoll/eventfd: %s", strerror(errno));
		goto err;
	}
	ev.data.fd = p->wake_fd;
	epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->wake_fd, &ev);
	peer->progress = p;
	if ((ret = pthread_create(&p->thread, NULL, progress_main, peer)) != 0) {
		peer->progress = NULL;
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot start the progress thread: %s",
			strerror(ret));
		goto err;
	}
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

static void
wake(struct ofi_progress *p)
{
	uint64_t one = 1;

	(void)!write(p->wake_fd, &one, sizeof(one));
}

int
rpma_ofi_progress_add(struct ofi_peer *peer, struct ofi_conn *conn)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = conn->cq_fd };
	struct ofi_progress *p;
	int ret;

	if (peer->progress == NULL && (ret = progress_start(peer)))
		return ret;
	p = peer->progress;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, conn->cq_fd, &ev) != 0)
		return rpma_fail(RPMA_E_PROVIDER, "epoll_ctl: %s", strerror(errno));
	pthread_mutex_lock(&p->lock);
	conn->next = p->conns;
	p->conns = conn;
	p->nconns++;
	pthread_mutex_unlock(&p->lock);
	wake(p);
	return 0;
}

void
rpma_ofi_progress_remove(struct ofi_peer *peer, struct ofi_conn *conn)
{
	struct ofi_progress *p = peer->progress;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	for (struct ofi_conn **c = &p->conns; *c; c = &(*c)->next) {
		if (*c == conn) {
			*c = conn->next;
			p->nconns--;
			epoll_ctl(p->epfd, EPOLL_CTL_DEL, conn->cq_fd, NULL);
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

int
rpma_ofi_progress_count(struct ofi_peer *peer)
{
	int n;

	if (peer->progress == NULL)
		return 0;
	pthread_mutex_lock(&peer->progress->lock);
	n = peer->progress->nconns;
	pthread_mutex_unlock(&peer->progress->lock);
	return n;
}

/* the application polls: make progress here unless the thread is at it */
void
rpma_ofi_progress_drive(void *arg)
{
	struct ofi_conn *conn = arg;
	struct ofi_progress *p = conn->peer->progress;

	if (p == NULL || pthread_mutex_trylock(&p->lock) != 0)
		return;
	while (rpma_ofi_conn_progress(conn) > 0)
		;
	pthread_mutex_unlock(&p->lock);
}

/* the CQ's fd, when it is safe to sleep on it (libfabric's trywait rule) */
int
rpma_ofi_progress_wait_fd(void *arg)
{
	struct ofi_conn *conn = arg;
	struct fid *f = &conn->cq->fid;

	return fi_trywait(conn->peer->fabric, &f, 1) == FI_SUCCESS ? conn->cq_fd : -1;
}

void
rpma_ofi_progress_stop(struct ofi_peer *peer)
{
	struct ofi_progress *p = peer->progress;

	if (p == NULL)
		return;
	atomic_store(&p->stop, true);
	wake(p);
	pthread_join(p->thread, NULL);
	close(p->epfd);
	close(p->wake_fd);
	pthread_mutex_destroy(&p->lock);
	free(p);
	peer->progress = NULL;
}
