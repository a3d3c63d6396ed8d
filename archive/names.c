/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * names.c -- the objects' names, which are the archive's index:
 *
 *   seg/FIRST-LAST.rseg   a segment of the records FIRST..LAST
 *   base/LSN.rbase        a base standing for every record <= LSN
 *
 * each LSN 20 decimal digits with leading zeros, so that names sort as
 * their LSNs do.  Anything else in a target is not the archive's.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "archive_int.h"

#define DIGITS 20

void
archive_segment_name(char out[96], uint64_t first, uint64_t last)
{
	snprintf(out, 96, "seg/%020" PRIu64 "-%020" PRIu64 ".rseg", first, last);
}

void
archive_base_name(char out[96], uint64_t lsn)
{
	snprintf(out, 96, "base/%020" PRIu64 ".rbase", lsn);
}

/* exactly DIGITS decimal digits at s, no more than UINT64_MAX */
static int
lsn_parse(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	for (int i = 0; i < DIGITS; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*v = x;
	return 0;
}

int
archive_name_parse(const char *name, enum archive_kind *kind, uint64_t *first,
		uint64_t *last)
{
	size_t n = strlen(name);

	if (n == 4 + DIGITS + 1 + DIGITS + 5 && memcmp(name, "seg/", 4) == 0 &&
			name[4 + DIGITS] == '-' && strcmp(name + n - 5, ".rseg") == 0) {
		if (lsn_parse(name + 4, first) != 0 ||
				lsn_parse(name + 4 + DIGITS + 1, last) != 0 ||
				*first == 0 || *first > *last)
			return -1;
		*kind = ARCHIVE_SEGMENT;
		return 0;
	}
	if (n == 5 + DIGITS + 6 && memcmp(name, "base/", 5) == 0 &&
			strcmp(name + n - 6, ".rbase") == 0) {
		if (lsn_parse(name + 5, first) != 0)
			return -1;
		*last = *first;
		*kind = ARCHIVE_BASE;
		return 0;
	}
	return -1;
}
