/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.c -- rpma_peer_cfg and its 1-byte descriptor.
 *
 * Descriptor (librpma-compatible): one byte, 0 or 1, direct_write_to_pmem.
 * It is untrusted input that decides whether a remote flush may be claimed
 * persistent, so decoding is strict: exactly one byte, value 0 or 1.
 */
#include "config.h"

#include <stdlib.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "peer_cfg.h"

#define PEER_CFG_DESC_SIZE 1

int
rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr)
{
	struct rpma_peer_cfg *cfg;

	if (pcfg_ptr == NULL)
		return RPMA_E_INVAL;
	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a peer configuration");
	atomic_init(&cfg->direct_write_to_pmem, false);
	*pcfg_ptr = cfg;
	return 0;
}

int
rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr)
{
	if (pcfg_ptr == NULL)
		return RPMA_E_INVAL;
	free(*pcfg_ptr);
	*pcfg_ptr = NULL;
	return 0;
}

int
rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg,
		bool supported)
{
	if (pcfg == NULL)
		return RPMA_E_INVAL;
	atomic_store(&pcfg->direct_write_to_pmem, supported);
	return 0;
}

int
rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg,
		bool *supported)
{
	if (pcfg == NULL || supported == NULL)
		return RPMA_E_INVAL;
	*supported = atomic_load(&((struct rpma_peer_cfg *)pcfg)->direct_write_to_pmem);
	return 0;
}

int
rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc)
{
	bool dw;

	if (pcfg == NULL || desc == NULL)
		return RPMA_E_INVAL;
	dw = atomic_load(&((struct rpma_peer_cfg *)pcfg)->direct_write_to_pmem);
	*(unsigned char *)desc = dw ? 1 : 0;
	return 0;
}

int
rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg,
		size_t *desc_size)
{
	if (pcfg == NULL || desc_size == NULL)
		return RPMA_E_INVAL;
	*desc_size = PEER_CFG_DESC_SIZE;
	return 0;
}

int
rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_peer_cfg **pcfg_ptr)
{
	struct rpma_peer_cfg *cfg;
	unsigned char value;
	int ret;

	if (desc == NULL || pcfg_ptr == NULL)
		return rpma_fail(RPMA_E_INVAL, "desc or pcfg_ptr is NULL");
	if (desc_size != PEER_CFG_DESC_SIZE)
		return rpma_fail(RPMA_E_INVAL,
			"peer configuration descriptor is %zu bytes, not %d",
			desc_size, PEER_CFG_DESC_SIZE);
	value = *(const unsigned char *)desc;
	if (value > 1)
		return rpma_fail(RPMA_E_INVAL,
			"peer configuration descriptor byte is 0x%02x, not 0 or 1",
			value);

	ret = rpma_peer_cfg_new(&cfg);
	if (ret)
		return ret;
	atomic_store(&cfg->direct_write_to_pmem, value == 1);
	*pcfg_ptr = cfg;
	return 0;
}
