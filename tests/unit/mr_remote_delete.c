/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_remote_delete.c -- rpma_mr_remote_delete: NULL arguments and the pointer reset */
#include "unit.h"

static const unsigned char V0_PMEM[21] = {
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x13, 0x12, 0x11, 0x10, 0x21,
};

static void
remote_delete__mr_ptr_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_mr_remote_delete(NULL), RPMA_E_INVAL);
}

/* deleting nothing is a no-op that succeeds */
static void
remote_delete__mr_NULL(void)
{
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL(rpma_mr_remote_delete(&mr), 0);
	CU_ASSERT_PTR_NULL(mr);
}

/* the object is freed (LeakSanitizer would say otherwise) and the pointer cleared */
static void
remote_delete__success(void)
{
	struct rpma_mr_remote *mr = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_mr_remote_from_descriptor(V0_PMEM, 21, &mr), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(mr);
	CU_ASSERT_EQUAL(rpma_mr_remote_delete(&mr), 0);
	CU_ASSERT_PTR_NULL(mr);
	CU_ASSERT_EQUAL(rpma_mr_remote_delete(&mr), 0);	/* twice is harmless */
	CU_ASSERT_PTR_NULL(mr);
}

UNIT_MAIN("rpma_mr_remote_delete",
	UNIT_CASE(remote_delete__mr_ptr_NULL),
	UNIT_CASE(remote_delete__mr_NULL),
	UNIT_CASE(remote_delete__success))
