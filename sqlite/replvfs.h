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

/* registers the VFS (not as the default); SQLITE_OK or an SQLite error */
int replvfs_register(void);

#endif
