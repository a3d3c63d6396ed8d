/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_remote_get_size.c -- rpma_mr_remote_get_size: NULL arguments, both formats, every usage */
#include "unit.h"
#include "descriptor.h"

#define SIZE_UNTOUCHED ((size_t)0x5A5A5A5A)

static const unsigned char V0_PMEM[21] = {
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x13, 0x12, 0x11, 0x10, 0x21,
};

/* a remote region of the given size and usage, in the given format */
static struct rpma_mr_remote *
new_mr(enum rpma_mr_desc_format format, uint64_t size, int usage)
{
	struct rpma_mr_desc d = { .raddr = 0, .size = size,
		.key = 0x1234, .usage = usage,
		.transport = RPMA_EXT_TRANSPORT_VERBS };
	unsigned char buf[40];
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&d, format, buf), 0);
	CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(buf,
		rpma_mr_desc_size(format), &mr), 0);
	return mr;
}

static void
remote_get_size__mr_NULL(void)
{
	size_t size = SIZE_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_mr_remote_get_size(NULL, &size), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(size, SIZE_UNTOUCHED);
}

static void
remote_get_size__size_NULL(void)
{
	struct rpma_mr_remote *mr = new_mr(RPMA_MR_DESC_FORMAT_0, 4096, 0x21);

	CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, NULL), RPMA_E_INVAL);
	rpma_mr_remote_delete(&mr);
}

static void
remote_get_size__mr_NULL_size_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_remote_get_size(NULL, NULL), RPMA_E_INVAL);
}

static void
remote_get_size__success(void)
{
	struct rpma_mr_remote *mr = NULL;
	size_t size = SIZE_UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(V0_PMEM, 21, &mr), 0);
	CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), 0);
	CU_ASSERT_EQUAL(size, (size_t)0x08090a0b0c0d0e0full);
	rpma_mr_remote_delete(&mr);
}

/* the size does not depend on the usage bits, in either format */
static void
remote_get_size__every_usage(void)
{
	for (int format = 0; format <= 1; format++) {
		for (int usage = 1; usage <= 0xFF; usage++) {
			uint64_t want = 0x1000u + (unsigned)usage;
			struct rpma_mr_remote *mr =
				new_mr((enum rpma_mr_desc_format)format, want, usage);
			size_t size = SIZE_UNTOUCHED;

			CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), 0);
			CU_ASSERT_EQUAL(size, (size_t)want);
			rpma_mr_remote_delete(&mr);
		}
	}
}

/* the extremes: 1 byte, and the largest region a descriptor can describe */
static void
remote_get_size__extremes(void)
{
	for (int format = 0; format <= 1; format++) {
		struct rpma_mr_remote *mr = new_mr((enum rpma_mr_desc_format)format, 1, 0x21);
		size_t size = SIZE_UNTOUCHED;

		CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), 0);
		CU_ASSERT_EQUAL(size, 1);
		rpma_mr_remote_delete(&mr);

		mr = new_mr((enum rpma_mr_desc_format)format, UINT64_MAX, 0x21);
		size = SIZE_UNTOUCHED;
#if SIZE_MAX >= UINT64_MAX
		CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), 0);
		CU_ASSERT_EQUAL(size, SIZE_MAX);
#else
		/* a size_t too narrow for the region: refused, size untouched */
		CU_ASSERT_EQUAL(rpma_mr_remote_get_size(mr, &size), RPMA_E_NOSUPP);
		CU_ASSERT_EQUAL(size, SIZE_UNTOUCHED);
#endif
		rpma_mr_remote_delete(&mr);
	}
}

UNIT_MAIN("rpma_mr_remote_get_size",
	UNIT_CASE(remote_get_size__mr_NULL),
	UNIT_CASE(remote_get_size__size_NULL),
	UNIT_CASE(remote_get_size__mr_NULL_size_NULL),
	UNIT_CASE(remote_get_size__success),
	UNIT_CASE(remote_get_size__every_usage),
	UNIT_CASE(remote_get_size__extremes))
