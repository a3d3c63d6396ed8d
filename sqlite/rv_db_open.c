/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db_open.c -- a replicated SQLite database opened, found, retired and
 * closed (rv_db.h): its log opened as the primary, the file rebuilt from it
 * or imported into it, and the process's list of open databases.  The
 * -wal's writes and the commits are rv_db.c's.
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
		if (info.len >= TXN_HDR_SIZE_V1 && memcmp(magic, TXN_MAGIC, 4) == 0) {
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
	h.commit_ms = rv_db_commit_stamp(d);
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
