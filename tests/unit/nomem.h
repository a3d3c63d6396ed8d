/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nomem.h -- shared by the nomem_* programs (debug builds only): drive a
 * constructor through every fault-injection point it passes.
 */
#ifndef NOMEM_H
#define NOMEM_H

#include "fault_injection.h"
#include "unit.h"

/*
 * Count the points a successful call passes, then fail each in turn: every
 * one must give NOMEM, leave the output alone and leak nothing
 * (LeakSanitizer checks at exit); one past the last point nothing fails.
 */
static inline void
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

#endif
