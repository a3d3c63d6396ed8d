/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_remote_from_descriptor.c -- rpma_mr_remote_from_descriptor: every rejection, both formats */
#include <stdint.h>

#include "unit.h"
#include "crc32c.h"
#include "descriptor.h"

/* librpma's upstream DESC_EXP_PMEM vector (format 0) */
static const unsigned char V0_PMEM[21] = {
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x13, 0x12, 0x11, 0x10, 0x21,
};

static void
put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

/* a valid format-1 descriptor through the (separately tested) encoder */
static void
make_v1(unsigned char buf[40], uint64_t raddr, uint64_t size, int usage)
{
	struct rpma_mr_desc d = { .raddr = raddr, .size = size,
		.key = 0x1011121314151617ull, .usage = usage,
		.transport = RPMA_EXT_TRANSPORT_OFI_TCP };
	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, buf), 0);
}

static void
make_v0(unsigned char buf[21], uint64_t raddr, uint64_t size, int usage)
{
	memcpy(buf, V0_PMEM, 21);
	put_le(buf, raddr, 8);
	put_le(buf + 8, size, 8);
	buf[20] = (unsigned char)usage;
}

/* after a content change, make the crc right again so the change is what is judged */
static void
fix_crc(unsigned char buf[40])
{
	put_le(buf + 36, rpma_crc32c(0, buf, 36), 4);
}

/* rejects with ret, leaves *mr_ptr alone and explains itself with word */
static void
expect_reject(const void *desc, size_t size, int ret, const char *word)
{
	struct rpma_mr_remote *mr = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(desc, size, &mr), ret);
	CU_ASSERT_PTR_EQUAL(mr, UNIT_SENTINEL);
	if (mr != UNIT_SENTINEL)
		rpma_mr_remote_delete(&mr);	/* wrongly accepted: do not leak */
	CU_ASSERT_STRING_NOT_EQUAL(rpma_ext_errormsg(), "");
	if (word != NULL && strstr(rpma_ext_errormsg(), word) == NULL) {
		printf("\n  errormsg \"%s\" lacks \"%s\"\n", rpma_ext_errormsg(), word);
		CU_FAIL("error message does not give the reason");
	}
}

static void
expect_accept(const void *desc, size_t size)
{
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(desc, size, &mr), 0);
	CU_ASSERT_PTR_NOT_NULL(mr);
	CU_ASSERT_EQUAL(rpma_mr_remote_delete(&mr), 0);
}

static void
remote_from_descriptor__desc_NULL(void)
{
	struct rpma_mr_remote *mr = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(NULL, 21, &mr), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(mr, UNIT_SENTINEL);
	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(NULL, 40, &mr), RPMA_E_INVAL);
	CU_ASSERT_PTR_EQUAL(mr, UNIT_SENTINEL);
}

static void
remote_from_descriptor__mr_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(V0_PMEM, 21, NULL),
		RPMA_E_INVAL);
}

static void
remote_from_descriptor__mr_ptr_NULL_desc_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(NULL, 21, NULL),
		RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(NULL, 0, NULL),
		RPMA_E_INVAL);
}

/* only the two exact format sizes are accepted (librpma took any size >= 21) */
static void
remote_from_descriptor__invalid_desc_size(void)
{
	unsigned char buf[64];

	memset(buf, 0, sizeof(buf));
	memcpy(buf, V0_PMEM, sizeof(V0_PMEM));
	for (size_t size = 0; size <= sizeof(buf); size++) {
		if (size == 21 || size == 40)
			continue;
		expect_reject(buf, size, RPMA_E_INVAL, "size");
	}
	expect_reject(buf, SIZE_MAX, RPMA_E_INVAL, "size");
	expect_reject(buf, SIZE_MAX - 20, RPMA_E_INVAL, "size");
}

static void
remote_from_descriptor__usage_zero(void)
{
	unsigned char v0[21], v1[40];

	make_v0(v0, 0x1000, 0x1000, 0);
	expect_reject(v0, sizeof(v0), RPMA_E_NOSUPP, "usage");
	make_v1(v1, 0x1000, 0x1000, 1);
	put_le(v1 + 6, 0, 2);	/* the encoder refuses usage 0 */
	fix_crc(v1);
	expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "usage");
}

static void
remote_from_descriptor__size_zero(void)
{
	unsigned char v0[21], v1[40];

	make_v0(v0, 0x1000, 0, 0x21);
	expect_reject(v0, sizeof(v0), RPMA_E_NOSUPP, "empty");
	make_v1(v1, 0x1000, 0, 0x21);
	expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "empty");
}

