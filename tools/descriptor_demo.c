/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * descriptor_demo -- what one peer sends another so it may write into its
 * memory, and what the receiving side accepts: a memory-region descriptor in
 * both formats, decoded back, and three damaged copies refused with reasons.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "descriptor.h"
#include "rpma.h"

static void
hexdump(const char *label, const unsigned char *p, size_t n)
{
	printf("  %-22s", label);
	for (size_t i = 0; i < n; i++) {
		if (i && i % 16 == 0)
			printf("\n  %-22s", "");
		printf("%s%02x", (i % 16 == 8) ? "  " : " ", p[i]);
	}
	printf("\n");
}

static const char *
transport_name(enum rpma_ext_transport t)
{
	switch (t) {
	case RPMA_EXT_TRANSPORT_VERBS:	 return "verbs";
	case RPMA_EXT_TRANSPORT_OFI_TCP: return "ofi tcp";
	case RPMA_EXT_TRANSPORT_OFI_NET: return "ofi net";
	case RPMA_EXT_TRANSPORT_OFI_SHM: return "ofi shm";
	}
	return "?";
}

/* decode as a receiving peer would, and print what it learnt */
static int
receive(const char *what, const unsigned char *desc, size_t size)
{
	struct rpma_mr_remote *mr = NULL;
	enum rpma_ext_transport transport;
	size_t region;
	int flush, usage;
	int ret = rpma_mr_remote_from_descriptor(desc, size, &mr);

	if (ret) {
		printf("  %-22s refused: %s (%s)\n", what, rpma_err_2str(ret),
			rpma_ext_errormsg());
		return ret;
	}
	rpma_mr_remote_get_size(mr, &region);
	rpma_mr_remote_get_flush_type(mr, &flush);
	rpma_ext_mr_remote_get_usage(mr, &usage);
	rpma_ext_mr_remote_get_transport(mr, &transport);
	printf("  %-22s accepted: %zu bytes, usage 0x%02x, transport %s, flush %s\n",
		what, region, (unsigned)usage, transport_name(transport),
		(flush & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ? "persistent" :
		(flush & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) ? "visibility" : "none");
	rpma_mr_remote_delete(&mr);
	return 0;
}

int
main(void)
{
	/* a replica's 64 MiB ring, writable and persistently flushable */
	struct rpma_mr_desc ring = {
		.raddr = 0x7f3a40000000ull,
		.size = 64ull << 20,
		.key = 0x1c2d,
		.usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		.transport = RPMA_EXT_TRANSPORT_VERBS,
	};
	unsigned char v0[RPMA_EXT_MR_DESC_SIZE_V0], v1[RPMA_EXT_MR_DESC_SIZE_V1];
	unsigned char bad[RPMA_EXT_MR_DESC_SIZE_V1];
	int failures = 0;

	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);

	printf("A replica registers its ring: address 0x%llx, %llu MiB, key 0x%llx,\n"
		"usage WRITE_DST|FLUSH_TYPE_PERSISTENT. It sends the primary:\n\n",
		(unsigned long long)ring.raddr,
		(unsigned long long)(ring.size >> 20), (unsigned long long)ring.key);

	if (rpma_mr_desc_encode(&ring, RPMA_MR_DESC_FORMAT_0, v0) ||
	    rpma_mr_desc_encode(&ring, RPMA_MR_DESC_FORMAT_1, v1)) {
		fprintf(stderr, "descriptor_demo: encoding failed: %s\n",
			rpma_ext_errormsg());
		return 1;
	}
	hexdump("format 0 (21 bytes):", v0, sizeof(v0));
	hexdump("format 1 (40 bytes):", v1, sizeof(v1));

	printf("\nThe primary decodes them:\n");
	failures += receive("format 0:", v0, sizeof(v0)) != 0;
	failures += receive("format 1:", v1, sizeof(v1)) != 0;

	printf("\nDamaged in transit, they are refused:\n");
	memcpy(bad, v1, sizeof(bad));
	bad[26] ^= 0x04;	/* one bit of the size field */
	failures += receive("format 1, bit flip:", bad, sizeof(bad)) == 0;
	failures += receive("format 0, truncated:", v0, sizeof(v0) - 1) == 0;
	memset(bad, 0, sizeof(v0));
	bad[20] = RPMA_MR_USAGE_WRITE_DST;
	failures += receive("format 0, size 0:", bad, sizeof(v0)) == 0;

	printf("\n%s\n", failures ? "demo FAILED" : "demo OK");
	return failures ? 1 : 0;
}
