/* SPDX-License-Identifier: BSD-3-Clause */
/* peer_cfg.h -- what the core reads from a peer configuration */
#ifndef RPMA_PEER_CFG_H
#define RPMA_PEER_CFG_H

#include <stdatomic.h>
#include <stdbool.h>

#include "rpma.h"

struct rpma_peer_cfg {
	/* the operator's statement that writes land in PMem (DDIO off) */
	atomic_bool direct_write_to_pmem;
};

#endif
