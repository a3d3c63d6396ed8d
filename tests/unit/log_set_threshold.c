/* SPDX-License-Identifier: BSD-3-Clause */
/* log_set_threshold.c -- rpma_log_set_threshold: valid ranges, rejections, effect on delivery */
#include <limits.h>

#include "unit.h"

static int calls;
static enum rpma_log_level last_level;

static void
counting_log(enum rpma_log_level level, const char *file_name, const int line_no,
		const char *function_name, const char *message_format, ...)
{
	(void)file_name, (void)line_no, (void)function_name, (void)message_format;
	calls++;
	last_level = level;
}

/* a rejected descriptor is logged at RPMA_LOG_LEVEL_ERROR */
static void
provoke_error_log(void)
{
	unsigned char desc[40] = { 'R', 'P', 'M', 'D', 1 };
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(desc, sizeof(desc), &mr),
		RPMA_E_NOSUPP);
}

static void
set_threshold__valid(void)
{
	for (int thr = RPMA_LOG_THRESHOLD; thr <= RPMA_LOG_THRESHOLD_AUX; thr++) {
		for (int lvl = RPMA_LOG_DISABLED; lvl <= RPMA_LOG_LEVEL_DEBUG; lvl++) {
			enum rpma_log_level got = (enum rpma_log_level)99;

			CU_ASSERT_EQUAL(rpma_log_set_threshold((enum rpma_log_threshold)thr,
				(enum rpma_log_level)lvl), 0);
			CU_ASSERT_EQUAL(rpma_log_get_threshold((enum rpma_log_threshold)thr,
				&got), 0);
			CU_ASSERT_EQUAL(got, lvl);
		}
	}
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

/* a rejected call changes neither threshold */
static void
expect_inval(int thr, int lvl)
{
	enum rpma_log_level main_lvl, aux_lvl;

	CU_ASSERT_EQUAL(rpma_log_set_threshold((enum rpma_log_threshold)thr,
		(enum rpma_log_level)lvl), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &main_lvl), 0);
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &aux_lvl), 0);
	CU_ASSERT_EQUAL(main_lvl, RPMA_LOG_LEVEL_NOTICE);
	CU_ASSERT_EQUAL(aux_lvl, RPMA_LOG_LEVEL_INFO);
}

static void
set_threshold__invalid_threshold(void)
{
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);
	expect_inval(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_ERROR);
	expect_inval(-1, RPMA_LOG_LEVEL_ERROR);
	expect_inval(3, RPMA_LOG_DISABLED);
	expect_inval(INT_MAX, RPMA_LOG_LEVEL_ERROR);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

static void
set_threshold__invalid_level(void)
{
	static const int levels[] = { -2, 6, INT_MIN, INT_MAX };

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_INFO);
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		expect_inval(RPMA_LOG_THRESHOLD, levels[i]);
		expect_inval(RPMA_LOG_THRESHOLD_AUX, levels[i]);
		expect_inval(RPMA_LOG_THRESHOLD_MAX, levels[i]);
	}
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

/* the main threshold decides whether an ERROR message reaches the log function */
static void
set_threshold__gates_delivery(void)
{
	CU_ASSERT_EQUAL(rpma_log_set_function(counting_log), 0);
	for (int lvl = RPMA_LOG_DISABLED; lvl <= RPMA_LOG_LEVEL_DEBUG; lvl++) {
		CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD,
			(enum rpma_log_level)lvl), 0);
		calls = 0;
		provoke_error_log();
		CU_ASSERT_EQUAL(calls, lvl >= RPMA_LOG_LEVEL_ERROR ? 1 : 0);
		if (calls)
			CU_ASSERT_EQUAL(last_level, RPMA_LOG_LEVEL_ERROR);
	}
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
}

UNIT_MAIN("rpma_log_set_threshold",
	UNIT_CASE(set_threshold__valid),
	UNIT_CASE(set_threshold__invalid_threshold),
	UNIT_CASE(set_threshold__invalid_level),
	UNIT_CASE(set_threshold__gates_delivery))
