/* SPDX-License-Identifier: BSD-3-Clause */
/* fault.c -- the counter behind the engine's fault points (fault.h) */
#include "config.h"

#ifdef RPMA_DEBUG_FAULT_INJECTION

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/fault.h"

static atomic_long passed;
static atomic_long target = -1;	/* -1: the environment not read yet */

static long
from_env(void)
{
	const char *s = getenv("REPL_FAULT_INJECTION");
	char *end;
	long n;

	if (s == NULL || *s == '\0')
		return 0;
	n = strtol(s, &end, 10);
	return *end == '\0' && n > 0 ? n : 0;
}

bool
fault_hit(const char *func, const char *file, int line)
{
	long t = atomic_load(&target);
	long n;

	if (t < 0) {
		long unread = -1;

		/* a fault_set() meanwhile wins over the environment */
		atomic_compare_exchange_strong(&target, &unread, from_env());
		t = atomic_load(&target);
	}
	n = atomic_fetch_add(&passed, 1) + 1;
	if (t == 0 || n != t)
		return false;
	/* for the tester, not the application's log: straight to stderr */
	fprintf(stderr, "[#%ld] engine fault injected in %s (%s:%d)\n", n, func,
		file, line);
	return true;
}

void
fault_set(long n)
{
	atomic_store(&passed, 0);
	atomic_store(&target, n > 0 ? n : 0);
}

long
fault_count(void)
{
	return atomic_load(&passed);
}

#endif
