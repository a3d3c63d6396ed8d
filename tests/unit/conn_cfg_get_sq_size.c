/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_get_sq_size.c -- rpma_conn_cfg_get_sq_size: NULL arguments, default 10, after set */
#include "unit.h"

#define UNTOUCHED 0x5A5A5A5Au

static void
conn_cfg_get_sq_size__cfg_NULL(void)
{
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_conn_cfg_get_sq_size(NULL, &v), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(v, UNTOUCHED);
}

static void
conn_cfg_get_sq_size__sq_size_NULL(void)
{
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_sq_size(cfg, NULL), RPMA_E_INVAL);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_sq_size__cfg_NULL_sq_size_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_sq_size(NULL, NULL), RPMA_E_INVAL);
}

/* librpma's default */
static void
conn_cfg_get_sq_size__default(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 10);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_sq_size__after_set(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_sq_size(cfg, 10 + 123), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 10 + 123);
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_get_sq_size",
	UNIT_CASE(conn_cfg_get_sq_size__cfg_NULL),
	UNIT_CASE(conn_cfg_get_sq_size__sq_size_NULL),
	UNIT_CASE(conn_cfg_get_sq_size__cfg_NULL_sq_size_NULL),
	UNIT_CASE(conn_cfg_get_sq_size__default),
	UNIT_CASE(conn_cfg_get_sq_size__after_set))
