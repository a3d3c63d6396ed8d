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

struct rv_db;

/*
 * The database at db_path (SQLite's full path), its log opened from the
 * repld.conf at conf_path (its node as the primary; bootstrap: the
 * cluster's first start), or the one this process has open already.  A
 * commit waits up to timeout_ms for the replicas.  NULL with why (a
 * sentence) on failure.
 */
struct rv_db *rv_db_get(const char *db_path, const char *conf_path, bool bootstrap,
		int timeout_ms, bool pipelined, char *why, size_t whylen);
/* the database of db_path if this process has it open (a reference) */
struct rv_db *rv_db_find(const char *db_path);
void rv_db_put(struct rv_db *d);

/* what the -wal's writes say (vfs.c); each an SQLITE_* code */
int rv_db_wal_header(struct rv_db *d, const uint8_t hdr[32]);
int rv_db_frame_header(struct rv_db *d, uint32_t frame, const uint8_t hdr[24]);
/* the page size the -wal's header gave (0: none seen yet) */
uint32_t rv_db_page_size(struct rv_db *d);
/* an existing -wal's header, read when a connection opens it */
int rv_db_wal_seen(struct rv_db *d, const uint8_t hdr[32]);
/* a page of frame; the commit frame's page commits the transaction */
int rv_db_frame_page(struct rv_db *d, uint32_t frame, const void *page,
		int len);
/* the -wal was truncated or removed: what is staged is gone */
void rv_db_wal_reset(struct rv_db *d);

/*
 * PIPELINED (repl_commit=pipelined): a commit frame's write appends and
 * returns; the connection's WAL hook, after SQLite let the write lock go,
 * calls this to wait until this thread's last commit is durable.  SQLITE_OK
 * (also when nothing waits), or SQLITE_IOERR_WRITE: the commit is not known
 * durable (and the database takes no more writes).
 */
int rv_db_wait_pending(void);
/* this thread's next commit will be waited for by its WAL hook */
void rv_db_arm_pending(void);
/* a transaction ended (its locks let go): an arm it did not use lapses */
void rv_db_disarm_pending(void);

/* a write transaction may begin (not poisoned); SQLITE_OK or an error */
int rv_db_writable(struct rv_db *d);

/* what the commits did, for tests and status */
struct rv_db_stats {
	uint64_t commits;		/* transactions made durable */
	uint64_t last_lsn;		/* the last one's record */
	uint64_t next_txid;
	bool poisoned;
};
void rv_db_stats(struct rv_db *d, struct rv_db_stats *out);

#endif
