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

#include "fault_injection.h"

/*
 * Count the points a successful call passes, then fail each in turn: every
 * one must give NOMEM, leave the output alone and leak nothing
 * (LeakSanitizer checks at exit); one past the last point nothing fails.
 */
static void
nomem_every_point(int (*call)(void **out), void (*destroy)(void **obj))
{
	void *obj = NULL;
	long n;

	rpma_fault_injection_set(0);
	CU_ASSERT_EQUAL_FATAL(call(&obj), 0);
	n = rpma_fault_injection_count();
	destroy(&obj);
	CU_ASSERT_FATAL(n >= 1);
	for (long k = 1; k <= n; k++) {
		obj = UNIT_SENTINEL;
		rpma_fault_injection_set(k);
		CU_ASSERT_EQUAL(call(&obj), RPMA_E_NOMEM);
		CU_ASSERT_PTR_EQUAL(obj, UNIT_SENTINEL);
		CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "injected"));
	}
	obj = NULL;
	rpma_fault_injection_set(n + 1);
	CU_ASSERT_EQUAL(call(&obj), 0);
	CU_ASSERT_PTR_NOT_NULL(obj);
	destroy(&obj);
	rpma_fault_injection_set(0);
}

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
