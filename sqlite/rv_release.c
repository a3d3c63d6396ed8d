/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_release.c -- checkpoints become bases and releases (rv_release.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "deadline.h"
#include "rv_base.h"
#include "rv_image.h"
#include "rv_release.h"

struct rv_release {
	struct repl *repl;
	char *path;
	uint8_t db_uuid[16];
	int timeout_ms;
	int db_fd;			/* the database file, to sync it */
	pthread_t thread;
	struct rv_image *image;		/* a replica's copy remade (rv_image.h) */

	pthread_mutex_t lock;		/* guards what follows */
	pthread_cond_t cond;
	bool stop;
	/*
	 * A membership change closes the log and opens it again
	 * (rv_db_reconfigure): paused, the thread leaves repl alone; busy
	 * while it uses it (idle signalled when it stops).
	 */
	bool paused, busy;
	pthread_cond_t idle;
	uint64_t offered;		/* the newest offer */
	uint64_t done;			/* the newest offer handled */
	uint64_t base_lsn, released_lsn;
	bool alarm;			/* the space alarm is on */
	uint64_t alarms;		/* times it went on */
	int used_percent;		/* at the last look */
	bool unseen_noted;		/* said once: a replica not seen yet */
};

/*
 * Has every replica connected to this primary once (its first ACK says
 * whether it holds)?  One the membership removed counts for nothing.
 */
static bool
all_seen(struct rv_release *r, int *unseen)
{
	struct repl_replica_status st;

	for (int i = 0; repl_replica_status(r->repl, i, &st) == 0; i++)
		if (st.catch_ups == 0 && st.state != REPL_REPLICA_STREAMING &&
		    st.link_state != REPL_LINK_RETIRED) {
			*unseen = i;
			return false;
		}
	return true;
}

/*
 * The release of the records before lsn's; false: try again later (a
 * replica not seen yet, or one whose hold stopped the release short).
 */
static bool
release_before(struct rv_release *r, uint64_t lsn)
{
	struct repl_status st;
	uint64_t pin = rv_image_pin(r->image), want = lsn;
	int ret, unseen = 0;

	if (!all_seen(r, &unseen)) {
		if (!r->unseen_noted)
			sqlite3_log(SQLITE_NOTICE, "replvfs: %s: replica %d has not "
				"connected since the database opened: the log releases "
				"nothing until it has (it may hold records)", r->path,
				unseen + 1);
		r->unseen_noted = true;
		return false;
	}
	/* an image's base stays until the copy that asked holds what follows */
	if (pin != 0 && lsn > pin + 1)
		lsn = pin + 1;
	if (lsn < 2)
		return lsn == want;
	if ((ret = repl_release(r->repl, lsn - 1)) != 0) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: releasing the log up to LSN "
			"%llu: %s", r->path, (unsigned long long)lsn - 1,
			repl_strerror(ret));
		return true;
	}
	pthread_mutex_lock(&r->lock);
	r->released_lsn = lsn - 1;
	pthread_mutex_unlock(&r->lock);
	/*
	 * A replica's hold stopped it short: the round's ACKs said where the
	 * holds are now, so the next try goes further
	 */
	return lsn == want && (repl_status(r->repl, &st) != 0 || st.first_lsn == 0 ||
		st.first_lsn >= lsn);
}

/* lsn marked a base; false when its release waits for a replica */
static bool
handle(struct rv_release *r, uint64_t lsn)
{
	char why[512];
	int ret;

	if ((ret = repl_wait_durable(r->repl, lsn, r->timeout_ms)) != 0) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: LSN %llu not durable (%s): "
			"the database file is no base there, nothing released", r->path,
			(unsigned long long)lsn, repl_strerror(ret));
		return true;
	}
	if (rv_base_write(r->path, r->db_fd, r->db_uuid, lsn, why, sizeof(why)) != 0) {
		sqlite3_log(SQLITE_WARNING, "replvfs: no base marked, nothing released: "
			"%s", why);
		return true;
	}
	pthread_mutex_lock(&r->lock);
	r->base_lsn = lsn;
	pthread_mutex_unlock(&r->lock);
	return release_before(r, lsn);
}

