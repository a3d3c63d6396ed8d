/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_apply.h -- transaction records (txn_record.h) written into a database
 * file as pages, in log order.  Each record carries whole pages, so
 * applying the records of a log from its first one, in order, yields the
 * database as of the last one applied, whatever the file held before;
 * applying one again changes nothing.
 *
 * Two users: the primary rebuilds its database from its log at open
 * (rv_rebuild), and a replica's copy follows its log (rv_copy.c).
 */
#ifndef REPLSQLITE_RV_APPLY_H
#define REPLSQLITE_RV_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "repl.h"

struct rv_apply {
	int fd;				/* the file the pages go to */
	const char *name;		/* for messages: the file, or the log */
	uint8_t db_uuid[16];		/* the records' database identity */
	uint32_t page_size;		/* 0 until the first record */
	uint32_t db_pages;		/* pages after the last record applied */
	uint64_t applied_lsn;		/* the last record applied (0: none) */
	uint64_t txid;			/* its transaction id */
	uint64_t records;		/* records applied */
	bool rollback_header;		/* write page 1 for rollback-journal
					   readers (rv_copy.c) */
	uint32_t change_counter;	/* with it: the file change counter
					   written last */
	uint32_t crash_after_pages;	/* tests, debug builds: SIGKILL this
					   process after so many more page
					   writes (0: never; rv_copy.c) */
};

/* len bytes at off, all of them (a short write goes on); 0, or -1 (errno) */
int rv_write_all(int fd, const void *buf, size_t len, off_t off);

/*
 * Apply the record at lsn (client id txid): its pages, then the size of
 * the database.  0, or -1 with why naming the record (a record that is
 * not this database's transaction, or a failed write).
 */
int rv_apply_record(struct rv_apply *a, uint64_t lsn, uint64_t txid,
		const void *data, size_t len, char *why, size_t whylen);

/*
 * Remove the -wal and -shm beside the database at path: SQLite reads a
 * database in WAL mode over its -wal, and frames there are not the log's.
 * 0, or -1 with why.
 */
int rv_drop_wal(const char *path, char *why, size_t whylen);

/*
 * A check of a rebuilt database file before it replaces the database (an
 * SQLite integrity check, in rv_db.c: this file links no SQLite).  0, or
 * -1 with why.
 */
typedef int rv_rebuild_check(const char *path, char *why, size_t whylen);

/*
 * The database file at path rebuilt from every transaction record of the
 * log: written beside it (NAME-repl-rebuild), synced, checked (check, may
 * be NULL), then renamed over it once its -wal and -shm are gone, so a
 * crash at any point leaves either the old file or the new one (and the
 * next open rebuilds again).  When the log no longer holds its first
 * records (released), the new file starts as a copy of a base that holds
 * them (rv_base.h): the database's own, or the replica copy's at copy_path
 * (may be NULL), the newer first; one that fails the check is passed over
 * for the other, and with none left the rebuild fails, leaving the
 * database as it was and the last rebuilt file for inspection.  The new
 * file is a base at the log's last LSN.  A log without a transaction
 * leaves the file as it is only when it is missing or empty.  0, or -1
 * with why.
 */
int rv_rebuild(struct repl *repl, const char *path, const char *copy_path,
		const uint8_t db_uuid[16], rv_rebuild_check *check,
		uint64_t *records, char *why, size_t whylen);

#endif
