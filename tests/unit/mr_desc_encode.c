/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_desc_encode.c -- rpma_mr_desc_encode/_size (internal): fixed vectors, guard bytes, random round trips, rejections */
#include <time.h>

#include "unit.h"
#include "descriptor.h"

static const unsigned char V0_PMEM[21] = {
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x13, 0x12, 0x11, 0x10, 0x21,
};

/* the same vector as in mr_desc_decode.c; a format change must show here */
static const unsigned char V1_FIXED[40] = {
	'R', 'P', 'M', 'D', 0x01, 0x02, 0x21, 0x00,
	0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x10,
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x00, 0x00, 0x00, 0x00, 0x1e, 0x99, 0xd0, 0x24,
};

/* docs/wire-format.md, format 1 vector B: offset-addressed libfabric tcp region */
static const unsigned char V1_DOC_B[40] = {
	0x52, 0x50, 0x4d, 0x44, 0x01, 0x02, 0x28, 0x00,
	0x0d, 0xf0, 0xfe, 0xca, 0xef, 0xbe, 0xad, 0xde,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x81, 0xd7, 0xad, 0xf1,
};

static const struct rpma_mr_desc D_V0 = {
	.raddr = 0x0001020304050607ull, .size = 0x08090a0b0c0d0e0full,
	.key = 0x10111213, .usage = 0x21, .transport = RPMA_EXT_TRANSPORT_VERBS,
};

static const struct rpma_mr_desc D_V1 = {
	.raddr = 0x0001020304050607ull, .size = 0x08090a0b0c0d0e0full,
	.key = 0x1011121314151617ull, .usage = 0x21,
	.transport = RPMA_EXT_TRANSPORT_OFI_TCP,
};

#define GUARD 0xA5

static int
all_guard(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != GUARD)
			return 0;
	return 1;
}

/* encoding d in format must fail with INVAL without writing a byte */
static void
expect_reject(const struct rpma_mr_desc *d, enum rpma_mr_desc_format format)
{
	unsigned char buf[64];

	memset(buf, GUARD, sizeof(buf));
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(d, format, buf), RPMA_E_INVAL);
	CU_ASSERT(all_guard(buf, sizeof(buf)));
}

static void
encode__desc_size(void)
{
	CU_ASSERT_EQUAL(rpma_mr_desc_size(RPMA_MR_DESC_FORMAT_0), 21);
	CU_ASSERT_EQUAL(rpma_mr_desc_size(RPMA_MR_DESC_FORMAT_1), 40);
}

static void
encode__d_NULL(void)
{
	unsigned char buf[64];

	memset(buf, GUARD, sizeof(buf));
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(NULL, RPMA_MR_DESC_FORMAT_0, buf), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(NULL, RPMA_MR_DESC_FORMAT_1, buf), RPMA_E_INVAL);
	CU_ASSERT(all_guard(buf, sizeof(buf)));
}

static void
encode__buf_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(&D_V0, RPMA_MR_DESC_FORMAT_0, NULL), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(&D_V1, RPMA_MR_DESC_FORMAT_1, NULL), RPMA_E_INVAL);
}

static void
encode__d_NULL_buf_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(NULL, RPMA_MR_DESC_FORMAT_1, NULL), RPMA_E_INVAL);
}

static void
encode__v0_upstream_vector(void)
{
	unsigned char buf[21];

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&D_V0, RPMA_MR_DESC_FORMAT_0, buf), 0);
	CU_ASSERT_EQUAL(memcmp(buf, V0_PMEM, sizeof(buf)), 0);
}

static void
encode__v1_fixed_vector(void)
{
	unsigned char buf[40];
	struct rpma_mr_desc d;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&D_V1, RPMA_MR_DESC_FORMAT_1, buf), 0);
	CU_ASSERT_EQUAL(memcmp(buf, V1_FIXED, sizeof(buf)), 0);

	/* decode the vector and encode it back: byte-identical */
	memset(buf, GUARD, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_decode(V1_FIXED, sizeof(V1_FIXED), &d), 0);
	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, buf), 0);
	CU_ASSERT_EQUAL(memcmp(buf, V1_FIXED, sizeof(buf)), 0);
}