/* the last byte raddr + size - 1 must not pass 2^64 - 1 */
static void
remote_from_descriptor__raddr_size_overflow(void)
{
	/* size 1 is left out: raddr 2^64 - 1 + 1 is not representable */
	static const uint64_t sizes[] = { 2, 4096, 1ull << 63, UINT64_MAX - 1 };
	unsigned char v0[21], v1[40];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t last_ok = 0 - sizes[i];	/* 2^64 - size */

		make_v0(v0, last_ok, sizes[i], 0x21);
		expect_accept(v0, sizeof(v0));
		make_v1(v1, last_ok, sizes[i], 0x21);
		expect_accept(v1, sizeof(v1));

		make_v0(v0, last_ok + 1, sizes[i], 0x21);
		expect_reject(v0, sizeof(v0), RPMA_E_NOSUPP, "wraps");
		make_v1(v1, last_ok + 1, sizes[i], 0x21);
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "wraps");
	}
	/* the last byte of the address space is a region */
	make_v0(v0, UINT64_MAX, 1, 0x21);
	expect_accept(v0, sizeof(v0));
	make_v1(v1, UINT64_MAX, 1, 0x21);
	expect_accept(v1, sizeof(v1));
	/* raddr 0 with size 2^64 - 1 is valid, and so is raddr 1 (ends at 2^64 - 1) */
	make_v0(v0, 0, UINT64_MAX, 0x21);
	expect_accept(v0, sizeof(v0));
	make_v1(v1, 0, UINT64_MAX, 0x21);
	expect_accept(v1, sizeof(v1));
	make_v0(v0, 1, UINT64_MAX, 0x21);
	expect_accept(v0, sizeof(v0));
	make_v0(v0, 2, UINT64_MAX, 0x21);
	expect_reject(v0, sizeof(v0), RPMA_E_NOSUPP, "wraps");
	make_v1(v1, UINT64_MAX, UINT64_MAX, 0x21);
	expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "wraps");
}

static void
remote_from_descriptor__bad_magic(void)
{
	unsigned char v1[40];

	for (int i = 0; i < 4; i++) {
		make_v1(v1, 0x1000, 0x1000, 0x21);
		v1[i] = (unsigned char)(v1[i] ^ 0x20);	/* 'R' -> 'r' etc. */
		fix_crc(v1);
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "magic");
	}
	/* a format-0 descriptor padded to 40 bytes is not format 1 */
	memset(v1, 0, sizeof(v1));
	memcpy(v1, V0_PMEM, sizeof(V0_PMEM));
	expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "magic");
}

static void
remote_from_descriptor__unknown_version(void)
{
	static const unsigned char versions[] = { 0, 2, 255 };
	unsigned char v1[40];

	for (size_t i = 0; i < sizeof(versions); i++) {
		make_v1(v1, 0x1000, 0x1000, 0x21);
		v1[4] = versions[i];
		fix_crc(v1);
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "version");
	}
}

static void
remote_from_descriptor__unknown_transport(void)
{
	static const unsigned char transports[] = { 0, 5, 255 };
	unsigned char v1[40];

	for (size_t i = 0; i < sizeof(transports); i++) {
		make_v1(v1, 0x1000, 0x1000, 0x21);
		v1[5] = transports[i];
		fix_crc(v1);
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "transport");
	}
}

static void
remote_from_descriptor__reserved_nonzero(void)
{
	unsigned char v1[40];

	for (int byte = 32; byte < 36; byte++) {
		for (int bit = 0; bit < 8; bit += 7) {
			make_v1(v1, 0x1000, 0x1000, 0x21);
			v1[byte] = (unsigned char)(1u << bit);
			fix_crc(v1);
			expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "reserved");
		}
	}
}

static void
remote_from_descriptor__unknown_usage_bits(void)
{
	static const unsigned usages[] = { 0x100, 0x8000, 0x121, 0xFFFF };
	unsigned char v1[40];

	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		make_v1(v1, 0x1000, 0x1000, 0x21);
		put_le(v1 + 6, usages[i], 2);
		fix_crc(v1);
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "usage");
	}
}

