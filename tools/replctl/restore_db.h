/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * restore_db.h -- replctl restore --database: a replvfs database as of a
 * transaction, from an archive's bases and records (restore_db.c).
 */
#ifndef REPLCTL_RESTORE_DB_H
#define REPLCTL_RESTORE_DB_H

#include <stdint.h>

#include "archive.h"

#define RESTORE_DB_FILE "replvfs.db"

struct restore_db_result {
	uint64_t base_lsn;		/* the base it started from (0: none,
					   the archive's first record on) */
	uint64_t transactions;		/* applied over it */
	uint32_t pages;			/* the database's, after the last (0:
					   none applied) */
};

/*
 * The point of a restore within from..to: the LSN of the last transaction
 * record at or before to, and with to_time_ms (0: none) before the first
 * transaction whose commit time is after it; *end 0 when there is none.
 * 0, or -1 with why (a record that is not a replvfs transaction, a read).
 */
int restore_db_end(struct archive_target *t, uint64_t from, uint64_t to,
		uint64_t to_time_ms, uint64_t *end, uint64_t *end_time_ms, char *why,
		size_t whylen);

/* the database as of the transaction at end, into path; 0, or -1 with why */
int restore_db_build(struct archive_target *t, uint64_t from, uint64_t end,
		const char *path, struct restore_db_result *res, char *why,
		size_t whylen);

#endif
