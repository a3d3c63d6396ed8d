/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * facade.h -- what librepl's top-level files (repl.c, repl_replica.c,
 * repl_reader.c, repl_log.c) share: the layers' errors and the backends
 * as repl.h names them.  Not repl_*: nothing here is exported.
 */
#ifndef REPL_FACADE_H
#define REPL_FACADE_H

#include "repl.h"
#include "rpma.h"

/* a result of the layers below as a REPL_E_* (what is not one yet is the
 * transport's) */
int facade_err(int ret);

/* repl.h's backend as the core's; REPL_E_INVAL for an unknown one */
int facade_backend(enum repl_backend b, enum rpma_ext_mem_backend *out);

struct membership;
/* the stored membership as repl.h shows it (repl_reader_header,
 * repl_membership) */
void facade_membership_out(const struct membership *ms,
		struct repl_membership *out);

#endif
