/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: replvfs's transaction records (sqlite/txn_record.c)
 * from arbitrary bytes, as a log or a peer may hold them.  Besides "no
 * crash": a record refused leaves a zeroed header and a reason; one
 * accepted has frames that fill it exactly, each with a page number from
 * 1, and its header (48 bytes in version 1, 56 in version 2, with a
 * commit time) written again is the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "txn_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct txn_hdr h;
	uint8_t hdr[TXN_HDR_SIZE];
	char why[160] = "";

	if (!txn_record_parse(data, size, &h, why, sizeof(why))) {
		CHECK(why[0] != '\0' && h.n_frames == 0 && h.page_size == 0);
		return 0;
	}
	CHECK(h.version == 1 || h.version == 2);
	CHECK((h.version == 1) == (h.commit_ms == 0));
	CHECK(txn_record_len_v(h.version, h.n_frames, h.page_size) == size);
	CHECK(txn_hdr_encode(&h, hdr) &&
		memcmp(hdr, data, txn_hdr_size(h.version)) == 0);
	for (uint32_t i = 0; i < h.n_frames; i++) {
		uint32_t pgno;
		const uint8_t *page;

		txn_frame(data, &h, i, &pgno, &page);
		CHECK(pgno >= 1 && page + h.page_size <= data + size);
	}
	return 0;
}
