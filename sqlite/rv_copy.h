/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_copy.h -- a replica's copy of a replvfs database: a thread that
 * applies the committed transaction records of the replica's log to a
 * database file, which plain SQLite reads (read-only, rollback-journal
 * mode: docs/sqlite.md, "Reading on a replica").
 *
 * Each batch of records is applied under SQLite's EXCLUSIVE lock of the
 * file (its POSIX byte-range locks), so a reader's transaction sees the
 * database as of one commit: the lock waits for the readers that are in
 * a transaction, and a reader that begins meanwhile gets SQLITE_BUSY
 * (its busy handler retries).  The file change counter moves with every
 * batch, which tells readers to drop their cache.
 *
 * At start the copy follows from the log's first record: re-applying the
 * whole log over what the file holds yields the database at the commit
 * point (rv_apply.h).  A -wal and -shm beside the file are removed then:
 * they are not the log's.  At most every second, and at stop, the file is
 * synced and marked a base (rv_base.h) at what it applied, and the
 * replica holds the records after it (repl_replica_hold), from before it
 * first serves a primary: the log is released no further, so a copy
 * never misses a record.  A copy that cannot follow (its base is older
 * than the log's first record, it has none over a released log, or
 * another process wrote into it) is remade from its primary's image
 * (rv_remake.h) and follows again.
 */
#ifndef REPLSQLITE_RV_COPY_H
#define REPLSQLITE_RV_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"

struct rv_copy;

/*
 * Where the copy stands:
 *   STARTING -> FOLLOWING    the first batch applied (the whole log)
 *   STARTING, FOLLOWING -> REMAKING
 *                            it cannot follow the log: it asks the primary
 *                            for an image and applies it with the records
 *                            after the image's base, into a new file
 *   REMAKING -> FOLLOWING    the new file installed over the copy, marked
 *   any -> FAILED            a record it cannot apply, or the file failed;
 *                            it applies nothing more until a restart
 */
enum rv_copy_state {
	RV_COPY_STARTING = 0,	/* no record applied since start */
	RV_COPY_FOLLOWING = 1,
	RV_COPY_FAILED = 2,
	RV_COPY_REMAKING = 3,
};

struct rv_copy_status {
	enum rv_copy_state state;
	uint64_t applied_lsn;		/* the last record applied (0: none) */
	uint64_t transactions;		/* records applied since start */
	uint64_t batches;		/* times it took the file's lock */
	uint64_t lock_wait_ms;		/* time spent waiting for readers */
	uint32_t page_size;		/* 0 before the first record */
	uint32_t pages;			/* the database's, after the last one */
	uint64_t base_lsn;		/* the file is synced and marked as
					   holding up to it (rv_base.h); the
					   replica holds what follows (0: none) */
	bool holding;			/* the replica holds records for it
					   (false once it failed) */
	uint64_t hold_lsn;		/* the records after it stay in the
					   replica's log (0 with no base: all) */
	char error[320];		/* FAILED: why; REMAKING: why it is
					   remade */
	uint64_t remakes;		/* times it was remade since start */
	uint64_t image_lsn;		/* REMAKING: the first record of the
					   image it applies (0: waiting for one) */
	uint64_t image_bytes;		/* ... of the image's pages taken in */
	uint64_t image_total_bytes;	/* ... of the primary's file */
};

const char *rv_copy_state_name(enum rv_copy_state s);

/*
 * Follow node's log into the file at path (made if missing), in a thread
 * of its own.  0, or -1 with why.  node must stay open until
 * rv_copy_stop returned.
 */
int rv_copy_start(struct repl_replica_node *node, const char *path,
		const uint8_t db_uuid[16], struct rv_copy **out, char *why,
		size_t whylen);
void rv_copy_stop(struct rv_copy **c);
void rv_copy_get(struct rv_copy *c, struct rv_copy_status *st);

/*
 * A consistent copy of the file made at dest (replaced), the database as
 * of the transaction it last applied, *lsn: taken under SQLite's SHARED
 * lock, as a reader takes it, so the copy applies nothing while the bytes
 * are copied (a reflink where the file system has them, else an in-kernel
 * copy) and waits no longer.  1 with *lsn; 0 when the file is no
 * transaction's database now (starting, a batch being written or cut
 * short, failed) or the lock did not come within wait_ms; -1 with why.
 */
int rv_copy_snapshot(struct rv_copy *c, const char *dest, int wait_ms,
		uint64_t *lsn, char *why, size_t whylen);

#endif
