/* SPDX-License-Identifier: BSD-3-Clause */
/* ext_mr_remote_get_usage.c -- rpma_ext_mr_remote_get_usage: every usage value, both formats */
#include "unit.h"
#include "descriptor.h"

#define USAGE_UNTOUCHED 0x5A5A

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
ext_mr_remote_get_usage__mr_NULL(void)
{
	int usage = USAGE_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_usage(NULL, &usage), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(usage, USAGE_UNTOUCHED);
}

static void
ext_mr_remote_get_usage__usage_NULL(void)
{
	struct rpma_mr_remote *mr = new_mr(RPMA_MR_DESC_FORMAT_1, 0x21);

	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_usage(mr, NULL), RPMA_E_INVAL);
	rpma_mr_remote_delete(&mr);
}

static void
ext_mr_remote_get_usage__mr_NULL_usage_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_usage(NULL, NULL), RPMA_E_INVAL);
}

/* the usage comes back exactly as the descriptor carried it */
static void
ext_mr_remote_get_usage__every_usage(void)
{
	for (int format = 0; format <= 1; format++) {
		for (int usage = 1; usage <= 0xFF; usage++) {
			struct rpma_mr_remote *mr =
				new_mr((enum rpma_mr_desc_format)format, usage);
			int got = USAGE_UNTOUCHED;

			CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_usage(mr, &got), 0);
			CU_ASSERT_EQUAL(got, usage);
			rpma_mr_remote_delete(&mr);
		}
	}
}

UNIT_MAIN("rpma_ext_mr_remote_get_usage",
	UNIT_CASE(ext_mr_remote_get_usage__mr_NULL),
	UNIT_CASE(ext_mr_remote_get_usage__usage_NULL),
	UNIT_CASE(ext_mr_remote_get_usage__mr_NULL_usage_NULL),
	UNIT_CASE(ext_mr_remote_get_usage__every_usage))
