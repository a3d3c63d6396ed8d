/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_get_timeout.c -- rpma_conn_cfg_get_timeout: NULL arguments, default 1000, after set */
#include "unit.h"

#define UNTOUCHED 0x5A5A5A5A

static void
conn_cfg_get_timeout__cfg_NULL(void)
{
	int v = UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(NULL, &v), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(v, UNTOUCHED);
}

static void
conn_cfg_get_timeout__timeout_NULL(void)
{
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(cfg, NULL), RPMA_E_INVAL);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_timeout__cfg_NULL_timeout_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(NULL, NULL), RPMA_E_INVAL);
}

static void
conn_cfg_get_timeout__default(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	int v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 1000);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_timeout__after_set(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	int v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_timeout(cfg, 0), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_get_timeout",
	UNIT_CASE(conn_cfg_get_timeout__cfg_NULL),
	UNIT_CASE(conn_cfg_get_timeout__timeout_NULL),
	UNIT_CASE(conn_cfg_get_timeout__cfg_NULL_timeout_NULL),
	UNIT_CASE(conn_cfg_get_timeout__default),
	UNIT_CASE(conn_cfg_get_timeout__after_set))
