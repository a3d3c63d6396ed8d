/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_db_internal.h -- a replicated database's state, shared by rv_db_open.c
 * (its log opened, the database listed, retired, closed), rv_db.c (its
 * staged transaction and commit), rv_db_membership.c (its
 * membership changed while it runs) and rv_db_readers.c (what a reader
 * may read while commits are in flight); nothing else includes it.
 */
#ifndef REPLSQLITE_RV_DB_INTERNAL_H
#define REPLSQLITE_RV_DB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "repl.h"
#include "repld_conf.h"
#include "rv_db.h"
#include "txn_record.h"

#define RV_INFLIGHT_MAX 64

struct rv_db {
	struct rv_db *next;
	int refs;
	char *path;
	struct repl *repl;
	uint8_t db_uuid[16];		/* the cluster's: one database per log */
	/*
	 * repl_conf's settings; its peers and quorum are the membership the
	 * log runs under now (rv_db_reconfigure changes them).
	 */
	struct repld_conf conf;
	/*
	 * Held shared by whoever uses repl without lock (a checkpoint's, an
	 * armed commit's and a reader's wait, rv_db_inspect), exclusively while a
	 * membership change closes the log and opens it again.  After lock.
	 */
	pthread_rwlock_t log_lock;
	struct rv_admin_sock *admin;	/* repl_admin=1: replctl's socket */

	/*
	 * Guards what follows.  SQLite's WAL write lock already makes the
	 * writers one at a time; this covers a connection opening the -wal
	 * (wal_seen) while another writes, and keeps the order of SQLite's
	 * calls out of the argument.  Held across a commit's wait: the next
	 * writer waits for the write lock then anyway.
	 */
	pthread_mutex_t lock;

	/* the -wal as its header said */
	uint32_t page_size;
	uint32_t salt1, salt2;
	bool wal_reset;			/* the next record says the WAL restarted */

	/*
	 * The transaction being written: frames first .. first + n - 1 of the
	 * -wal, each frame's page number as the record carries it in pg; the
	 * pages stay in the -wal, where the commit reads them (rv_wal_map.h).
	 * pg and iov (the record gathered at commit) grow and never shrink: a
	 * commit allocates nothing once the largest transaction has been seen.
	 */
	uint8_t (*pg)[TXN_FRAME_HDR_SIZE];
	struct iovec *iov;
	size_t pg_cap, iov_cap;		/* in frames, in iovecs */
	uint32_t first, n;
	uint32_t commit_frame;		/* 0: the commit frame is not written */
	uint32_t db_size;
	/*
	 * The last transaction committed in this WAL generation, frames
	 * committed_first .. committed (0: none).  Its page numbers stay in pg
	 * until the next transaction stages a frame.
	 */
	uint32_t committed_first, committed;

	int timeout_ms;			/* a commit's wait for the replicas */
	bool pipelined;			/* repl_commit=pipelined: readers do
					   not wait for commits in flight */
	uint64_t next_txid;
	uint64_t last_lsn;		/* the newest transaction appended, or
					   the log's last LSN at open */
	uint64_t last_commit_ms;	/* the newest commit_ms stamped (txn_record.h) */
	/*
	 * The newest appended and the newest known durable: a checkpoint's
	 * write of the database file waits for the one to reach the other
	 * (rv_db_checkpoint_write).  Atomics: the checkpointer does not take
	 * lock.
	 */
	_Atomic uint64_t appended_lsn, durable_lsn;
	struct rv_release *rel;		/* checkpoints become releases */
	uint64_t log_size;		/* its ring's bytes */
	_Atomic uint64_t wal_bytes;	/* of records since the WAL restarted */
	int poisoned;			/* 0, or the REPL_E_* that left the log
					   and this file in doubt */
	/*
	 * STRICT: the commits of this WAL generation appended and not yet
	 * seen durable, oldest first, each its LSN and commit frame; frames
	 * up to durable_frame are durable.  A reader of a frame past it
	 * waits (rv_db_wal_read).  A commit that finds the list full is not
	 * listed: durable_frame then stays behind until everything appended
	 * is durable, and readers wait longer, never less.  Under lock.
	 */
	struct { uint64_t lsn; uint32_t frame; } inflight[RV_INFLIGHT_MAX];
	unsigned inflight_head, inflight_n;
	uint32_t durable_frame;
};

/* the open databases of this process, and what they share */
extern pthread_mutex_t dbs_lock;

/* the log of conf, opened as the primary: 0 or a REPL_E_* */
int rv_db_log_open(const struct repld_conf *conf, bool bootstrap, struct repl **out);
/* the same behind a promotion gate (repl_cfg.promote_gate; NULL: none) */
int rv_db_log_open_gated(const struct repld_conf *conf, bool bootstrap,
		int (*gate)(void *arg), void *gate_arg, struct repl **out);
/* lsn is durable: the newest known */
void rv_db_durable_at(struct rv_db *d, uint64_t lsn);
/*
 * A transaction's commit time (txn_record.h, commit_ms): the wall clock
 * in ms since 1970, never below the one stamped before by this process
 * (a clock stepped back repeats the last).  By the appending thread.
 */
uint64_t rv_db_commit_stamp(struct rv_db *d);
/*
 * Until lsn is durable (at once when known to be), under log_lock shared
 * and without lock: 0, or the REPL_E_* of repl_wait_durable
 */
int rv_db_wait_lsn(struct rv_db *d, uint64_t lsn);
/* a commit at lsn, ending at WAL frame frame, is in flight; under lock */
void rv_db_inflight_add(struct rv_db *d, uint64_t lsn, uint32_t frame);
/* the -wal begins again (frames count from 1): none listed; under lock */
void rv_db_inflight_reset(struct rv_db *d);

#endif
