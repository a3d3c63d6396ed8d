/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_restore.h -- a log written offline from records (an archive's): a
 * new file in the format of wal.c, holding each record at its own LSN,
 * with its epoch, client id and payload, as a primary's log with no
 * membership, marked WAL_F_RESTORED.  Written with pwrite in large
 * pieces and made durable once, at the end.
 */
#ifndef REPL_WAL_RESTORE_H
#define REPL_WAL_RESTORE_H

#include <stdint.h>

#include "repl.h"

struct wal_restore;

/*
 * Make path (it must not exist: REPL_E_INVAL), size bytes, locked as a
 * log is; nothing in it is a log until wal_restore_finish.
 */
int wal_restore_open(const char *path, uint64_t size,
		const uint8_t cluster_uuid[16], uint32_t node_id,
		struct wal_restore **wr);

/*
 * The next record: the first at any LSN, then each at the LSN after the
 * one before, its epoch not below that one's.  When the ring has no room
 * for it, the oldest records are let go, as a release would.  REPL_E_INVAL
 * and REPL_E_TOO_BIG refuse the record only; REPL_E_IO (a write failed)
 * ends the restore: every later call returns it.
 */
int wal_restore_add(struct wal_restore *w, const struct repl_log_record *rec);

/* the header last, then all durable; frees w (and removes path on failure) */
int wal_restore_finish(struct wal_restore *w);

/* remove path and free w */
void wal_restore_abort(struct wal_restore *w);

#endif
