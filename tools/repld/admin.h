/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin.h -- repld's admin socket (protocol: admin_proto.h): a listener
 * thread, one loop thread serving every connection that only appends, and
 * a thread of its own for any other connection; each connection's requests
 * are served in order against the node.
 */
#ifndef REPLD_ADMIN_H
#define REPLD_ADMIN_H

#include <stdbool.h>

#include "node.h"

struct admin;

/*
 * Listen on path (mode 0600; a stale socket of a dead daemon is replaced,
 * a live one is an error).  0, or -1 with the reason in err.
 */
int admin_start(struct node *node, const char *path, struct admin **admin_ptr,
		char *err, size_t errlen);
/*
 * Stop listening, remove the socket, end every connection (each writes the
 * answers it holds first).  false: a connection is still stuck writing to
 * a client that does not read; it may still touch the node.
 */
bool admin_stop(struct admin **admin_ptr);

#endif
