/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_get_direct_write_to_pmem.c -- rpma_peer_cfg_get_direct_write_to_pmem: NULL, default, after set */
#include "unit.h"

static void
get_dw2p__pcfg_NULL(void)
{
	bool supported = true;

	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(NULL, &supported), RPMA_E_INVAL);
	CU_ASSERT_TRUE(supported);	/* untouched */
}

static void
get_dw2p__supported_NULL(void)
{
	struct rpma_peer_cfg *pcfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, NULL), RPMA_E_INVAL);
	rpma_peer_cfg_delete(&pcfg);
}

static void
get_dw2p__pcfg_supported_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(NULL, NULL), RPMA_E_INVAL);
}

static void
get_dw2p__default_false(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	bool supported = true;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &supported), 0);
	CU_ASSERT_FALSE(supported);
	rpma_peer_cfg_delete(&pcfg);
}

static void
get_dw2p__after_set(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	bool supported = false;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &supported), 0);
	CU_ASSERT_TRUE(supported);
	rpma_peer_cfg_delete(&pcfg);
}

UNIT_MAIN("rpma_peer_cfg_get_direct_write_to_pmem",
	UNIT_CASE(get_dw2p__pcfg_NULL),
	UNIT_CASE(get_dw2p__supported_NULL),
	UNIT_CASE(get_dw2p__pcfg_supported_NULL),
	UNIT_CASE(get_dw2p__default_false),
	UNIT_CASE(get_dw2p__after_set))
