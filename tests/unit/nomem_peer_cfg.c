/* SPDX-License-Identifier: BSD-3-Clause */
/* nomem_peer_cfg.c -- RPMA_E_NOMEM from every fault-injection point of rpma_peer_cfg_new and rpma_peer_cfg_from_descriptor */
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
	struct rpma_peer_cfg *pcfg = *out;
	int ret = rpma_peer_cfg_new(&pcfg);

	*out = pcfg;
	return ret;
}

/* from_descriptor allocates through rpma_peer_cfg_new */
static int
from_desc_0(void **out)
{
	static const unsigned char desc = 0;
	struct rpma_peer_cfg *pcfg = *out;
	int ret = rpma_peer_cfg_from_descriptor(&desc, 1, &pcfg);

	*out = pcfg;
	return ret;
}

static int
from_desc_1(void **out)
{
	static const unsigned char desc = 1;
	struct rpma_peer_cfg *pcfg = *out;
	int ret = rpma_peer_cfg_from_descriptor(&desc, 1, &pcfg);

	*out = pcfg;
	return ret;
}

static void
destroy(void **obj)
{
	struct rpma_peer_cfg *pcfg = *obj;

	CU_ASSERT_EQUAL(rpma_peer_cfg_delete(&pcfg), 0);
	*obj = pcfg;
}

static void
peer_cfg_new__nomem(void)
{
	nomem_every_point(call_new, destroy);
}

static void
from_desc__nomem(void)
{
	nomem_every_point(from_desc_0, destroy);
	nomem_every_point(from_desc_1, destroy);
}

UNIT_MAIN("nomem rpma_peer_cfg",
	UNIT_CASE(peer_cfg_new__nomem),
	UNIT_CASE(from_desc__nomem))

#endif
