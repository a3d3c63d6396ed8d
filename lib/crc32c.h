/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc32c.h -- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of descriptor format 1 and of the engine's log records; ISA-L
 * computes it (crc32c.c).
 *
 * crc32c(0, "123456789", 9) == 0xE3069283.  Chaining: the value returned
 * for a prefix is the crc argument for the rest.
 */
#ifndef RPMA_CRC32C_H
#define RPMA_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t rpma_crc32c(uint32_t crc, const void *buf, size_t len);

/*
 * crc * x^(8 * len) modulo the polynomial: for any M of len bytes,
 * rpma_crc32c(c, M) == rpma_crc32c(0, M) ^ rpma_crc32c_shift(c, len).
 */
uint32_t rpma_crc32c_shift(uint32_t crc, uint64_t len);

/*
 * The same in two halves, so the costly one can run outside a lock:
 * rpma_crc32c_shift(c, len) == rpma_crc32c_mulmod(c, rpma_crc32c_xpow8n(len)).
 */
uint32_t rpma_crc32c_xpow8n(uint64_t len);
uint32_t rpma_crc32c_mulmod(uint32_t a, uint32_t b);

#endif