static void
encode__v1_documented_vector_b(void)
{
	static const struct rpma_mr_desc b = { .raddr = 0, .size = 0x100000,
		.key = 0xdeadbeefcafef00dull, .usage = 0x28,
		.transport = RPMA_EXT_TRANSPORT_OFI_TCP };
	unsigned char buf[40];

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&b, RPMA_MR_DESC_FORMAT_1, buf), 0);
	CU_ASSERT_EQUAL(memcmp(buf, V1_DOC_B, sizeof(buf)), 0);
}

/* output at every offset; the bytes around it stay untouched */
static void
encode__alignment_guard_bytes(void)
{
	unsigned char buf[3 * 40];

	for (size_t off = 0; off <= 40; off++) {
		memset(buf, GUARD, sizeof(buf));
		CU_ASSERT_EQUAL(rpma_mr_desc_encode(&D_V0, RPMA_MR_DESC_FORMAT_0, buf + off), 0);
		CU_ASSERT_EQUAL(memcmp(buf + off, V0_PMEM, 21), 0);
		CU_ASSERT(all_guard(buf, off));
		CU_ASSERT(all_guard(buf + off + 21, sizeof(buf) - off - 21));

		memset(buf, GUARD, sizeof(buf));
		CU_ASSERT_EQUAL(rpma_mr_desc_encode(&D_V1, RPMA_MR_DESC_FORMAT_1, buf + off), 0);
		CU_ASSERT_EQUAL(memcmp(buf + off, V1_FIXED, 40), 0);
		CU_ASSERT(all_guard(buf, off));
		CU_ASSERT(all_guard(buf + off + 40, sizeof(buf) - off - 40));
	}
}

/* splitmix64: reproducible from the printed seed on every libc */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void
rng_seed(const char *test)
{
	const char *env = getenv("UNIT_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);

	printf("\n  %s: seed %llu (set UNIT_SEED to repeat)\n", test,
		(unsigned long long)seed);
	rng_state = seed;
}

/* a random valid region, with a bias to the edges of the address space */
static void
random_desc(struct rpma_mr_desc *d, enum rpma_mr_desc_format format)
{
	switch (rng() % 4) {
	case 0: d->size = 1 + rng() % 4096; break;
	case 1: d->size = UINT64_MAX - rng() % 4096; break;
	default: d->size = rng() | 1; break;
	}
	d->raddr = rng() % 4 == 0 ? 0 - d->size : rng();
	if (d->raddr > UINT64_MAX - (d->size - 1))
		d->raddr = UINT64_MAX - (d->size - 1);
	d->usage = (int)(1 + rng() % 255);
	if (format == RPMA_MR_DESC_FORMAT_0) {
		d->key = rng() & UINT32_MAX;
		d->transport = RPMA_EXT_TRANSPORT_VERBS;
	} else {
		d->transport = (enum rpma_ext_transport)(1 + rng() % 4);
		/* a verbs rkey has 32 bits; the ofi transports use all 64 */
		d->key = d->transport == RPMA_EXT_TRANSPORT_VERBS ?
			rng() & UINT32_MAX : rng();
	}
}

static void
round_trip(enum rpma_mr_desc_format format)
{
	unsigned char buf[40];
	size_t size = rpma_mr_desc_size(format);

	for (int i = 0; i < 100000; i++) {
		struct rpma_mr_desc in, out;

		memset(&out, 0, sizeof(out));
		random_desc(&in, format);
		CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&in, format, buf), 0);
		CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_decode(buf, size, &out), 0);
		if (in.raddr != out.raddr || in.size != out.size ||
		    in.key != out.key || in.usage != out.usage ||
		    in.transport != out.transport) {
			printf("\n  iteration %d differs\n", i);
			CU_FAIL_FATAL("round trip changed a field");
		}
	}
}

static void
encode__round_trip_random_v0(void)
{
	rng_seed("v0");
	round_trip(RPMA_MR_DESC_FORMAT_0);
}

