/* SPDX-License-Identifier: BSD-3-Clause */
/* ext_errormsg.c -- rpma_ext_errormsg: per-thread reason of the last failure */
#include <pthread.h>

#include "unit.h"

/* a format-1 descriptor whose crc does not match */
static void
fail_checksum(void)
{
	unsigned char desc[40] = { 'R', 'P', 'M', 'D', 1, 1, 0x21 };
	struct rpma_mr_remote *mr = UNIT_SENTINEL;

	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(desc, sizeof(desc), &mr),
		RPMA_E_NOSUPP);
}

/* in a new thread: copy out what it sees first, then fail differently */
static void *
thread_errormsg(void *arg)
{
	unsigned char two = 2;
	struct rpma_peer_cfg *pcfg = NULL;

	snprintf(arg, 256, "%s", rpma_ext_errormsg());
	rpma_peer_cfg_from_descriptor(&two, 1, &pcfg);
	return NULL;
}

/* runs first: nothing failed yet, so "" (never NULL) */
static void
errormsg__initially_empty(void)
{
	CU_ASSERT_PTR_NOT_NULL_FATAL(rpma_ext_errormsg());
	CU_ASSERT_STRING_EQUAL(rpma_ext_errormsg(), "");
}

static void
errormsg__after_failure(void)
{
	fail_checksum();
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "checksum"));
	/* the stored and computed values are in the message */
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "0x"));
}

/* a success does not clear the reason; the next failure replaces it */
static void
errormsg__kept_until_next_failure(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	unsigned char two = 2;

	fail_checksum();
	CU_ASSERT_EQUAL_FATAL(rpma_peer_cfg_new(&pcfg), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "checksum"));
	CU_ASSERT_EQUAL(rpma_peer_cfg_from_descriptor(&two, 1, &pcfg), RPMA_E_INVAL);
	CU_ASSERT_PTR_NULL(strstr(rpma_ext_errormsg(), "checksum"));
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "peer configuration"));
	rpma_peer_cfg_delete(&pcfg);
}

/* another thread sees its own (empty) reason, and its failure does not reach this one */
static void
errormsg__per_thread(void)
{
	char seen[256] = "untouched";
	pthread_t th;

	fail_checksum();
	CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, thread_errormsg, seen), 0);
	CU_ASSERT_EQUAL_FATAL(pthread_join(th, NULL), 0);
	CU_ASSERT_STRING_EQUAL(seen, "");
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "checksum"));
}

/* every reason is readable text, whatever failed */
static void
errormsg__null_arguments(void)
{
	CU_ASSERT_EQUAL(rpma_mr_remote_from_descriptor(NULL, 21, NULL), RPMA_E_INVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(rpma_ext_errormsg(), "NULL"));
}

UNIT_MAIN("rpma_ext_errormsg",
	UNIT_CASE(errormsg__initially_empty),
	UNIT_CASE(errormsg__after_failure),
	UNIT_CASE(errormsg__kept_until_next_failure),
	UNIT_CASE(errormsg__per_thread),
	UNIT_CASE(errormsg__null_arguments))
