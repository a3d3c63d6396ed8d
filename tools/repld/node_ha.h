/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_ha.h -- the failover coordinator (ha/coordinator.h) of a repld
 * node: started from the node's file when it names a coordinator, driving
 * the node through its operations (node_ha.c).
 */
#ifndef REPLD_NODE_HA_H
#define REPLD_NODE_HA_H

#include <stddef.h>
#include <stdint.h>

#include "repld_conf.h"

struct node;
struct coordinator;

/* *out NULL when the file names no coordinator; 0, or -1 with why in err */
int node_ha_start(struct node *n, struct coordinator **out, char *err,
		size_t errlen);
/* coordinator_leader_at_start with the file's coordinator (0: none) */
uint32_t node_ha_leader_at_start(const struct repld_conf *conf, uint64_t *epoch);
/*
 * Before a start (not a bootstrap, reinit or reconfigure): with a
 * coordinator, the peers and quorum of etcd's membership key replace the
 * file's when the key holds the configuration epoch the node's log holds,
 * so that a restart after a membership change needs no edited file.
 */
void node_ha_membership_at_start(struct node *n);

#endif
