/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg_set_rcq_size.c -- rpma_srq_cfg_set_rcq_size: NULL cfg, any uint32_t value sticks */
#include "unit.h"

static void
srq_cfg_set_rcq_size__cfg_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_srq_cfg_set_rcq_size(NULL, 5), RPMA_E_INVAL);
}

/* the whole range is stored as given, the last set wins */
static void
srq_cfg_set_rcq_size__success(void)
{
	static const uint32_t values[] = { 0, 1, 7, 4096, UINT32_MAX - 1, UINT32_MAX, 3 };
	struct rpma_srq_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint32_t got = values[i] ^ 0x5A5A5A5A;

		CU_ASSERT_EQUAL(rpma_srq_cfg_set_rcq_size(cfg, values[i]), 0);
		CU_ASSERT_EQUAL(rpma_srq_cfg_get_rcq_size(cfg, &got), 0);
		CU_ASSERT_EQUAL(got, values[i]);
	}
	rpma_srq_cfg_delete(&cfg);
}

/* a setter that wrote the wrong field would show here */
static void
srq_cfg_set_rcq_size__others_untouched(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	uint32_t v;

	CU_ASSERT_EQUAL_FATAL(rpma_srq_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_set_rcq_size(cfg, 777), 0);
	CU_ASSERT_EQUAL(rpma_srq_cfg_get_rq_size(cfg, &v), 0);
	CU_ASSERT_EQUAL(v, 100);
	rpma_srq_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_srq_cfg_set_rcq_size",
	UNIT_CASE(srq_cfg_set_rcq_size__cfg_NULL),
	UNIT_CASE(srq_cfg_set_rcq_size__success),
	UNIT_CASE(srq_cfg_set_rcq_size__others_untouched))
