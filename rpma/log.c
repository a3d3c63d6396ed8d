/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c -- thresholds and the installed log function (process-wide) */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

/* librpma's release defaults: WARNING reaches the function, nothing on stderr */
_Atomic int rpma_log_threshold[RPMA_LOG_THRESHOLD_MAX] = {
	RPMA_LOG_LEVEL_WARNING,
	RPMA_LOG_DISABLED,
};

_Atomic(rpma_log_function *) rpma_log_function_current =
	rpma_log_default_function;

int
rpma_log_set_function(rpma_log_function *log_function)
{
	if (log_function == RPMA_LOG_USE_DEFAULT_FUNCTION)
		log_function = rpma_log_default_function;
	atomic_store(&rpma_log_function_current, log_function);
	return 0;
}

static int
threshold_valid(enum rpma_log_threshold threshold)
{
	return threshold == RPMA_LOG_THRESHOLD ||
		threshold == RPMA_LOG_THRESHOLD_AUX;
}

int
rpma_log_set_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level level)
{
	if (!threshold_valid(threshold) ||
	    level < RPMA_LOG_DISABLED || level > RPMA_LOG_LEVEL_DEBUG)
		return RPMA_E_INVAL;
	atomic_store(&rpma_log_threshold[threshold], (int)level);
	return 0;
}

int
rpma_log_get_threshold(enum rpma_log_threshold threshold,
		enum rpma_log_level *level)
{
	if (!threshold_valid(threshold) || level == NULL)
		return RPMA_E_INVAL;
	*level = (enum rpma_log_level)atomic_load(&rpma_log_threshold[threshold]);
	return 0;
}

/*
 * A message of a layer above the core (librepl's engine), through the same
 * threshold and function, so that one hook sees both.  Formatted here so the
 * caller's message needs no trailing newline of its own.
 */
int
rpma_ext_log(enum rpma_log_level level, const char *file_name, int line_no,
		const char *function_name, const char *message_format, ...)
{
	rpma_log_function *fn;
	char message[1024];
	va_list ap;

	if ((int)level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG ||
	    message_format == NULL)
		return RPMA_E_INVAL;
	if ((int)level > atomic_load_explicit(&rpma_log_threshold[RPMA_LOG_THRESHOLD],
			memory_order_relaxed))
		return 0;
	fn = atomic_load_explicit(&rpma_log_function_current, memory_order_relaxed);
	if (fn == NULL)
		return 0;
	va_start(ap, message_format);
	vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);
	fn(level, file_name, line_no, function_name, "%s\n", message);
	return 0;
}
