/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.c -- repld's log (log.h): its own lines and librepl's, one format.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "log.h"

#define LINE_MAX_LEN 2048

static atomic_int threshold = REPL_LOG_LEVEL_NOTICE;
static bool journal;	/* set once by log_init, before any thread */

static const char *const names[] = {
	"fatal", "error", "warning", "notice", "info", "debug",
};
/* sd-daemon.h's "<N>" prefixes, the priorities journald reads */
static const char *const prefixes[] = {
	SD_CRIT, SD_ERR, SD_WARNING, SD_NOTICE, SD_INFO, SD_DEBUG,
};

/* JOURNAL_STREAM is "DEV:INODE" of the stream systemd gave us; a child
 * whose stderr was redirected inherits the variable, so compare */
static bool
stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;
	int end = 0;

	if (e == NULL || sscanf(e, "%ju:%ju%n", &dev, &ino, &end) != 2 ||
	    e[end] != '\0' || fstat(STDERR_FILENO, &st) != 0)
		return false;
	return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

static void
write_all(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(STDERR_FILENO, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* nowhere left to say it */
		buf += w;
		len -= (size_t)w;
	}
}

static void
emit(enum repl_log_level level, const char *fmt, va_list ap)
{
	char line[LINE_MAX_LEN];
	size_t n = 0;
	int r;

	if (level < REPL_LOG_LEVEL_FATAL || level > REPL_LOG_LEVEL_DEBUG ||
	    (int)level > atomic_load(&threshold))
		return;
	if (journal) {
		n = (size_t)snprintf(line, sizeof(line), "%srepld: ",
			prefixes[level]);
	} else {
		struct timespec ts;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
		n += (size_t)snprintf(line + n, sizeof(line) - n,
			".%03ldZ %s repld: ", ts.tv_nsec / 1000000L, names[level]);
	}
	r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	if (r < 0)
		r = 0;
	n = (size_t)r >= sizeof(line) - n ? sizeof(line) - 1 : n + (size_t)r;
	/* one line each: the caller's newline, if any, is ours to add */
	while (n > 0 && line[n - 1] == '\n')
		n--;
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	write_all(line, n);
}

void
log_msg(enum repl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, fmt, ap);
	va_end(ap);
}

/* librepl's messages come made; the format is ours */
static void
from_librepl(void *arg, enum repl_log_level level, const char *file,
		int line, const char *func, const char *message)
{
	(void)arg;
	(void)file;
	(void)line;
	(void)func;
	log_msg(level, "%s", message);
}

void
log_set_threshold(enum repl_log_level level)
{
	atomic_store(&threshold, (int)level);
	/* librepl drops what is below it before formatting it */
	(void)repl_log_set_threshold(REPL_LOG_THRESHOLD, level);
}

void
log_init(void)
{
	journal = stderr_is_journal();
	(void)repl_log_set_function(from_librepl, NULL);
	log_set_threshold(REPL_LOG_LEVEL_NOTICE);
}
