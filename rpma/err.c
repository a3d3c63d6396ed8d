/* SPDX-License-Identifier: BSD-3-Clause */
/* err.c -- error and event names, and the per-thread failure reason */
#include <stdarg.h>
#include <stdio.h>

#include "rpma.h"
#include "errormsg.h"

static _Thread_local char last_errormsg[RPMA_ERRORMSG_MAX];

const char *
rpma_err_2str(int ret)
{
	switch (ret) {
	case 0:				return "Success";
	case RPMA_E_NOSUPP:		return "Not supported";
	case RPMA_E_PROVIDER:		return "Provider error occurred";
	case RPMA_E_NOMEM:		return "Out of memory";
	case RPMA_E_INVAL:		return "Invalid argument";
	case RPMA_E_NO_COMPLETION:	return "No next completion available";
	case RPMA_E_NO_EVENT:		return "No next event available";
	case RPMA_E_AGAIN:		return "Temporary error, try again";
	case RPMA_E_SHARED_CHANNEL:	return "Completion channel is shared";
	case RPMA_E_NOT_SHARED_CHNL:	return "Completion channel is not shared";
	case RPMA_E_UNKNOWN:
	default:			return "Unknown error";
	}
}

const char *
rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	switch (conn_event) {
	case RPMA_CONN_UNDEFINED:	return "Undefined connection event";
	case RPMA_CONN_ESTABLISHED:	return "Connection established";
	case RPMA_CONN_CLOSED:		return "Connection closed";
	case RPMA_CONN_LOST:		return "Connection lost";
	case RPMA_CONN_REJECTED:	return "Connection rejected";
	case RPMA_CONN_UNREACHABLE:	return "Connection unreachable";
	default:			return "Unsupported connection event";
	}
}

const char *
rpma_ext_errormsg(void)
{
	return last_errormsg;
}

int
rpma_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_errormsg, sizeof(last_errormsg), fmt, ap);
	va_end(ap);
	return err;
}
