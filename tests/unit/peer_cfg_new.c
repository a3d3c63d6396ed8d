/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_new.c -- rpma_peer_cfg_new: NULL argument and the defaults */
#include "unit.h"

static void
peer_cfg_new__pcfg_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
}

/* a new configuration does not claim direct write to PMem */
static void
peer_cfg_new__success_defaults(void)
{
	struct rpma_peer_cfg *pcfg = UNIT_SENTINEL;
	bool supported = true;
	unsigned char desc = 0xAB;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_PTR_NOT_NULL(pcfg);
	CU_ASSERT_PTR_NOT_EQUAL(pcfg, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &supported), 0);
	CU_ASSERT_FALSE(supported);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(pcfg, &desc), 0);
	CU_ASSERT_EQUAL(desc, 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_delete(&pcfg), 0);
}

/* two objects are independent */
static void
peer_cfg_new__independent(void)
{
	struct rpma_peer_cfg *a = NULL, *b = NULL;
	bool supported = true;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&a), 0);
	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&b), 0);
	CU_ASSERT_PTR_NOT_EQUAL(a, b);
	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(a, true), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(b, &supported), 0);
	CU_ASSERT_FALSE(supported);
	rpma_peer_cfg_delete(&a);
	rpma_peer_cfg_delete(&b);
}

UNIT_MAIN("rpma_peer_cfg_new",
	UNIT_CASE(peer_cfg_new__pcfg_ptr_NULL),
	UNIT_CASE(peer_cfg_new__success_defaults),
	UNIT_CASE(peer_cfg_new__independent))
