/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * health_query.h -- the limits a health path's query string sets on a
 * replica (repld(8), HEALTH): lag=RECORDS and last_contact_ms=MS, read
 * from untrusted text with a clear refusal, and what they say of the
 * replica's lag and contact.  Knows nothing of HTTP or of the node.
 */
#ifndef REPLD_HEALTH_QUERY_H
#define REPLD_HEALTH_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct health_limits {
	bool has_lag;
	uint64_t lag;			/* records behind the commit point */
	bool has_contact;
	uint64_t contact_ms;		/* ms since the primary was heard */
};

/* what a replica can tell of how far behind it is */
struct health_lag {
	uint64_t lag_records;		/* behind the commit point heard */
	bool contact_known;		/* it heard a primary since it began */
	uint64_t last_contact_ms;
};

/*
 * One argument of the query string (value NULL: "?key" without '=').
 * 0; -1 with why in err: an unknown key, one given twice, a value that
 * is not a plain decimal number or is above INT64_MAX.
 */
int health_limits_add(struct health_limits *l, const char *key,
		const char *value, char *err, size_t errlen);

/* NULL: the replica is within the limits; else why not (in buf) */
const char *health_limits_refusal(const struct health_limits *l,
		const struct health_lag *r, char *buf, size_t len);

#endif
