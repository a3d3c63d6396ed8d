/* SPDX-License-Identifier: BSD-3-Clause */
/* archiver_base.c -- bases of the replvfs copy in the archive (archiver_base.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "archiver_base.h"
#include "log.h"

#define LOCK_WAIT_MS 2000	/* for the copy's SHARED lock, per attempt */

static struct {
	pthread_mutex_t lock;		/* all of it; held by a round */
	struct rv_copy *copy;		/* NULL: no base to take */
	char *tmp;			/* SQLITE_COPY-repl-archive-base */
	int every_ms, compress;
	uint64_t due_ms;		/* monotonic: the next take (0: now) */
	bool taken;			/* tmp holds a base at taken_lsn */
	uint64_t taken_lsn;
	uint64_t first_lsn;		/* the archive's oldest record (0: not
					   looked up yet) */
	struct archiver_base_info info;
} B = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t
clock_ms(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* a failure: logged once per kind, kept for status; the next try is due later */
static void
failed(const char *why)
{
	if (strcmp(B.info.last_error, why) != 0)
		log_error("archive base of %s: %s; trying again in %d ms", B.tmp, why,
			B.every_ms);
	snprintf(B.info.last_error, sizeof(B.info.last_error), "%s", why);
	B.taken = false;
	(void)unlink(B.tmp);
}

void
archiver_base_set_copy(struct rv_copy *copy, const struct repld_conf *conf)
{
	pthread_mutex_lock(&B.lock);
	if (B.tmp != NULL)
		(void)unlink(B.tmp);
	free(B.tmp);
	B.tmp = NULL;
	B.copy = NULL;
	B.taken = false;
	B.due_ms = 0;
	if (copy != NULL && conf->archive.target != NULL && conf->sqlite_copy != NULL &&
	    (B.tmp = malloc(strlen(conf->sqlite_copy) + sizeof(ARCHIVER_BASE_SUFFIX)))
			!= NULL) {
		strcpy(B.tmp, conf->sqlite_copy);
		strcat(B.tmp, ARCHIVER_BASE_SUFFIX);
		(void)unlink(B.tmp);	/* one a kill left */
		B.copy = copy;
		B.every_ms = conf->archive.base_every_ms;
		B.compress = conf->archive.compress;
		/* the first once the copy had time to catch up */
		B.due_ms = clock_ms(CLOCK_MONOTONIC) + (uint64_t)B.every_ms;
	}
	pthread_mutex_unlock(&B.lock);
}

/* the archive's oldest record: a base before it could not be gone on from */
static int
first_lsn(struct archive_target *t, uint64_t *out)
{
	struct archive_listing l;
	char why[ARCHIVE_WHY_MAX];

	if (B.first_lsn == 0) {
		/* names only: no read of every object */
		if (archive_list_names(t, &l, why, sizeof(why)) != 0) {
			failed(why);
			return -1;
		}
		B.first_lsn = l.n_segments ? l.obj[0].first_lsn : 0;
		archive_listing_free(&l);
	}
	*out = B.first_lsn;
	return 0;
}

static void
publish(struct archive_target *t)
{
	char why[ARCHIVE_WHY_MAX];
	uint64_t first;

	if (first_lsn(t, &first) != 0)
		return;
	if (first == 0 || B.taken_lsn + 1 < first) {
		/* the records after it are not all in the archive: a newer one */
		B.taken = false;
		(void)unlink(B.tmp);
		return;
	}
	if (archive_put_base(t, B.taken_lsn, B.tmp, B.compress, why, sizeof(why)) != 0) {
		failed(why);
		return;
	}
	(void)unlink(B.tmp);
	B.taken = false;
	B.info.last_base_lsn = B.taken_lsn;
	B.info.last_base_ms = clock_ms(CLOCK_REALTIME);
	B.info.bases++;
	B.info.last_error[0] = '\0';
	log_info("archive: the database at LSN %" PRIu64 " published as a base",
		B.taken_lsn);
}

void
archiver_base_round(struct archive_target *t, uint64_t archived)
{
	char why[ARCHIVE_WHY_MAX];
	uint64_t now;
	int ret;

	pthread_mutex_lock(&B.lock);
	if (B.copy == NULL || t == NULL) {
		pthread_mutex_unlock(&B.lock);
		return;
	}
	now = clock_ms(CLOCK_MONOTONIC);
	if (!B.taken && now >= B.due_ms) {
		ret = rv_copy_snapshot(B.copy, B.tmp, LOCK_WAIT_MS, &B.taken_lsn, why,
			sizeof(why));
		if (ret < 0)
			failed(why);
		B.taken = ret == 1;
		if (B.taken && B.taken_lsn <= B.info.last_base_lsn) {
			/* nothing committed since the last one: no new base */
			B.taken = false;
			(void)unlink(B.tmp);
		}
		/* a file that is no transaction's now is looked at again soon */
		B.due_ms = now + (ret == 0 ? 100 : (uint64_t)B.every_ms);
	}
	if (B.taken && archived >= B.taken_lsn)
		publish(t);
	pthread_mutex_unlock(&B.lock);
}

void
archiver_base_get(struct archiver_base_info *out)
{
	pthread_mutex_lock(&B.lock);
	*out = B.info;
	pthread_mutex_unlock(&B.lock);
}
