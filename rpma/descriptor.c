/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * descriptor.c -- memory-region descriptors: the bytes a peer sends so that
 * the other side can address its registered memory.
 *
 * Both formats are little-endian on the wire whatever the host, unaligned,
 * and fixed-size, so the size alone says which format a buffer claims to be.
 *
 * Format 0 (21 bytes; byte-identical with librpma 1.x, used by verbs):
 *
 *   off size field
 *     0    8 raddr   virtual address of the region's first byte
 *     8    8 size    region length in bytes
 *    16    4 rkey
 *    20    1 usage   RPMA_MR_USAGE_* bits
 *
 * Format 1 (40 bytes; extended, for 64-bit keys and integrity):
 *
 *   off size field
 *     0    4 magic     'R' 'P' 'M' 'D'
 *     4    1 version   1
 *     5    1 transport enum rpma_ext_transport (1 verbs, 2 ofi tcp,
 *                      3 ofi net, 4 ofi shm)
 *     6    2 usage     RPMA_MR_USAGE_* bits; bits above 0xFF are unknown
 *     8    8 key       remote key
 *    16    8 raddr     address of the region's first byte as the transport
 *                      addresses it (0 for offset-addressed regions)
 *    24    8 size      region length in bytes
 *    32    4 reserved  zero
 *    36    4 crc       CRC-32C of bytes 0..35
 *
 * A descriptor is valid when its usage is non-zero, its size is non-zero and
 * its last byte raddr + size - 1 does not pass 2^64 - 1; format 1 also needs
 * the magic, version 1, a known transport, zero reserved bits, no unknown
 * usage bits, a matching crc, and a key within 32 bits for verbs.
 */
#include "config.h"

#include <string.h>

#include "crc32c.h"
#include "descriptor.h"
#include "errormsg.h"
#include "log.h"

#define V0_SIZE 21
#define V1_SIZE 40
#define V1_CRC_OFF 36
#define V1_VERSION 1

static const unsigned char v1_magic[4] = { 'R', 'P', 'M', 'D' };

_Static_assert(V0_SIZE == RPMA_EXT_MR_DESC_SIZE_V0, "format 0 size");
_Static_assert(V1_SIZE == RPMA_EXT_MR_DESC_SIZE_V1, "format 1 size");
_Static_assert(V0_SIZE != V1_SIZE, "formats are told apart by size");
_Static_assert(RPMA_MR_USAGE_RECV <= 0xFF, "usage fits a byte");

static void
put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t
get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

size_t
rpma_mr_desc_size(enum rpma_mr_desc_format format)
{
	return format == RPMA_MR_DESC_FORMAT_0 ? V0_SIZE : V1_SIZE;
}

static int
transport_known(uint64_t t)
{
	return t >= RPMA_EXT_TRANSPORT_VERBS && t <= RPMA_EXT_TRANSPORT_OFI_SHM;
}

int
rpma_mr_desc_encode(const struct rpma_mr_desc *d,
		enum rpma_mr_desc_format format, void *buf)
{
	unsigned char *p = buf;

	if (d == NULL || buf == NULL)
		return RPMA_E_INVAL;
	if (d->usage <= 0 || d->usage > RPMA_MR_USAGE_ALL)
		return rpma_fail(RPMA_E_INVAL, "usage 0x%x cannot be encoded",
			(unsigned)d->usage);

	switch (format) {
	case RPMA_MR_DESC_FORMAT_0:
		if (d->transport != RPMA_EXT_TRANSPORT_VERBS || d->key > UINT32_MAX)
			return rpma_fail(RPMA_E_INVAL,
				"format 0 carries only verbs regions with a 32-bit key");
		put_le(p + 0, d->raddr, 8);
		put_le(p + 8, d->size, 8);
		put_le(p + 16, d->key, 4);
		p[20] = (unsigned char)d->usage;
		return 0;
	case RPMA_MR_DESC_FORMAT_1:
		if (!transport_known(d->transport))
			return rpma_fail(RPMA_E_INVAL, "unknown transport %d",
				(int)d->transport);
		if (d->transport == RPMA_EXT_TRANSPORT_VERBS && d->key > UINT32_MAX)
			return rpma_fail(RPMA_E_INVAL, "a verbs key has 32 bits");
		memcpy(p, v1_magic, sizeof(v1_magic));
		p[4] = V1_VERSION;
		p[5] = (unsigned char)d->transport;
		put_le(p + 6, (uint64_t)d->usage, 2);
		put_le(p + 8, d->key, 8);
		put_le(p + 16, d->raddr, 8);
		put_le(p + 24, d->size, 8);
		put_le(p + 32, 0, 4);
		put_le(p + V1_CRC_OFF, rpma_crc32c(0, p, V1_CRC_OFF), 4);
		return 0;
	default:
		return rpma_fail(RPMA_E_INVAL, "unknown descriptor format %d",
			(int)format);
	}
}

