/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- the core's internal logging macros.
 *
 * A message reaches the installed rpma_log_function only when its level is
 * at or below the main threshold; the check is one relaxed atomic load, so
 * a disabled message costs no call.  As in librpma, "\n" is appended to
 * every format.
 */
#ifndef RPMA_LOG_H
#define RPMA_LOG_H

#include <stdatomic.h>

#include "rpma.h"

extern _Atomic int rpma_log_threshold[RPMA_LOG_THRESHOLD_MAX];
extern _Atomic(rpma_log_function *) rpma_log_function_current;

void rpma_log_default_function(enum rpma_log_level level, const char *file_name,
		const int line_no, const char *function_name,
		const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));

#define RPMA_LOG(level, format, ...) \
	do { \
		if ((level) <= atomic_load_explicit( \
				&rpma_log_threshold[RPMA_LOG_THRESHOLD], \
				memory_order_relaxed)) { \
			rpma_log_function *fn_ = atomic_load_explicit( \
				&rpma_log_function_current, \
				memory_order_relaxed); \
			if (fn_ != NULL) \
				fn_((enum rpma_log_level)(level), __FILE__, \
					__LINE__, __func__, format "\n", \
					##__VA_ARGS__); \
		} \
	} while (0)

#define RPMA_LOG_FATAL(f, ...)	RPMA_LOG(RPMA_LOG_LEVEL_FATAL, f, ##__VA_ARGS__)
#define RPMA_LOG_ERROR(f, ...)	RPMA_LOG(RPMA_LOG_LEVEL_ERROR, f, ##__VA_ARGS__)
#define RPMA_LOG_WARNING(f, ...) RPMA_LOG(RPMA_LOG_LEVEL_WARNING, f, ##__VA_ARGS__)
#define RPMA_LOG_NOTICE(f, ...)	RPMA_LOG(RPMA_LOG_LEVEL_NOTICE, f, ##__VA_ARGS__)
#define RPMA_LOG_INFO(f, ...)	RPMA_LOG(RPMA_LOG_LEVEL_INFO, f, ##__VA_ARGS__)
#define RPMA_LOG_DEBUG(f, ...)	RPMA_LOG(RPMA_LOG_LEVEL_DEBUG, f, ##__VA_ARGS__)

#endif
