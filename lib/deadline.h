/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * deadline.h -- the absolute time ms milliseconds from now on clock, as
 * pthread_cond_timedwait takes it: CLOCK_REALTIME for a condition
 * variable made with default attributes, CLOCK_MONOTONIC for one made
 * with pthread_condattr_setclock(CLOCK_MONOTONIC).
 */
#ifndef REPL_DEADLINE_H
#define REPL_DEADLINE_H

#include <time.h>

static inline struct timespec
deadline_after_ms(clockid_t clock, long ms)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
