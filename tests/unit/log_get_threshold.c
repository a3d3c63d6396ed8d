/* SPDX-License-Identifier: BSD-3-Clause */
/* log_get_threshold.c -- rpma_log_get_threshold: NULL, bad threshold, defaults, after set */
#include "unit.h"

#define LEVEL_UNTOUCHED ((enum rpma_log_level)77)

/* unit_run() changes the main threshold, so read the defaults before main() */
static enum rpma_log_level default_main = LEVEL_UNTOUCHED;
static enum rpma_log_level default_aux = LEVEL_UNTOUCHED;
static int default_ret = -1;

__attribute__((constructor)) static void
read_defaults(void)
{
	default_ret = rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &default_main) |
		rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &default_aux);
}

static void
get_threshold__level_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, NULL), RPMA_E_INVAL);
}

static void
get_threshold__invalid_threshold(void)
{
	static const int thresholds[] = { RPMA_LOG_THRESHOLD_MAX, -1, 3, 1000 };

	for (size_t i = 0; i < sizeof(thresholds) / sizeof(thresholds[0]); i++) {
		enum rpma_log_level lvl = LEVEL_UNTOUCHED;

		CU_ASSERT_EQUAL(rpma_log_get_threshold(
			(enum rpma_log_threshold)thresholds[i], &lvl), RPMA_E_INVAL);
		CU_ASSERT_EQUAL(lvl, LEVEL_UNTOUCHED);
	}
}

static void
get_threshold__invalid_threshold_level_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_MAX, NULL), RPMA_E_INVAL);
}

/* librpma's release defaults: WARNING reaches the log function, nothing on stderr */
static void
get_threshold__defaults(void)
{
	CU_ASSERT_EQUAL(default_ret, 0);
	CU_ASSERT_EQUAL(default_main, RPMA_LOG_LEVEL_WARNING);
	CU_ASSERT_EQUAL(default_aux, RPMA_LOG_DISABLED);
}

/* each threshold is kept separately */
static void
get_threshold__after_set(void)
{
	enum rpma_log_level lvl = LEVEL_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO), 0);
	CU_ASSERT_EQUAL(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL), 0);
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &lvl), 0);
	CU_ASSERT_EQUAL(lvl, RPMA_LOG_LEVEL_INFO);
	CU_ASSERT_EQUAL(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &lvl), 0);
	CU_ASSERT_EQUAL(lvl, RPMA_LOG_LEVEL_FATAL);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

UNIT_MAIN("rpma_log_get_threshold",
	UNIT_CASE(get_threshold__level_NULL),
	UNIT_CASE(get_threshold__invalid_threshold),
	UNIT_CASE(get_threshold__invalid_threshold_level_NULL),
	UNIT_CASE(get_threshold__defaults),
	UNIT_CASE(get_threshold__after_set))
