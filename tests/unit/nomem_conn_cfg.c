/* SPDX-License-Identifier: BSD-3-Clause */
/* nomem_conn_cfg.c -- RPMA_E_NOMEM from every fault-injection point of rpma_conn_cfg_new */
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

static int
call_new(void **out)
{
	struct rpma_conn_cfg *cfg = *out;
	int ret = rpma_conn_cfg_new(&cfg);

	*out = cfg;
	return ret;
}

static void
destroy(void **obj)
{
	struct rpma_conn_cfg *cfg = *obj;

	CU_ASSERT_EQUAL(rpma_conn_cfg_delete(&cfg), 0);
	*obj = cfg;
}

static void
conn_cfg_new__nomem(void)
{
	nomem_every_point(call_new, destroy);
}

UNIT_MAIN("nomem rpma_conn_cfg",
	UNIT_CASE(conn_cfg_new__nomem))

#endif
