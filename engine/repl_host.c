/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_host.c -- what a program on librepl asks of its host (repl.h):
 * who holds a log's lock, whether an RDMA device serves an address.
 */
#include "config.h"

#include <stdio.h>

#include "facade.h"
#include "log/log_lock.h"

int
repl_lock_holder(const char *path, char *buf, size_t len)
{
	if (path == NULL || buf == NULL || len == 0)
		return REPL_E_INVAL;
	log_lock_holder(path, buf, len);
	return 0;
}

int
repl_rdma_available(const char *addr)
{
	struct ibv_context *ctx = NULL;

	if (addr == NULL)
		return 0;
	return rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
		&ctx) == 0;
}
