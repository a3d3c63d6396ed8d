/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc32c.c -- rpma_crc32c: known vectors, chaining, agreement with a
 * bit-at-a-time reference, and the shift.  Built twice: against the core,
 * and as tests/unit/crc32c_small_chunks with lib/crc32c.c compiled in and
 * a piece of a few bytes, so that the loop feeding ISA-L in pieces runs.
 */
#include "unit.h"
#include "crc32c.h"

/* the definition, one bit at a time: slow, but nothing to get wrong */
static uint32_t
ref_update(uint32_t reg, unsigned char byte)
{
	reg ^= byte;
	for (int k = 0; k < 8; k++)
		reg = (reg >> 1) ^ (0x82F63B78u & (0u - (reg & 1)));
	return reg;
}

static uint32_t
ref_crc32c(uint32_t crc, const unsigned char *buf, size_t len)
{
	uint32_t reg = ~crc;

	for (size_t i = 0; i < len; i++)
		reg = ref_update(reg, buf[i]);
	return ~reg;
}

static void
crc32c__check_value(void)
{
	CU_ASSERT_EQUAL(rpma_crc32c(0, "123456789", 9), 0xE3069283u);
	CU_ASSERT_EQUAL(ref_crc32c(0, (const unsigned char *)"123456789", 9),
		0xE3069283u);
	CU_ASSERT_EQUAL(rpma_crc32c(0, "", 0), 0u);
	CU_ASSERT_EQUAL(rpma_crc32c(0x12345678u, "", 0), 0x12345678u);
}

static void
crc32c__chaining(void)
{
	unsigned char buf[1000];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 131 + 7);
	for (size_t len = 0; len < sizeof(buf); len += 37) {
		uint32_t whole = rpma_crc32c(0, buf, len);
		CU_ASSERT_EQUAL(whole, ref_crc32c(0, buf, len));
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

/* 1 (and a line saying what differs) if rpma_crc32c disagrees with want */
static unsigned
mismatch(const unsigned char *buf, size_t len, uint32_t seed, uint32_t want)
{
	uint32_t got = rpma_crc32c(seed, buf, len);

	if (got == want)
		return 0;
	printf("\nlen %zu align %u seed 0x%08x: 0x%08x, reference 0x%08x\n",
		len, (unsigned)((uintptr_t)buf & 7), seed, got, want);
	return 1;
}

/*
 * every length up to 5000 at every alignment, against the reference grown
 * one byte at a time (the prefixes of one buffer share their work)
 */
static void
crc32c__matches_reference_every_length(void)
{
	static unsigned char buf[5000 + 8];
	uint64_t s = 0x9e3779b97f4a7c15u;
	unsigned bad = 0;

	rng_fill(buf, sizeof(buf), &s);
	for (size_t align = 0; align < 8; align++) {
		uint32_t seed = align == 0 ? 0 : (uint32_t)rng_next(&s);
		uint32_t reg = ~seed;

		for (size_t len = 0; len <= 5000; len++) {
			if (len > 0)
				reg = ref_update(reg, buf[align + len - 1]);
			if (bad < 10)
				bad += mismatch(buf + align, len, seed, ~reg);
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* large lengths, odd and round */
static void
crc32c__matches_reference_large(void)
{
	static unsigned char buf[1 << 20];
	uint64_t s = 0x0123456789abcdefu;
	unsigned bad = 0;
	size_t lens[] = { 65535, 65536, 65537, 66048 + 721, 300007,
		sizeof(buf) - 3, sizeof(buf) };

	rng_fill(buf, sizeof(buf), &s);
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		size_t align = l % 4;
		size_t len = lens[l] - align;
		uint32_t seed = (uint32_t)rng_next(&s);

		bad += mismatch(buf + align, len, seed,
			ref_crc32c(seed, buf + align, len));
	}
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
	/* a length past 32 bits: x^(8 * 2^32) through the table's high rows */
	CU_ASSERT_EQUAL(rpma_crc32c_shift(0xdeadbeefu, (uint64_t)1 << 32),
		rpma_crc32c_shift(rpma_crc32c_shift(0xdeadbeefu,
			(uint64_t)1 << 31), (uint64_t)1 << 31));
}

UNIT_MAIN("rpma_crc32c",
	UNIT_CASE(crc32c__check_value),
	UNIT_CASE(crc32c__chaining),
	UNIT_CASE(crc32c__matches_reference_every_length),
	UNIT_CASE(crc32c__matches_reference_large),
	UNIT_CASE(crc32c__shift_chains_after_the_fact))
