/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_get_descriptor.c -- rpma_peer_cfg_get_descriptor: NULL, one byte 0 or 1, nothing beyond */
#include "unit.h"

static void
get_desc__pcfg_NULL(void)
{
	unsigned char desc = 0xAB;

	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(NULL, &desc), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(desc, 0xAB);
}

static void
get_desc__desc_NULL(void)
{
	struct rpma_peer_cfg *pcfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(pcfg, NULL), RPMA_E_INVAL);
	rpma_peer_cfg_delete(&pcfg);
}

static void
get_desc__pcfg_desc_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(NULL, NULL), RPMA_E_INVAL);
}

/* default 0, set true -> 1, set false -> 0; only the first byte is written */
static void
get_desc__lifecycle(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	unsigned char desc[3];

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);

	memset(desc, 0xAB, sizeof(desc));
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	CU_ASSERT_EQUAL(desc[0], 0);
	CU_ASSERT_EQUAL(desc[1], 0xAB);

	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	memset(desc, 0xAB, sizeof(desc));
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(pcfg, desc + 1), 0);
	CU_ASSERT_EQUAL(desc[0], 0xAB);
	CU_ASSERT_EQUAL(desc[1], 1);
	CU_ASSERT_EQUAL(desc[2], 0xAB);

	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, false), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(pcfg, desc + 1), 0);
	CU_ASSERT_EQUAL(desc[1], 0);
	rpma_peer_cfg_delete(&pcfg);
}

UNIT_MAIN("rpma_peer_cfg_get_descriptor",
	UNIT_CASE(get_desc__pcfg_NULL),
	UNIT_CASE(get_desc__desc_NULL),
	UNIT_CASE(get_desc__pcfg_desc_NULL),
	UNIT_CASE(get_desc__lifecycle))
