/* SPDX-License-Identifier: BSD-3-Clause */
/* metrics_text.c -- the Prometheus text exposition format (metrics_text.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_text.h"

void
mtext_init(struct mtext *t)
{
	memset(t, 0, sizeof(*t));
}

void
mtext_free(struct mtext *t)
{
	free(t->p);
	mtext_init(t);
}

static bool
reserve(struct mtext *t, size_t more)
{
	size_t cap = t->cap ? t->cap : 4096;
	char *p;

	if (t->failed)
		return false;
	while (cap - t->len < more + 1)
		cap *= 2;
	if (cap != t->cap) {
		if ((p = realloc(t->p, cap)) == NULL) {
			t->failed = true;
			return false;
		}
		t->p = p;
		t->cap = cap;
	}
	return true;
}

static void
add(struct mtext *t, const char *s, size_t n)
{
	if (!reserve(t, n))
		return;
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void
adds(struct mtext *t, const char *s)
{
	add(t, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
addf(struct mtext *t, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		add(t, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* a label value: backslash, double quote and line feed escaped */
static void
add_escaped(struct mtext *t, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			adds(t, "\\\\");
		else if (*v == '"')
			adds(t, "\\\"");
		else if (*v == '\n')
			adds(t, "\\n");
		else
			add(t, v, 1);
	}
}

void
mtext_family(struct mtext *t, const char *name, const char *type,
		const char *help)
{
	adds(t, "# HELP ");
	adds(t, name);
	add(t, " ", 1);
	/* help text: backslash and line feed escaped */
	for (const char *h = help; *h; h++)
		if (*h == '\\')
			adds(t, "\\\\");
		else if (*h == '\n')
			adds(t, "\\n");
		else
			add(t, h, 1);
	adds(t, "\n# TYPE ");
	adds(t, name);
	add(t, " ", 1);
	adds(t, type);
	add(t, "\n", 1);
}

static void
add_labels(struct mtext *t, const char *const *labels, const char *le)
{
	bool any = false;

	if ((labels == NULL || labels[0] == NULL) && le == NULL)
		return;
	add(t, "{", 1);
	for (int i = 0; labels != NULL && labels[i] != NULL; i += 2) {
		if (any)
			add(t, ",", 1);
		adds(t, labels[i]);
		adds(t, "=\"");
		add_escaped(t, labels[i + 1] ? labels[i + 1] : "");
		add(t, "\"", 1);
		any = true;
	}
	if (le != NULL) {
		if (any)
			add(t, ",", 1);
		adds(t, "le=\"");
		adds(t, le);
		add(t, "\"", 1);
	}
	add(t, "}", 1);
}

/* +Inf, -Inf, NaN, else the fewest digits that read back as v */
static void
add_value(struct mtext *t, double v)
{
	char buf[40];

	if (isnan(v)) {
		adds(t, "NaN");
		return;
	}
	if (isinf(v)) {
		adds(t, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof(buf), "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	adds(t, buf);
}

void
mtext_sample(struct mtext *t, const char *name, const char *const *labels,
		double value)
{
	adds(t, name);
	add_labels(t, labels, NULL);
	add(t, " ", 1);
	add_value(t, value);
	add(t, "\n", 1);
}

void
mtext_sample_u64(struct mtext *t, const char *name, const char *const *labels,
		uint64_t value)
{
	adds(t, name);
	add_labels(t, labels, NULL);
	addf(t, " %" PRIu64 "\n", value);
}

void
mtext_histogram(struct mtext *t, const char *name, const double *bounds,
		const uint64_t *counts, int n, double sum)
{
	char le[32], key[128];
	uint64_t total = 0;

	snprintf(key, sizeof(key), "%s_bucket", name);
	for (int i = 0; i < n; i++) {
		total += counts[i];
		snprintf(le, sizeof(le), "%g", bounds[i]);
		adds(t, key);
		add_labels(t, NULL, le);
		addf(t, " %" PRIu64 "\n", total);
	}
	total += counts[n];
	adds(t, key);
	add_labels(t, NULL, "+Inf");
	addf(t, " %" PRIu64 "\n", total);
	adds(t, name);
	adds(t, "_sum ");
	add_value(t, sum);
	adds(t, "\n");
	adds(t, name);
	addf(t, "_count %" PRIu64 "\n", total);
}
