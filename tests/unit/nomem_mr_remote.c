/* SPDX-License-Identifier: BSD-3-Clause */
/* nomem_mr_remote.c -- RPMA_E_NOMEM from every fault-injection point of rpma_mr_remote_from_descriptor */
#include "config.h"

#include "unit.h"

#ifndef RPMA_DEBUG_FAULT_INJECTION

int
main(void)
{
	UNIT_SKIP("fault injection is compiled only with --enable-debug");
}

#else

#include "nomem.h"

static const unsigned char V0_PMEM[21] = {
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x13, 0x12, 0x11, 0x10, 0x21,
};

static const unsigned char V1_FIXED[40] = {
	'R', 'P', 'M', 'D', 0x01, 0x02, 0x21, 0x00,
	0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x10,
	0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,
	0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08,
	0x00, 0x00, 0x00, 0x00, 0x1e, 0x99, 0xd0, 0x24,
};

static int
from_v0(void **out)
{
	struct rpma_mr_remote *mr = *out;
	int ret = rpma_mr_remote_from_descriptor(V0_PMEM, sizeof(V0_PMEM), &mr);

	*out = mr;
	return ret;
}

static int
from_v1(void **out)
{
	struct rpma_mr_remote *mr = *out;
	int ret = rpma_mr_remote_from_descriptor(V1_FIXED, sizeof(V1_FIXED), &mr);

	*out = mr;
	return ret;
}

static void
destroy(void **obj)
{
	struct rpma_mr_remote *mr = *obj;

	CU_ASSERT_EQUAL(rpma_mr_remote_delete(&mr), 0);
	*obj = mr;
}

static void
remote_from_descriptor__nomem_v0(void)
{
	nomem_every_point(from_v0, destroy);
}

static void
remote_from_descriptor__nomem_v1(void)
{
	nomem_every_point(from_v1, destroy);
}

UNIT_MAIN("nomem rpma_mr_remote",
	UNIT_CASE(remote_from_descriptor__nomem_v0),
	UNIT_CASE(remote_from_descriptor__nomem_v1))

#endif
