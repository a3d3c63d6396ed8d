/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_set_srq.c -- rpma_conn_cfg_set_srq: NULL cfg, store, and NULL srq detaching */
#include "unit.h"

/* the cfg only stores the pointer: no real SRQ (it needs a device) is required */
#define MOCK_SRQ ((struct rpma_srq *)(uintptr_t)0xFEEF)

static void
conn_cfg_set_srq__cfg_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_srq(NULL, MOCK_SRQ), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_srq(NULL, NULL), RPMA_E_INVAL);
}

static void
conn_cfg_set_srq__success(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_srq(cfg, MOCK_SRQ), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	CU_ASSERT_PTR_EQUAL(srq, MOCK_SRQ);
	rpma_conn_cfg_delete(&cfg);
}

/* srq NULL detaches a set SRQ (librpma refused NULL with INVAL: a deliberate difference) */
static void
conn_cfg_set_srq__srq_NULL_clears(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_srq *srq = UNIT_SENTINEL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_srq(cfg, MOCK_SRQ), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_srq(cfg, NULL), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	CU_ASSERT_PTR_NULL(srq);
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_set_srq",
	UNIT_CASE(conn_cfg_set_srq__cfg_NULL),
	UNIT_CASE(conn_cfg_set_srq__success),
	UNIT_CASE(conn_cfg_set_srq__srq_NULL_clears))
