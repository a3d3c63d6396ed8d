/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault_injection.h -- force the Nth error path of a debug build.
 *
 * Every RPMA_FAULT_INJECTION() point a call passes bumps a process-wide
 * counter; when the counter reaches the target (environment variable
 * RPMA_FAULT_INJECTION, or rpma_fault_injection_set() from a test), that
 * point fails with its error after running its cleanup.  Release builds
 * compile the points away.
 */
#ifndef RPMA_FAULT_INJECTION_H
#define RPMA_FAULT_INJECTION_H

#include <stdbool.h>

#ifdef RPMA_DEBUG_FAULT_INJECTION

bool rpma_fault_injection_hit(const char *where);
/* arm point number n (counting from 1 after this call); 0 disarms */
void rpma_fault_injection_set(long n);
/* points passed since the last rpma_fault_injection_set() */
long rpma_fault_injection_count(void);

#define RPMA_FAULT_INJECTION(err, cleanup) \
	do { \
		if (rpma_fault_injection_hit(__func__)) { \
			cleanup; \
			return (err); \
		} \
	} while (0)

#else

#define RPMA_FAULT_INJECTION(err, cleanup) do {} while (0)

#endif

#endif
