/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.h -- the engine's one clock: CLOCK_MONOTONIC, as durations in ns
 * or ms, and as the absolute deadlines that condition variables created
 * with pthread_condattr_setclock(CLOCK_MONOTONIC) wait for.
 */
#ifndef REPL_CLOCK_H
#define REPL_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "deadline.h"

static inline uint64_t
clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
clock_now_ms(void)
{
	return clock_now_ns() / 1000000;
}

/* timeout_ms (>= 0) from now, for pthread_cond_timedwait */
static inline struct timespec
clock_deadline(int timeout_ms)
{
	return deadline_after_ms(CLOCK_MONOTONIC, timeout_ms);
}

#endif
