/* SPDX-License-Identifier: BSD-3-Clause */
/* bench_floor.c -- the medium's floor (bench_floor.h), on the core's memory */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_floor.h"
#include "bench_util.h"

/* ---------------------------------------------------------------- */
/* copy + persist                                                   */

int
bench_copy_persist(enum rpma_ext_mem_backend backend, const char *path,
		size_t region_size, size_t size, long slots, long ops,
		uint64_t *lat, uint64_t *total_ns, bool *durable)
{
	struct rpma_ext_mem *mem = NULL;
	char *buf = malloc(size), *ptr;
	uint64_t t0;
	int ret = 0;

	if (buf == NULL) {
		bench_say("out of memory");
		return -1;
	}
	memset(buf, 0x5a, size);
	if (rpma_ext_mem_open(backend, path, region_size, RPMA_EXT_MEM_CREATE, &mem)) {
		bench_say("%s: %s", path, rpma_ext_errormsg());
		unlink(path);
		free(buf);
		return -1;
	}
	rpma_ext_mem_get_ptr(mem, (void **)&ptr);
	rpma_ext_mem_is_durable(mem, durable);
	t0 = bench_now_ns();
	for (long i = 0; i < ops; i++) {
		size_t off = (size_t)(i % slots) * size;
		uint64_t t = bench_now_ns();

		memcpy(ptr + off, buf, size);
		if (rpma_ext_mem_persist(mem, off, size)) {
			bench_say("persist: %s", rpma_ext_errormsg());
			ret = -1;
			break;
		}
		lat[i] = bench_now_ns() - t;
	}
	*total_ns = bench_now_ns() - t0;
	rpma_ext_mem_close(&mem);
	unlink(path);
	free(buf);
	return ret;
}