/* check 9 of docs/wire-format.md: a verbs key fits 32 bits; libfabric keys may use 64 */
static void
remote_from_descriptor__verbs_key_wider_than_32_bits(void)
{
	static const uint64_t keys[] = { (uint64_t)UINT32_MAX + 1,
		0x1011121314151617ull, UINT64_MAX };
	unsigned char v1[40];

	make_v1(v1, 0x1000, 0x1000, 0x21);
	v1[5] = RPMA_EXT_TRANSPORT_VERBS;
	put_le(v1 + 8, UINT32_MAX, 8);
	fix_crc(v1);
	expect_accept(v1, sizeof(v1));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		put_le(v1 + 8, keys[i], 8);	/* written by hand: the encoder refuses it */
		fix_crc(v1);
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, "key");
	}
	for (int t = RPMA_EXT_TRANSPORT_OFI_TCP; t <= RPMA_EXT_TRANSPORT_OFI_SHM; t++) {
		v1[5] = (unsigned char)t;
		fix_crc(v1);
		expect_accept(v1, sizeof(v1));
	}
}

/* any single flipped bit is caught, by the crc or an earlier check */
static void
remote_from_descriptor__every_bit_flip(void)
{
	unsigned char v1[40];

	make_v1(v1, 0x0001020304050607ull, 0x08090a0b0c0d0e0full, 0x21);
	expect_accept(v1, sizeof(v1));
	for (int bit = 0; bit < 40 * 8; bit++) {
		const char *word = bit < 32 ? "magic" :
			bit < 40 ? "version" : "checksum";

		v1[bit / 8] = (unsigned char)(v1[bit / 8] ^ (1u << (bit % 8)));
		expect_reject(v1, sizeof(v1), RPMA_E_NOSUPP, word);
		v1[bit / 8] = (unsigned char)(v1[bit / 8] ^ (1u << (bit % 8)));
	}
	expect_accept(v1, sizeof(v1));
}

static void
remote_from_descriptor__success(void)
{
	unsigned char v1[40];

	expect_accept(V0_PMEM, sizeof(V0_PMEM));
	make_v1(v1, 0x0001020304050607ull, 0x08090a0b0c0d0e0full, 0x21);
	expect_accept(v1, sizeof(v1));
}

/* input at every offset of a buffer; alternate the PMEM and DRAM vectors */
static void
remote_from_descriptor__desc_alignment(void)
{
	unsigned char buf[2 * 40];

	for (size_t off = 0; off <= 40; off++) {
		int pmem = (off % 2) == 0;
		int usage = pmem ? 0x21 : 0x11;
		struct rpma_mr_remote *mr;
		size_t size;
		int flush_type;

		memset(buf, 0xA5, sizeof(buf));
		make_v0(buf + off, 0x0001020304050607ull, 0x08090a0b0c0d0e0full, usage);
		mr = NULL;
		CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(buf + off, 21, &mr), 0);
		CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), 0);
		CU_ASSERT_EQUAL(size, (size_t)0x08090a0b0c0d0e0full);
		CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
		CU_ASSERT_EQUAL(flush_type, pmem ? 0x20 : 0x10);
		rpma_mr_remote_delete(&mr);

		make_v1(buf + off, 0x0001020304050607ull, 0x08090a0b0c0d0e0full, usage);
		CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(buf + off, 40, &mr), 0);
		CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), 0);
		CU_ASSERT_EQUAL(size, (size_t)0x08090a0b0c0d0e0full);
		CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
		CU_ASSERT_EQUAL(flush_type, pmem ? 0x20 : 0x10);
		rpma_mr_remote_delete(&mr);
	}
}

UNIT_MAIN("rpma_mr_remote_from_descriptor",
	UNIT_CASE(remote_from_descriptor__desc_NULL),
	UNIT_CASE(remote_from_descriptor__mr_ptr_NULL),
	UNIT_CASE(remote_from_descriptor__mr_ptr_NULL_desc_NULL),
	UNIT_CASE(remote_from_descriptor__invalid_desc_size),
	UNIT_CASE(remote_from_descriptor__usage_zero),
	UNIT_CASE(remote_from_descriptor__size_zero),
	UNIT_CASE(remote_from_descriptor__raddr_size_overflow),
	UNIT_CASE(remote_from_descriptor__bad_magic),
	UNIT_CASE(remote_from_descriptor__unknown_version),
	UNIT_CASE(remote_from_descriptor__unknown_transport),
	UNIT_CASE(remote_from_descriptor__reserved_nonzero),
	UNIT_CASE(remote_from_descriptor__unknown_usage_bits),
	UNIT_CASE(remote_from_descriptor__verbs_key_wider_than_32_bits),
	UNIT_CASE(remote_from_descriptor__every_bit_flip),
	UNIT_CASE(remote_from_descriptor__success),
	UNIT_CASE(remote_from_descriptor__desc_alignment))
