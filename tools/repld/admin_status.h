/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_status.h -- the admin socket's replies as JSON: STATUS and VERIFY
 * (what the node and its replicas say of themselves) and every error.
 */
#ifndef REPLD_ADMIN_STATUS_H
#define REPLD_ADMIN_STATUS_H

#include <stdint.h>

#include "json_out.h"
#include "node.h"

/*
 * Each reply is made as a JSON object, NULL when it cannot be (jo_line
 * answers an error then).
 */
json_t *admin_status_json(struct node *n);
/*
 * {"ok":false,"error":NAME,"code":CODE,"message":MESSAGE}: NAME NULL names
 * CODE (a REPL_E_* or NODE_E_*), MESSAGE NULL is repl_strerror's.
 */
json_t *admin_error_json(const char *name, int code, const char *message);
/*
 * A WRONG_ROLE error's pointer to the primary, when this node follows one:
 * "primary_node" and "primary_address" (its control address) added to err,
 * and the message ends naming it.  err as it was otherwise.
 */
json_t *admin_error_where(struct node *n, json_t *err);
/* from/to 0: the oldest kept record / the commit LSN */
json_t *admin_verify_json(struct node *n, uint64_t from, uint64_t to);

#endif
