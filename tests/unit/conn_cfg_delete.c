/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_delete.c -- rpma_conn_cfg_delete: NULL arguments and the pointer reset */
#include "unit.h"

static void
conn_cfg_delete__cfg_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_delete(NULL), RPMA_E_INVAL);
}

static void
conn_cfg_delete__cfg_NULL(void)
{
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL(rpma_conn_cfg_delete(&cfg), 0);
	CU_ASSERT_PTR_NULL(cfg);
}

/* freed (LeakSanitizer checks) and cleared */
static void
conn_cfg_delete__success(void)
{
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_PTR_NOT_NULL(cfg);
	CU_ASSERT_EQUAL(rpma_conn_cfg_delete(&cfg), 0);
	CU_ASSERT_PTR_NULL(cfg);
}

UNIT_MAIN("rpma_conn_cfg_delete",
	UNIT_CASE(conn_cfg_delete__cfg_ptr_NULL),
	UNIT_CASE(conn_cfg_delete__cfg_NULL),
	UNIT_CASE(conn_cfg_delete__success))
