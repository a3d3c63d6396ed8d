/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_desc_decode.c -- rpma_mr_desc_decode (internal): fixed byte vectors, alignment, untouched output */
#include "unit.h"
#include "descriptor.h"

/* librpma's upstream DESC_EXP_PMEM; DESC_EXP_DRAM differs in the last byte (0x11) */
static const unsigned char V0_PMEM[21] = {
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,	/* raddr */
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,	/* size */
	0x13, 0x12, 0x11, 0x10,				/* rkey */
	0x21,						/* usage */
};

/*
 * Format 1, hand-checked against the layout in descriptor.c; the crc was
 * cross-checked with an independent CRC-32C (Castagnoli, reflected).
 */
static const unsigned char V1_FIXED[40] = {
	'R', 'P', 'M', 'D', 0x01, 0x02, 0x21, 0x00,	/* magic, v1, ofi tcp, usage */
	0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x10,	/* key */
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,	/* raddr */
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,	/* size */
	0x00, 0x00, 0x00, 0x00,				/* reserved */
	0x1e, 0x99, 0xd0, 0x24,				/* crc 0x24d0991e */
};

/* docs/wire-format.md, format 1 vector B: offset-addressed libfabric tcp region */
static const unsigned char V1_DOC_B[40] = {
	0x52, 0x50, 0x4d, 0x44, 0x01, 0x02, 0x28, 0x00,
	0x0d, 0xf0, 0xfe, 0xca, 0xef, 0xbe, 0xad, 0xde,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x81, 0xd7, 0xad, 0xf1,
};

/* a struct no successful decode produces, to show *d was not written */
static void
poison(struct rpma_mr_desc *d)
{
	memset(d, 0xA5, sizeof(*d));
}

static int
is_poisoned(const struct rpma_mr_desc *d)
{
	struct rpma_mr_desc p;

	poison(&p);
	return memcmp(d, &p, sizeof(p)) == 0;
}

static void
decode__buf_NULL(void)
{
	struct rpma_mr_desc d;

	poison(&d);
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(NULL, 21, &d), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(NULL, 40, &d), RPMA_E_INVAL);
	CU_ASSERT(is_poisoned(&d));
}

static void
decode__d_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(V0_PMEM, 21, NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(V1_FIXED, 40, NULL), RPMA_E_INVAL);
}

static void
decode__buf_NULL_d_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(NULL, 21, NULL), RPMA_E_INVAL);
}

static void
decode__invalid_size(void)
{
	unsigned char buf[64] = { 0 };
	struct rpma_mr_desc d;

	memcpy(buf, V1_FIXED, sizeof(V1_FIXED));
	poison(&d);
	for (size_t size = 0; size <= sizeof(buf); size++)
		if (size != 21 && size != 40)
			CU_ASSERT_EQUAL(rpma_mr_desc_decode(buf, size, &d), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(buf, SIZE_MAX, &d), RPMA_E_INVAL);
	CU_ASSERT(is_poisoned(&d));
}

static void
decode__v0_upstream_pmem(void)
{
	struct rpma_mr_desc d;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_decode(V0_PMEM, sizeof(V0_PMEM), &d), 0);
	CU_ASSERT_EQUAL(d.raddr, 0x0001020304050607ull);
	CU_ASSERT_EQUAL(d.size, 0x08090a0b0c0d0e0full);
	CU_ASSERT_EQUAL(d.key, 0x10111213ull);
	CU_ASSERT_EQUAL(d.usage, 0x21);
	CU_ASSERT_EQUAL(d.usage & 0x30, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	CU_ASSERT_EQUAL(d.transport, RPMA_EXT_TRANSPORT_VERBS);
}

static void
decode__v0_upstream_dram(void)
{
	unsigned char dram[21];
	struct rpma_mr_desc d;

	memcpy(dram, V0_PMEM, sizeof(dram));
	dram[20] = 0x11;
	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_decode(dram, sizeof(dram), &d), 0);
	CU_ASSERT_EQUAL(d.raddr, 0x0001020304050607ull);
	CU_ASSERT_EQUAL(d.size, 0x08090a0b0c0d0e0full);
	CU_ASSERT_EQUAL(d.key, 0x10111213ull);
	CU_ASSERT_EQUAL(d.usage, 0x11);
	CU_ASSERT_EQUAL(d.usage & 0x30, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
}

