/* SPDX-License-Identifier: BSD-3-Clause */
/* crc32c.c -- rpma_crc32c: known vectors, chaining, both implementations */
#include "unit.h"
#include "crc32c.h"

static void
crc32c__check_value(void)
{
	CU_ASSERT_EQUAL(rpma_crc32c(0, "123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(rpma_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(rpma_crc32c(0, "", 0), 0u);
}

static void
crc32c__chaining_and_paths_agree(void)
{
	unsigned char buf[1000];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (size_t len = 0; len < sizeof(buf); len += 37) {
		uint32_t whole = rpma_crc32c(0, buf, len);
		CU_ASSERT_EQUAL(whole, rpma_crc32c_sw(0, buf, len));
		for (size_t cut = 0; cut <= len; cut += 13)
			CU_ASSERT_EQUAL(rpma_crc32c(rpma_crc32c(0, buf, cut),
				buf + cut, len - cut), whole);
	}
}

UNIT_MAIN("rpma_crc32c",
	UNIT_CASE(crc32c__check_value),
	UNIT_CASE(crc32c__chaining_and_paths_agree))
