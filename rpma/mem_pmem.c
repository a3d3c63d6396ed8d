/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mem_pmem.c -- the pmem backend: a file on a DAX filesystem or a
 * device-dax node mapped with libpmem2.  persist is libpmem2's persist
 * function for the mapping: a CPU cache flush on DAX, msync where the
 * mapping only has page granularity (an ordinary file).
 *
 * memcpy uses PMEM2_F_MEM_NOFLUSH: ordinary (temporal) stores, no flush
 * and no msync, so the bytes sit in the CPU cache or page cache until a
 * persist over the range flushes and drains them (or msyncs the pages).
 *
 * Open also reads the device's unsafe shutdown count, id and bad blocks;
 * none of it is an error when libpmem2 cannot tell (an ordinary file).
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
#include "log.h"
#include "mem.h"

struct pmem_data {
	int fd;
	struct pmem2_map *map;
	pmem2_persist_fn persist;
	pmem2_memcpy_fn memcpy_fn;
};

static int
pmem_persist(struct rpma_ext_mem *mem, char *addr, size_t len)
{
	struct pmem_data *pd = mem->backend_data;

	pd->persist(addr, len);
	return 0;
}

static void
pmem_memcpy(struct rpma_ext_mem *mem, char *dst, const void *src, size_t len)
{
	struct pmem_data *pd = mem->backend_data;

	pd->memcpy_fn(dst, src, len, PMEM2_F_MEM_NOFLUSH);
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
	.memcpy = pmem_memcpy,
	.close = pmem_close,
};

/* bad blocks of the source overlapping [0, map_len): 0 known, -1 not */
static int
count_badblocks(const struct pmem2_source *src, size_t map_len,
		uint64_t *count, uint64_t *bytes)
{
	struct pmem2_badblock_context *bbctx = NULL;
	struct pmem2_badblock bb;
	int ret;

	*count = 0;
	*bytes = 0;
	if (pmem2_badblock_context_new(&bbctx, src) != 0)
		return -1;
	while ((ret = pmem2_badblock_next(bbctx, &bb)) == 0) {
		size_t n = rpma_mem_badblock_overlap(bb.offset, bb.length, map_len);

		if (n > 0) {
			(*count)++;
			*bytes += n;
		}
	}
	pmem2_badblock_context_delete(&bbctx);
	if (ret != PMEM2_E_NO_BAD_BLOCK_FOUND) {
		*count = 0;
		*bytes = 0;
		return -1;
	}
	return 0;
}

static void
read_health(struct rpma_ext_mem_health *h, const struct pmem2_source *src,
		size_t map_len, const char *path)
{
	size_t id_len = 0;
	uint64_t usc;

	memset(h, 0, sizeof(*h));
	/*
	 * This fails unless an nd region backs the source, e.g. on a file of
	 * a disk filesystem; badblock_context_new would succeed there and
	 * report no bad block, which would claim knowledge we do not have.
	 */
	if (pmem2_source_device_id(src, NULL, &id_len) != 0)
		return;

	/* an emulated region has no NVDIMM: an empty id, no count to sum */
	if (id_len > 1) {
		size_t cap = sizeof(h->device_id);

		/* an id that does not fit stays unknown: a prefix could match
		 * another set of NVDIMMs */
		if (id_len <= cap &&
		    pmem2_source_device_id(src, h->device_id, &cap) == 0)
			h->device_id_known = 1;
		else
			memset(h->device_id, 0, sizeof(h->device_id));
		h->device_id[sizeof(h->device_id) - 1] = '\0';
		if (pmem2_source_device_usc(src, &usc) == 0) {
			h->usc = usc;
			h->usc_known = 1;
		}
	}

	if (count_badblocks(src, map_len, &h->badblocks, &h->badblock_bytes) == 0)
		h->badblocks_known = 1;
	if (h->badblocks > 0)
		RPMA_LOG_WARNING("%s: %llu bad block(s), %llu bytes, in the mapping: "
			"reading them raises SIGBUS", path,
			(unsigned long long)h->badblocks,
			(unsigned long long)h->badblock_bytes);
}

int
rpma_mem_open_pmem(struct rpma_ext_mem *mem, const char *path, size_t size,
		unsigned flags)
{
	struct pmem2_source *src = NULL;
	struct pmem2_config *cfg = NULL;
	struct pmem_data *pd;
	struct stat st;
	bool created, touched;
	size_t old_size = 0;	/* the file's size before: what a failure leaves */
	int ret = RPMA_E_PROVIDER;

	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot allocate pmem backend state");
	pd->fd = rpma_mem_file_open(path, flags, &created);
	if (pd->fd < 0) {
		ret = pd->fd;
		goto err_free;
	}
	touched = created;
	if (fstat(pd->fd, &st) != 0) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot stat %s: %s", path, strerror(errno));
		goto err_undo;
	}
	old_size = (size_t)st.st_size;
	if (S_ISREG(st.st_mode) && size == 0 && st.st_size == 0) {
		ret = rpma_fail(RPMA_E_INVAL, "%s is empty and no size was given", path);
		goto err_undo;
	}
	if (S_ISREG(st.st_mode) && size != 0 && old_size < size) {
		if (!(flags & RPMA_EXT_MEM_CREATE)) {
			ret = rpma_fail(RPMA_E_INVAL, "%s holds %lld bytes, %zu needed",
				path, (long long)st.st_size, size);
			goto err_close;
		}
		/* a DAX mapping's first store to an unwritten block converts it */
		touched = true;
		ret = rpma_mem_file_extend(pd->fd, path, old_size, size);
		if (ret)
			goto err_undo;
	}
	if (pmem2_source_from_fd(&src, pd->fd) || pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    (size && pmem2_config_set_length(cfg, size)) ||
	    pmem2_map_new(&pd->map, cfg, src)) {
		ret = rpma_fail(RPMA_E_PROVIDER, "cannot map %s with libpmem2: %s",
			path, pmem2_errormsg());
		goto err_pmem2;
	}
	pd->persist = pmem2_get_persist_fn(pd->map);
	pd->memcpy_fn = pmem2_get_memcpy_fn(pd->map);
	mem->ops = &pmem_ops;
	mem->addr = pmem2_map_get_address(pd->map);
	mem->size = pmem2_map_get_size(pd->map);
	read_health(&mem->health, src, mem->size, path);
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	mem->registrable = S_ISCHR(st.st_mode);	/* device-dax */
	mem->durable = S_ISCHR(st.st_mode) || rpma_mem_fd_is_durable(pd->fd);
	mem->backend_data = pd;
	return 0;

err_pmem2:
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
err_undo:
	/* a failed open leaves no file it made, and none it extended */
	if (touched)
		rpma_mem_file_undo(pd->fd, path, created, old_size);
err_close:
	close(pd->fd);
err_free:
	free(pd);
	return ret;
}
