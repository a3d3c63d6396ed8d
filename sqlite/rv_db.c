/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db.c -- a replicated SQLite database's -wal writes: the transaction
 * staged frame by frame, and its commit as one record of the log (rv_db.h).
 * Opening and closing the database is rv_db_open.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "repl.h"
#include "image_record.h"
#include "primary_cfg.h"
#include "repld_conf.h"
#include "rv_admin_sock.h"
#include "rv_apply.h"
#include "rv_db.h"
#include "rv_db_internal.h"
#include "rv_release.h"
#include "rv_wal_map.h"
#include "txn_record.h"



/*
 * The armed commit this thread appended and has not waited for yet.
 * The VFS's write of the commit frame runs in the thread whose
 * sqlite3_step commits, and so does the connection's WAL hook that waits
 * (vfs.c), after SQLite let the write lock go.
 */
static _Thread_local struct {
	bool armed;			/* this commit's WAL hook will wait */
	struct rv_db *d;		/* a reference, while set */
	uint64_t lsn, txid;
} pending;

void
rv_db_arm_pending(void)
{
	pending.armed = true;
}

void
rv_db_disarm_pending(void)
{
	pending.armed = false;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- the -wal's writes ---- */

static int writable(struct rv_db *d);

static void
unstage(struct rv_db *d)
{
	d->first = d->n = 0;
	d->commit_frame = 0;
	d->db_size = 0;
}

/* the -wal begins again: frame numbers count from 1 */
static void
new_generation(struct rv_db *d)
{
	unstage(d);
	d->committed_first = d->committed = 0;
	rv_db_inflight_reset(d);
}

void
rv_db_wal_reset(struct rv_db *d)
{
	pthread_mutex_lock(&d->lock);
	new_generation(d);
	pthread_mutex_unlock(&d->lock);
}

/* a WAL header's page size and salts; SQLITE_OK or SQLITE_IOERR_WRITE */
static int
take_header(struct rv_db *d, const uint8_t hdr[32])
{
	uint32_t ps = be32(hdr + 8);

	if (ps < TXN_PAGE_MIN || ps > TXN_PAGE_MAX || (ps & (ps - 1)) != 0) {
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: a WAL header with page size %u",
			d->path, ps);
		return SQLITE_IOERR_WRITE;
	}
	d->page_size = ps;
	d->salt1 = be32(hdr + 16);
	d->salt2 = be32(hdr + 20);
	return SQLITE_OK;
}

/* a WAL header written: a new WAL generation */
static int
wal_header(struct rv_db *d, const uint8_t hdr[32])
{
	int rc;

	if ((rc = take_header(d, hdr)) == SQLITE_OK) {
		/* what was staged belonged to the old generation */
		d->wal_reset = true;
		new_generation(d);
		/*
		 * SQLite restarts its WAL only once every frame of the old one
		 * is in the database file: up to the last transaction, the
		 * file stands for the log
		 */
		if (d->rel != NULL && d->last_lsn > 0)
			rv_release_offer(d->rel, d->last_lsn);
		atomic_store_explicit(&d->wal_bytes, 0, memory_order_relaxed);
	}
	return rc;
}

