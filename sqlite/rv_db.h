/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db.h -- one replicated SQLite database as replvfs holds it: the
 * librepl log its transactions go to (opened as the primary from a
 * repld.conf file), the transaction being written (its WAL frames, staged
 * by frame index), and the commit: one record, appended and waited for
 * until it is durable where the configuration says.
 *
 * Every connection of the process to the same database file shares one
 * rv_db (by the file's full path).  Locks: the list of databases' lock,
 * then a database's own (never the other way round); a database's is
 * held across a commit's wait, which SQLite's WAL write lock serializes
 * anyway.
 */
#ifndef REPLSQLITE_RV_DB_H
#define REPLSQLITE_RV_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"
#include "rv_apply.h"

struct rv_db;

/*
 * The next transaction id after the log's newest (1 without one), and in
 * *txn_lsn the record that says so (unchanged without one).
 */
uint64_t rv_db_txid_after(struct repl *repl, uint64_t *txn_lsn);

/*
 * The database at db_path (SQLite's full path), its log opened from the
 * repld.conf at conf_path (its node as the primary; bootstrap: the
 * cluster's first start), or the one this process has open already.  A
 * commit waits up to timeout_ms for the replicas; the file rebuilt from
 * the log at the first open is checked with check (may be NULL).  NULL with why (a
 * sentence) on failure.
 */
struct rv_db *rv_db_get(const char *db_path, const char *conf_path, bool bootstrap,
		int timeout_ms, bool pipelined, rv_rebuild_check *check, char *why,
		size_t whylen);
/*
 * How rv_db_open opens the log as the primary: a promotion that the
 * application's own coordinator stands behind (rv_ha.h).
 */
struct rv_db_how {
	bool bootstrap;			/* the cluster's first start */
	int timeout_ms;			/* a commit's wait for the replicas */
	bool pipelined;
	rv_rebuild_check *check;	/* NULL: none */
	int (*promote_gate)(void *arg);	/* repl_cfg.promote_gate; NULL: none */
	void *promote_gate_arg;
};
/*
 * The database at db_path opened with its log from conf (taken over:
 * freed by the database, or here on failure) as the primary, one reference
 * to the caller; conf_name names conf in the log.  NULL with why when the
 * process has it open already or the open fails.
 */
struct repld_conf;
struct rv_db *rv_db_open(const char *db_path, struct repld_conf *conf,
		const struct rv_db_how *how, const char *conf_name, char *why,
		size_t whylen);
/*
 * The database gives up its log while connections may still hold it (a
 * step-down): no open finds it any more, a commit in its wait ends first,
 * the log is closed, and it takes no more writes; the references keep the
 * rest until their rv_db_put.
 */
void rv_db_retire(struct rv_db *d);
/* a commit's outcome is unknown: the database takes no more writes */
bool rv_db_in_doubt(struct rv_db *d);
/* the newest LSN known durable: every COMMIT that returned is at or below */
uint64_t rv_db_durable_lsn(struct rv_db *d);
/* the database of db_path if this process has it open (a reference) */
struct rv_db *rv_db_find(const char *db_path);
void rv_db_put(struct rv_db *d);

/*
 * A write of the -wal (vfs.c, after the file took it): its header, a
 * frame's header or a frame's page; the commit frame's page commits the
 * transaction, its pages read from the -wal through map (the writing
 * connection's).  SQLITE_OK or an SQLITE_* error.
 */
struct rv_wal_map;
int rv_db_wal_write(struct rv_db *d, struct rv_wal_map *map, const void *buf,
		int amt, int64_t off);
/*
 * STRICT: a read of the -wal at off by a connection that does not hold
 * SQLite's WAL write lock (vfs.c): returns once the frame there is durable
 * (at once when it is known to be, or when pipelined).  SQLITE_OK, or
 * SQLITE_IOERR_READ: its commit did not become durable in time, or is in
 * doubt (rv_db_readers.c).
 */
int rv_db_wal_read(struct rv_db *d, int64_t off);
/* the newest LSN appended (0: none by this process) */
uint64_t rv_db_appended_lsn(struct rv_db *d);
/*
 * The LSN of the record of the last transaction this thread committed
 * through the repl VFS, any database (0: none); repl_last_commit_lsn()
 */
uint64_t rv_db_thread_last_commit_lsn(void);
/*
 * STRICT: a connection that let the write lock go at LSN lsn (it may have
 * read up to it) begins its next read: returns once lsn is durable, as
 * rv_db_wal_read (SQLITE_OK at once when pipelined).
 */
int rv_db_wait_seen(struct rv_db *d, uint64_t lsn);
/*
 * A checkpoint's write of the database file: it waits until every
 * transaction appended is durable, so the file (a base, rv_base.h) never
 * holds one the log may lose.  SQLITE_OK or SQLITE_IOERR_WRITE.
 */
int rv_db_checkpoint_write(struct rv_db *d);
/*
 * The records since the WAL last restarted fill an eighth of the log: a
 * checkpoint is due, so that the WAL restarts and the log is released
 * (rv_release.h) before it fills, whatever SQLite's frame count says.
 */
bool rv_db_checkpoint_due(struct rv_db *d);
/* an existing -wal's header, read when a connection opens it */
int rv_db_wal_seen(struct rv_db *d, const uint8_t hdr[32]);
/* the -wal was truncated or removed: what is staged is gone */
void rv_db_wal_reset(struct rv_db *d);

/*
 * What the SQL functions of rv_admin.c see of a database: its log (NULL
 * once a membership change that failed left it closed), repl_conf's
 * settings, whose peers and quorum are the membership now, and its
 * releases.
 */
struct repld_conf;
struct repld_peer;
struct rv_release;

struct rv_db_view {
	const char *path;
	struct repl *repl;
	const struct repld_conf *conf;
	struct rv_release *rel;
	uint64_t appended_lsn, durable_lsn;
};

/* fn with the view, while no membership change swaps the log */
void rv_db_inspect(struct rv_db *d, void (*fn)(const struct rv_db_view *v, void *arg),
		void *arg);

/*
 * repl_conf's admin_socket served for replctl (rv_admin_sock.h) until the
 * database closes; once per database.  0, or -1 with why.
 */
int rv_db_admin_listen(struct rv_db *d, char *why, size_t whylen);

/*
 * A membership change while the database runs, as repld's: under the
 * database's lock (no commit between its append and its wait) and with
 * every other use of the log held off (the release thread paused), what
 * was appended is made durable, the log is closed and opened again as the
 * primary of peers[0 .. n_peers) with quorum, as a reconfiguration (the
 * engine stores a joint membership, then the final one once enough old
 * nodes hold it); commits wait meanwhile.  The database file is not
 * rebuilt: the log is the same.  If that open fails, the old membership
 * is opened again; if that fails too, the database takes no more writes.
 * The peers' addresses are copied.  0 with the log's status in *st
 * (st->config_joint: the change is not committed yet), or a REPL_E_* with
 * why (a sentence).
 */
int rv_db_reconfigure(struct rv_db *d, const struct repld_peer *peers, int n_peers,
		int quorum, struct repl_status *st, char *why, size_t whylen);

/*
 * An armed commit (either repl_commit): its commit frame's write appends
 * and returns; the connection's WAL hook, after SQLite let the write lock
 * go, calls this to wait until this thread's last commit is durable.  SQLITE_OK
 * (also when nothing waits), or SQLITE_IOERR_WRITE: the commit is not known
 * durable (and the database takes no more writes).
 */
int rv_db_wait_pending(void);
/* this thread's next commit will be waited for by its WAL hook */
void rv_db_arm_pending(void);
/* a transaction ended (its locks let go): an arm it did not use lapses */
void rv_db_disarm_pending(void);

#endif
