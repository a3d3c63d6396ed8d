/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_ha_internal.h -- a node's state, shared by rv_ha.c (its roles and the
 * changes between them) and rv_ha_ops.c (the operations its coordinator
 * drives it with); nothing else includes it.
 */
#ifndef REPLSQLITE_RV_HA_INTERNAL_H
#define REPLSQLITE_RV_HA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"
#include "repld_conf.h"
#include "rv_db.h"
#include "rv_ha.h"

struct coordinator;
struct rv_copy;

struct rv_ha {
	struct rv_ha *next;
	int refs;			/* under has_lock */
	char *path, *conf_path;
	/* the file as loaded at the first open: the coordinator's strings
	   point into it; a promotion loads the file anew */
	struct repld_conf conf;
	struct rv_db_how how;
	const char *provider;
	char ctl_addr[REPLD_ADDRESS_MAX + 10];
	char ctl_port[8], data_port[8];
	char floor_hosts[REPLD_PEERS_MAX][REPLD_ADDRESS_MAX + 1];
	char floor_ports[REPLD_PEERS_MAX][8];
	struct repl_replica floor_peers[REPLD_PEERS_MAX];
	bool create_log;		/* the first start of a replica's log */
	/* set once its start returned: a promotion before is refused */
	_Atomic(struct coordinator *) coord;

	/* one change of role at a time (the coordinator's worker, or an open
	   that finds a commit in doubt); before lock */
	pthread_mutex_t change;
	pthread_mutex_t lock;		/* after has_lock; guards what follows */
	pthread_cond_t settled;		/* role left PROMOTING or STEPPING_DOWN */
	enum rv_ha_role role;
	struct repl_replica_node *replica;	/* REPLICA: serving (or NULL:
						   its open failed) */
	pthread_t replica_thread;
	struct repl_replica_info replica_last;
	struct rv_copy *copy;
	struct rv_db *db;		/* PRIMARY: the node's reference */
	/* the membership etcd's key holds, for the next promotion */
	bool take;
	struct repld_peer take_peers[REPLD_PEERS_MAX];
	int take_n, take_quorum;

	_Atomic uint64_t gen;
};

/* the role now, and a new generation: the connections of the last go stale */
void rv_ha_become(struct rv_ha *h, enum rv_ha_role to);
/* REPLICA: the log served and the copy applied, in a thread of their own */
void rv_ha_replica_start(struct rv_ha *h);
void rv_ha_replica_stop(struct rv_ha *h);
/* PRIMARY: the database opened from the log (0) or not (-1 with msg) */
int rv_ha_primary_open(struct rv_ha *h, bool bootstrap, char *msg, size_t msglen);
void rv_ha_primary_close(struct rv_ha *h);
/* a step-down, one change at a time: 0, or -1 with msg */
int rv_ha_step_down(struct rv_ha *h, char *msg, size_t msglen);
/* the node's coordinator started: 0, or -1 with why */
int rv_ha_coord_start(struct rv_ha *h, char *why, size_t whylen);

#endif
