/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_check.c -- a rebuilt database checked by SQLite (rv_check.h) */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "rv_check.h"

/*
 * The file opened read-only and immutable (no locks, no -shm: nothing
 * else has it open, and page 1 may say WAL with no -wal beside it), the
 * pragma run, and its rows gathered: "ok" alone passes.
 */
static int
run(const char *path, const char *pragma, char *why, size_t whylen)
{
	char uri[4300], rows[400] = "";
	size_t u = 0, r = 0;
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc, n = 0;
	bool ok = false;

	u = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (const char *p = path; *p != '\0' && u + 4 < sizeof(uri); p++)
		u += (size_t)(strchr("?#%", *p) != NULL ?
			snprintf(uri + u, sizeof(uri) - u, "%%%02X", (unsigned char)*p) :
			snprintf(uri + u, sizeof(uri) - u, "%c", *p));
	snprintf(uri + u, sizeof(uri) - u, "?immutable=1");
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, pragma, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);

		if (n++ == 0 && t != NULL && strcmp(t, "ok") == 0)
			ok = true;
		if (t != NULL && r + 3 < sizeof(rows))
			r += (size_t)snprintf(rows + r, sizeof(rows) - r, "%s%s",
				r ? "; " : "", t);
		rc = SQLITE_OK;
	}
	if (rc == SQLITE_DONE && ok && n == 1)
		rc = SQLITE_OK;
	else if (rc == SQLITE_DONE)
		snprintf(why, whylen, "%s: the database rebuilt from the log fails "
			"%s: %s", path, pragma, rows);
	else
		snprintf(why, whylen, "%s: the database rebuilt from the log cannot "
			"be checked (%s): %s", path, pragma, db ? sqlite3_errmsg(db) :
			"out of memory");
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

static int
integrity(const char *path, char *why, size_t whylen)
{
	return run(path, "PRAGMA integrity_check(20)", why, whylen);
}

static int
quick(const char *path, char *why, size_t whylen)
{
	return run(path, "PRAGMA quick_check(20)", why, whylen);
}

bool
rv_check_by_name(const char *name, rv_rebuild_check **check)
{
	if (name == NULL || sqlite3_stricmp(name, "integrity") == 0)
		*check = integrity;
	else if (sqlite3_stricmp(name, "quick") == 0)
		*check = quick;
	else if (sqlite3_stricmp(name, "off") == 0)
		*check = NULL;
	else
		return false;
	return true;
}
