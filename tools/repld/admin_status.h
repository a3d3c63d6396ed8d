/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_status.h -- the admin socket's STATUS and VERIFY replies: what
 * the node and its replicas say of themselves, as one JSON object.
 */
#ifndef REPLD_ADMIN_STATUS_H
#define REPLD_ADMIN_STATUS_H

#include <stdint.h>

#include "json_out.h"
#include "node.h"

void admin_status_json(struct node *n, struct json_out *j);
/* from/to 0: the oldest kept record / the commit LSN */
void admin_verify_json(struct node *n, uint64_t from, uint64_t to,
		struct json_out *j);

#endif
