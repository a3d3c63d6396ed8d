/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_pmem.c -- the pmem backend: a file on a DAX filesystem or a
 * device-dax node mapped with libpmem2.  persist is libpmem2's persist
 * function for the mapping: a CPU cache flush on DAX, msync where the
 * mapping only has page granularity (an ordinary file).
 *
 * Only device-dax is registrable: long-term pins of file mappings are
 * refused (fsdax without ODP; page cache since Linux 6.5).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errormsg.h"
#include "mem.h"

struct pmem_data {
	int fd;
	struct pmem2_map *map;
	pmem2_persist_fn persist;
};

static int
pmem_persist(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	struct pmem_data *pd = mem->backend_data;

	pd->persist(addr, len);
	return 0;
}

static void
pmem_close(struct rpma_ext_mem *mem)
{
	struct pmem_data *pd = mem->backend_data;

	pmem2_map_delete(&pd->map);
	close(pd->fd);
	free(pd);
}

static const struct rpma_mem_ops pmem_ops = {
	.persist = pmem_persist,
	.close = pmem_close,
};

int
rpma_mem_open_pmem(struct rpma_ext_mem *mem, const char *path, size_t size,
		unsigned flags)
{
	struct pmem2_source *src = NULL;
	struct pmem2_config *cfg = NULL;
	struct pmem_data *pd;
	struct stat st;
	int ret = RPMA_E_PROVIDER;

	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate pmem backend state");
	pd->fd = open(path, O_RDWR | O_CLOEXEC |
			((flags & RPMA_EXT_MEM_CREATE) ? O_CREAT : 0), 0600);
	if (pd->fd < 0) {
		ret = rpma_fail(RPMA_E_INVAL, "cannot open %s: %s", path, strerror(errno));
		goto err_free;
	}
	if (fstat(pd->fd, &st) != 0) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot stat %s: %s", path, strerror(errno));
		goto err_close;
	}
	if (S_ISREG(st.st_mode) && size == 0 && st.st_size == 0) {
		ret = rpma_fail(RPMA_E_INVAL, "%s is empty and no size was given", path);
		goto err_close;
	}
	if (S_ISREG(st.st_mode) && size != 0 && (size_t)st.st_size < size) {
		if (!(flags & RPMA_EXT_MEM_CREATE)) {
			ret = rpma_fail(RPMA_E_INVAL, "%s holds %lld bytes, %zu needed",
				path, (long long)st.st_size, size);
			goto err_close;
		}
		if ((errno = posix_fallocate(pd->fd, 0, (off_t)size)) != 0) {
			ret = rpma_fail(RPMA_E_PROVIDER, "cannot size %s to %zu bytes: %s",
				path, size, strerror(errno));
			goto err_close;
		}
	}
	if (pmem2_source_from_fd(&src, pd->fd) || pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    (size && pmem2_config_set_length(cfg, size)) ||
	    pmem2_map_new(&pd->map, cfg, src)) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot map %s with libpmem2: %s",
			path, pmem2_errormsg());
		goto err_pmem2;
	}
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);

	pd->persist = pmem2_get_persist_fn(pd->map);
	mem->ops = &pmem_ops;
	mem->addr = pmem2_map_get_address(pd->map);
	mem->size = pmem2_map_get_size(pd->map);
	mem->registrable = S_ISCHR(st.st_mode);	/* device-dax */
	mem->durable = S_ISCHR(st.st_mode) || rpma_mem_fd_is_durable(pd->fd);
	mem->backend_data = pd;
	return 0;

err_pmem2:
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
err_close:
	close(pd->fd);
err_free:
	free(pd);
	return ret;
}
