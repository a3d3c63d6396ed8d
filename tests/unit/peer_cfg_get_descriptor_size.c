/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_get_descriptor_size.c -- rpma_peer_cfg_get_descriptor_size: NULL, always 1 */
#include "unit.h"

#define SIZE_UNTOUCHED ((size_t)0x5A5A5A5A)

static void
get_desc_size__pcfg_NULL(void)
{
	size_t size = SIZE_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor_size(NULL, &size), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(size, SIZE_UNTOUCHED);
}

static void
get_desc_size__desc_size_NULL(void)
{
	struct rpma_peer_cfg *pcfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor_size(pcfg, NULL), RPMA_E_INVAL);
	rpma_peer_cfg_delete(&pcfg);
}

static void
get_desc_size__pcfg_desc_size_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor_size(NULL, NULL), RPMA_E_INVAL);
}

/* 1 byte, whatever the value */
static void
get_desc_size__success(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	size_t size = SIZE_UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	CU_ASSERT_EQUAL(size, 1);
	CU_ASSERT_EQUAL(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	size = SIZE_UNTOUCHED;
	CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	CU_ASSERT_EQUAL(size, 1);
	rpma_peer_cfg_delete(&pcfg);
}

UNIT_MAIN("rpma_peer_cfg_get_descriptor_size",
	UNIT_CASE(get_desc_size__pcfg_NULL),
	UNIT_CASE(get_desc_size__desc_size_NULL),
	UNIT_CASE(get_desc_size__pcfg_desc_size_NULL),
	UNIT_CASE(get_desc_size__success))
