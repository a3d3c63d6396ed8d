/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_probe.c -- what a medium holds, read without opening it as a log
 * (wal.c's top comment has the format): a valid log, a blank medium, a
 * damaged log or something else; and the cluster a log belongs to.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "log/wal_internal.h"
#include "common/errors.h"

static bool
all_zero(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

enum wal_probe
wal_probe(struct rpma_ext_mem *mem)
{
	struct wal_hdr a, b;
	size_t size;
	char *base;

	if (wal_region(mem, &base, &size))
		return WAL_PROBE_FOREIGN;	/* too small to be a log */
	memcpy(&a, base, sizeof(a));
	memcpy(&b, base + HDR_COPY_SIZE, sizeof(b));
	if (wal_hdr_check(&a, size, NULL) || wal_hdr_check(&b, size, NULL) ||
	    wal_hdr_from_v1(&a, size) || wal_hdr_from_v1(&b, size))
		return WAL_PROBE_VALID;
	if (all_zero(base, RING_OFF))
		return WAL_PROBE_BLANK;
	if (memcmp(a.magic, wal_magic, sizeof(a.magic)) == 0 ||
	    memcmp(b.magic, wal_magic, sizeof(b.magic)) == 0)
		return WAL_PROBE_DAMAGED;
	return WAL_PROBE_FOREIGN;
}

int
wal_cluster_of(struct rpma_ext_mem *mem, uint8_t uuid[16])
{
	struct wal_hdr a, b;
	size_t size;
	char *base;
	bool va, vb;
	int ret;

	if ((ret = wal_hdrs_read(mem, &base, &size, &a, &b, &va, &vb)))
		return ret;
	/* the copy wal_open() picks */
	memcpy(uuid, wal_hdr_pick(&a, &b, va, vb) == 0 ? a.cluster_uuid :
		b.cluster_uuid, 16);
	return 0;
}