static void
decode__v1_fixed_vector(void)
{
	struct rpma_mr_desc d;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_decode(V1_FIXED, sizeof(V1_FIXED), &d), 0);
	CU_ASSERT_EQUAL(d.raddr, 0x0001020304050607ull);
	CU_ASSERT_EQUAL(d.size, 0x08090a0b0c0d0e0full);
	CU_ASSERT_EQUAL(d.key, 0x1011121314151617ull);
	CU_ASSERT_EQUAL(d.usage, 0x21);
	CU_ASSERT_EQUAL(d.transport, RPMA_EXT_TRANSPORT_OFI_TCP);
}

static void
decode__v1_documented_vector_b(void)
{
	struct rpma_mr_desc d;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_decode(V1_DOC_B, sizeof(V1_DOC_B), &d), 0);
	CU_ASSERT_EQUAL(d.raddr, 0);
	CU_ASSERT_EQUAL(d.size, 0x100000);
	CU_ASSERT_EQUAL(d.key, 0xdeadbeefcafef00dull);
	CU_ASSERT_EQUAL(d.usage, 0x28);
	CU_ASSERT_EQUAL(d.transport, RPMA_EXT_TRANSPORT_OFI_TCP);
}

/* a rejected descriptor leaves *d alone and says NOSUPP */
static void
decode__nosupp_leaves_output(void)
{
	unsigned char v0[21], v1[40];
	struct rpma_mr_desc d;

	poison(&d);
	memcpy(v0, V0_PMEM, sizeof(v0));
	v0[20] = 0;
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(v0, sizeof(v0), &d), RPMA_E_NOSUPP);
	memcpy(v1, V1_FIXED, sizeof(v1));
	v1[39] ^= 1;
	CU_ASSERT_EQUAL(rpma_mr_desc_decode(v1, sizeof(v1), &d), RPMA_E_NOSUPP);
	CU_ASSERT(is_poisoned(&d));
}

/* the wire format is unaligned: decode at every offset of a buffer */
static void
decode__alignment(void)
{
	unsigned char buf[2 * 40 + 1];

	for (size_t off = 0; off <= 40; off++) {
		struct rpma_mr_desc d;

		memset(buf, 0xFF, sizeof(buf));
		memcpy(buf + off, V0_PMEM, sizeof(V0_PMEM));
		poison(&d);
		CU_ASSERT_EQUAL(rpma_mr_desc_decode(buf + off, 21, &d), 0);
		CU_ASSERT_EQUAL(d.raddr, 0x0001020304050607ull);
		CU_ASSERT_EQUAL(d.size, 0x08090a0b0c0d0e0full);
		CU_ASSERT_EQUAL(d.key, 0x10111213ull);
		CU_ASSERT_EQUAL(d.usage, 0x21);

		memcpy(buf + off, V1_FIXED, sizeof(V1_FIXED));
		poison(&d);
		CU_ASSERT_EQUAL(rpma_mr_desc_decode(buf + off, 40, &d), 0);
		CU_ASSERT_EQUAL(d.raddr, 0x0001020304050607ull);
		CU_ASSERT_EQUAL(d.size, 0x08090a0b0c0d0e0full);
		CU_ASSERT_EQUAL(d.key, 0x1011121314151617ull);
		CU_ASSERT_EQUAL(d.usage, 0x21);
		CU_ASSERT_EQUAL(d.transport, RPMA_EXT_TRANSPORT_OFI_TCP);
	}
}

/* format 0 has no room for unknown usage bits: every non-zero byte is valid */
static void
decode__v0_every_usage(void)
{
	unsigned char v0[21];

	memcpy(v0, V0_PMEM, sizeof(v0));
	for (int usage = 1; usage <= 0xFF; usage++) {
		struct rpma_mr_desc d;

		v0[20] = (unsigned char)usage;
		CU_ASSERT_EQUAL(rpma_mr_desc_decode(v0, sizeof(v0), &d), 0);
		CU_ASSERT_EQUAL(d.usage, usage);
	}
}

UNIT_MAIN("rpma_mr_desc_decode",
	UNIT_CASE(decode__buf_NULL),
	UNIT_CASE(decode__d_NULL),
	UNIT_CASE(decode__buf_NULL_d_NULL),
	UNIT_CASE(decode__invalid_size),
	UNIT_CASE(decode__v0_upstream_pmem),
	UNIT_CASE(decode__v0_upstream_dram),
	UNIT_CASE(decode__v1_fixed_vector),
	UNIT_CASE(decode__v1_documented_vector_b),
	UNIT_CASE(decode__nosupp_leaves_output),
	UNIT_CASE(decode__alignment),
	UNIT_CASE(decode__v0_every_usage))
