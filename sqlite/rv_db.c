/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db.c -- a replicated SQLite database: its log, its staged transaction
 * and its commit (rv_db.h).
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



pthread_mutex_t dbs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rv_db *dbs;

/*
 * PIPELINED: the commit this thread appended and has not waited for yet.
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

int
rv_db_log_open(const struct repld_conf *conf, bool bootstrap, struct repl **out)
{
	return rv_db_log_open_gated(conf, bootstrap, NULL, NULL, out);
}

int
rv_db_log_open_gated(const struct repld_conf *conf, bool bootstrap,
		int (*gate)(void *arg), void *gate_arg, struct repl **out)
{
	struct primary_cfg pc;
	bool no_rdma;

	primary_cfg_fill(&pc, conf, primary_cfg_provider(conf, &no_rdma));
	pc.cfg.create = bootstrap;
	pc.cfg.bootstrap = bootstrap;
	pc.cfg.promote_gate = gate;
	pc.cfg.promote_gate_arg = gate_arg;
	return repl_open(&pc.cfg, out);
}

void
rv_db_durable_at(struct rv_db *d, uint64_t lsn)
{
	uint64_t cur = atomic_load(&d->durable_lsn);

	while (cur < lsn && !atomic_compare_exchange_weak(&d->durable_lsn, &cur, lsn))
		;
}

/*
 * The next transaction id: one past the newest transaction record's (1 for
 * a log without one).  Walks back over the records that are not
 * transactions (each promotion's epoch-start record).  An image record
 * (image_record.h) carries the newest transaction id when it was written,
 * so that the id survives a release past the last transaction (an idle
 * database's image, rv_image.c); one that comes after a transaction may
 * carry an older id than it, so the larger counts.
 */
uint64_t
rv_db_txid_after(struct repl *repl, uint64_t *txn_lsn)
{
	struct repl_status st;
	struct repl_record_info info;
	uint64_t image_id = 0, image_lsn = 0;
	char magic[4];
	size_t len;

	if (repl_status(repl, &st) != 0 || st.last_lsn == 0)
		return 1;
	for (uint64_t lsn = st.last_lsn; lsn >= st.first_lsn && lsn > 0; lsn--) {
		if (repl_record_info(repl, lsn, &info) != 0 || info.client_id == 0 ||
		    info.len < 4 || repl_read(repl, lsn, magic, sizeof(magic), &len) != 0)
			continue;
		if (memcmp(magic, IMG_MAGIC, 4) == 0 && info.client_id > image_id) {
			image_id = info.client_id;
			if (image_lsn == 0)
				image_lsn = lsn;
		}
		if (info.len >= TXN_HDR_SIZE && memcmp(magic, TXN_MAGIC, 4) == 0) {
			*txn_lsn = lsn;
			return (info.client_id > image_id ? info.client_id : image_id) + 1;
		}
	}
	if (image_id != 0)
		*txn_lsn = image_lsn;
	return image_id + 1;
}

/*
 * At the cluster's first start, a database file that already holds pages
 * becomes the log's first transaction (id 1): every page, page 1 marked
 * for WAL mode.  The log must hold all of a database, because every open
 * rebuilds the file from it.  0 (also: nothing to import), or -1 with why.
 */
/*
 * Before the first start touches the cluster: a file to import must have
 * no frames in a -wal.  0, or -1 with why.
 */
static int
import_check(const char *path, char *why, size_t whylen)
{
	char wal[4096];
	struct stat st;

	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (stat(path, &st) == 0 && st.st_size > 0 && stat(wal, &st) == 0 &&
	    st.st_size > 0) {
		snprintf(why, whylen, "replvfs: %s: its -wal holds frames: checkpoint "
			"it first (sqlite3 %s 'PRAGMA wal_checkpoint(TRUNCATE)')",
			path, path);
		return -1;
	}
	return 0;
}

