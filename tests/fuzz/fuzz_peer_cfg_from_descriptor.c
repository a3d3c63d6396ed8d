/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: rpma_peer_cfg_from_descriptor on arbitrary bytes.
 * Only the exact 1-byte descriptors 0x00 and 0x01 may be accepted, and an
 * accepted one must re-serialise to the same byte.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int marker;
	struct rpma_peer_cfg *pcfg = (struct rpma_peer_cfg *)&marker;
	unsigned char *buf = malloc(size ? size : 1);
	int ret;

	CHECK(buf != NULL);
	memcpy(buf, data, size);
	ret = rpma_peer_cfg_from_descriptor(buf, size, &pcfg);
	if (size == 1 && buf[0] <= 1) {
		unsigned char out = 0xAA;
		bool dw;

		CHECK(ret == 0);
		CHECK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw) == 0);
		CHECK(dw == (buf[0] == 1));
		CHECK(rpma_peer_cfg_get_descriptor(pcfg, &out) == 0 && out == buf[0]);
		CHECK(rpma_peer_cfg_delete(&pcfg) == 0 && pcfg == NULL);
	} else {
		CHECK(ret == RPMA_E_INVAL);
		CHECK(pcfg == (struct rpma_peer_cfg *)&marker);
	}
	free(buf);
	return 0;
}
