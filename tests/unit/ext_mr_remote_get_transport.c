/* SPDX-License-Identifier: BSD-3-Clause */
/* ext_mr_remote_get_transport.c -- rpma_ext_mr_remote_get_transport: format 0 is verbs, format 1 says which */
#include "unit.h"
#include "descriptor.h"

#define TRANSPORT_UNTOUCHED ((enum rpma_ext_transport)0x5A)

static struct rpma_mr_remote *
new_mr(enum rpma_mr_desc_format format, enum rpma_ext_transport transport)
{
	struct rpma_mr_desc d = { .raddr = 0x1000, .size = 0x1000,
		.key = 0x1234, .usage = 0x21, .transport = transport };
	unsigned char buf[40];
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_desc_encode(&d, format, buf), 0);
	CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(buf,
		rpma_mr_desc_size(format), &mr), 0);
	return mr;
}

static void
ext_mr_remote_get_transport__mr_NULL(void)
{
	enum rpma_ext_transport t = TRANSPORT_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_transport(NULL, &t), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(t, TRANSPORT_UNTOUCHED);
}

static void
ext_mr_remote_get_transport__transport_NULL(void)
{
	struct rpma_mr_remote *mr = new_mr(RPMA_MR_DESC_FORMAT_1,
		RPMA_EXT_TRANSPORT_OFI_SHM);

	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_transport(mr, NULL), RPMA_E_INVAL);
	rpma_mr_remote_delete(&mr);
}

static void
ext_mr_remote_get_transport__mr_NULL_transport_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_transport(NULL, NULL), RPMA_E_INVAL);
}

/* a librpma descriptor can only come from verbs */
static void
ext_mr_remote_get_transport__format_0_is_verbs(void)
{
	struct rpma_mr_remote *mr = new_mr(RPMA_MR_DESC_FORMAT_0,
		RPMA_EXT_TRANSPORT_VERBS);
	enum rpma_ext_transport t = TRANSPORT_UNTOUCHED;

	CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_transport(mr, &t), 0);
	CU_ASSERT_EQUAL(t, RPMA_EXT_TRANSPORT_VERBS);
	rpma_mr_remote_delete(&mr);
}

static void
ext_mr_remote_get_transport__format_1_every_transport(void)
{
	for (int tr = RPMA_EXT_TRANSPORT_VERBS; tr <= RPMA_EXT_TRANSPORT_OFI_SHM; tr++) {
		struct rpma_mr_remote *mr = new_mr(RPMA_MR_DESC_FORMAT_1,
			(enum rpma_ext_transport)tr);
		enum rpma_ext_transport t = TRANSPORT_UNTOUCHED;

		CU_ASSERT_EQUAL(rpma_ext_mr_remote_get_transport(mr, &t), 0);
		CU_ASSERT_EQUAL(t, tr);
		rpma_mr_remote_delete(&mr);
	}
}

UNIT_MAIN("rpma_ext_mr_remote_get_transport",
	UNIT_CASE(ext_mr_remote_get_transport__mr_NULL),
	UNIT_CASE(ext_mr_remote_get_transport__transport_NULL),
	UNIT_CASE(ext_mr_remote_get_transport__mr_NULL_transport_NULL),
	UNIT_CASE(ext_mr_remote_get_transport__format_0_is_verbs),
	UNIT_CASE(ext_mr_remote_get_transport__format_1_every_transport))
