/* SPDX-License-Identifier: BSD-3-Clause */
/* errormsg.h -- the calling thread's last failure reason (rpma_ext_errormsg) */
#ifndef RPMA_ERRORMSG_H
#define RPMA_ERRORMSG_H

#define RPMA_ERRORMSG_MAX 256

/* Record why the current call fails; returns err so callers can write
 * "return rpma_fail(RPMA_E_INVAL, ...)". */
int rpma_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
