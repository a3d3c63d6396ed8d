/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_host.c -- what a program on librepl asks of its host (repl.h):
 * who holds a log's lock, whether an RDMA device serves an address,
 * whether its TLS files would load.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "ctl/ctl_chan.h"
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

int
repl_tls_check(const char *ca, const char *cert, const char *key, char *why,
		size_t why_len)
{
	const char *reason = NULL;
	int ret;

	if (ca == NULL || cert == NULL || key == NULL ||
	    (why == NULL && why_len != 0))
		return REPL_E_INVAL;
	ret = ctl_tls_check(ca, cert, key, &reason);
	if (ret != 0 && why_len != 0)
		snprintf(why, why_len, "%s", reason ? reason : "TLS: unknown error");
	else if (why_len != 0)
		why[0] = '\0';
	return ret == 0 ? 0 : ret == -ENOMEM ? REPL_E_NOMEM : REPL_E_INVAL;
}
