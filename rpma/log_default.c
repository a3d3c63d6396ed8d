/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_default.c -- the log function used unless the application installs
 * its own: every message it receives goes to syslog (LOG_LOCAL7), and those
 * at or below the aux threshold also to stderr with a timestamp.
 *
 * Unlike librpma it never calls openlog(): a library must not change the
 * process's syslog identity.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *const level_names[] = {
	"*FATAL*", "*ERROR*", "*WARNING*", "*NOTICE*", "*INFO*", "*DEBUG*",
};

static const int level_syslog[] = {
	LOG_CRIT, LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG,
};

void
rpma_log_default_function(enum rpma_log_level level, const char *file_name,
		const int line_no, const char *function_name,
		const char *message_format, ...)
{
	char message[1024];
	char where[256] = "";
	const char *name;
	int prio;
	va_list ap;

	if ((int)level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG)
		return;
	name = level_names[level];
	prio = level_syslog[level];

	va_start(ap, message_format);
	vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);

	if (file_name != NULL) {
		const char *base = strrchr(file_name, '/');
		snprintf(where, sizeof(where), "%s: %d: %s: ",
			base ? base + 1 : file_name, line_no, function_name);
	}

	/* the message already ends with "\n" */
	syslog(LOG_LOCAL7 | prio, "%s %s%s", name, where, message);

	if ((int)level <= atomic_load(&rpma_log_threshold[RPMA_LOG_THRESHOLD_AUX])) {
		struct timeval tv;
		struct tm tm;
		char stamp[32] = "";

		gettimeofday(&tv, NULL);
		if (localtime_r(&tv.tv_sec, &tm) != NULL)
			strftime(stamp, sizeof(stamp), "%b %d %H:%M:%S", &tm);
		fprintf(stderr, "%s.%06ld [%d] %s %s%s", stamp, (long)tv.tv_usec,
			(int)gettid(), name, where, message);
	}
}
