/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.h -- repld's log: one format for its own lines and librepl's.
 *
 * Each line goes to stderr in one write(2), so threads never interleave:
 *   2026-12-02T09:13:15.733Z notice repld: MESSAGE
 * (UTC, milliseconds), or, when stderr is the journal (JOURNAL_STREAM
 * names fd 2's device and inode), "<N>repld: MESSAGE" with sd-daemon's
 * priority N and no timestamp: journald stamps the line itself.
 */
#ifndef REPLD_LOG_H
#define REPLD_LOG_H

#include "repl.h"

/* find whether stderr is the journal, take librepl's messages; notice */
void log_init(void);
/* lines above level (repl.h's order: fatal 0 .. debug 5) are dropped */
void log_set_threshold(enum repl_log_level level);

void log_msg(enum repl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...)		log_msg(REPL_LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...)	log_msg(REPL_LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_notice(...)		log_msg(REPL_LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_info(...)		log_msg(REPL_LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)		log_msg(REPL_LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
