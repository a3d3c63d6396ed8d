/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_remote.h -- a peer's memory region as this side may address it */
#ifndef RPMA_MR_REMOTE_H
#define RPMA_MR_REMOTE_H

#include "descriptor.h"

struct rpma_mr_remote {
	struct rpma_mr_desc desc;	/* validated at construction */
};

#endif
