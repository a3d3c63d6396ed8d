/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg_get_compl_channel.c -- rpma_conn_cfg_get_compl_channel: NULL arguments, default false, after set */
#include "unit.h"

static void
conn_cfg_get_compl_channel__cfg_NULL(void)
{
	bool shared = true;

	CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(NULL, &shared), RPMA_E_INVAL);
	CU_ASSERT_TRUE(shared);	/* untouched */
}

static void
conn_cfg_get_compl_channel__shared_NULL(void)
{
	struct rpma_conn_cfg *cfg = NULL;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(cfg, NULL), RPMA_E_INVAL);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_compl_channel__cfg_NULL_shared_NULL(void)
{
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(NULL, NULL), RPMA_E_INVAL);
}

static void
conn_cfg_get_compl_channel__default(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	bool shared = true;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	CU_ASSERT_FALSE(shared);
	rpma_conn_cfg_delete(&cfg);
}

static void
conn_cfg_get_compl_channel__after_set(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	bool shared = false;

	CU_ASSERT_EQUAL_FATAL(rpma_conn_cfg_new(&cfg), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	CU_ASSERT_EQUAL(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	CU_ASSERT_TRUE(shared);
	rpma_conn_cfg_delete(&cfg);
}

UNIT_MAIN("rpma_conn_cfg_get_compl_channel",
	UNIT_CASE(conn_cfg_get_compl_channel__cfg_NULL),
	UNIT_CASE(conn_cfg_get_compl_channel__shared_NULL),
	UNIT_CASE(conn_cfg_get_compl_channel__cfg_NULL_shared_NULL),
	UNIT_CASE(conn_cfg_get_compl_channel__default),
	UNIT_CASE(conn_cfg_get_compl_channel__after_set))