int
rv_db_wal_seen(struct rv_db *d, const uint8_t hdr[32])
{
	int rc = SQLITE_OK;

	/* another connection's -wal open changes nothing a writer stages */
	pthread_mutex_lock(&d->lock);
	if (d->page_size == 0)
		rc = take_header(d, hdr);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

/* room for frames first .. frame; false when out of memory */
static bool
reserve(struct rv_db *d, uint32_t frame)
{
	size_t need = (size_t)(frame - d->first) + 1, cap;
	void *p;

	if (need <= d->pg_cap)
		return true;
	cap = need > 2 * d->pg_cap ? need : 2 * d->pg_cap;
	if ((p = realloc(d->pg, cap * sizeof(*d->pg))) == NULL)
		return false;
	d->pg = p;
	d->pg_cap = cap;
	return true;
}

/*
 * A header written again for a frame the WAL already committed.  SQLite
 * does that in one case only: a COMMIT whose transaction overwrote in
 * place a frame it had spilled before (a cache spill, then the page
 * changed again) rewrites the checksums of that frame and every later one
 * of the transaction (walRewriteChecksums), after the commit frame's page
 * is written.  The record holds no checksums, so nothing replicated
 * changes, and the rewrite must not be staged as a transaction of its own.
 * A rewrite that names another page than the one committed means the
 * -wal no longer says what the log does: no more writes until the
 * database is opened again (rebuilt from the log).
 */
static int
committed_header(struct rv_db *d, uint32_t frame, uint32_t pgno, uint32_t commit)
{
	uint8_t want[TXN_FRAME_HDR_SIZE];
	bool ok = false;

	if (d->n == 0 && frame >= d->committed_first) {
		txn_pgno_encode(pgno, want);
		ok = memcmp(d->pg[frame - d->committed_first], want,
			sizeof(want)) == 0 &&
			(commit != 0) == (frame == d->committed);
	}
	if (ok)
		return SQLITE_OK;
	d->poisoned = REPL_E_CORRUPT;
	sqlite3_log(SQLITE_IOERR, "replvfs: %s: the header of WAL frame %u, "
		"committed (frames %u .. %u), written again as page %u%s; this "
		"database takes no more writes until opened again", d->path, frame,
		d->committed_first, d->committed, pgno, commit != 0 ? " (commit)" : "");
	return SQLITE_IOERR_WRITE;
}

static int
frame_header(struct rv_db *d, uint32_t frame, const uint8_t hdr[24])
{
	uint32_t pgno = be32(hdr), commit = be32(hdr + 4);

	if (d->poisoned != 0)
		return writable(d);
	if (d->page_size == 0 || pgno == 0) {
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: WAL frame %u %s", d->path, frame,
			d->page_size == 0 ? "written before any WAL header" :
			"names page 0");
		return SQLITE_IOERR_WRITE;
	}
	if (frame <= d->committed)
		return committed_header(d, frame, pgno, commit);
	/*
	 * A frame below the staged ones, or past them, begins another
	 * transaction: what is staged was rolled back (its frames lie past
	 * the WAL's last commit, where the next one writes again).
	 */
	if (d->n == 0 || frame < d->first || frame > d->first + d->n) {
		unstage(d);
		d->first = frame;
	}
	if (!reserve(d, frame))
		return SQLITE_IOERR_NOMEM;
	txn_pgno_encode(pgno, d->pg[frame - d->first]);
	if (frame == d->first + d->n)
		d->n++;
	/* a frame rewritten in place is staged again, committing or not */
	if (commit != 0) {
		d->commit_frame = frame;
		d->db_size = commit;
	} else if (d->commit_frame == frame) {
		d->commit_frame = 0;
	}
	return SQLITE_OK;
}

/*
 * Appended, and maybe durable after all (a timeout, a fence with the
 * record in flight): the log may keep a transaction this file rolls back
 * (or, deferred, holds: strict, no reader reads it; pipelined, shows).  No more writes until the database is opened
 * again from the log.  Under d->lock.
 */
static void
poison(struct rv_db *d, int ret, uint64_t lsn, uint64_t txid)
{
	d->poisoned = ret;
	sqlite3_log(SQLITE_IOERR, "replvfs: %s: transaction %llu (LSN %llu) not "
		"durable: %s; its outcome is the log's (look up its transaction "
		"id), and this database takes no more writes", d->path,
		(unsigned long long)txid, (unsigned long long)lsn, repl_strerror(ret));
}

bool
rv_db_checkpoint_due(struct rv_db *d)
{
	bool due;

	if (atomic_load_explicit(&d->wal_bytes, memory_order_relaxed) >= d->log_size / 8)
		return true;
	/* also when a replica's image waits for the room a base makes; rel
	   goes when the database is retired (under log_lock) */
	if (pthread_rwlock_tryrdlock(&d->log_lock) != 0)
		return false;
	due = d->rel != NULL && rv_release_wants_room(d->rel);
	pthread_rwlock_unlock(&d->log_lock);
	return due;
}

int
rv_db_checkpoint_write(struct rv_db *d)
{
	uint64_t lsn = atomic_load(&d->appended_lsn);
	int ret;

	if ((ret = rv_db_wait_lsn(d, lsn)) != 0) {
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: a checkpoint waits for LSN %llu, "
			"not durable: %s; the database file takes no transaction "
			"before it is", d->path, (unsigned long long)lsn,
			repl_strerror(ret));
		return SQLITE_IOERR_WRITE;
	}
	return SQLITE_OK;
}

int
rv_db_wait_lsn(struct rv_db *d, uint64_t lsn)
{
	int ret;

	if (lsn <= atomic_load(&d->durable_lsn))
		return 0;
	pthread_rwlock_rdlock(&d->log_lock);
	ret = d->repl == NULL ? REPL_E_INVAL :
		repl_wait_durable(d->repl, lsn, d->timeout_ms);
	pthread_rwlock_unlock(&d->log_lock);
	if (ret == 0)
		rv_db_durable_at(d, lsn);
	return ret;
}

