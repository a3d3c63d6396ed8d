/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db_readers.c -- STRICT (repl_commit=strict): what a connection of the
 * primary's process may read while commits are in flight.
 *
 * A strict commit appends its record in the write of its commit frame and
 * waits in the connection's WAL hook once SQLite has let the write lock
 * go, as a pipelined one does: the next writer appends meanwhile, and one
 * flush makes several commits durable.  By then SQLite has published the
 * transaction in the wal-index, which every connection reads.  So the
 * promise is kept where pages are read.  A reader learns what a
 * transaction T wrote only by reading one of T's pages, and the version
 * it reads is the newest frame of that page in its snapshot: T's frame or
 * a later transaction's.  A connection that does not hold the WAL write
 * lock and reads a frame past the last one known durable therefore waits
 * here until that frame's commit is durable, which, the log being durable
 * in order, covers T.  The database file takes no frame before it is
 * durable (rv_db_checkpoint_write), so reads of it need no wait.
 *
 * The writer (the connection holding the write lock) reads the frames of
 * the commits before it without waiting: it builds on them, and its own
 * COMMIT returns only once it, and so they, are durable.  SQLite keeps
 * what it read in the connection's page cache, though, where no read of
 * the file is seen; so the connection's next transaction (its next read
 * lock) first waits until everything appended when it let the write lock
 * go is durable: at once after a COMMIT that returned, a wait after a
 * ROLLBACK, an error after a COMMIT in doubt (rv_db_wait_seen).
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "repl.h"
#include "rv_db.h"
#include "rv_db_internal.h"

#define WAL_HDR_SIZE 32
#define FRAME_HDR_SIZE 24

void
rv_db_inflight_reset(struct rv_db *d)
{
	d->inflight_head = d->inflight_n = 0;
	d->durable_frame = 0;
}

void
rv_db_inflight_add(struct rv_db *d, uint64_t lsn, uint32_t frame)
{
	if (d->inflight_n == RV_INFLIGHT_MAX)
		return;
	d->inflight[(d->inflight_head + d->inflight_n) % RV_INFLIGHT_MAX].lsn = lsn;
	d->inflight[(d->inflight_head + d->inflight_n) % RV_INFLIGHT_MAX].frame = frame;
	d->inflight_n++;
}

/*
 * The LSN that must be durable before frame is read: 0 when it is known
 * durable already.  Drops what became durable from the list.  Under lock.
 */
static uint64_t
lsn_to_read(struct rv_db *d, uint32_t frame)
{
	uint64_t durable = atomic_load(&d->durable_lsn);
	uint64_t appended = atomic_load(&d->appended_lsn);

	if (appended <= durable) {
		/* every commit is durable, the unlisted ones too */
		d->inflight_head = d->inflight_n = 0;
		d->durable_frame = d->committed;
		return 0;
	}
	while (d->inflight_n > 0 && d->inflight[d->inflight_head].lsn <= durable) {
		d->durable_frame = d->inflight[d->inflight_head].frame;
		d->inflight_head = (d->inflight_head + 1) % RV_INFLIGHT_MAX;
		d->inflight_n--;
	}
	if (frame <= d->durable_frame)
		return 0;
	for (unsigned i = 0; i < d->inflight_n; i++) {
		unsigned at = (d->inflight_head + i) % RV_INFLIGHT_MAX;

		if (d->inflight[at].frame >= frame)
			return d->inflight[at].lsn;
	}
	/* past the list (it was full): everything appended */
	return appended;
}

/*
 * Until lsn is durable, for a read of WAL frame frame (0: a connection's
 * next transaction after it wrote): SQLITE_OK or SQLITE_IOERR_READ.
 */
static int
wait_durable(struct rv_db *d, uint64_t lsn, uint32_t frame)
{
	char what[64];
	int poisoned, ret = 0;

	pthread_mutex_lock(&d->lock);
	poisoned = d->poisoned;
	pthread_mutex_unlock(&d->lock);
	if (poisoned == 0 && (ret = rv_db_wait_lsn(d, lsn)) == 0)
		return SQLITE_OK;
	if (frame != 0)
		snprintf(what, sizeof(what), "a read of WAL frame %" PRIu32, frame);
	else
		snprintf(what, sizeof(what), "a connection's next transaction");
	/* a commit in doubt: its outcome is the log's, read after a reopen */
	if (poisoned != 0)
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: %s needs LSN %" PRIu64 ", of a "
			"transaction in doubt (%s): close and open the database again",
			d->path, what, lsn, repl_strerror(poisoned));
	else
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: %s waits for LSN %" PRIu64 ", not "
			"durable: %s; no connection reads a transaction before it is",
			d->path, what, lsn, repl_strerror(ret));
	return SQLITE_IOERR_READ;
}

int
rv_db_wal_read(struct rv_db *d, int64_t off)
{
	uint64_t lsn;
	uint32_t frame;

	/* what a reader's snapshot holds was appended before it was shown */
	if (d->pipelined || off < WAL_HDR_SIZE ||
	    atomic_load(&d->appended_lsn) <= atomic_load(&d->durable_lsn))
		return SQLITE_OK;
	pthread_mutex_lock(&d->lock);
	if (d->page_size == 0) {
		pthread_mutex_unlock(&d->lock);
		return SQLITE_OK;
	}
	frame = (uint32_t)((off - WAL_HDR_SIZE) / (FRAME_HDR_SIZE + (int64_t)d->page_size)) + 1;
	lsn = lsn_to_read(d, frame);
	pthread_mutex_unlock(&d->lock);
	return lsn == 0 ? SQLITE_OK : wait_durable(d, lsn, frame);
}

uint64_t
rv_db_appended_lsn(struct rv_db *d)
{
	return atomic_load(&d->appended_lsn);
}

int
rv_db_wait_seen(struct rv_db *d, uint64_t lsn)
{
	if (d->pipelined || lsn <= atomic_load(&d->durable_lsn))
		return SQLITE_OK;
	return wait_durable(d, lsn, 0);
}
