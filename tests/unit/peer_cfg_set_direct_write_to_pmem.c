/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_set_direct_write_to_pmem.c -- rpma_peer_cfg_set_direct_write_to_pmem: NULL and lifecycle */
#include "unit.h"

static void
set_dw2p__pcfg_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(NULL, true), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(NULL, false), RPMA_E_INVAL);
}

/* false -> true -> true -> false, each visible through the getter */
static void
direct_write_to_pmem__lifecycle(void)
{
	static const bool steps[] = { true, true, false, true, false };
	struct rpma_peer_cfg *pcfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		bool supported = !steps[i];

		CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, steps[i]), 0);
		CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &supported), 0);
		CU_ASSERT_EQUAL(supported, steps[i]);
	}
	rpma_peer_cfg_delete(&pcfg);
}

UNIT_MAIN("rpma_peer_cfg_set_direct_write_to_pmem",
	UNIT_CASE(set_dw2p__pcfg_NULL),
	UNIT_CASE(direct_write_to_pmem__lifecycle))
