/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc32c.c -- CRC-32C: SSE4.2's crc32 instruction, on three chains at once,
 * where the CPU has it, otherwise slicing-by-8 tables.  The choice is made
 * once, on first use.
 *
 * Written here because no library kept in Debian 12 offers CRC-32C (the
 * Castagnoli polynomial) to user space: zlib's crc32 is the IEEE one, and
 * the formats (the core's descriptor format 1, the log's records and
 * headers, the membership) are defined on CRC-32C.
 */
#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "crc32c.h"

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static atomic_int table_ready;

static void
table_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				table[0][table[t - 1][i] & 0xff];
	atomic_store_explicit(&table_ready, 1, memory_order_release);
}

static uint64_t
load_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint32_t
rpma_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* building twice in a race writes the same values: harmless */
	if (!atomic_load_explicit(&table_ready, memory_order_acquire))
		table_build();

	crc = ~crc;
	while (len >= 8) {
		uint64_t w = load_le64(p) ^ crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
			table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
			table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
			table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

#if defined(__x86_64__)
/*
 * crc32q has a latency of 3 cycles but a throughput of 1 per cycle, so one
 * dependency chain uses a third of the unit.  Long buffers are therefore cut
 * into blocks of three lanes, each lane its own chain started from zero, and
 * the lanes are joined by multiplying by X = x^(8 * lane length), which a
 * table turns into four lookups.  The running CRC stays out of the lanes, so
 * one block need not wait for the one before.  Blocks of 3 * LANE_BIG bytes
 * carry long buffers; blocks of 3 * LANE_SMALL bytes shorten what is left to
 * the single chain.
 */
#define LANE_BIG 256
#define LANE_SMALL 80

static uint32_t gf2_mulmod(uint32_t a, uint32_t b);

/*
 * lane_tab[n][j][i] == (i at byte j) * X modulo the polynomial, X for
 * LANE_BIG lanes (n = 0) or LANE_SMALL lanes (n = 1)
 */
static uint32_t lane_tab[2][4][256];
static atomic_int lane_ready;

static void
lane_tab_build(uint32_t tab[4][256], uint32_t x)
{
	/* multiplying is linear: a row is the XOR of the rows of its bits */
	for (int j = 0; j < 4; j++) {
		tab[j][0] = 0;
		for (int b = 0; b < 8; b++) {
			uint32_t v = gf2_mulmod(1u << (8 * j + b), x);
			for (uint32_t i = 0; i < (1u << b); i++)
				tab[j][(1u << b) | i] = tab[j][i] ^ v;
		}
	}
}

static void
lane_build(void)
{
	lane_tab_build(lane_tab[0], rpma_crc32c_xpow8n(LANE_BIG));
	lane_tab_build(lane_tab[1], rpma_crc32c_xpow8n(LANE_SMALL));
	atomic_store_explicit(&lane_ready, 1, memory_order_release);
}

static inline uint32_t
lane_shift(uint32_t tab[4][256], uint32_t c)
{
	return tab[0][c & 0xff] ^ tab[1][(c >> 8) & 0xff] ^
		tab[2][(c >> 16) & 0xff] ^ tab[3][c >> 24];
}

/*
 * Consumes whole blocks of 3 * lane bytes (at least one) from *pp, *lenp.
 * c is the CRC register (not inverted) before a block; with r1..r3 the
 * lanes' registers from zero it is ((c * X ^ r1) * X ^ r2) * X ^ r3 after.
 * Inlined so that lane is a constant.
 */
__attribute__((target("sse4.2"), always_inline))
static inline uint64_t
crc32c_blocks(uint64_t c, const unsigned char **pp, size_t *lenp,
	size_t lane, uint32_t tab[4][256])
{
	const unsigned char *p = *pp;
	size_t len = *lenp;

	do {
		uint64_t r1 = 0, r2 = 0, r3 = 0;
		for (size_t i = 0; i < lane; i += 8) {
			uint64_t w1, w2, w3;
			memcpy(&w1, p + i, 8);
			memcpy(&w2, p + lane + i, 8);
			memcpy(&w3, p + 2 * lane + i, 8);
			r1 = __builtin_ia32_crc32di(r1, w1);
			r2 = __builtin_ia32_crc32di(r2, w2);
			r3 = __builtin_ia32_crc32di(r3, w3);
		}
		c = lane_shift(tab, (uint32_t)c) ^ (uint32_t)r1;
		c = lane_shift(tab, (uint32_t)c) ^ (uint32_t)r2;
		c = lane_shift(tab, (uint32_t)c) ^ (uint32_t)r3;
		p += 3 * lane;
		len -= 3 * lane;
	} while (len >= 3 * lane);
	*pp = p;
	*lenp = len;
	return c;
}

__attribute__((target("sse4.2")))
static uint32_t
crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	if (len >= 3 * LANE_SMALL) {
		/* building twice in a race writes the same values: harmless */
		if (!atomic_load_explicit(&lane_ready, memory_order_acquire))
			lane_build();
		if (len >= 3 * LANE_BIG)
			c = crc32c_blocks(c, &p, &len, LANE_BIG, lane_tab[0]);
		if (len >= 3 * LANE_SMALL)
			c = crc32c_blocks(c, &p, &len, LANE_SMALL, lane_tab[1]);
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

typedef uint32_t crc_fn(uint32_t, const void *, size_t);

static crc_fn *
crc_pick(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_sse42;
#endif
	return rpma_crc32c_sw;
}

uint32_t
rpma_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static _Atomic(crc_fn *) impl;
	crc_fn *fn = atomic_load_explicit(&impl, memory_order_relaxed);

	if (fn == NULL) {
		fn = crc_pick();
		atomic_store_explicit(&impl, fn, memory_order_relaxed);
	}
	return fn(crc, buf, len);
}

/*
 * GF(2) arithmetic modulo the polynomial, in the reflected representation
 * (bit 31 is x^0).  crc32c(c, M) == crc32c(0, M) ^ c * x^(8 * |M|), so a
 * CRC computed from zero can be chained after the fact; the log uses this to
 * checksum a record before the record before it is finished.
 */
static uint32_t
gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	while (a) {
		if (a & m) {
			p ^= b;
			a &= ~m;
		}
		m >>= 1;
		b = (b >> 1) ^ (POLY & (0u - (b & 1)));
	}
	return p;
}

/* x^(8 * 2^k) modulo the polynomial, k = 0..63 */
static uint32_t pow8_table[64];
static atomic_int pow8_ready;

static void
pow8_build(void)
{
	uint32_t p = 1u << 23;	/* x^8 */

	for (int k = 0; k < 64; k++) {
		pow8_table[k] = p;
		p = gf2_mulmod(p, p);
	}
	atomic_store_explicit(&pow8_ready, 1, memory_order_release);
}

uint32_t
rpma_crc32c_xpow8n(uint64_t len)
{
	uint32_t r = 1u << 31;	/* x^0 */

	/* building twice in a race writes the same values: harmless */
	if (!atomic_load_explicit(&pow8_ready, memory_order_acquire))
		pow8_build();
	for (int k = 0; len; k++, len >>= 1)
		if (len & 1)
			r = gf2_mulmod(r, pow8_table[k]);
	return r;
}

uint32_t
rpma_crc32c_mulmod(uint32_t a, uint32_t b)
{
	return gf2_mulmod(a, b);
}

uint32_t
rpma_crc32c_shift(uint32_t crc, uint64_t len)
{
	return gf2_mulmod(crc, rpma_crc32c_xpow8n(len));
}
