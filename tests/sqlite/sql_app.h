/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sql_app.h -- what the test applications over replvfs (replvfs_writer,
 * replvfs_bank) share: their one connection, SQLite's log on stderr, and
 * statements that must work or end the process with a code.
 */
#ifndef REPLVFS_SQL_APP_H
#define REPLVFS_SQL_APP_H

#include <stdint.h>

#include <sqlite3.h>

extern sqlite3 *db;		/* the application's connection */
extern const char *app_name;	/* in its messages: "NAME: ..." */

/* "NAME: what: SQLite's message" on stderr, and exit(code) */
void die(int code, const char *what) __attribute__((noreturn));
/* SQLITE_CONFIG_LOG's callback: "sqlite (CODE): message" on stderr */
void sqlite_log(void *arg, int code, const char *msg);
/* the one integer a query gives (exit 1 if none) */
int64_t one_int(const char *sql);
/* a statement that must work, or the process exits with code */
void exec(const char *sql, int code);

#endif