static int
import_file(struct rv_db *d, const char *path, char *why, size_t whylen)
{
	struct stat st;
	uint8_t hdr[100], *buf = NULL;
	uint32_t ps, pages;
	struct txn_hdr h;
	struct iovec iov;
	uint64_t lsn;
	int fd = -1, ret;

	/* import_check refused a -wal with frames before the log opened */
	if (stat(path, &st) != 0 || st.st_size == 0)
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0 ||
	    pread(fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		snprintf(why, whylen, "replvfs: %s: %s", path,
			fd < 0 ? strerror(errno) : "not an SQLite database (too short)");
		goto fail;
	}
	ps = (uint32_t)hdr[16] << 8 | hdr[17];
	ps = ps == 1 ? 65536 : ps;
	if (memcmp(hdr, "SQLite format 3", 16) != 0 || ps < TXN_PAGE_MIN ||
	    ps > TXN_PAGE_MAX || (ps & (ps - 1)) != 0 || st.st_size % ps != 0) {
		snprintf(why, whylen, "replvfs: %s: not an SQLite database (its header "
			"or its size)", path);
		goto fail;
	}
	pages = (uint32_t)(st.st_size / ps);
	h = (struct txn_hdr){ .version = TXN_VERSION, .flags = TXN_F_FIRST |
		TXN_F_LAST | TXN_F_WAL_RESET, .page_size = ps, .n_frames = pages,
		.first_frame = 1, .db_size = pages };
	memcpy(h.db_uuid, d->db_uuid, sizeof(h.db_uuid));
	if ((buf = malloc(txn_record_len(pages, ps))) == NULL) {
		snprintf(why, whylen, "replvfs: %s: out of memory", path);
		goto fail;
	}
	txn_hdr_encode(&h, buf);
	for (uint32_t i = 0; i < pages; i++) {
		uint8_t *f = buf + txn_record_len(i, ps);

		txn_pgno_encode(i + 1, f);
		if (pread(fd, f + TXN_FRAME_HDR_SIZE, ps, (off_t)i * ps) != (ssize_t)ps) {
			snprintf(why, whylen, "replvfs: %s: page %u: %s", path, i + 1,
				strerror(errno));
			goto fail;
		}
	}
	buf[TXN_HDR_SIZE + TXN_FRAME_HDR_SIZE + 18] = 2;
	buf[TXN_HDR_SIZE + TXN_FRAME_HDR_SIZE + 19] = 2;
	iov.iov_base = buf;
	iov.iov_len = txn_record_len(pages, ps);
	if ((ret = repl_appendv(d->repl, &iov, 1, d->next_txid, &lsn)) != 0 ||
	    (ret = repl_wait_durable(d->repl, lsn, d->timeout_ms)) != 0) {
		snprintf(why, whylen, "replvfs: %s: its %u pages did not become the "
			"log's first transaction: %s", path, pages, repl_strerror(ret));
		goto fail;
	}
	d->next_txid++;
	d->last_lsn = lsn;
	atomic_store(&d->appended_lsn, lsn);
	rv_db_durable_at(d, lsn);
	free(buf);
	close(fd);
	return 0;
fail:
	free(buf);
	if (fd >= 0)
		close(fd);
	return -1;
}

struct rv_db *
rv_db_find(const char *db_path)
{
	struct rv_db *d;

	pthread_mutex_lock(&dbs_lock);
	for (d = dbs; d != NULL && strcmp(d->path, db_path) != 0; d = d->next)
		;
	if (d != NULL)
		d->refs++;
	pthread_mutex_unlock(&dbs_lock);
	return d;
}

/*
 * The database at db_path made with its log opened from conf (taken over:
 * freed here on failure) as the primary, and listed; dbs_lock held.
 */