int
rv_db_wait_pending(void)
{
	struct rv_db *d = pending.d;
	int ret;

	pending.armed = false;
	if (d == NULL)
		return SQLITE_OK;
	pending.d = NULL;
	/*
	 * Not under d->lock: the next writer appends meanwhile (group
	 * commit).  A membership change made it durable before it closed
	 * the log (rv_db_reconfigure).
	 */
	if ((ret = rv_db_wait_lsn(d, pending.lsn)) != 0) {
		pthread_mutex_lock(&d->lock);
		poison(d, ret, pending.lsn, pending.txid);
		pthread_mutex_unlock(&d->lock);
	}
	rv_db_put(d);
	return ret == 0 ? SQLITE_OK : SQLITE_IOERR_WRITE;
}

#define WAL_HDR_SIZE 32
#define FRAME_HDR_SIZE 24

/*
 * The record of frames first .. first + n - 1, gathered in d->iov: the
 * header, then each frame's page number and its page where the -wal holds
 * it.  SQLite wrote each of them through this connection's file since the
 * -wal was last truncated to 0 (which unstages them), and cuts it
 * otherwise only behind a generation's frames (tests/sqlite/
 * wal_write_order.c), so every byte read is in the file.  false when out
 * of memory or the -wal does not map.
 */
static bool
gather(struct rv_db *d, struct rv_wal_map *map, uint8_t *hdr, uint32_t n)
{
	uint64_t step = FRAME_HDR_SIZE + (uint64_t)d->page_size;
	size_t need = 1 + 2 * (size_t)n;
	const uint8_t *wal;
	struct iovec *iov;

	if (need > d->iov_cap) {
		size_t cap = need > 2 * d->iov_cap ? need : 2 * d->iov_cap;

		if ((iov = realloc(d->iov, cap * sizeof(*iov))) == NULL)
			return false;
		d->iov = iov;
		d->iov_cap = cap;
	}
	wal = rv_wal_map_cover(map, WAL_HDR_SIZE + (uint64_t)(d->first - 1 + n) * step);
	if (wal == NULL) {
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: its -wal does not map: %s",
			d->path, strerror(errno));
		return false;
	}
	iov = d->iov;
	iov[0] = (struct iovec){ hdr, TXN_HDR_SIZE };
	for (uint32_t i = 0; i < n; i++) {
		iov[1 + 2 * i] = (struct iovec){ d->pg[i], TXN_FRAME_HDR_SIZE };
		iov[2 + 2 * i] = (struct iovec){ (void *)(wal + WAL_HDR_SIZE +
			(uint64_t)(d->first - 1 + i) * step + FRAME_HDR_SIZE),
			d->page_size };
	}
	return true;
}

/* the last commit of this thread: COMMIT runs in its connection's thread */
static _Thread_local uint64_t thread_last_commit_lsn;

uint64_t
rv_db_thread_last_commit_lsn(void)
{
	return thread_last_commit_lsn;
}

