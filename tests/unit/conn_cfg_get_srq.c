/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_get_srq.c -- rpma_conn_cfg_get_srq: NULL arguments, default NULL, after set */
#include "unit.h"

#define MOCK_SRQ ((struct rpma_srq *)(uintptr_t)0xFEEF)

static void
conn_cfg_get_srq__cfg_NULL(void)
{
	struct rpma_srq *srq = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(NULL, &srq), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(srq, UNIT_SENTINEL);
}

static void
conn_cfg_get_srq__srq_ptr_NULL(void)
{
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(cfg, NULL), RPMA_E_INVAL);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_srq__cfg_NULL_srq_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(NULL, NULL), RPMA_E_INVAL);
}

static void
conn_cfg_get_srq__default_NULL(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = UNIT_SENTINEL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	CU_ASSERT_PTR_NULL(srq);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_srq__after_set(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_srq(cfg, MOCK_SRQ), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	CU_ASSERT_PTR_EQUAL(srq, MOCK_SRQ);
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_get_srq",
	UNIT_CASE(conn_cfg_get_srq__cfg_NULL),
	UNIT_CASE(conn_cfg_get_srq__srq_ptr_NULL),
	UNIT_CASE(conn_cfg_get_srq__cfg_NULL_srq_ptr_NULL),
	UNIT_CASE(conn_cfg_get_srq__default_NULL),
	UNIT_CASE(conn_cfg_get_srq__after_set))
