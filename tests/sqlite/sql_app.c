/* SPDX-License-Identifier: BSD-3-Clause */
/* sql_app.c -- the test applications' shared SQL helpers (sql_app.h) */
#include <stdio.h>
#include <stdlib.h>

#include "sql_app.h"

sqlite3 *db;
const char *app_name = "app";

void
die(int code, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", app_name, what, db ? sqlite3_errmsg(db) : "");
	exit(code);
}

void
sqlite_log(void *arg, int code, const char *msg)
{
	(void)arg;
	fprintf(stderr, "sqlite (%d): %s\n", code, msg);
}

int64_t
one_int(const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		die(1, sql);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void
exec(const char *sql, int code)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "%s: %s: %s\n", app_name, sql, err ? err : "?");
		exit(code);
	}
}
