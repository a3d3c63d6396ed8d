/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_cfg.c -- rpma_conn_cfg.  Fields are atomics so that one cfg may be
 * read by connection setup in one thread while another sets it.
 */
#include "config.h"

#include <stdlib.h>

#include "conn_cfg.h"
#include "errormsg.h"
#include "fault_injection.h"

/* cast away const for atomic loads: reading never modifies */
#define CFG_LOAD(cfg, field) atomic_load(&((struct rpma_conn_cfg *)(cfg))->field)

int
rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr)
{
	struct rpma_conn_cfg *cfg;

	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;
	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a connection configuration");
	atomic_init(&cfg->timeout_ms, RPMA_DEFAULT_TIMEOUT_MS);
	atomic_init(&cfg->cq_size, RPMA_CONN_CFG_DEFAULT_Q_SIZE);
	atomic_init(&cfg->rcq_size, 0);
	atomic_init(&cfg->sq_size, RPMA_CONN_CFG_DEFAULT_Q_SIZE);
	atomic_init(&cfg->rq_size, RPMA_CONN_CFG_DEFAULT_Q_SIZE);
	atomic_init(&cfg->shared_comp_channel, false);
	atomic_init(&cfg->srq, NULL);
	atomic_init(&cfg->gpspm, false);
	atomic_init(&cfg->polled, false);
	*cfg_ptr = cfg;
	return 0;
}

int
rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr)
{
	if (cfg_ptr == NULL)
		return RPMA_E_INVAL;
	free(*cfg_ptr);
	*cfg_ptr = NULL;
	return 0;
}

int
rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms)
{
	if (cfg == NULL || timeout_ms < 0)
		return RPMA_E_INVAL;
	atomic_store(&cfg->timeout_ms, timeout_ms);
	return 0;
}

int
rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms)
{
	if (cfg == NULL || timeout_ms == NULL)
		return RPMA_E_INVAL;
	*timeout_ms = CFG_LOAD(cfg, timeout_ms);
	return 0;
}

/* the four queue sizes share one shape */
#define QUEUE_SIZE_ACCESSORS(name) \
int \
rpma_conn_cfg_set_##name(struct rpma_conn_cfg *cfg, uint32_t name) \
{ \
	if (cfg == NULL) \
		return RPMA_E_INVAL; \
	atomic_store(&cfg->name, name); \
	return 0; \
} \
int \
rpma_conn_cfg_get_##name(const struct rpma_conn_cfg *cfg, uint32_t *name) \
{ \
	if (cfg == NULL || name == NULL) \
		return RPMA_E_INVAL; \
	*name = CFG_LOAD(cfg, name); \
	return 0; \
}

QUEUE_SIZE_ACCESSORS(cq_size)
QUEUE_SIZE_ACCESSORS(rcq_size)
QUEUE_SIZE_ACCESSORS(sq_size)
QUEUE_SIZE_ACCESSORS(rq_size)

int
rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&cfg->shared_comp_channel, shared);
	return 0;
}

int
rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared)
{
	if (cfg == NULL || shared == NULL)
		return RPMA_E_INVAL;
	*shared = CFG_LOAD(cfg, shared_comp_channel);
	return 0;
}

/* srq == NULL detaches a previously set SRQ (librpma refuses it) */
int
rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&cfg->srq, srq);
	return 0;
}

int
rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr)
{
	if (cfg == NULL || srq_ptr == NULL)
		return RPMA_E_INVAL;
	*srq_ptr = CFG_LOAD(cfg, srq);
	return 0;
}

int
rpma_ext_conn_cfg_set_gpspm(struct rpma_conn_cfg *cfg, bool enable)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&cfg->gpspm, enable);
	return 0;
}

int
rpma_ext_conn_cfg_get_gpspm(const struct rpma_conn_cfg *cfg, bool *enable)
{
	if (cfg == NULL || enable == NULL)
		return RPMA_E_INVAL;
	*enable = CFG_LOAD(cfg, gpspm);
	return 0;
}

int
rpma_ext_conn_cfg_set_polled(struct rpma_conn_cfg *cfg, bool polled)
{
	if (cfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&cfg->polled, polled);
	return 0;
}

int
rpma_ext_conn_cfg_get_polled(const struct rpma_conn_cfg *cfg, bool *polled)
{
	if (cfg == NULL || polled == NULL)
		return RPMA_E_INVAL;
	*polled = CFG_LOAD(cfg, polled);
	return 0;
}