uint64_t
rv_db_commit_stamp(struct rv_db *d)
{
	struct timespec t;
	uint64_t ms;

	clock_gettime(CLOCK_REALTIME, &t);
	ms = (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
	if (ms < d->last_commit_ms)
		ms = d->last_commit_ms;
	if (ms == 0)
		ms = 1;
	d->last_commit_ms = ms;
	return ms;
}

/* the staged transaction, first .. commit frame, as one durable record */
static int
commit(struct rv_db *d, struct rv_wal_map *map)
{
	uint32_t n = d->commit_frame - d->first + 1;
	struct txn_hdr h = {
		.version = TXN_VERSION, .flags = TXN_F_FIRST | TXN_F_LAST |
			(d->wal_reset ? TXN_F_WAL_RESET : 0),
		.page_size = d->page_size, .n_frames = n, .wal_salt1 = d->salt1,
		.wal_salt2 = d->salt2, .first_frame = d->first, .db_size = d->db_size,
	};
	uint8_t hdr[TXN_HDR_SIZE];
	uint64_t lsn = 0, len = txn_record_len(n, d->page_size);
	int ret;

	/* a commit whose wait did not run (no hook) is waited for first */
	if (pending.d != NULL) {
		pthread_mutex_unlock(&d->lock);
		ret = rv_db_wait_pending();
		pthread_mutex_lock(&d->lock);
		if (ret != SQLITE_OK)
			return ret;
	}
	/* a membership change that failed left the log closed (poisoned) */
	if (d->repl == NULL)
		return writable(d);
	memcpy(h.db_uuid, d->db_uuid, sizeof(h.db_uuid));
	h.commit_ms = rv_db_commit_stamp(d);
	if (!txn_hdr_encode(&h, hdr))
		return SQLITE_IOERR_WRITE;
	if (!gather(d, map, hdr, n))
		return SQLITE_IOERR_WRITE;
	/* the pages' only copy: into the log's ring */
	if ((ret = repl_appendv(d->repl, d->iov, (int)(1 + 2 * (size_t)n),
			d->next_txid, &lsn)) != 0) {
		/* not appended: the transaction rolls back, nothing is in doubt */
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: transaction %llu (%u pages) not "
			"appended: %s", d->path, (unsigned long long)d->next_txid, n,
			repl_strerror(ret));
		if (ret == REPL_E_FULL && d->rel != NULL)
			rv_release_log_holds(d->rel, SQLITE_IOERR);
		return ret == REPL_E_FULL || ret == REPL_E_TOO_BIG ? SQLITE_FULL :
			SQLITE_IOERR_WRITE;
	}
	d->last_lsn = lsn;
	thread_last_commit_lsn = lsn;
	atomic_store(&d->appended_lsn, lsn);
	atomic_fetch_add_explicit(&d->wal_bytes, len, memory_order_relaxed);
	if (pending.armed) {
		/*
		 * The connection's WAL hook waits, once the write lock is free;
		 * strict, no other connection reads the frames before
		 * (rv_db_readers.c)
		 */
		rv_db_inflight_add(d, lsn, d->commit_frame);
		pthread_mutex_lock(&dbs_lock);
		d->refs++;
		pthread_mutex_unlock(&dbs_lock);
		pending.d = d;
		pending.lsn = lsn;
		pending.txid = d->next_txid;
	} else if ((ret = repl_wait_durable(d->repl, lsn, d->timeout_ms)) != 0) {
		poison(d, ret, lsn, d->next_txid);
		return SQLITE_IOERR_WRITE;
	} else {
		rv_db_durable_at(d, lsn);
	}
	pending.armed = false;
	d->next_txid++;
	d->wal_reset = false;
	/* the next transaction begins past this commit frame */
	d->committed_first = d->first;
	d->committed = d->commit_frame;
	d->first = d->commit_frame + 1;
	d->n = 0;
	d->commit_frame = 0;
	d->db_size = 0;
	return SQLITE_OK;
}

static int
frame_page(struct rv_db *d, struct rv_wal_map *map, uint32_t frame, int len)
{
	if (d->n == 0 || frame < d->first || frame >= d->first + d->n ||
	    (uint32_t)len != d->page_size) {
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: a %d-byte page of WAL frame %u "
			"without its frame header", d->path, len, frame);
		return SQLITE_IOERR_WRITE;
	}
	/* the page stays in the -wal until the commit gathers it; no padding
	 * follows the commit frame (POWERSAFE_OVERWRITE): its page is the
	 * transaction's last write */
	return frame == d->commit_frame ? commit(d, map) : SQLITE_OK;
}

int
rv_db_wal_write(struct rv_db *d, struct rv_wal_map *map, const void *buf, int amt,
		int64_t off)
{
	int64_t at = off - WAL_HDR_SIZE, step;
	int rc = SQLITE_IOERR_WRITE;

	pthread_mutex_lock(&d->lock);
	step = FRAME_HDR_SIZE + (int64_t)d->page_size;
	if (off == 0 && amt == WAL_HDR_SIZE)
		rc = wal_header(d, buf);
	else if (off >= WAL_HDR_SIZE && d->page_size != 0 && at % step == 0 &&
		 amt == FRAME_HDR_SIZE)
		rc = frame_header(d, (uint32_t)(at / step) + 1, buf);
	else if (off >= WAL_HDR_SIZE && d->page_size != 0 &&
		 at % step == FRAME_HDR_SIZE && amt == (int)d->page_size)
		rc = frame_page(d, map, (uint32_t)(at / step) + 1, amt);
	else
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: a write of %d bytes at offset "
			"%lld of the -wal is neither its header, nor a frame's header, "
			"nor its page", d->path, amt, (long long)off);
	pthread_mutex_unlock(&d->lock);
	return rc;
}

static int
writable(struct rv_db *d)
{
	if (d->poisoned == 0)
		return SQLITE_OK;
	sqlite3_log(SQLITE_IOERR, "replvfs: %s: a commit's outcome is unknown (%s): "
		"close and open the database again before writing", d->path,
		repl_strerror(d->poisoned));
	return SQLITE_IOERR_WRITE;
}
