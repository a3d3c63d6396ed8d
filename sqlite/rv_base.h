/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_base.h -- a database file as a base: the LSN up to which it durably
 * holds every transaction of the log, kept beside it in NAME-repl-base.
 *
 * Records up to a base's LSN can leave the log (repl_release): the file
 * stands for them.  Three files are bases: the primary's database after
 * a checkpoint restarted its WAL (rv_db.c), a replica's copy
 * (rv_copy.c), and the file a rebuild made (rv_rebuild).  Applying the
 * log's records over a base, from any record up to its LSN + 1 on,
 * yields the database at the last one (rv_apply.h), so a base may hold
 * more than its LSN says, never less.
 *
 * The marker is written after the file was synced, into a file beside it
 * that is synced and renamed over the old marker: a crash leaves the old
 * marker or the new one, each true of the file.  Format (little-endian,
 * RV_BASE_SIZE bytes):
 *
 *   off size field
 *     0    8 magic     "RVBASE" 0x00 0x01
 *     8   16 db_uuid   the cluster's: which database's log
 *    24    8 lsn       every transaction up to it is in the file (not 0)
 *    32    8 lsn_check the bitwise complement of lsn
 *    40   24 reserved  0
 */
#ifndef REPLSQLITE_RV_BASE_H
#define REPLSQLITE_RV_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RV_BASE_SIZE 64
#define RV_BASE_SUFFIX "-repl-base"

/*
 * The marker of the database at db_path: 1 with *lsn, 0 when there is
 * none, -1 with why when it is not one (damaged, or another database's).
 */
int rv_base_read(const char *db_path, const uint8_t db_uuid[16], uint64_t *lsn,
		char *why, size_t whylen);

/*
 * db_fd (the database file, any open mode) synced, then the marker of
 * db_path set to lsn.  0, or -1 with why.
 */
int rv_base_write(const char *db_path, int db_fd, const uint8_t db_uuid[16],
		uint64_t lsn, char *why, size_t whylen);

/*
 * The marker of db_path removed, durably: before a write into the file
 * that is not a record after its LSN, which would make it untrue.  0, or
 * -1 with why.
 */
int rv_base_remove(const char *db_path, char *why, size_t whylen);

#ifdef RPMA_DEBUG_FAULT_INJECTION
/* tests: the next rv_base_write kills this process before its rename */
extern bool rv_base_crash_before_rename;
#endif

#endif
