/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_remote_get_flush_type.c -- rpma_mr_remote_get_flush_type: usage & 0x30 for every usage, both formats */
#include "unit.h"
#include "descriptor.h"

#define FLUSH_UNTOUCHED 0x5A5A

static struct rpma_mr_remote *
new_mr(enum rpma_mr_desc_format format, int usage)
{
	struct rpma_mr_desc d = { .raddr = 0x1000, .size = 0x1000,
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
remote_get_flush_type__mr_NULL(void)
{
	int flush_type = FLUSH_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(NULL, &flush_type), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(flush_type, FLUSH_UNTOUCHED);
}

static void
remote_get_flush_type__flush_type_NULL(void)
{
	struct rpma_mr_remote *mr = new_mr(RPMA_MR_DESC_FORMAT_0, 0x21);

	CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(mr, NULL), RPMA_E_INVAL);
	rpma_mr_remote_delete(&mr);
}

static void
remote_get_flush_type__mr_NULL_flush_type_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(NULL, NULL), RPMA_E_INVAL);
}

/* librpma's PMEM (0x21) and DRAM (0x11) vectors: usage bits, not enum values */
static void
remote_get_flush_type__success(void)
{
	static const unsigned char pmem[21] = {
		0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
		0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
		0x13, 0x12, 0x11, 0x10, 0x21,
	};
	unsigned char dram[21];
	struct rpma_mr_remote *mr = NULL;
	int flush_type = FLUSH_UNTOUCHED;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(pmem, 21, &mr), 0);
	CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
	CU_ASSERT_EQUAL(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	CU_ASSERT_NOT_EQUAL(flush_type, RPMA_FLUSH_TYPE_PERSISTENT);
	rpma_mr_remote_delete(&mr);

	memcpy(dram, pmem, sizeof(dram));
	dram[20] = 0x11;
	CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(dram, 21, &mr), 0);
	CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
	CU_ASSERT_EQUAL(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	CU_ASSERT_NOT_EQUAL(flush_type, RPMA_FLUSH_TYPE_VISIBILITY);
	rpma_mr_remote_delete(&mr);
}

static void
remote_get_flush_type__every_usage(void)
{
	for (int format = 0; format <= 1; format++) {
		for (int usage = 1; usage <= 0xFF; usage++) {
			struct rpma_mr_remote *mr =
				new_mr((enum rpma_mr_desc_format)format, usage);
			int flush_type = FLUSH_UNTOUCHED;

			CU_ASSERT_EQUAL(rpma_mr_remote_get_flush_type(mr, &flush_type), 0);
			CU_ASSERT_EQUAL(flush_type, usage & 0x30);
			rpma_mr_remote_delete(&mr);
		}
	}
}

UNIT_MAIN("rpma_mr_remote_get_flush_type",
	UNIT_CASE(remote_get_flush_type__mr_NULL),
	UNIT_CASE(remote_get_flush_type__flush_type_NULL),
	UNIT_CASE(remote_get_flush_type__mr_NULL_flush_type_NULL),
	UNIT_CASE(remote_get_flush_type__success),
	UNIT_CASE(remote_get_flush_type__every_usage))
