/* SPDX-License-Identifier: BSD-3-Clause */
/* log_set_function.c -- rpma_log_set_function: custom callback, threshold gating, NULL restores default */
#include <stdarg.h>
#include <unistd.h>

#include "unit.h"

static int calls;
static enum rpma_log_level last_level;
static char last_file[256], last_func[64], last_msg[1024];
static int last_line;

static void
recording_log(enum rpma_log_level level, const char *file_name, const int line_no,
		const char *function_name, const char *message_format, ...)
	__attribute__((format(printf, 5, 6)));

static void
recording_log(enum rpma_log_level level, const char *file_name, const int line_no,
		const char *function_name, const char *message_format, ...)
{
	va_list ap;

	calls++;
	last_level = level;
	last_line = line_no;
	snprintf(last_file, sizeof(last_file), "%s", file_name ? file_name : "");
	snprintf(last_func, sizeof(last_func), "%s", function_name ? function_name : "");
	va_start(ap, message_format);
	vsnprintf(last_msg, sizeof(last_msg), message_format, ap);
	va_end(ap);
}

static int other_calls;

static void
other_log(enum rpma_log_level level, const char *file_name, const int line_no,
		const char *function_name, const char *message_format, ...)
{
	(void)level, (void)file_name, (void)line_no, (void)function_name;
	(void)message_format;
	other_calls++;
}

/* a format-1 descriptor with a bad crc: rejected and logged at ERROR */
static void
provoke_error_log(void)
{
	unsigned char desc[40] = { 'R', 'P', 'M', 'D', 1, 1, 0x21 };
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(desc, sizeof(desc), &mr),
		RPMA_E_NOSUPP);
}

static void
restore(void)
{
	rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

/* the callback gets level, location and the reason, terminated by "\n" */
static void
set_function__custom_receives_error(void)
{
	size_t len;

	CU_ASSERT_EQUAL(rpma_log_set_function(recording_log), 0);
	CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR), 0);
	calls = 0;
	provoke_error_log();
	CU_ASSERT_EQUAL(calls, 1);
	CU_ASSERT_EQUAL(last_level, RPMA_LOG_LEVEL_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(last_file, "descriptor.c"));
	CU_ASSERT(last_line > 0);
	CU_ASSERT_STRING_EQUAL(last_func, "rpma_mr_desc_decode");
	CU_ASSERT_PTR_NOT_NULL(strstr(last_msg, "checksum"));
	len = strlen(last_msg);
	CU_ASSERT(len >= 1 && last_msg[len - 1] == '\n');
	CU_ASSERT(len < 2 || last_msg[len - 2] != '\n');	/* exactly one */
	restore();
}

/* ERROR messages arrive at thresholds ERROR..DEBUG, never at FATAL or DISABLED */
static void
set_function__at_or_below_threshold_only(void)
{
	CU_ASSERT_EQUAL(rpma_log_set_function(recording_log), 0);
	for (int lvl = RPMA_LOG_DISABLED; lvl <= RPMA_LOG_LEVEL_DEBUG; lvl++) {
		CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			(enum rpma_log_level)lvl), 0);
		calls = 0;
		provoke_error_log();
		CU_ASSERT_EQUAL(calls, lvl >= RPMA_LOG_LEVEL_ERROR ? 1 : 0);
	}
	restore();
}

/* a second set_function replaces the first */
static void
set_function__replace(void)
{
	CU_ASSERT_EQUAL(rpma_log_set_function(recording_log), 0);
	CU_ASSERT_EQUAL(rpma_log_set_function(other_log), 0);
	CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);
	calls = other_calls = 0;
	provoke_error_log();
	CU_ASSERT_EQUAL(calls, 0);
	CU_ASSERT_EQUAL(other_calls, 1);
	restore();
}

/* NULL goes back to the default function, which prints on stderr at or below aux */
static void
set_function__NULL_restores_default(void)
{
	FILE *capture = tmpfile();
	char out[2048] = "";
	int saved;
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(capture);
	CU_ASSERT_EQUAL(rpma_log_set_function(recording_log), 0);
	CU_ASSERT_EQUAL(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR), 0);
	CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR), 0);

	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0);
	dup2(fileno(capture), STDERR_FILENO);
	calls = 0;
	provoke_error_log();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);

	rewind(capture);
	n = fread(out, 1, sizeof(out) - 1, capture);
	out[n] = '\0';
	fclose(capture);
	CU_ASSERT_EQUAL(calls, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "*ERROR*"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "rpma_mr_desc_decode"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "checksum"));
	restore();
}

UNIT_MAIN("rpma_log_set_function",
	UNIT_CASE(set_function__custom_receives_error),
	UNIT_CASE(set_function__at_or_below_threshold_only),
	UNIT_CASE(set_function__replace),
	UNIT_CASE(set_function__NULL_restores_default))
