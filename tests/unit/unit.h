/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit.h -- the CUnit harness shared by the unit tests: one test program per
 * API function, each a table of cases.
 *
 *   static void case_a(void) { CU_ASSERT_EQUAL(...); }
 *   UNIT_MAIN("rpma_mr_remote_delete",
 *	UNIT_CASE(case_a), UNIT_CASE(case_b))
 *
 * The program exits 0 when every assertion held, 1 otherwise, and 77
 * (automake's SKIP) through UNIT_SKIP("reason").
 */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "rpma.h"

#define UNIT_CASE(fn) { #fn, fn }

#define UNIT_SKIP(reason) \
	do { \
		printf("SKIP: %s\n", (reason)); \
		exit(77); \
	} while (0)

/* a pointer value no allocator returns: shows an output was not written */
#define UNIT_SENTINEL ((void *)(uintptr_t)0xDEADBEEF)

static inline int
unit_run(const char *suite_name, CU_TestInfo *cases)
{
	CU_SuiteInfo suites[] = {
		{ suite_name, NULL, NULL, NULL, NULL, cases },
		CU_SUITE_INFO_NULL,
	};
	unsigned failed;

	/* keep expected-failure logging out of the test output */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	if (CU_register_suites(suites) != CUE_SUCCESS)
		return 99;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	if (CU_get_number_of_tests_run() == 0)
		failed = 1;	/* a program that ran nothing proves nothing */
	CU_cleanup_registry();
	return failed ? 1 : 0;
}

#define UNIT_MAIN(suite_name, ...) \
	int main(void) \
	{ \
		static CU_TestInfo cases_[] = { __VA_ARGS__, CU_TEST_INFO_NULL }; \
		return unit_run(suite_name, cases_); \
	}

#endif
