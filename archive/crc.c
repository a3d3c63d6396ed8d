/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc.c -- the archive's checksum, CRC-32C, through ISA-L.  Not lib/'s
 * rpma_crc32c: that one is the RPMA core's own symbol, and the programs
 * linking this library (repld, replctl) reach the core only through
 * librepl's API (tests/api/check-public-symbols.sh).
 */
#include "config.h"

#include <limits.h>

#include <isa-l/crc.h>

#include "archive_int.h"

/* crc32_iscsi takes an int length: longer buffers go in pieces */
#define PIECE (1u << 30)

uint32_t
archive_crc(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	unsigned int crc = 0xffffffffu;

	while (len > 0) {
		size_t n = len < PIECE ? len : PIECE;

		crc = crc32_iscsi((unsigned char *)p, (int)n, crc);
		p += n;
		len -= n;
	}
	return ~crc;
}
