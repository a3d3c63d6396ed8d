/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg_new.c -- rpma_srq_cfg_new: NULL argument and the documented defaults */
#include "unit.h"

static void
srq_cfg_new__cfg_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
}

/* 100 and 100 as librpma documents them (its code used 20) */
static void
srq_cfg_new__defaults(void)
{
	struct rpma_srq_cfg *cfg = UNIT_SENTINEL;
	uint32_t v = 0x5A5A;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_PTR_NOT_EQUAL_FATAL(cfg, UNIT_SENTINEL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100);
	v = 0x5A5A;
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100);
	CU_ASSERT_EQUAL(rpma_srq_cfg_delete(&cfg), 0);
}

UNIT_MAIN("rpma_srq_cfg_new",
	UNIT_CASE(srq_cfg_new__cfg_ptr_NULL),
	UNIT_CASE(srq_cfg_new__defaults))
