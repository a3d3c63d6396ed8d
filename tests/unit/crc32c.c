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

static uint64_t
rng_next(uint64_t *s)
{
	/* xorshift64: reproducible data and seeds */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
rng_fill(unsigned char *buf, size_t len, uint64_t *s)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(rng_next(s) >> 32);
}

/* compares rpma_crc32c with the portable path; returns the mismatches */
static unsigned
compare_paths(const unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t fast = rpma_crc32c(seed, buf, len);
	uint32_t sw = rpma_crc32c_sw(seed, buf, len);

	if (fast == sw)
		return 0;
	printf("\nlen %zu align %u seed 0x%08x: 0x%08x != 0x%08x\n", len,
		(unsigned)((uintptr_t)buf & 7), seed, fast, sw);
	return 1;
}

/* every length up to a few blocks of the three-lane path, every alignment */
static void
crc32c__paths_agree_every_length(void)
{
	static unsigned char buf[5000 + 8];
	uint64_t s = 0x9e3779b97f4a7c15u;
	unsigned bad = 0;

	rng_fill(buf, sizeof(buf), &s);
	for (size_t align = 0; align < 8; align++)
		for (size_t len = 0; len <= 5000; len++) {
			uint32_t seed = (len & 3) == 0 ? 0 :
				(uint32_t)rng_next(&s);
			if (bad < 10)
				bad += compare_paths(buf + align, len, seed);
		}
	CU_ASSERT_EQUAL(bad, 0);
}

/*
 * large lengths, and lengths around the block sizes of the x86 path
 * (3 * 256 and 3 * 80 bytes)
 */
static void
crc32c__paths_agree_large(void)
{
	static unsigned char buf[70000 + 8];
	uint64_t s = 0x0123456789abcdefu;
	unsigned bad = 0;
	long base[] = { 0, 768, 1536, 65536, 66048, 66048 + 240,
		66048 + 480, 66048 + 720 };
	long delta[] = { -1, 0, 1, 7, 239, 240, 241, 767 };

	rng_fill(buf, sizeof(buf), &s);
	for (size_t align = 0; align < 8; align++)
		for (size_t b = 0; b < sizeof(base) / sizeof(base[0]); b++)
			for (size_t d = 0; d < sizeof(delta) / sizeof(delta[0]);
					d++) {
				long len = base[b] + delta[d];
				if (len >= 0)
					bad += compare_paths(buf + align,
						(size_t)len,
						(uint32_t)rng_next(&s));
			}
	for (size_t len = 65536; len < 70000; len += 331)
		bad += compare_paths(buf + 3, len, (uint32_t)rng_next(&s));
	CU_ASSERT_EQUAL(bad, 0);
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
	UNIT_CASE(crc32c__paths_agree_every_length),
	UNIT_CASE(crc32c__paths_agree_large),
	UNIT_CASE(crc32c__shift_chains_after_the_fact))
