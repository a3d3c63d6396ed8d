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

#include "nomem.h"

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
