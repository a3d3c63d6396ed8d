/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * extension.c -- replvfs as a loadable SQLite extension: ".load
 * libreplvfs" in the sqlite3 shell, sqlite3_load_extension() or Python's
 * Connection.load_extension() registers the "repl" VFS for the process.
 * It stays registered after the loading connection closes
 * (SQLITE_OK_LOAD_PERMANENTLY).
 */
#include "config.h"

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "replvfs.h"

int sqlite3_replvfs_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

int
sqlite3_replvfs_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	int rc;

	(void)db;
	SQLITE_EXTENSION_INIT2(api);
	if ((rc = replvfs_register()) != SQLITE_OK) {
		*err = sqlite3_mprintf("replvfs: the VFS could not be registered");
		return rc;
	}
	return SQLITE_OK_LOAD_PERMANENTLY;
}