/* the region checks common to both formats */
static int
region_check(uint64_t raddr, uint64_t size, uint64_t usage)
{
	if (usage == 0)
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor has no usage bits: no operation is allowed on the region");
	if (size == 0)
		return rpma_fail(RPMA_E_NOSUPP, "descriptor describes an empty region");
	if (raddr > UINT64_MAX - (size - 1))
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor region wraps the address space (raddr 0x%llx, size %llu)",
			(unsigned long long)raddr, (unsigned long long)size);
	return 0;
}

static int
decode_v0(const unsigned char *p, struct rpma_mr_desc *out)
{
	struct rpma_mr_desc d = {
		.raddr = get_le(p + 0, 8),
		.size = get_le(p + 8, 8),
		.key = get_le(p + 16, 4),
		.usage = p[20],
		.transport = RPMA_EXT_TRANSPORT_VERBS,
	};
	int ret = region_check(d.raddr, d.size, (uint64_t)d.usage);

	if (ret)
		return ret;
	*out = d;
	return 0;
}

static int
decode_v1(const unsigned char *p, struct rpma_mr_desc *out)
{
	uint32_t stored, computed;
	uint64_t usage, transport;
	struct rpma_mr_desc d;
	int ret;

	if (memcmp(p, v1_magic, sizeof(v1_magic)) != 0)
		return rpma_fail(RPMA_E_NOSUPP,
			"%d-byte descriptor lacks the format-1 magic", V1_SIZE);
	if (p[4] != V1_VERSION)
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor format-1 version %u is not supported (only %d)",
			p[4], V1_VERSION);
	stored = (uint32_t)get_le(p + V1_CRC_OFF, 4);
	computed = rpma_crc32c(0, p, V1_CRC_OFF);
	if (stored != computed)
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor checksum mismatch (stored 0x%08x, computed 0x%08x)",
			stored, computed);
	transport = p[5];
	if (!transport_known(transport))
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor names unknown transport %u", (unsigned)transport);
	if (get_le(p + 32, 4) != 0)
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor has non-zero reserved bytes (a newer format?)");
	usage = get_le(p + 6, 2);
	if (usage & ~(uint64_t)RPMA_MR_USAGE_ALL)
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor has unknown usage bits 0x%llx",
			(unsigned long long)(usage & ~(uint64_t)RPMA_MR_USAGE_ALL));

	d.key = get_le(p + 8, 8);
	if (transport == RPMA_EXT_TRANSPORT_VERBS && d.key > UINT32_MAX)
		return rpma_fail(RPMA_E_NOSUPP,
			"descriptor gives verbs a key wider than 32 bits (0x%llx)",
			(unsigned long long)d.key);
	d.raddr = get_le(p + 16, 8);
	d.size = get_le(p + 24, 8);
	d.usage = (int)usage;
	d.transport = (enum rpma_ext_transport)transport;
	ret = region_check(d.raddr, d.size, usage);
	if (ret)
		return ret;
	*out = d;
	return 0;
}

int
rpma_mr_desc_decode(const void *buf, size_t size, struct rpma_mr_desc *d)
{
	int ret;

	if (buf == NULL || d == NULL)
		return rpma_fail(RPMA_E_INVAL, "descriptor or output is NULL");

	switch (size) {
	case V0_SIZE:
		ret = decode_v0(buf, d);
		break;
	case V1_SIZE:
		ret = decode_v1(buf, d);
		break;
	default:
		ret = rpma_fail(RPMA_E_INVAL,
			"descriptor size %zu is not a known format (%d or %d bytes)",
			size, V0_SIZE, V1_SIZE);
		break;
	}
	if (ret)
		RPMA_LOG_ERROR("%s", rpma_ext_errormsg());
	return ret;
}
