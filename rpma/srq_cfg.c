/* SPDX-License-Identifier: BSD-3-Clause */
/* srq_cfg.c -- rpma_srq_cfg */
#include "config.h"

#include <stdlib.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "srq_cfg.h"

#define CFG_LOAD(cfg, field) atomic_load(&((struct rpma_srq_cfg *)(cfg))->field)

int
rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr)
{
	struct rpma_srq_cfg *cfg;

	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;
	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate an SRQ configuration");
	atomic_init(&cfg->rq_size, RPMA_SRQ_CFG_DEFAULT_SIZE);
	atomic_init(&cfg->rcq_size, RPMA_SRQ_CFG_DEFAULT_SIZE);
	*cfg_ptr = cfg;
	return 0;
}

int
rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;
	free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

int
rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&cfg->rq_size, rq_size);
	return 0;
}

int
rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size)
{
	if (cfg == NULL || rq_size == NULL)
		return RPMA_E_INVAL;
	*rq_size = CFG_LOAD(cfg, rq_size);
	return 0;
}

int
rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&cfg->rcq_size, rcq_size);
	return 0;
}

int
rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size)
{
	if (cfg == NULL || rcq_size == NULL)
		return RPMA_E_INVAL;
	*rcq_size = CFG_LOAD(cfg, rcq_size);
	return 0;
}
