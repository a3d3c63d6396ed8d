/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_ha.h -- a replicated database's node inside the application: when
 * repl_conf names a coordinator (etcd), the process that opens the
 * database is one node of the cluster, with automatic failover
 * (docs/sqlite.md, "Automatic failover").
 *
 * The node is a replica (the log served to the primary, a copy of the
 * database applied to the database file, which the application's
 * connections read) or the primary (rv_db.h: the log opened as the
 * primary, the file rebuilt from it, commits).  The coordinator of the
 * ha/ wing (coordinator.h) drives it through its operations: it promotes
 * the node when it wins the leader key and steps it down for a switchover
 * or once another node holds the key.
 *
 * Roles, and who moves them:
 *
 *   REPLICA -> PROMOTING        the coordinator promotes (its worker)
 *   PROMOTING -> PRIMARY        the log opened as the primary, the file
 *                               rebuilt from it
 *   PROMOTING -> REPLICA        the promotion was refused: the replica
 *                               serves the log again
 *   PRIMARY -> STEPPING_DOWN    the coordinator steps it down
 *   STEPPING_DOWN -> REPLICA    the log given up, the replica started
 *
 * Each change moves the node's generation: a connection belongs to the
 * generation it opened in, and once that is past every call on it fails
 * (REPLVFS_IOERR_ROLE) until the application opens it again; an open
 * meanwhile waits for the change to end.  So no connection reads the copy
 * of a node that became the primary, or writes through a primary that
 * stepped down.
 *
 * Locks: has_lock (the list of nodes), then a node's lock (its role and
 * what the role holds), then rv_db.h's; the coordinator's lock is a leaf
 * (coordinator.h).  A change runs in the coordinator's worker, without
 * the node's lock held across its waits.
 */
#ifndef REPLSQLITE_RV_HA_H
#define REPLSQLITE_RV_HA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rv_db.h"

struct rv_ha;
struct repld_conf;

enum rv_ha_role {
	RV_HA_REPLICA = 0,
	RV_HA_PROMOTING,
	RV_HA_PRIMARY,
	RV_HA_STEPPING_DOWN,
};

/* "replica", "promoting", "primary", "stepping down" */
const char *rv_ha_role_name(enum rv_ha_role r);

/*
 * The node of the database at db_path (SQLite's full path), made from
 * conf (taken over) if the process has none: started as the replica, or
 * at the cluster's first start (how->bootstrap) as the primary when conf's
 * role says so; then its coordinator.  A reference, or NULL with why.
 */
struct rv_ha *rv_ha_get(const char *db_path, const char *conf_path,
		struct repld_conf *conf, const struct rv_db_how *how, char *why,
		size_t whylen);
/* the node of db_path if this process has one (a reference) */
struct rv_ha *rv_ha_find(const char *db_path);
/*
 * A connection's reference given back.  The process keeps one of its own
 * until it exits (an exit handler), so the node outlives its connections;
 * the last reference stops it: the coordinator resigns first.
 */
void rv_ha_put(struct rv_ha *h);

/*
 * A connection opening: waits while the node changes role (up to
 * wait_ms), then its generation in *gen and, on the primary, the database
 * in *db (a reference; NULL on a replica).  The role, or -1 with why when
 * the change outlasted the wait.
 */
int rv_ha_attach(struct rv_ha *h, int wait_ms, uint64_t *gen, struct rv_db **db,
		char *why, size_t whylen);
/* the node's generation now: a connection of another one is stale */
uint64_t rv_ha_gen(struct rv_ha *h);

/* what SQL is told (rv_node.c) */
struct rv_ha_view {
	enum rv_ha_role role;
	uint32_t node_id;
	bool has_primary;
	uint32_t primary_id;
	char primary_addr[80];		/* its control address "host:port" */
	uint64_t lsn;			/* primary: durable; replica: applied */
};
void rv_ha_view(struct rv_ha *h, struct rv_ha_view *v);

/*
 * A switchover recorded in etcd (to 0: the most advanced replica), from
 * any node: the primary steps down and the target takes over by
 * themselves.  0 with {"from":N,"to":M,"epoch":E} in out, or -1 with why.
 */
int rv_ha_switchover(struct rv_ha *h, uint32_t to, char *out, size_t outlen);

/* a replica's connection asked to write: SQLite's log names the primary */
void rv_ha_say_read_only(struct rv_ha *h);

#endif
