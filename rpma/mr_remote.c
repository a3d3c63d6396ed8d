/* SPDX-License-Identifier: BSD-3-Clause */
/* mr_remote.c -- rpma_mr_remote: built only from a validated descriptor */
#include "config.h"

#include <stdlib.h>

#include "errormsg.h"
#include "fault_injection.h"
#include "mr_remote.h"

int
rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
		struct rpma_mr_remote **mr_ptr)
{
	struct rpma_mr_desc d;
	struct rpma_mr_remote *mr;
	int ret;

	if (desc == NULL || mr_ptr == NULL)
		return rpma_fail(RPMA_E_INVAL, "desc or mr_ptr is NULL");

	ret = rpma_mr_desc_decode(desc, desc_size, &d);
	if (ret)
		return ret;

	RPMA_FAULT_INJECTION(rpma_fail(RPMA_E_NOMEM, "injected allocation failure"), {});
	mr = malloc(sizeof(*mr));
	if (mr == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate a remote region");
	mr->desc = d;
	*mr_ptr = mr;
	return 0;
}

int
rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr)
{
	if (mr_ptr == NULL)
		return RPMA_E_INVAL;
	free(*mr_ptr);
	*mr_ptr = NULL;
	return 0;
}

int
rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size)
{
	if (mr == NULL || size == NULL)
		return RPMA_E_INVAL;
	if (mr->desc.size > SIZE_MAX)
		return rpma_fail(RPMA_E_NOSUPP, "region size does not fit size_t");
	*size = (size_t)mr->desc.size;
	return 0;
}

int
rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type)
{
	if (mr == NULL || flush_type == NULL)
		return RPMA_E_INVAL;
	*flush_type = mr->desc.usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	return 0;
}

int
rpma_ext_mr_remote_get_usage(const struct rpma_mr_remote *mr, int *usage)
{
	if (mr == NULL || usage == NULL)
		return RPMA_E_INVAL;
	*usage = mr->desc.usage;
	return 0;
}

int
rpma_ext_mr_remote_get_transport(const struct rpma_mr_remote *mr,
		enum rpma_ext_transport *transport)
{
	if (mr == NULL || transport == NULL)
		return RPMA_E_INVAL;
	*transport = mr->desc.transport;
	return 0;
}
