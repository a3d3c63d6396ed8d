/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_floor.h -- the medium's floor every benchmark result is set
 * against: a copy + persist on the core's persistence backend (rpma.h),
 * so a program using it links the core (librpmacore).  0, or -1 after
 * saying why on stderr.
 */
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpma.h"

/*
 * The medium's floor: ops times a memcpy of `size` bytes into a region of
 * region_size bytes at path, then one persist of that range; op i uses
 * slot i % slots.  The region is removed after; *durable tells the medium.
 */
int bench_copy_persist(enum rpma_ext_mem_backend backend, const char *path,
		size_t region_size, size_t size, long slots, long ops,
		uint64_t *lat, uint64_t *total_ns, bool *durable);

#endif
