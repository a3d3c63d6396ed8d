/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.h -- what repld counts for /metrics (repld(8), METRICS): the
 * appends the admin socket answered, their durable latency, and the text
 * made from them and from the node's status at each scrape.
 *
 * The admin socket's threads count with relaxed atomics only: no lock and
 * no allocation on the path of an append.
 */
#ifndef REPLD_METRICS_H
#define REPLD_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "metrics_text.h"
#include "node.h"

/* CLOCK_MONOTONIC in ns: when an append was received */
static inline uint64_t
metrics_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * An append answered: err 0 acknowledged durable (its latency since
 * received_ns counted), else failed.
 */
void metrics_append_answered(uint64_t received_ns, size_t bytes, int err);
/* an append refused before it was appended (the gate: wrong role, stop) */
void metrics_append_refused(void);

/* the whole exposition of node n into t (t->failed: out of memory) */
void metrics_render(struct node *n, struct mtext *t);

#endif
