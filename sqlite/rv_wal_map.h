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
	const char *path;		/* the -wal's: SQLite's string, kept */
	int fd;				/* -1: not open yet */
	const uint8_t *base;		/* NULL: nothing mapped */
	size_t len;			/* bytes mapped from offset 0 */
};

/* nothing open yet: the file is opened and mapped at its first use */
void rv_wal_map_init(struct rv_wal_map *m, const char *path);

/*
 * The file's bytes from offset 0 to end, mapped: valid until the next
 * call or rv_wal_map_close.  Only bytes the file holds may be read
 * (others raise SIGBUS): those written since the -wal was last truncated.
 * NULL with errno when the file does not open or map.
 */
const uint8_t *rv_wal_map_cover(struct rv_wal_map *m, uint64_t end);

void rv_wal_map_close(struct rv_wal_map *m);

#endif
