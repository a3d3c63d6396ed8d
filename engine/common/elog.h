/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * elog.h -- the engine's messages.  They go through the core's log
 * (rpma_ext_log), so one threshold and one function (repl_log_set_function,
 * or rpma_log_set_function in a program on the core) see the engine's and
 * the core's messages alike.
 */
#ifndef REPL_ELOG_H
#define REPL_ELOG_H

#include "rpma.h"

#define REPL_LOG(level, ...) \
	rpma_ext_log((level), __FILE__, __LINE__, __func__, __VA_ARGS__)

#define REPL_LOG_FATAL(...)	REPL_LOG(RPMA_LOG_LEVEL_FATAL, __VA_ARGS__)
#define REPL_LOG_ERROR(...)	REPL_LOG(RPMA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define REPL_LOG_WARNING(...)	REPL_LOG(RPMA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define REPL_LOG_NOTICE(...)	REPL_LOG(RPMA_LOG_LEVEL_NOTICE, __VA_ARGS__)
#define REPL_LOG_INFO(...)	REPL_LOG(RPMA_LOG_LEVEL_INFO, __VA_ARGS__)
#define REPL_LOG_DEBUG(...)	REPL_LOG(RPMA_LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
