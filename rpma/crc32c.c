/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc32c.c -- CRC-32C: SSE4.2's crc32 instruction where the CPU has it,
 * otherwise slicing-by-8 tables.  The choice is made once, on first use.
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
__attribute__((target("sse4.2")))
static uint32_t
crc32c_sse42(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

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
