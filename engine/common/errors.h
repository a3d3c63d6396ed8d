/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errors.h -- the engine speaks repl.h's REPL_E_*.  A code of the core
 * (RPMA_E_*) is turned into one where the call that returned it is made,
 * because only there is it known what failed: the log's medium or the
 * network.
 */
#ifndef REPL_ERRORS_H
#define REPL_ERRORS_H

#include "repl.h"
#include "rpma.h"

/* a REPL_E_* code (or 0, or a positive count)? */
static inline int
repl_is_code(int ret)
{
	return ret >= 0 || (ret <= REPL_E_INVAL && ret > REPL_E_INVAL - 100);
}

/* the result of a call on the log's medium (rpma_ext_mem_*) */
static inline int
err_medium(int ret)
{
	if (repl_is_code(ret))
		return ret;
	return ret == RPMA_E_NOMEM ? REPL_E_NOMEM :
		ret == RPMA_E_INVAL ? REPL_E_INVAL : REPL_E_IO;
}

/* the result of a call on the fabric (peers, connections, completions) */
static inline int
err_transport(int ret)
{
	if (repl_is_code(ret))
		return ret;
	return ret == RPMA_E_NOMEM ? REPL_E_NOMEM :
		ret == RPMA_E_INVAL ? REPL_E_INVAL : REPL_E_TRANSPORT;
}

#endif
