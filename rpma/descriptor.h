/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * descriptor.h -- encoding and decoding of memory-region descriptors.
 * The byte layouts are specified in docs/wire-format.md and at the top of
 * descriptor.c.
 */
#ifndef RPMA_DESCRIPTOR_H
#define RPMA_DESCRIPTOR_H

#include <stddef.h>
#include <stdint.h>

#include "rpma.h"

/* what a descriptor carries, whatever its format */
struct rpma_mr_desc {
	uint64_t raddr;		/* remote address of byte 0 of the region */
	uint64_t size;		/* region length in bytes */
	uint64_t key;		/* remote key (32-bit rkey on verbs) */
	int usage;		/* RPMA_MR_USAGE_* bits */
	enum rpma_ext_transport transport;
};

enum rpma_mr_desc_format {
	RPMA_MR_DESC_FORMAT_0 = 0,	/* librpma-compatible, 21 bytes */
	RPMA_MR_DESC_FORMAT_1 = 1,	/* extended, 40 bytes */
};

/* usage bits format 1 can carry; anything above is unknown */
#define RPMA_MR_USAGE_ALL 0xFF

size_t rpma_mr_desc_size(enum rpma_mr_desc_format format);

/*
 * Serialise d into buf (rpma_mr_desc_size(format) bytes, any alignment).
 * RPMA_E_INVAL when the fields do not fit the format: format 0 carries only
 * verbs regions; a verbs key has 32 bits; both need a non-zero usage within
 * 0xFF.
 */
int rpma_mr_desc_encode(const struct rpma_mr_desc *d,
		enum rpma_mr_desc_format format, void *buf);

/*
 * Parse untrusted bytes.  Total: defined for every (buf, size).  0 and *d
 * filled, or RPMA_E_INVAL (size of no known format) / RPMA_E_NOSUPP (known
 * size, not a valid region), with the reason in rpma_ext_errormsg().
 * *d is written only on success.
 */
int rpma_mr_desc_decode(const void *buf, size_t size, struct rpma_mr_desc *d);

#endif
