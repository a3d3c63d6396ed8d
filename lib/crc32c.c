/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc32c.c -- CRC-32C through ISA-L, plus the shift that ISA-L lacks.
 *
 * ISA-L (Debian: libisal-dev) computes the checksum: crc32_iscsi chooses
 * among its versions by what the CPU offers (the crc32 instruction,
 * carry-less multiplication, or tables).  ISA-L 2.30 offers no way to combine or shift a
 * CRC (nothing like zlib's crc32_combine for CRC-32C), so the GF(2)
 * arithmetic below stays here: the log checksums a record from zero before
 * the record before it is finished, then chains the two with
 * rpma_crc32c_shift's halves.
 */
#include "config.h"

#include <limits.h>
#include <stdatomic.h>

#include <isa-l/crc.h>

#include "crc32c.h"

#define POLY 0x82F63B78u

/*
 * crc32_iscsi takes its length as an int, so longer buffers go through it
 * in pieces (chaining is exact whatever the cut).  Tests build this file a
 * second time with a small piece, so that the loop runs.
 */
#ifndef RPMA_CRC32C_CHUNK
#define RPMA_CRC32C_CHUNK (1 << 30)
#endif
_Static_assert(RPMA_CRC32C_CHUNK > 0 && RPMA_CRC32C_CHUNK <= INT_MAX,
	"crc32_iscsi's length is an int");

uint32_t
rpma_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/* crc32_iscsi neither inverts its register on the way in nor out */
	unsigned int c = ~crc;
	/* ISA-L's prototype lacks const; it only reads the buffer */
	unsigned char *p = (unsigned char *)buf;

	while (len > RPMA_CRC32C_CHUNK) {
		c = crc32_iscsi(p, RPMA_CRC32C_CHUNK, c);
		p += RPMA_CRC32C_CHUNK;
		len -= RPMA_CRC32C_CHUNK;
	}
	return ~crc32_iscsi(p, (int)len, c);
}

/*
 * GF(2) arithmetic modulo the polynomial, in the reflected representation
 * (bit 31 is x^0).  crc32c(c, M) == crc32c(0, M) ^ c * x^(8 * |M|), so a
 * CRC computed from zero can be chained after the fact.
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
