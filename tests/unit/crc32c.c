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

/* a CRC from zero chained afterwards equals the CRC computed in one go */
static void
crc32c__shift_chains_after_the_fact(void)
{
	static unsigned char buf[70000];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7919 + (i >> 9));
	uint32_t seeds[] = { 0, 1, 0x80000000u, 0xdeadbeefu, 0xffffffffu };
	size_t lens[] = { 0, 1, 7, 8, 40, 104, 4096, 65575, sizeof(buf) };
	for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			CU_ASSERT_EQUAL(rpma_crc32c(seeds[s], buf, lens[l]),
				rpma_crc32c(0, buf, lens[l]) ^
				rpma_crc32c_shift(seeds[s], lens[l]));
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		CU_ASSERT_EQUAL(rpma_crc32c_mulmod(0xdeadbeefu, rpma_crc32c_xpow8n(lens[l])),
			rpma_crc32c_shift(0xdeadbeefu, lens[l]));
	CU_ASSERT_EQUAL(rpma_crc32c_shift(0x12345678u, 0), 0x12345678u);
	CU_ASSERT_EQUAL(rpma_crc32c_shift(0, 12345), 0u);
}

UNIT_MAIN("rpma_crc32c",
	UNIT_CASE(crc32c__check_value),
	UNIT_CASE(crc32c__chaining_and_paths_agree),
	UNIT_CASE(crc32c__shift_chains_after_the_fact))
