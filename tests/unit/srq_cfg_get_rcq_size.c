/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg_get_rcq_size.c -- rpma_srq_cfg_get_rcq_size: NULL arguments, default 100, after set */
#include "unit.h"

#define UNTOUCHED 0x5A5A5A5Au

static void
srq_cfg_get_rcq_size__cfg_NULL(void)
{
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(NULL, &v), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(v, UNTOUCHED);
}

static void
srq_cfg_get_rcq_size__rcq_size_NULL(void)
{
	struct rpma_srq_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(cfg, NULL), RPMA_E_INVAL);
	rpma_srq_cfg_delete(&cfg);
}

static void
srq_cfg_get_rcq_size__cfg_NULL_rcq_size_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(NULL, NULL), RPMA_E_INVAL);
}

/* the documented default (librpma's code used 20) */
static void
srq_cfg_get_rcq_size__default(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100);
	rpma_srq_cfg_delete(&cfg);
}

static void
srq_cfg_get_rcq_size__after_set(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v = UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_set_rcq_size(cfg, 100 + 123), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100 + 123);
	rpma_srq_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_srq_cfg_get_rcq_size",
	UNIT_CASE(srq_cfg_get_rcq_size__cfg_NULL),
	UNIT_CASE(srq_cfg_get_rcq_size__rcq_size_NULL),
	UNIT_CASE(srq_cfg_get_rcq_size__cfg_NULL_rcq_size_NULL),
	UNIT_CASE(srq_cfg_get_rcq_size__default),
	UNIT_CASE(srq_cfg_get_rcq_size__after_set))
