/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * primary_cfg.h -- a repld.conf(5) node as librepl's primary: the repl_cfg
 * that repld's promotions (node_role.c) and replvfs's open of a database's log
 * (sqlite/rv_db.c) both build from the same file.
 */
#ifndef REPLD_PRIMARY_CFG_H
#define REPLD_PRIMARY_CFG_H

#include <stdbool.h>

#include "repl.h"
#include "repld_conf.h"

/* cfg and the strings it points into; conf's strings must outlive it too */
struct primary_cfg {
	struct repl_cfg cfg;
	struct repl_replica reps[REPLD_PEERS_MAX];
	char ports[REPLD_PEERS_MAX][8];
	char ctl_port[8];
};

enum repl_backend primary_cfg_backend(enum repld_backend b);

/*
 * The libfabric provider for conf's transport, or "verbs"; *no_rdma set
 * when "auto" found no RDMA device for the listen address and took tcp
 * (expected on hosts without RDMA: the caller may say so).
 */
const char *primary_cfg_provider(const struct repld_conf *conf, bool *no_rdma);

/*
 * pc->cfg from conf: the log, node id and cluster, the peers and quorum,
 * timeouts, flush method, TLS and the listen address; the caller sets
 * what a start decides (create, bootstrap, reconfigure, force_promotion,
 * refuse_if_superseded).
 */
void primary_cfg_fill(struct primary_cfg *pc, const struct repld_conf *conf,
		const char *provider);

#endif
