/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_wal_map.h -- a -wal read through a shared mapping of the file.  A
 * commit's record takes its pages from where SQLite's writes left them
 * (the page cache), so that the only copy replvfs makes of a page is
 * librepl's into its ring.  SQLite's own buffers would not do: a page
 * spilled to the -wal before COMMIT is clean in SQLite's cache, and its
 * buffer may hold another page by the time the transaction commits.
 */
#ifndef REPLSQLITE_RV_WAL_MAP_H
#define REPLSQLITE_RV_WAL_MAP_H

#include <stddef.h>
#include <stdint.h>

struct rv_wal_map {
	int fd;				/* -1: not open */
	const uint8_t *base;		/* NULL: nothing mapped */
	size_t len;			/* bytes mapped from offset 0 */
};

/* nothing open */
void rv_wal_map_init(struct rv_wal_map *m);

/*
 * Opens the -wal at path, right after SQLite did (the same file: SQLite
 * removes a -wal only when no connection has the database open); it is
 * mapped at the first commit through it.  0, or -1 with errno.
 */
int rv_wal_map_open(struct rv_wal_map *m, const char *path);

/*
 * The file's bytes from offset 0 to end, mapped: valid until the next
 * call or rv_wal_map_close.  Only bytes the file holds may be read
 * (others raise SIGBUS): those written since the -wal was last truncated.
 * NULL with errno when it does not map (or is not open).
 */
const uint8_t *rv_wal_map_cover(struct rv_wal_map *m, uint64_t end);

void rv_wal_map_close(struct rv_wal_map *m);

#endif
