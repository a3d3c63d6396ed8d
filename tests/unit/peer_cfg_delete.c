/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_delete.c -- rpma_peer_cfg_delete: NULL arguments and the pointer reset */
#include "unit.h"

static void
peer_cfg_delete__pcfg_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_delete(NULL), RPMA_E_INVAL);
}

static void
peer_cfg_delete__pcfg_NULL(void)
{
	struct rpma_peer_cfg *pcfg = NULL;

	CU_ASSERT_EQUAL(rpma_peer_cfg_delete(&pcfg), 0);
	CU_ASSERT_PTR_NULL(pcfg);
}

/* freed (LeakSanitizer checks) and cleared */
static void
peer_cfg_delete__success(void)
{
	struct rpma_peer_cfg *pcfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_delete(&pcfg), 0);
	CU_ASSERT_PTR_NULL(pcfg);
}

UNIT_MAIN("rpma_peer_cfg_delete",
	UNIT_CASE(peer_cfg_delete__pcfg_ptr_NULL),
	UNIT_CASE(peer_cfg_delete__pcfg_NULL),
	UNIT_CASE(peer_cfg_delete__success))