#define RETRY_MS 200	/* a release that waits for a replica, tried again */
#define IMAGE_MS 20	/* an image under way: its next records */
#define SPACE_EVERY_MS 1000	/* the log's fill looked at so often */
#define SPACE_ALARM 80		/* percent full: the space alarm */
#define SPACE_CLEAR 70		/* ... and below it, the alarm ends */

/*
 * The space alarm: said once when the log passes SPACE_ALARM percent full,
 * naming what keeps it (rv_release_log_holds), and once when it is back
 * below SPACE_CLEAR.  Long before COMMITs fail with SQLITE_FULL, the
 * application's log says which replica's hold to look at.
 */
static void
space_look(struct rv_release *r)
{
	struct repl_status st;
	int pct;
	bool was;

	if (repl_status(r->repl, &st) != 0 || st.size_bytes == 0)
		return;
	pct = (int)(st.used_bytes * 100 / st.size_bytes);
	pthread_mutex_lock(&r->lock);
	was = r->alarm;
	r->used_percent = pct;
	if (!was && pct >= SPACE_ALARM) {
		r->alarm = true;
		r->alarms++;
	} else if (was && pct < SPACE_CLEAR) {
		r->alarm = false;
	}
	pthread_mutex_unlock(&r->lock);
	if (!was && pct >= SPACE_ALARM) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: space alarm: the log is %d%% "
			"full (%llu of %llu bytes)", r->path, pct,
			(unsigned long long)st.used_bytes,
			(unsigned long long)st.size_bytes);
		rv_release_log_holds(r, SQLITE_WARNING);
	} else if (was && pct < SPACE_CLEAR) {
		sqlite3_log(SQLITE_NOTICE, "replvfs: %s: space alarm cleared: the log "
			"is %d%% full", r->path, pct);
	}
}

static void
deadline_in(struct timespec *until, long ms)
{
	*until = deadline_after_ms(CLOCK_REALTIME, ms);
}

