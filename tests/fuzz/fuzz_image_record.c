/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: replvfs's image records (sqlite/image_record.c) from
 * arbitrary bytes, as a log may hold them.  Besides "no crash": a record
 * refused leaves a zeroed header and a reason; one accepted has pages that
 * fill it exactly, within the file's db_pages, and its header written
 * again is the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct img_hdr h;
	uint8_t hdr[IMG_HDR_SIZE];
	char why[160] = "";

	if (!image_record_parse(data, size, &h, why, sizeof(why))) {
		CHECK(why[0] != '\0' && h.page_size == 0 && h.base_lsn == 0);
		return 0;
	}
	CHECK(image_record_is(data, size));
	CHECK(image_record_len(h.n_pages, h.page_size) == size);
	CHECK(h.first_pgno >= 1 && h.base_lsn >= 1);
	CHECK(h.n_pages == 0 || h.first_pgno + (uint64_t)h.n_pages - 1 <= h.db_pages);
	CHECK(image_hdr_encode(&h, hdr) && memcmp(hdr, data, IMG_HDR_SIZE) == 0);
	if (h.n_pages > 0)
		CHECK(image_page(data, &h, h.n_pages - 1) + h.page_size == data + size);
	return 0;
}
