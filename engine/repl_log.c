/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_log.c -- librepl's messages (repl.h: repl_log_*) over the core's
 * log.  The core inside librepl is hidden, so this is the only way a
 * program on librepl reaches its threshold and function.  The core's
 * function takes a format and varargs; the user's gets the message made,
 * one line without its newline.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "facade.h"

/* the user's function and its argument: read as a pair */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static repl_log_fn *hook_fn;
static void *hook_arg;

static int
level_to_core(enum repl_log_level l, enum rpma_log_level *out)
{
	switch (l) {
	case REPL_LOG_LEVEL_DISABLED:	*out = RPMA_LOG_DISABLED; return 0;
	case REPL_LOG_LEVEL_FATAL:	*out = RPMA_LOG_LEVEL_FATAL; return 0;
	case REPL_LOG_LEVEL_ERROR:	*out = RPMA_LOG_LEVEL_ERROR; return 0;
	case REPL_LOG_LEVEL_WARNING:	*out = RPMA_LOG_LEVEL_WARNING; return 0;
	case REPL_LOG_LEVEL_NOTICE:	*out = RPMA_LOG_LEVEL_NOTICE; return 0;
	case REPL_LOG_LEVEL_INFO:	*out = RPMA_LOG_LEVEL_INFO; return 0;
	case REPL_LOG_LEVEL_DEBUG:	*out = RPMA_LOG_LEVEL_DEBUG; return 0;
	default:			return -1;
	}
}

static enum repl_log_level
level_from_core(enum rpma_log_level l)
{
	switch (l) {
	case RPMA_LOG_LEVEL_FATAL:	return REPL_LOG_LEVEL_FATAL;
	case RPMA_LOG_LEVEL_ERROR:	return REPL_LOG_LEVEL_ERROR;
	case RPMA_LOG_LEVEL_WARNING:	return REPL_LOG_LEVEL_WARNING;
	case RPMA_LOG_LEVEL_NOTICE:	return REPL_LOG_LEVEL_NOTICE;
	case RPMA_LOG_LEVEL_INFO:	return REPL_LOG_LEVEL_INFO;
	case RPMA_LOG_LEVEL_DEBUG:
	default:			return REPL_LOG_LEVEL_DEBUG;
	}
}

__attribute__((format(printf, 5, 6)))
static void
trampoline(enum rpma_log_level level, const char *file, const int line,
		const char *func, const char *fmt, ...)
{
	char message[1024];
	repl_log_fn *fn;
	void *arg;
	size_t n;
	va_list ap;

	/* not held while fn runs: fn may set another function */
	pthread_mutex_lock(&hook_lock);
	fn = hook_fn;
	arg = hook_arg;
	pthread_mutex_unlock(&hook_lock);
	if (fn == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	n = strlen(message);
	while (n > 0 && message[n - 1] == '\n')
		message[--n] = '\0';
	fn(arg, level_from_core(level), file, line, func, message);
}

int
repl_log_set_function(repl_log_fn *fn, void *arg)
{
	pthread_mutex_lock(&hook_lock);
	hook_fn = fn;
	hook_arg = arg;
	pthread_mutex_unlock(&hook_lock);
	return facade_err(rpma_log_set_function(fn ? trampoline :
		RPMA_LOG_USE_DEFAULT_FUNCTION));
}

int
repl_log_set_threshold(enum repl_log_threshold threshold, enum repl_log_level level)
{
	enum rpma_log_threshold t;
	enum rpma_log_level l;

	switch (threshold) {
	case REPL_LOG_THRESHOLD:	t = RPMA_LOG_THRESHOLD; break;
	case REPL_LOG_THRESHOLD_STDERR:	t = RPMA_LOG_THRESHOLD_AUX; break;
	default:			return REPL_E_INVAL;
	}
	if (level_to_core(level, &l))
		return REPL_E_INVAL;
	return facade_err(rpma_log_set_threshold(t, l));
}
