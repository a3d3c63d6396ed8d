/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership_log.c -- the membership in a log: two copies, in the header
 * blocks, the newer valid one wins (membership.h has the format); a copy
 * in the version 1 format is read too (membership_v1.c)
 */
#include "config.h"

#include <string.h>

#include "common/elog.h"
#include "common/fault.h"
#include "common/membership.h"
#include "common/errors.h"

#define COPY_SIZE 4096

/* copy k's membership, or config_epoch 0 if it holds none valid */
static void
load_copy(struct rpma_ext_mem *mem, int k, struct membership *ms)
{
	const char *why;
	uint8_t *base, *p;

	ms->config_epoch = 0;
	if (rpma_ext_mem_get_ptr(mem, (void **)&base))
		return;
	p = base + (size_t)k * COPY_SIZE + MEMBERSHIP_OFF;
	if (membership_decode(p, MEMBERSHIP_SIZE, ms, &why) &&
	    membership_decode_v1(p, MEMBERSHIP_SIZE, ms, &why))
		ms->config_epoch = 0;
}

int
membership_load(struct rpma_ext_mem *mem, struct membership *ms)
{
	struct membership b;

	load_copy(mem, 0, ms);
	load_copy(mem, 1, &b);
	if (b.config_epoch > ms->config_epoch)
		*ms = b;
	if (ms->config_epoch == 0)
		memset(ms, 0, sizeof(*ms));
	return 0;
}

int
membership_store(struct rpma_ext_mem *mem, const struct membership *ms)
{
	struct membership a, b;
	uint8_t buf[MEMBERSHIP_SIZE];
	const char *why;
	int k;

	if (membership_encode(ms, buf, &why)) {
		REPL_LOG_ERROR("cannot store the membership: %s", why);
		return REPL_E_INVAL;
	}
	load_copy(mem, 0, &a);
	load_copy(mem, 1, &b);
	/* keep the newer copy: a torn write leaves it in place */
	k = a.config_epoch > b.config_epoch ? 1 : 0;
	REPL_FAULT(REPL_E_IO, {});
	return rpma_ext_mem_memcpy(mem, (size_t)k * COPY_SIZE + MEMBERSHIP_OFF, buf,
			MEMBERSHIP_SIZE) ? REPL_E_INVAL :
		err_medium(rpma_ext_mem_persist(mem,
			(size_t)k * COPY_SIZE + MEMBERSHIP_OFF, MEMBERSHIP_SIZE));
}
