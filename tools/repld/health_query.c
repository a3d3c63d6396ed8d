/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * health_query.c -- a health path's limits on a replica (health_query.h).
 *
 * The lag is in records: a replica knows the primary's commit point as
 * an LSN, not the size of the records it does not hold yet, so a limit
 * in bytes (lag=16MB, as some tools take) is refused rather than guessed.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "health_query.h"

#define SHOWN_MAX 40	/* of a key or value quoted back to the client */

/* text from the URL, quoted back: printable ASCII only, and short */
static const char *
shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i < SHOWN_MAX && i + 4 < len; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i] != '\0' && i + 4 <= len) {	/* cut: say so */
		memcpy(buf + i, "...", 3);
		i += 3;
	}
	buf[i] = '\0';
	return buf;
}

/* a plain decimal number, 0..INT64_MAX: no sign, space or unit */
static bool
parse_count(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (INT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

int
health_limits_add(struct health_limits *l, const char *key,
		const char *value, char *err, size_t errlen)
{
	char k[SHOWN_MAX + 8], v[SHOWN_MAX + 8];
	bool lag = strcmp(key, "lag") == 0;
	bool *has;
	uint64_t *limit;

	if (!lag && strcmp(key, "last_contact_ms") != 0) {
		snprintf(err, errlen, "unknown parameter \"%s\": the health paths "
			"take lag (records) and last_contact_ms (milliseconds)",
			shown(key, k, sizeof(k)));
		return -1;
	}
	has = lag ? &l->has_lag : &l->has_contact;
	limit = lag ? &l->lag : &l->contact_ms;
	if (*has) {
		snprintf(err, errlen, "%s given twice", key);
		return -1;
	}
	if (value == NULL || *value == '\0') {
		snprintf(err, errlen, lag ? "lag needs a value: a number of "
			"records, for example lag=1000" : "last_contact_ms needs a "
			"value: a number of milliseconds, for example "
			"last_contact_ms=500");
		return -1;
	}
	if (!parse_count(value, limit)) {
		shown(value, v, sizeof(v));
		if (lag)
			snprintf(err, errlen, "lag=%s: not a number of records "
				"(a decimal number up to 9223372036854775807, for "
				"example lag=1000: a replica cannot know the size "
				"of records it does not hold, so its lag is counted "
				"in records)", v);
		else
			snprintf(err, errlen, "last_contact_ms=%s: not a number "
				"of milliseconds (a decimal number up to "
				"9223372036854775807, for example last_contact_ms=500)",
				v);
		return -1;
	}
	*has = true;
	return 0;
}

const char *
health_limits_refusal(const struct health_limits *l,
		const struct health_lag *r, char *buf, size_t len)
{
	if (l->has_lag && r->lag_records > l->lag) {
		snprintf(buf, len, "the replica lags %" PRIu64 " records behind "
			"the primary's commit point, more than lag=%" PRIu64,
			r->lag_records, l->lag);
		return buf;
	}
	if (l->has_contact && !r->contact_known) {
		snprintf(buf, len, "the replica has heard no primary since it "
			"began serving");
		return buf;
	}
	if (l->has_contact && r->last_contact_ms > l->contact_ms) {
		snprintf(buf, len, "the replica last heard from its primary %"
			PRIu64 " ms ago, more than last_contact_ms=%" PRIu64,
			r->last_contact_ms, l->contact_ms);
		return buf;
	}
	return NULL;
}
