/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_set_compl_channel.c -- rpma_conn_cfg_set_compl_channel: NULL cfg and lifecycle */
#include "unit.h"

static void
conn_cfg_set_compl_channel__cfg_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_compl_channel(NULL, true), RPMA_E_INVAL);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_compl_channel(NULL, false), RPMA_E_INVAL);
}

static void
conn_cfg_set_compl_channel__lifecycle(void)
{
	static const bool steps[] = { true, true, false, true, false };
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		bool shared = !steps[i];

		CU_ASSERT_EQUAL(rpma_conn_cfg_set_compl_channel(cfg, steps[i]), 0);
		CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
		CU_ASSERT_EQUAL(shared, steps[i]);
	}
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_set_compl_channel",
	UNIT_CASE(conn_cfg_set_compl_channel__cfg_NULL),
	UNIT_CASE(conn_cfg_set_compl_channel__lifecycle))
