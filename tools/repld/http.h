/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * http.h -- repld's HTTP endpoints (metrics_listen in repld.conf): GET
 * /metrics for Prometheus, and /health, /primary, /replica, /ready for a
 * load balancer (repld(8), METRICS and HEALTH).  libmicrohttpd serves
 * them from a thread of its own.
 */
#ifndef REPLD_HTTP_H
#define REPLD_HTTP_H

#include <stddef.h>

#include "node.h"

struct http;

/*
 * Listen on the node's metrics_listen (none set: *http_ptr NULL, 0).
 * 0, or -1 with the reason in err.
 */
int http_start(struct node *n, struct http **http_ptr, char *err, size_t errlen);
void http_stop(struct http **http_ptr);

#endif
