/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_ha.h -- the admin socket's replies to MAINTENANCE and HISTORY, as
 * JSON: the coordinator (ha/coordinator.h) answers them from etcd.
 */
#ifndef REPLD_ADMIN_HA_H
#define REPLD_ADMIN_HA_H

#include <stdbool.h>

#include "json_out.h"

struct coordinator;

/* MAINTENANCE on|off through coord (NULL: none), or its error */
json_t *admin_maintenance_json(struct coordinator *coord, bool on, const char *reason);
/* HISTORY through coord (NULL: none), or its error */
json_t *admin_history_json(struct coordinator *coord);

#endif
