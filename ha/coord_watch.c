/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_watch.c -- the coordinator's watch on its keys: a thread that
 * follows every key under PREFIX<uuid>/ (etcd's watch, with its own client)
 * and wakes the coordinator's loop at each change, so that a leader key
 * that goes (a primary's lease expired, a resign) or a switchover written
 * is acted on at once, not a tick later, and the loop reads the keys only
 * when they changed (or every half lease, in case a change was missed).
 * The keys are still read by the loop, in one range at one revision: the
 * watch says when, never what.
 *
 * While the watch is down (etcd unreachable, a compaction canceled it) the
 * loop reads the keys every tick, as with no watch at all; the watch is
 * opened again after a third of a lease.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord_internal.h"

struct coord_watch {
	struct coordinator *c;
	struct etcd_client *etcd;	/* the watch's own: the thread's alone */
	pthread_t thread;
	atomic_bool stop;
	pthread_mutex_t lock;		/* guards w (a leaf) */
	struct etcd_watch *w;		/* the one running, for a stop */
};

static int
on_answer(void *arg, const struct etcd_watch_result *r)
{
	struct coord_watch *cw = arg;

	if (r->created)
		atomic_store(&cw->c->watch_up, true);
	if (r->n_events > 0 || r->created)
		co_wake(cw->c);
	return atomic_load(&cw->stop);
}

/* sleep ms, or less if asked to stop */
static void
pause_ms(struct coord_watch *cw, uint64_t ms)
{
	for (uint64_t t = 0; t < ms && !atomic_load(&cw->stop); t += 50)
		nanosleep(&(struct timespec){ 0, 50 * 1000000L }, NULL);
}

static void *
watch_main(void *arg)
{
	struct coord_watch *cw = arg;
	struct coordinator *c = cw->c;
	uint64_t retry_ms = c->lease_ms / 3 ? c->lease_ms / 3 : 1;
	bool warned = false;

	(void)pthread_setname_np(pthread_self(), "ha-coord-watch");
	while (!atomic_load(&cw->stop)) {
		struct etcd_watch *w = NULL;
		enum etcd_rc rc = etcd_watch_open(cw->etcd, c->prefix, strlen(c->prefix),
			0, on_answer, cw, &w);

		if (rc == ETCD_OK) {
			pthread_mutex_lock(&cw->lock);
			cw->w = w;
			pthread_mutex_unlock(&cw->lock);
			if (!atomic_load(&cw->stop))
				rc = etcd_watch_run(w);
			pthread_mutex_lock(&cw->lock);
			cw->w = NULL;
			pthread_mutex_unlock(&cw->lock);
		}
		atomic_store(&c->watch_up, false);
		if (atomic_load(&cw->stop)) {
			etcd_watch_close(w);
			break;
		}
		/* the loop polls meanwhile: one line per outage, not per retry */
		if (!warned)
			co_notice(c, "coordinator: the watch on etcd's keys ended (%s: %s): "
				"reading them every tick until it is back",
				etcd_rc_name(rc), w ? etcd_watch_error(w) :
				etcd_client_error(cw->etcd));
		warned = true;
		etcd_watch_close(w);
		co_wake(c);
		pause_ms(cw, retry_ms);
	}
	return NULL;
}

struct coord_watch *
co_watch_start(struct coordinator *c, const struct etcd_client_cfg *ecfg)
{
	struct coord_watch *cw = calloc(1, sizeof(*cw));
	char err[256];

	if (cw == NULL)
		return NULL;
	cw->c = c;
	atomic_init(&cw->stop, false);
	pthread_mutex_init(&cw->lock, NULL);
	if ((cw->etcd = etcd_client_new(ecfg, err, sizeof(err))) == NULL) {
		co_warning(c, "coordinator: no watch on etcd's keys (%s): reading them "
			"every tick", err);
		pthread_mutex_destroy(&cw->lock);
		free(cw);
		return NULL;
	}
	if (pthread_create(&cw->thread, NULL, watch_main, cw) != 0) {
		co_warning(c, "coordinator: no thread for the watch on etcd's keys: "
			"reading them every tick");
		etcd_client_free(cw->etcd);
		pthread_mutex_destroy(&cw->lock);
		free(cw);
		return NULL;
	}
	return cw;
}

void
co_watch_stop(struct coord_watch *cw)
{
	if (cw == NULL)
		return;
	atomic_store(&cw->stop, true);
	pthread_mutex_lock(&cw->lock);
	if (cw->w != NULL)
		etcd_watch_stop(cw->w);
	pthread_mutex_unlock(&cw->lock);
	pthread_join(cw->thread, NULL);
	etcd_client_free(cw->etcd);
	pthread_mutex_destroy(&cw->lock);
	free(cw);
}
