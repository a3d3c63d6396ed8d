/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c -- thresholds and the installed log function (process-wide) */
#include "config.h"

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
