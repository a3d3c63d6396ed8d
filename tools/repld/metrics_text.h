/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_text.h -- the Prometheus text exposition format (0.0.4): a
 * growing buffer, a family's # HELP and # TYPE lines, its samples and
 * histograms.  Knows nothing of the node (metrics.c fills it).
 */
#ifndef REPLD_METRICS_TEXT_H
#define REPLD_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct mtext {
	char *p;
	size_t len, cap;
	bool failed;		/* out of memory: the text is incomplete */
};

void mtext_init(struct mtext *t);
void mtext_free(struct mtext *t);

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram) */
void mtext_family(struct mtext *t, const char *name, const char *type,
		const char *help);
/*
 * One sample: name{labels} value.  labels: NULL or pairs of key, value,
 * ended by NULL; values are escaped (\\, \", \n).
 */
void mtext_sample(struct mtext *t, const char *name, const char *const *labels,
		double value);
void mtext_sample_u64(struct mtext *t, const char *name,
		const char *const *labels, uint64_t value);
/*
 * A histogram's samples: name_bucket{le=...} for each of n bounds
 * (ascending, seconds) from counts per bucket (not cumulative; counts[n]
 * past the last bound), then le="+Inf", name_sum and name_count.
 */
void mtext_histogram(struct mtext *t, const char *name, const double *bounds,
		const uint64_t *counts, int n, double sum);

#endif
