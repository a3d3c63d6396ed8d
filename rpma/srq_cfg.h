/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg.h -- shared receive queue configuration */
#ifndef RPMA_SRQ_CFG_H
#define RPMA_SRQ_CFG_H

#include <stdatomic.h>
#include <stdint.h>

#include "rpma.h"

/* librpma's man page says 100; its code uses 20.  The documentation wins. */
#define RPMA_SRQ_CFG_DEFAULT_SIZE 100

struct rpma_srq_cfg {
	_Atomic uint32_t rq_size;	/* SRQ max_wr */
	_Atomic uint32_t rcq_size;	/* the SRQ's own receive CQ; 0 = none */
};

#endif
