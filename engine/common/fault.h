/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault.h -- force the Nth error path of the engine in a debug build
 * (configure --enable-debug).
 *
 * Every point a call passes bumps a process-wide counter; the point at
 * which it reaches the target (environment variable REPL_FAULT_INJECTION,
 * or fault_set() from a test) fails as its branch would: with that
 * branch's error, through that branch's cleanup.  Three shapes, each one
 * line at an existing failure branch:
 *
 *   REPL_FAULT(err, cleanup)          run cleanup, return err (the core's
 *                                     RPMA_FAULT_INJECTION shape);
 *   REPL_FAULT_GOTO(ret, err, label)  ret = err, goto label: the branch
 *                                     ends at a cleanup label;
 *   REPL_FAULTED()                    true at the failing point: or-ed
 *                                     into the branch's own condition, so
 *                                     the branch itself runs.
 *
 * The functions are not repl_*: librepl exports only those (librepl.map).
 * The counter is not the core's (RPMA_FAULT_INJECTION): the core's points
 * are swept by its own tests, and a counter shared with them would number
 * the engine's points after however many core points a scenario passes,
 * so each engine point would move whenever the core changed.  Release
 * builds compile the points away.
 */
#ifndef REPL_FAULT_H
#define REPL_FAULT_H

#include "config.h"

#include <stdbool.h>

#ifdef RPMA_DEBUG_FAULT_INJECTION

#define REPL_FAULT_ENABLED 1

bool fault_hit(const char *func, const char *file, int line);
/* arm point number n (counting from 1 after this call); 0 disarms */
void fault_set(long n);
/* points passed since the last fault_set() */
long fault_count(void);

#define REPL_FAULTED()	fault_hit(__func__, __FILE__, __LINE__)

#else

#define REPL_FAULT_ENABLED 0
#define REPL_FAULTED()	false

/* nothing to arm: a test built without points compiles and skips */
static inline void fault_set(long n) { (void)n; }
static inline long fault_count(void) { return 0; }

#endif

#define REPL_FAULT(err, cleanup) \
	do { \
		if (REPL_FAULTED()) { \
			cleanup; \
			return (err); \
		} \
	} while (0)

#define REPL_FAULT_GOTO(ret, err, label) \
	do { \
		if (REPL_FAULTED()) { \
			(ret) = (err); \
			goto label; \
		} \
	} while (0)

#endif
