/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_node.h -- the node in SQL, on every connection once the extension is
 * loaded (docs/sqlite.md, "Where the primary is"):
 *
 *   repl_role()             "primary" on a database the repl VFS opened;
 *                           on a replica's copy opened with repl_conf=FILE
 *                           in its URI, the role of that node's repld
 *   repl_primary()          {"node_id":N,"address":"HOST:PORT"}: the
 *                           primary (itself, or the one the copy's node
 *                           follows); NULL while it follows none
 *   repl_lsn()              the primary's committed LSN; a copy's applied
 *                           LSN (every transaction up to it is readable)
 *   repl_wait(LSN [, MS])   1 once repl_lsn() >= LSN, 0 after MS
 *                           (default 5000): read-your-writes on a copy,
 *                           given the primary's repl_lsn() after a COMMIT
 *   repl_switchover([N])    on a node with automatic failover (rv_ha.h):
 *                           the primary handed to node N (default: the
 *                           most advanced replica), recorded in etcd
 *
 * On a node with automatic failover the answers are the node's own
 * (rv_ha_view): repl_role() is also "promoting" or "stepping down".
 *
 * Errors are SQL errors naming the function and why.
 */
#ifndef REPLSQLITE_RV_NODE_H
#define REPLSQLITE_RV_NODE_H

struct sqlite3;

int rv_node_register(struct sqlite3 *db);

#endif
