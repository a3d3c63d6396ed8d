/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg_get_rq_size.c -- rpma_srq_cfg_get_rq_size: NULL arguments, default 100, after set */
#include "unit.h"

#define UNTOUCHED 0x5A5A5A5Au

static void
srq_cfg_get_rq_size__cfg_NULL(void)
{
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(NULL, &v), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(v, UNTOUCHED);
}

static void
srq_cfg_get_rq_size__rq_size_NULL(void)
{
	struct rpma_srq_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(cfg, NULL), RPMA_E_INVAL);
	rpma_srq_cfg_delete(&cfg);
}

static void
srq_cfg_get_rq_size__cfg_NULL_rq_size_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(NULL, NULL), RPMA_E_INVAL);
}

/* the documented default (librpma's code used 20) */
static void
srq_cfg_get_rq_size__default(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100);
	rpma_srq_cfg_delete(&cfg);
}

static void
srq_cfg_get_rq_size__after_set(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_set_rq_size(cfg, 100 + 123), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100 + 123);
	rpma_srq_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_srq_cfg_get_rq_size",
	UNIT_CASE(srq_cfg_get_rq_size__cfg_NULL),
	UNIT_CASE(srq_cfg_get_rq_size__rq_size_NULL),
	UNIT_CASE(srq_cfg_get_rq_size__cfg_NULL_rq_size_NULL),
	UNIT_CASE(srq_cfg_get_rq_size__default),
	UNIT_CASE(srq_cfg_get_rq_size__after_set))
