/* SPDX-License-Identifier: BSD-3-Clause */
/* image_record.c -- a primary's database file as librepl records */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "image_record.h"

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

/* what a header must say, whatever its pages: NULL, or what is wrong */
static const char *
hdr_wrong(const struct img_hdr *h)
{
	if (h->version != IMG_VERSION)
		return "version";
	if (h->flags & ~IMG_F_KNOWN)
		return "flags (an unknown bit)";
	if (h->page_size < 512 || h->page_size > 65536 ||
	    (h->page_size & (h->page_size - 1)) != 0)
		return "page_size (not a power of two from 512 to 65536)";
	if (h->n_pages == 0 && h->flags != IMG_F_KNOWN)
		return "n_pages (0 outside an image of an empty file)";
	if (h->base_lsn == 0)
		return "base_lsn (0)";
	if (h->first_pgno == 0 || ((h->flags & IMG_F_FIRST) && h->first_pgno != 1))
		return "first_pgno (0, or not 1 in a first record)";
	if (h->n_pages > 0 && (uint64_t)h->first_pgno + h->n_pages - 1 > h->db_pages)
		return "first_pgno (its pages pass the file's db_pages)";
	return NULL;
}

bool
image_record_is(const void *buf, size_t len)
{
	return buf != NULL && len >= 4 && memcmp(buf, IMG_MAGIC, 4) == 0;
}

bool
image_hdr_encode(const struct img_hdr *h, uint8_t out[IMG_HDR_SIZE])
{
	if (hdr_wrong(h) != NULL)
		return false;
	memcpy(out, IMG_MAGIC, 4);
	out[4] = (uint8_t)h->version;
	out[5] = (uint8_t)(h->version >> 8);
	out[6] = (uint8_t)h->flags;
	out[7] = (uint8_t)(h->flags >> 8);
	memcpy(out + 8, h->db_uuid, 16);
	put32(out + 24, h->page_size);
	put32(out + 28, h->n_pages);
	put32(out + 32, (uint32_t)h->base_lsn);
	put32(out + 36, (uint32_t)(h->base_lsn >> 32));
	put32(out + 40, h->first_pgno);
	put32(out + 44, h->db_pages);
	return true;
}

bool
image_record_parse(const void *buf, size_t len, struct img_hdr *h, char *why,
		size_t whylen)
{
	const uint8_t *p = buf;
	const char *wrong;

	memset(h, 0, sizeof(*h));
	if (buf == NULL || len < IMG_HDR_SIZE) {
		snprintf(why, whylen, "an image record of %zu bytes: shorter than its "
			"%d-byte header", len, IMG_HDR_SIZE);
		return false;
	}
	if (memcmp(p, IMG_MAGIC, 4) != 0) {
		snprintf(why, whylen, "not an image record (no \"RSQI\" magic)");
		return false;
	}
	h->version = (uint16_t)(p[4] | p[5] << 8);
	h->flags = (uint16_t)(p[6] | p[7] << 8);
	memcpy(h->db_uuid, p + 8, 16);
	h->page_size = get32(p + 24);
	h->n_pages = get32(p + 28);
	h->base_lsn = get32(p + 32) | (uint64_t)get32(p + 36) << 32;
	h->first_pgno = get32(p + 40);
	h->db_pages = get32(p + 44);
	if ((wrong = hdr_wrong(h)) != NULL) {
		snprintf(why, whylen, "an image record with a bad %s", wrong);
		memset(h, 0, sizeof(*h));
		return false;
	}
	if ((uint64_t)len != image_record_len(h->n_pages, h->page_size)) {
		snprintf(why, whylen, "an image record of %zu bytes: %u pages of %u "
			"bytes make %llu", len, h->n_pages, h->page_size,
			(unsigned long long)image_record_len(h->n_pages, h->page_size));
		memset(h, 0, sizeof(*h));
		return false;
	}
	return true;
}
