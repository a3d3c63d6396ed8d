/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg_from_descriptor.c -- rpma_peer_cfg_from_descriptor: strict 1-byte decoding (0 or 1) */
#include "unit.h"

static void
from_desc__desc_NULL(void)
{
	struct rpma_peer_cfg *pcfg = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_peer_cfg_from_descriptor(NULL, 1, &pcfg), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(pcfg, UNIT_SENTINEL);
}

static void
from_desc__pcfg_ptr_NULL(void)
{
	unsigned char desc = 1;

	CU_ASSERT_EQUAL(rpma_peer_cfg_from_descriptor(&desc, 1, NULL), RPMA_E_INVAL);
}

static void
from_desc__pcfg_ptr_desc_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_peer_cfg_from_descriptor(NULL, 1, NULL), RPMA_E_INVAL);
}

/* exactly one byte: librpma ignored extra bytes, this core refuses them */
static void
from_desc__incorrect_desc_size(void)
{
	static const size_t sizes[] = { 0, 2, 21, 40, SIZE_MAX };
	unsigned char desc[64] = { 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct rpma_peer_cfg *pcfg = UNIT_SENTINEL;

		CU_ASSERT_EQUAL(rpma_peer_cfg_from_descriptor(desc, sizes[i], &pcfg),
			RPMA_E_INVAL);
		CU_ASSERT_PTR_EQUAL(pcfg, UNIT_SENTINEL);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "bytes"));
}

/* the byte decides whether flushes may be persistent: only 0 and 1 mean something */
static void
from_desc__byte_above_one(void)
{
	for (int v = 2; v <= 0xFF; v++) {
		unsigned char desc = (unsigned char)v;
		struct rpma_peer_cfg *pcfg = UNIT_SENTINEL;

		CU_ASSERT_EQUAL(rpma_peer_cfg_from_descriptor(&desc, 1, &pcfg), RPMA_E_INVAL);
		CU_ASSERT_PTR_EQUAL(pcfg, UNIT_SENTINEL);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "0xff"));
}

/* 0 and 1 round-trip through get_descriptor and the getter */
static void
from_desc__success(void)
{
	for (unsigned char v = 0; v <= 1; v++) {
		struct rpma_peer_cfg *pcfg = UNIT_SENTINEL;
		unsigned char back = 0xAB;
		bool supported = !v;

		CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_from_descriptor(&v, 1, &pcfg), 0);
		CU_ASSERT_PTR_NOT_EQUAL_FATAL(pcfg, UNIT_SENTINEL);
		CU_ASSERT_EQUAL(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &supported), 0);
		CU_ASSERT_EQUAL(supported, v == 1);
		CU_ASSERT_EQUAL(rpma_peer_cfg_get_descriptor(pcfg, &back), 0);
		CU_ASSERT_EQUAL(back, v);
		CU_ASSERT_EQUAL(rpma_peer_cfg_delete(&pcfg), 0);
	}
}

UNIT_MAIN("rpma_peer_cfg_from_descriptor",
	UNIT_CASE(from_desc__desc_NULL),
	UNIT_CASE(from_desc__pcfg_ptr_NULL),
	UNIT_CASE(from_desc__pcfg_ptr_desc_NULL),
	UNIT_CASE(from_desc__incorrect_desc_size),
	UNIT_CASE(from_desc__byte_above_one),
	UNIT_CASE(from_desc__success))
