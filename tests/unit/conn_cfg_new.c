/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_new.c -- rpma_conn_cfg_new: NULL argument and librpma's defaults */
#include "unit.h"

static void
conn_cfg_new__cfg_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
}

/* timeout 1000, cq 10, rcq 0, sq 10, rq 10, private channel, no SRQ */
static void
conn_cfg_new__defaults(void)
{
	struct rpma_conn_cfg *cfg = UNIT_SENTINEL;
	struct rpma_srq *srq = UNIT_SENTINEL;
	int timeout = -1;
	uint32_t q = 0x5A5A;
	bool shared = true;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_PTR_NOT_EQUAL_FATAL(cfg, UNIT_SENTINEL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_timeout(cfg, &timeout), 0);
	CU_ASSERT_EQUAL(timeout, 1000);
	CU_ASSERT_EQUAL(timeout, RPMA_DEFAULT_TIMEOUT_MS);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_cq_size(cfg, &q), 0);
	CU_ASSERT_EQUAL(q, 10);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_rcq_size(cfg, &q), 0);
	CU_ASSERT_EQUAL(q, 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_sq_size(cfg, &q), 0);
	CU_ASSERT_EQUAL(q, 10);
	q = 0x5A5A;
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_rq_size(cfg, &q), 0);
	CU_ASSERT_EQUAL(q, 10);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	CU_ASSERT_FALSE(shared);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	CU_ASSERT_PTR_NULL(srq);
	CU_ASSERT_EQUAL(rpma_conn_cfg_delete(&cfg), 0);
}

UNIT_MAIN("rpma_conn_cfg_new",
	UNIT_CASE(conn_cfg_new__cfg_ptr_NULL),
	UNIT_CASE(conn_cfg_new__defaults))
