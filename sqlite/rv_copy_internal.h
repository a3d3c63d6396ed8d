/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_copy_internal.h -- what rv_copy.c (a copy following its log) and
 * rv_copy_remake.c (a copy made anew from the primary's image) share: the
 * copy's state and the steps both take.  Private to those two files.
 */
#ifndef REPLSQLITE_RV_COPY_INTERNAL_H
#define REPLSQLITE_RV_COPY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "repl.h"
#include "rv_apply.h"
#include "rv_copy.h"
#include "rv_remake.h"

#define WAIT_MS		200		/* a look at the stop flag */

/*
 * SQLite's file locks are POSIX byte-range locks on these bytes of the
 * database file (SQLite's "File Locking And Concurrency", the unix VFS):
 * rv_copy.c takes them as a writer, rv_copy_snapshot.c as a reader.
 */
#define LOCK_PENDING	0x40000000L
#define LOCK_RESERVED	(LOCK_PENDING + 1)
#define LOCK_SHARED	(LOCK_PENDING + 2)
#define LOCK_SHARED_LEN	510L
/* what a copy that cannot follow does instead of failing (rv_remake.h) */
#define REMAKE		(-3)

struct batch_rec {
	uint64_t lsn;
	size_t off, len;
};

struct rv_copy {
	struct repl_replica_node *node;
	pthread_t thread;
	atomic_int stop;
	char *path;
	struct rv_apply a;
	char why[320];
	uint64_t base_lsn;		/* the file's base marker (0: none) */
	bool from_primary;		/* the file came from a primary (its
					   -wal, or page 1 says WAL), or a batch
					   was cut short (APPLYING_SUFFIX):
					   readers wait until it is a commit's
					   again */
	char *applying;			/* PATH-repl-applying */
	/*
	 * The transaction the file is the database of, set under the file's
	 * EXCLUSIVE lock (0: none, a batch is being written, or it may hold
	 * more than it applied since the start): what a snapshot under the
	 * SHARED lock reads (rv_copy_snapshot)
	 */
	_Atomic uint64_t file_lsn;
	int crash_at;			/* tests, debug builds: RV_COPY_CRASH */
	uint64_t marked_ms;		/* when it was last marked */
	uint64_t unmarked_bytes;	/* of records applied since */
	uint64_t log_size;		/* the replica's ring: an eighth of it
					   applied is marked at once */
	struct rv_remake m;		/* REMAKING: the new file */

	/* a batch: records copied out of the log, then applied */
	uint8_t *buf;
	size_t cap, used;
	struct batch_rec *recs;
	size_t n_recs, cap_recs;

	pthread_mutex_t lock;		/* guards st */
	struct rv_copy_status st;
};

void rv_copy_sleep_ms(long ms);
uint64_t rv_copy_now_ms(void);
/* SQLite's EXCLUSIVE lock of the file; false when stopped meanwhile */
bool rv_copy_lock(struct rv_copy *c);
void rv_copy_unlock(struct rv_copy *c);
/* the next records from `from` into the batch: 1 some, 0 none, -1 (c->why) */
int rv_copy_next_batch(struct rv_copy *c, uint64_t from);
/* synced and marked a base at what it applied, the hold moved: 0, -1 */
int rv_copy_mark_base(struct rv_copy *c);
/* a batch's sentinel beside the file: 0, -1 (c->why) */
int rv_copy_applying_begin(struct rv_copy *c);
/* the status after a batch: FOLLOWING, what it applied */
void rv_copy_publish(struct rv_copy *c, uint64_t waited_ms);
/*
 * Made anew from the primary's image (rv_copy_remake.c); locked: the
 * caller holds the file's lock.  0 following again, -1 (c->why), -2
 * stopped.
 */
int rv_copy_remake(struct rv_copy *c, bool locked);

#endif
