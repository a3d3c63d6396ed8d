/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_set_timeout.c -- rpma_conn_cfg_set_timeout: NULL cfg, negative refused, 0 allowed */
#include <limits.h>

#include "unit.h"

static void
conn_cfg_set_timeout__cfg_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_timeout(NULL, 100), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_timeout(NULL, -1), RPMA_E_INVAL);
}

/* a negative timeout is refused and the stored one kept */
static void
conn_cfg_set_timeout__negative(void)
{
	static const int values[] = { -1, -1000, INT_MIN };
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_timeout(cfg, 2500), 0);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int got = 0;

		CU_ASSERT_EQUAL(rpma_conn_cfg_set_timeout(cfg, values[i]), RPMA_E_INVAL);
		CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(cfg, &got), 0);
		CU_ASSERT_EQUAL(got, 2500);
	}
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_set_timeout__success(void)
{
	static const int values[] = { 0, 1, 1000, INT_MAX, 42 };
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		int got = -1;

		CU_ASSERT_EQUAL(rpma_conn_cfg_set_timeout(cfg, values[i]), 0);
		CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(cfg, &got), 0);
		CU_ASSERT_EQUAL(got, values[i]);
	}
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_set_timeout",
	UNIT_CASE(conn_cfg_set_timeout__cfg_NULL),
	UNIT_CASE(conn_cfg_set_timeout__negative),
	UNIT_CASE(conn_cfg_set_timeout__success))