static struct rv_db *
make_locked(const char *db_path, struct repld_conf *conf, const struct rv_db_how *how,
		const char *conf_name, char *why, size_t whylen)
{
	struct rv_db *d;
	char err[512], *copy_path = NULL;
	uint64_t records = 0;
	int ret;

	if ((d = calloc(1, sizeof(*d))) == NULL || (d->path = strdup(db_path)) == NULL ||
	    pthread_mutex_init(&d->lock, NULL) != 0 ||
	    pthread_rwlock_init(&d->log_lock, NULL) != 0) {
		free(d);
		repld_conf_free(conf);
		snprintf(why, whylen, "replvfs: out of memory");
		return NULL;
	}
	if (how->bootstrap && import_check(db_path, why, whylen) != 0) {
		repld_conf_free(conf);
		free(d->path);
		free(d);
		return NULL;
	}
	/* opening the log may wait for the replicas (a promotion) */
	if ((ret = rv_db_log_open_gated(conf, how->bootstrap, how->promote_gate,
			how->promote_gate_arg, &d->repl)) != 0) {
		snprintf(why, whylen, "replvfs: %s: the log %s did not open as the "
			"primary: %s", db_path, conf->log.path, repl_strerror(ret));
		repld_conf_free(conf);
		free(d->path);
		free(d);
		return NULL;
	}
	memcpy(d->db_uuid, conf->cluster_uuid, sizeof(d->db_uuid));
	d->log_size = conf->log.size;
	copy_path = conf->sqlite_copy;
	conf->sqlite_copy = NULL;
	d->conf = *conf;	/* kept: a membership change opens the log again */
	d->refs = 1;
	d->timeout_ms = how->timeout_ms;
	d->pipelined = how->pipelined;
	d->next_txid = rv_db_txid_after(d->repl, &d->last_lsn);
	/*
	 * The log is the database: the file is rebuilt from it, so neither a
	 * -wal frame the log lacks nor one SQLite did not sync survives.
	 */
	if (how->bootstrap && import_file(d, db_path, why, whylen) != 0)
		goto fail_open;
	if (rv_rebuild(d->repl, db_path, copy_path, d->db_uuid, how->check, &records,
			err, sizeof(err))) {
		snprintf(why, whylen, "replvfs: rebuilding from the log: %s", err);
		goto fail_open;
	}
	if ((d->rel = rv_release_start(d->repl, db_path, d->db_uuid, how->timeout_ms,
			err, sizeof(err))) == NULL) {
		snprintf(why, whylen, "replvfs: %s", err);
		goto fail_open;
	}
	/*
	 * The rebuilt file holds the whole log: a base, and the log is
	 * released up to its newest transaction (which stays)
	 */
	if (d->last_lsn > 0)
		rv_release_offer(d->rel, d->last_lsn);
	free(copy_path);
	d->next = dbs;
	dbs = d;
	sqlite3_log(SQLITE_NOTICE, "replvfs: %s: rebuilt from %llu transaction "
		"records of the log of %s (next transaction id %llu)", db_path,
		(unsigned long long)records, conf_name,
		(unsigned long long)d->next_txid);
	return d;
fail_open:
	free(copy_path);
	(void)repl_close(&d->repl);
	repld_conf_free(&d->conf);
	pthread_rwlock_destroy(&d->log_lock);
	pthread_mutex_destroy(&d->lock);
	free(d->path);
	free(d);
	return NULL;
}

struct rv_db *
rv_db_get(const char *db_path, const char *conf_path, bool bootstrap,
		int timeout_ms, bool pipelined, rv_rebuild_check *check, char *why,
		size_t whylen)
{
	const struct rv_db_how how = { .bootstrap = bootstrap,
		.timeout_ms = timeout_ms, .pipelined = pipelined, .check = check };
	struct repld_conf conf;
	struct rv_db *d;
	char err[512];

	pthread_mutex_lock(&dbs_lock);
	for (d = dbs; d != NULL && strcmp(d->path, db_path) != 0; d = d->next)
		;
	if (d != NULL) {
		d->refs++;
		pthread_mutex_unlock(&dbs_lock);
		return d;
	}
	if (conf_path == NULL || *conf_path == '\0') {
		pthread_mutex_unlock(&dbs_lock);
		snprintf(why, whylen, "replvfs: %s: no repl_conf=FILE in its URI (the "
			"repld.conf that names its log and replicas)", db_path);
		return NULL;
	}
	if (repld_conf_load(conf_path, &conf, err, sizeof(err)) != 0) {
		pthread_mutex_unlock(&dbs_lock);
		snprintf(why, whylen, "replvfs: %s: %s", conf_path, err);
		return NULL;
	}
	d = make_locked(db_path, &conf, &how, conf_path, why, whylen);
	pthread_mutex_unlock(&dbs_lock);
	return d;
}