static void
encode__round_trip_random_v1(void)
{
	rng_seed("v1");
	round_trip(RPMA_MR_DESC_FORMAT_1);
}

/* format 0 carries only 32-bit verbs keys */
static void
encode__v0_key_too_wide(void)
{
	struct rpma_mr_desc d = D_V0;
	unsigned char buf[21];

	d.key = UINT32_MAX;
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_0, buf), 0);
	d.key = (uint64_t)UINT32_MAX + 1;
	expect_reject(&d, RPMA_MR_DESC_FORMAT_0);
	d.key = UINT64_MAX;
	expect_reject(&d, RPMA_MR_DESC_FORMAT_0);
}

static void
encode__v0_non_verbs_transport(void)
{
	struct rpma_mr_desc d = D_V0;

	for (int t = 0; t <= 5; t++) {
		if (t == RPMA_EXT_TRANSPORT_VERBS)
			continue;
		d.transport = (enum rpma_ext_transport)t;
		expect_reject(&d, RPMA_MR_DESC_FORMAT_0);
	}
}

/* format 1 carries 64-bit keys, but not for verbs */
static void
encode__v1_verbs_key_too_wide(void)
{
	struct rpma_mr_desc d = D_V1;
	unsigned char buf[40];

	d.transport = RPMA_EXT_TRANSPORT_VERBS;
	d.key = UINT32_MAX;
	CU_ASSERT_EQUAL(rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, buf), 0);
	d.key = (uint64_t)UINT32_MAX + 1;
	expect_reject(&d, RPMA_MR_DESC_FORMAT_1);
	d.key = UINT64_MAX;
	expect_reject(&d, RPMA_MR_DESC_FORMAT_1);
	for (int t = RPMA_EXT_TRANSPORT_OFI_TCP; t <= RPMA_EXT_TRANSPORT_OFI_SHM; t++) {
		d.transport = (enum rpma_ext_transport)t;
		CU_ASSERT_EQUAL(rpma_mr_desc_encode(&d, RPMA_MR_DESC_FORMAT_1, buf), 0);
	}
}

static void
encode__usage_out_of_range(void)
{
	static const int usages[] = { 0, -1, 0x100, 0x8000, INT32_MAX, INT32_MIN };

	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		struct rpma_mr_desc d0 = D_V0, d1 = D_V1;

		d0.usage = d1.usage = usages[i];
		expect_reject(&d0, RPMA_MR_DESC_FORMAT_0);
		expect_reject(&d1, RPMA_MR_DESC_FORMAT_1);
	}
}

static void
encode__v1_unknown_transport(void)
{
	static const int transports[] = { 0, 5, 255, -1 };
	struct rpma_mr_desc d = D_V1;

	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++) {
		d.transport = (enum rpma_ext_transport)transports[i];
		expect_reject(&d, RPMA_MR_DESC_FORMAT_1);
	}
}

static void
encode__unknown_format(void)
{
	expect_reject(&D_V1, (enum rpma_mr_desc_format)2);
	expect_reject(&D_V1, (enum rpma_mr_desc_format)-1);
}

UNIT_MAIN("rpma_mr_desc_encode",
	UNIT_CASE(encode__desc_size),
	UNIT_CASE(encode__d_NULL),
	UNIT_CASE(encode__buf_NULL),
	UNIT_CASE(encode__d_NULL_buf_NULL),
	UNIT_CASE(encode__v0_upstream_vector),
	UNIT_CASE(encode__v1_fixed_vector),
	UNIT_CASE(encode__v1_documented_vector_b),
	UNIT_CASE(encode__alignment_guard_bytes),
	UNIT_CASE(encode__round_trip_random_v0),
	UNIT_CASE(encode__round_trip_random_v1),
	UNIT_CASE(encode__v0_key_too_wide),
	UNIT_CASE(encode__v0_non_verbs_transport),
	UNIT_CASE(encode__v1_verbs_key_too_wide),
	UNIT_CASE(encode__usage_out_of_range),
	UNIT_CASE(encode__v1_unknown_transport),
	UNIT_CASE(encode__unknown_format))
