/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_remake.h -- a replica's copy made anew from its primary's image
 * (image_record.h), when it cannot follow its log: its base is older than
 * the log's first record, it has none over a released log, or another
 * process wrote into it (docs/sqlite.md, "Remade from the primary").
 *
 * The image is the primary's database file at its base B, read while
 * SQLite may checkpoint into it: a page that no transaction after B
 * writes is as at B; any other page may be anything, and a transaction
 * after B rewrites it whole.  So the records after B, applied in LSN
 * order into a new file beside the copy (NAME-repl-remake), with the
 * image's pages written only where no transaction applied so far wrote
 * (nor cut the file below), yield the database at the last record once
 * the image's last page is in: every page then is the last transaction's
 * that wrote it, or B's.
 *
 * rv_copy.c finds the image's first record, holds the records after B,
 * and feeds every record from B + 1 here in order; once complete, it
 * installs the file over the copy under SQLite's EXCLUSIVE lock.
 */
#ifndef REPLSQLITE_RV_REMAKE_H
#define REPLSQLITE_RV_REMAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rv_apply.h"

#define RV_REMAKE_SUFFIX "-repl-remake"

struct rv_remake {
	char *tmp_path;			/* NAME-repl-remake */
	struct rv_apply a;		/* the records into it */
	uint64_t base_lsn;		/* the image's base */
	uint64_t first_lsn;		/* its first record's LSN */
	uint32_t next_pgno;		/* the image's next page */
	uint32_t image_pages;		/* the primary's file when it began */
	uint32_t min_db_pages;		/* the smallest size a transaction
					   applied here left (UINT32_MAX: none) */
	bool complete;			/* its last page is in */
	uint8_t *written;		/* pages a transaction wrote (a bit each) */
	size_t written_cap;		/* bytes of it */
	uint64_t image_bytes;		/* of image pages taken in */
};

/*
 * Begins a remake of the copy at path from the image whose first record,
 * at first_lsn, h_first (a parsed FIRST record) describes: the file
 * beside it made empty.  0, or -1 with why.
 */
int rv_remake_begin(struct rv_remake *m, const char *path,
		const uint8_t db_uuid[16], uint64_t first_lsn, uint64_t base_lsn,
		uint32_t image_pages, char *why, size_t whylen);
/*
 * The record at lsn, the next after base_lsn or the last one given:
 * applied.  0; 1 when it is the first record of another image (the caller
 * begins again from it); -1 with why (a record that does not fit: an
 * image cut short, a failed write).
 */
int rv_remake_record(struct rv_remake *m, uint64_t lsn, const void *data,
		size_t len, char *why, size_t whylen);
/*
 * The complete file written over fd (the copy, under the caller's lock):
 * every page, the size, page 1 saying rollback journal with change
 * counter *counter + 1 (updated), synced.  0, or -1 with why.
 */
int rv_remake_install(struct rv_remake *m, int fd, uint32_t *counter,
		char *why, size_t whylen);
/* the file beside removed, the memory freed; m may be begun again */
void rv_remake_end(struct rv_remake *m);

#endif
