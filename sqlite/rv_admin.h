/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_admin.h -- a replvfs primary administered from its own process: SQL
 * functions on every connection of the repl VFS (docs/sqlite.md,
 * "Changing the membership"):
 *
 *   repl_member_add(host, port [, quorum])     a replica joins
 *   repl_member_remove(host, port [, quorum])  a replica leaves
 *   repl_status()                              the primary's state, JSON
 *
 * A change is repld's ADD and REMOVE (tools/repld/node_membership.c,
 * remember): the same checks and messages, then the log closed and opened
 * again under the next membership as a reconfiguration
 * (rv_db_reconfigure), while commits wait.  One change at a time in the
 * process.
 */
#ifndef REPLSQLITE_RV_ADMIN_H
#define REPLSQLITE_RV_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

struct sqlite3;
struct rv_db;

/* the functions, on a connection whose main database is the repl VFS's */
int rv_admin_register(struct sqlite3 *db);

/*
 * host:port added to the membership (add) or removed from it, with quorum
 * (-1: add keeps it, remove keeps it unless fewer replicas remain).  0
 * with what it did in msg, or a REPL_E_* with why in msg.
 */
int rv_admin_change(struct rv_db *d, bool add, const char *host, unsigned port,
		int quorum, char *msg, size_t msglen);

/*
 * The primary's state as JSON (sqlite3_malloc'd): repl_status()'s, or with
 * reply the admin socket's STATUS reply (ok, version, changing first).
 * NULL with why when the log is closed or memory ran out.
 */
char *rv_admin_status(struct rv_db *d, bool reply, char *why, size_t whylen);

/* a JSON string's body into s: quotes, backslashes, control characters escaped */
void rv_admin_json_text(struct sqlite3_str *s, const char *v);

/* vfs.c: the database of a connection's schema when it is the VFS's */
struct rv_db *replvfs_db_of(struct sqlite3 *db, const char *schema);
/* the node of a connection's database with failover (rv_ha.h), or NULL */
struct rv_ha;
struct rv_ha *replvfs_ha_of(struct sqlite3 *db, const char *schema);

#endif
