/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conf_coord.h -- the coordinator group of repld.conf (automatic failover
 * on etcd): its settings, defaults and checks.  A part of the schema that
 * repld_conf.c holds, in a file of its own because it is one concern.
 */
#ifndef REPLD_CONF_COORD_H
#define REPLD_CONF_COORD_H 1

#include <libconfig.h>

#include "conf_read.h"
#include "repld_conf.h"

#define COORD_LEASE_MS_MIN 1000
#define COORD_LEASE_MS_MAX 60000
#define COORD_LEASE_MS_DEFAULT 6000
#define COORD_TIMEOUT_MS_MIN 100
#define COORD_TIMEOUT_MS_MAX 10000
#define COORD_TIMEOUT_MS_DEFAULT 1000

/* o->coordinator from root's "coordinator" (absent: none); 0 or -1 */
int conf_load_coordinator(struct conf_ctx *c, const config_setting_t *root,
		struct repld_conf *o);

#endif
