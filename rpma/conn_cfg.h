/* SPDX-License-Identifier: BSD-3-Clause */
/* conn_cfg.h -- connection configuration, read by connection setup */
#ifndef RPMA_CONN_CFG_H
#define RPMA_CONN_CFG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpma.h"

/* librpma's defaults */
#define RPMA_CONN_CFG_DEFAULT_Q_SIZE 10

struct rpma_conn_cfg {
	_Atomic int timeout_ms;		/* address and route resolution */
	_Atomic uint32_t cq_size;	/* main CQ */
	_Atomic uint32_t rcq_size;	/* receive CQ; 0 = none */
	_Atomic uint32_t sq_size;
	_Atomic uint32_t rq_size;
	atomic_bool shared_comp_channel;
	_Atomic(struct rpma_srq *) srq;
	/* verbs: the core's flush service on this connection (extension) */
	atomic_bool gpspm;
	/* the application reaps every completion itself (extension) */
	atomic_bool polled;
};

#endif