static void *
run(void *arg)
{
	struct rv_release *r = arg;
	struct timespec until;
	uint64_t lsn, waiting = 0;	/* a base whose release waits */
	bool imaging = false;

	(void)pthread_setname_np(pthread_self(), "replvfs-release");
	pthread_mutex_lock(&r->lock);
	for (;;) {
		/* an offer, a stop or a resume; else the retry's or the look's time */
		deadline_in(&until, imaging ? IMAGE_MS : waiting ? RETRY_MS :
			SPACE_EVERY_MS);
		while (!r->stop && (r->paused || r->offered <= r->done) &&
		       pthread_cond_timedwait(&r->cond, &r->lock, &until) != ETIMEDOUT)
			;
		if (r->stop)
			break;
		if (r->paused)
			continue;
		r->busy = true;
		if (r->offered > r->done) {
			lsn = r->offered;
			pthread_mutex_unlock(&r->lock);
			waiting = handle(r, lsn) ? 0 : lsn;
			pthread_mutex_lock(&r->lock);
			r->done = lsn;
		} else if (waiting != 0) {
			pthread_mutex_unlock(&r->lock);
			if (release_before(r, waiting))
				waiting = 0;
			pthread_mutex_lock(&r->lock);
		}
		pthread_mutex_unlock(&r->lock);
		space_look(r);
		imaging = rv_image_step(r->image, r->repl, &lsn);
		pthread_mutex_lock(&r->lock);
		if (lsn > r->offered)
			r->offered = lsn;	/* handled at the next turn */
		r->busy = false;
		pthread_cond_broadcast(&r->idle);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct rv_release *
rv_release_start(struct repl *repl, const char *path, const uint8_t db_uuid[16],
		int timeout_ms, char *why, size_t whylen)
{
	struct rv_release *r = calloc(1, sizeof(*r));

	if (r == NULL || (r->path = strdup(path)) == NULL) {
		free(r);
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	r->repl = repl;
	memcpy(r->db_uuid, db_uuid, sizeof(r->db_uuid));
	r->timeout_ms = timeout_ms;
	/* a new database's file may not be there yet: SQLite makes it so */
	if ((r->db_fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if ((r->image = rv_image_new(path, db_uuid, r->db_fd)) == NULL) {
		snprintf(why, whylen, "out of memory");
		close(r->db_fd);
		goto fail;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	pthread_cond_init(&r->idle, NULL);
	if (pthread_create(&r->thread, NULL, run, r) != 0) {
		snprintf(why, whylen, "%s: cannot start the release thread", path);
		pthread_cond_destroy(&r->idle);
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		rv_image_free(&r->image);
		close(r->db_fd);
		goto fail;
	}
	return r;
fail:
	free(r->path);
	free(r);
	return NULL;
}

void
rv_release_offer(struct rv_release *r, uint64_t lsn)
{
	pthread_mutex_lock(&r->lock);
	if (lsn > r->offered) {
		r->offered = lsn;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
}

void
rv_release_space(struct rv_release *r, bool *alarm, uint64_t *alarms)
{
	pthread_mutex_lock(&r->lock);
	*alarm = r->alarm;
	*alarms = r->alarms;
	pthread_mutex_unlock(&r->lock);
}

void
rv_release_get(struct rv_release *r, uint64_t *base_lsn, uint64_t *released_lsn)
{
	pthread_mutex_lock(&r->lock);
	*base_lsn = r->base_lsn;
	*released_lsn = r->released_lsn;
	pthread_mutex_unlock(&r->lock);
}

bool
rv_release_wants_room(struct rv_release *r)
{
	return rv_image_waits_room(r->image);
}

void
rv_release_image(struct rv_release *r, struct rv_image_status *st)
{
	rv_image_get(r->image, st);
}

void
rv_release_pause(struct rv_release *r)
{
	pthread_mutex_lock(&r->lock);
	r->paused = true;
	while (r->busy)
		pthread_cond_wait(&r->idle, &r->lock);
	/* closed after this: nothing may reach it (rv_release_log_holds looks first) */
	r->repl = NULL;
	rv_image_abandon(r->image);
	pthread_mutex_unlock(&r->lock);
}

void
rv_release_resume(struct rv_release *r, struct repl *repl)
{
	pthread_mutex_lock(&r->lock);
	r->repl = repl;
	r->paused = false;
	/* a log opened again has seen no replica yet: said again if so */
	r->unseen_noted = false;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static const char *
link_word(const struct repl_replica_status *st)
{
	return st->state == REPL_REPLICA_STREAMING ? "streaming" : "down";
}

void
rv_release_log_holds(struct rv_release *r, int code)
{
	struct repl_replica_status st;
	struct repl_status rs;
	uint64_t base, released;

	/* a line each: SQLite's log cuts a message past about 200 bytes */
	rv_release_get(r, &base, &released);
	if (r->repl == NULL || repl_status(r->repl, &rs) != 0)
		return;
	sqlite3_log(code, "replvfs: %s: the log keeps LSN %llu to %llu; the last "
		"base is LSN %llu", r->path, (unsigned long long)rs.first_lsn,
		(unsigned long long)rs.last_lsn, (unsigned long long)base);
	for (int i = 0; repl_replica_status(r->repl, i, &st) == 0; i++) {
		if (st.link_state == REPL_LINK_RETIRED)
			continue;
		if (st.catch_ups == 0 && st.state != REPL_REPLICA_STREAMING)
			sqlite3_log(code, "replvfs: %s: replica %d not seen since the "
				"open: nothing is released until it connects", r->path,
				i + 1);
		else if (st.holds && st.hold_from < rs.first_lsn)
			sqlite3_log(code, "replvfs: %s: replica %d (%s) holds from LSN "
				"%llu, before the log's first: not counted (its copy "
				"cannot follow)", r->path, i + 1, link_word(&st),
				(unsigned long long)st.hold_from);
		else if (st.holds)
			sqlite3_log(code, "replvfs: %s: replica %d (%s) holds the log "
				"from LSN %llu for its copy (its checkpoint: %llu)",
				r->path, i + 1, link_word(&st),
				(unsigned long long)st.hold_from,
				(unsigned long long)st.hold_lsn + 1);
	}
}

void
rv_release_stop(struct rv_release **rp)
{
	struct rv_release *r = *rp;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_cond_destroy(&r->idle);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	rv_image_free(&r->image);
	close(r->db_fd);
	free(r->path);
	free(r);
	*rp = NULL;
}