struct rv_db *
rv_db_open(const char *db_path, struct repld_conf *conf, const struct rv_db_how *how,
		const char *conf_name, char *why, size_t whylen)
{
	struct rv_db *d;

	pthread_mutex_lock(&dbs_lock);
	for (d = dbs; d != NULL && strcmp(d->path, db_path) != 0; d = d->next)
		;
	if (d != NULL) {
		pthread_mutex_unlock(&dbs_lock);
		repld_conf_free(conf);
		snprintf(why, whylen, "replvfs: %s: this process has its log open as "
			"the primary already", db_path);
		return NULL;
	}
	d = make_locked(db_path, conf, how, conf_name, why, whylen);
	pthread_mutex_unlock(&dbs_lock);
	return d;
}

void
rv_db_put(struct rv_db *d)
{
	struct rv_db **p;

	if (d == NULL)
		return;
	pthread_mutex_lock(&dbs_lock);
	if (--d->refs > 0) {
		pthread_mutex_unlock(&dbs_lock);
		return;
	}
	for (p = &dbs; *p != NULL && *p != d; p = &(*p)->next)
		;
	if (*p == d)
		*p = d->next;
	pthread_mutex_unlock(&dbs_lock);
	/* first: a change it runs ends before the log closes (a retired
	   database's are gone already) */
	rv_admin_sock_stop(&d->admin);
	rv_release_stop(&d->rel);
	(void)repl_close(&d->repl);
	repld_conf_free(&d->conf);
	pthread_rwlock_destroy(&d->log_lock);
	pthread_mutex_destroy(&d->lock);
	free(d->pg);
	free(d->iov);
	free(d->path);
	free(d);
}

bool
rv_db_in_doubt(struct rv_db *d)
{
	bool doubt;

	pthread_mutex_lock(&d->lock);
	doubt = d->poisoned != 0;
	pthread_mutex_unlock(&d->lock);
	return doubt;
}

uint64_t
rv_db_durable_lsn(struct rv_db *d)
{
	return atomic_load(&d->durable_lsn);
}

void
rv_db_retire(struct rv_db *d)
{
	struct rv_db **p;

	pthread_mutex_lock(&dbs_lock);
	for (p = &dbs; *p != NULL && *p != d; p = &(*p)->next)
		;
	if (*p == d)
		*p = d->next;
	pthread_mutex_unlock(&dbs_lock);
	rv_admin_sock_stop(&d->admin);
	/* a commit in its wait ends first (lock), then no one uses the log */
	pthread_mutex_lock(&d->lock);
	pthread_rwlock_wrlock(&d->log_lock);
	rv_release_stop(&d->rel);
	(void)repl_close(&d->repl);
	if (d->poisoned == 0)
		d->poisoned = REPL_E_FENCED;
	pthread_rwlock_unlock(&d->log_lock);
	pthread_mutex_unlock(&d->lock);
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
 * (or, pipelined, shows).  No more writes until the database is opened
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

	if (lsn <= atomic_load(&d->durable_lsn))
		return SQLITE_OK;
	pthread_rwlock_rdlock(&d->log_lock);
	ret = d->repl == NULL ? REPL_E_INVAL :
		repl_wait_durable(d->repl, lsn, d->timeout_ms);
	pthread_rwlock_unlock(&d->log_lock);
	if (ret != 0) {
		sqlite3_log(SQLITE_IOERR, "replvfs: %s: a checkpoint waits for LSN %llu, "
			"not durable: %s; the database file takes no transaction "
			"before it is", d->path, (unsigned long long)lsn,
			repl_strerror(ret));
		return SQLITE_IOERR_WRITE;
	}
	rv_db_durable_at(d, lsn);
	return SQLITE_OK;
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
	pthread_rwlock_rdlock(&d->log_lock);
	ret = pending.lsn <= atomic_load(&d->durable_lsn) ? 0 : d->repl == NULL ?
		REPL_E_INVAL : repl_wait_durable(d->repl, pending.lsn, d->timeout_ms);
	pthread_rwlock_unlock(&d->log_lock);
	if (ret != 0) {
		pthread_mutex_lock(&d->lock);
		poison(d, ret, pending.lsn, pending.txid);
		pthread_mutex_unlock(&d->lock);
	} else {
		rv_db_durable_at(d, pending.lsn);
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
	atomic_store(&d->appended_lsn, lsn);
	atomic_fetch_add_explicit(&d->wal_bytes, len, memory_order_relaxed);
	if (d->pipelined && pending.armed) {
		/* the connection's WAL hook waits, once the write lock is free */
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
