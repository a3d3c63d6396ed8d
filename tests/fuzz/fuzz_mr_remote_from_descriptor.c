/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: rpma_mr_remote_from_descriptor on arbitrary bytes.
 *
 * The first input byte steers the rest: with bit 0 set and a 40-byte
 * remainder the target stamps the format-1 magic (bit 1: also version 1) and
 * a correct CRC, so the fuzzer reaches the checks behind the checksum.
 * Besides "no crash, no over-read", it checks what must hold:
 * - failure leaves *mr_ptr untouched and returns INVAL or NOSUPP only;
 * - success means the region is valid and re-encodes to the same bytes.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "descriptor.h"
#include "rpma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	struct rpma_mr_remote *mr = (struct rpma_mr_remote *)&quiet;
	unsigned char *buf;
	size_t len;
	int ret;

	if (!quiet) {
		rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
		quiet = 1;
		mr = (struct rpma_mr_remote *)&quiet;
	}
	if (size < 1)
		return 0;
	len = size - 1;
	/* an exact-size heap copy so ASan catches any over-read */
	buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	memcpy(buf, data + 1, len);

	if ((data[0] & 1) && len == RPMA_EXT_MR_DESC_SIZE_V1) {
		uint32_t crc;
		memcpy(buf, "RPMD", 4);
		if (data[0] & 2)
			buf[4] = 1;
		crc = rpma_crc32c(0, buf, 36);
		for (int i = 0; i < 4; i++)
			buf[36 + i] = (unsigned char)(crc >> (8 * i));
	}

	ret = rpma_mr_remote_from_descriptor(buf, len, &mr);
	if (ret != 0) {
		CHECK(ret == RPMA_E_INVAL || ret == RPMA_E_NOSUPP);
		CHECK(mr == (struct rpma_mr_remote *)&quiet);
		CHECK(rpma_ext_errormsg()[0] != '\0');
	} else {
		struct rpma_mr_desc d;
		unsigned char again[RPMA_EXT_MR_DESC_SIZE_V1];
		size_t region;
		int flush, usage;
		enum rpma_ext_transport transport;

		CHECK(rpma_mr_desc_decode(buf, len, &d) == 0);
		CHECK(d.usage != 0 && d.size != 0);
		CHECK(d.raddr <= UINT64_MAX - (d.size - 1));
		CHECK(rpma_mr_remote_get_size(mr, &region) == 0 && region == d.size);
		CHECK(rpma_mr_remote_get_flush_type(mr, &flush) == 0);
		CHECK(flush == (d.usage & 0x30));
		CHECK(rpma_ext_mr_remote_get_usage(mr, &usage) == 0 && usage == d.usage);
		CHECK(rpma_ext_mr_remote_get_transport(mr, &transport) == 0);
		CHECK(transport == d.transport);
		CHECK(rpma_mr_desc_encode(&d, len == RPMA_EXT_MR_DESC_SIZE_V0 ?
			RPMA_MR_DESC_FORMAT_0 : RPMA_MR_DESC_FORMAT_1, again) == 0);
		CHECK(memcmp(again, buf, len) == 0);
		CHECK(rpma_mr_remote_delete(&mr) == 0 && mr == NULL);
	}
	free(buf);
	return 0;
}
