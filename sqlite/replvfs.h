/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replvfs.h -- SQLite over librepl: the "repl" VFS (docs/sqlite.md).
 * Loaded as an SQLite extension (sqlite3_replvfs_init, extension.c), it
 * registers the VFS; a database opened as
 *
 *   file:PATH?vfs=repl&repl_conf=NODE.conf[&repl_bootstrap=1]
 *
 * commits each transaction as one librepl record, durable on the
 * replicas that NODE.conf (a repld.conf(5) file, this node the primary)
 * names before COMMIT returns.
 */
#ifndef REPLSQLITE_REPLVFS_H
#define REPLSQLITE_REPLVFS_H

#define REPLVFS_NAME "repl"
/* repl_timeout_ms's default: how long a COMMIT waits for the replicas */
#define REPLVFS_TIMEOUT_MS 10000

/*
 * Extended result codes of a database with automatic failover (repl_conf
 * with a coordinator: docs/sqlite.md, "Automatic failover"), beside
 * SQLite's own (which stop below 64 in either class):
 *   REPLVFS_READONLY_REPLICA  a write on a replica's connection
 *                             (SQLITE_READONLY); SQLite's log names the
 *                             primary
 *   REPLVFS_IOERR_ROLE        any call on a connection opened before its
 *                             node changed role (SQLITE_IOERR): close it and
 *                             open the database again
 */
#define REPLVFS_READONLY_REPLICA (8 | (64 << 8))	/* SQLITE_READONLY */
#define REPLVFS_IOERR_ROLE (10 | (64 << 8))		/* SQLITE_IOERR */

/* registers the VFS (not as the default); SQLITE_OK or an SQLite error */
int replvfs_register(void);

#endif
