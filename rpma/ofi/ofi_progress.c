/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi_progress.c -- what the peer's progress thread (progress.h) does for
 * libfabric connections: read each connection's CQ, and before sleeping
 * fail the requests of connections that went away, then ask fi_trywait()
 * whether sleeping on the CQs' fds is safe.
 */
#include "config.h"

#include "ofi.h"

static int
sweep(struct rpma_progress_item *item)
{
	return rpma_ofi_conn_progress(rpma_container_of(item, struct ofi_conn, pitem));
}

static int
prepare_sleep(void *owner, struct rpma_progress_item *items)
{
	struct ofi_peer *peer = owner;
	struct fid *fids[64];
	int n = 0;

	for (struct rpma_progress_item *i = items; i; i = i->next) {
		struct ofi_conn *conn = rpma_container_of(i, struct ofi_conn, pitem);

		/* requests whose peer is gone will never be answered */
		rpma_ofi_conn_watch(conn);
		if (n < 64)
			fids[n++] = &conn->cq->fid;
	}
	return n == 0 || fi_trywait(peer->fabric, fids, n) == FI_SUCCESS;
}

static const struct rpma_progress_ops ofi_progress_ops = {
	.sweep = sweep,
	.prepare_sleep = prepare_sleep,
};

int
rpma_ofi_progress_add(struct ofi_peer *peer, struct ofi_conn *conn)
{
	if (conn->polled)
		return 0;	/* its application drives it */
	conn->pitem.fd = conn->cq_fd;
	return rpma_progress_add(&peer->progress, &ofi_progress_ops, peer, &conn->pitem);
}

void
rpma_ofi_progress_remove(struct ofi_peer *peer, struct ofi_conn *conn)
{
	if (conn->polled)
		return;
	rpma_progress_remove(peer->progress, &conn->pitem);
}

int
rpma_ofi_progress_count(struct ofi_peer *peer)
{
	return rpma_progress_count(peer->progress);
}

void
rpma_ofi_progress_stop(struct ofi_peer *peer)
{
	rpma_progress_stop(&peer->progress);
}

/* the application polls: make progress here unless the thread is at it */
void
rpma_ofi_progress_drive(void *arg)
{
	struct ofi_conn *conn = arg;

	if (!conn->polled) {
		rpma_progress_drive(conn->peer->progress, &conn->pitem);
		return;
	}
	if (pthread_mutex_trylock(&conn->drive_lock) != 0)
		return;		/* another thread of the application is at it */
	/* a read that did not fill its batch took all there was: no second
	 * look (on tcp each is a system call) */
	while (rpma_ofi_conn_progress(conn) >= RPMA_REQ_GROUP)
		;
	pthread_mutex_unlock(&conn->drive_lock);
}

/* the CQ's fd, when it is safe to sleep on it (libfabric's trywait rule) */
int
rpma_ofi_progress_wait_fd(void *arg)
{
	struct ofi_conn *conn = arg;
	struct fid *f = &conn->cq->fid;

	/* no progress thread watches a polled connection: fail here what
	 * a peer that went away will never answer */
	if (conn->polled)
		rpma_ofi_conn_watch(conn);
	return fi_trywait(conn->peer->fabric, &f, 1) == FI_SUCCESS ? conn->cq_fd : -1;
}
