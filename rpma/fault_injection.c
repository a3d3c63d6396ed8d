/* SPDX-License-Identifier: BSD-3-Clause */
/* fault_injection.c -- the counter behind RPMA_FAULT_INJECTION() */
#include "config.h"

#ifdef RPMA_DEBUG_FAULT_INJECTION

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "fault_injection.h"

static atomic_long points_passed;
static atomic_long target = -1;	/* -1: not read from the environment yet */

static long
target_from_env(void)
{
	const char *s = getenv("RPMA_FAULT_INJECTION");
	char *end;
	long n;

	if (s == NULL || *s == '\0')
		return 0;
	n = strtol(s, &end, 10);
	return (*end == '\0' && n > 0) ? n : 0;
}

bool
rpma_fault_injection_hit(const char *where)
{
	long t = atomic_load(&target);
	long n;

	if (t < 0) {
		long expected = -1;
		atomic_compare_exchange_strong(&target, &expected, target_from_env());
		t = atomic_load(&target);
	}
	n = atomic_fetch_add(&points_passed, 1) + 1;
	if (t == 0 || n != t)
		return false;
	/* straight to stderr: a report for the tester, not an application log */
	fprintf(stderr, "[#%ld] fault injected in %s\n", n, where);
	return true;
}

void
rpma_fault_injection_set(long n)
{
	atomic_store(&points_passed, 0);
	atomic_store(&target, n > 0 ? n : 0);
}

long
rpma_fault_injection_count(void)
{
	return atomic_load(&points_passed);
}

#endif
