/* SPDX-License-Identifier: BSD-3-Clause */
/* txn_record.c -- a committed SQLite transaction as a librepl record */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "txn_record.h"

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* what a header must say, whatever its frames: NULL, or what is wrong */
static const char *
hdr_wrong(const struct txn_hdr *h)
{
	if (h->version != 1 && h->version != 2)
		return "version (neither 1 nor 2)";
	if (h->version == 1 ? h->commit_ms != 0 : h->commit_ms == 0)
		return "commit_ms (0 in version 2; version 1 has none)";
	if (h->flags & ~TXN_F_KNOWN)
		return "flags (an unknown bit)";
	if (h->page_size < TXN_PAGE_MIN || h->page_size > TXN_PAGE_MAX ||
	    (h->page_size & (h->page_size - 1)) != 0)
		return "page_size (not a power of two from 512 to 65536)";
	if (h->n_frames == 0 || h->n_frames > TXN_FRAMES_MAX)
		return "n_frames (0, or above the most a record holds)";
	if (h->first_frame == 0)
		return "first_frame (0: WAL frames count from 1)";
	if ((h->flags & TXN_F_LAST) ? h->db_size == 0 : h->db_size != 0)
		return "db_size (set on the last part only, and never 0 there)";
	return NULL;
}

bool
txn_hdr_encode(const struct txn_hdr *h, uint8_t out[TXN_HDR_SIZE])
{
	if (hdr_wrong(h) != NULL)
		return false;
	memcpy(out, TXN_MAGIC, 4);
	put16(out + 4, h->version);
	put16(out + 6, h->flags);
	memcpy(out + 8, h->db_uuid, 16);
	put32(out + 24, h->page_size);
	put32(out + 28, h->n_frames);
	put32(out + 32, h->wal_salt1);
	put32(out + 36, h->wal_salt2);
	put32(out + 40, h->first_frame);
	put32(out + 44, h->db_size);
	if (h->version == 2)
		put64(out + 48, h->commit_ms);
	return true;
}

void
txn_pgno_encode(uint32_t pgno, uint8_t out[TXN_FRAME_HDR_SIZE])
{
	put32(out, pgno);
}

bool
txn_record_parse(const void *buf, size_t len, struct txn_hdr *h, char *why,
		size_t whylen)
{
	const uint8_t *p = buf;
	const char *wrong;

	memset(h, 0, sizeof(*h));
	if (buf == NULL || len < TXN_HDR_SIZE_V1) {
		snprintf(why, whylen, "a transaction record of %zu bytes: shorter than "
			"a header (%d bytes)", len, TXN_HDR_SIZE_V1);
		return false;
	}
	if (memcmp(p, TXN_MAGIC, 4) != 0) {
		snprintf(why, whylen, "not a transaction record (no \"RSQL\" magic)");
		return false;
	}
	h->version = get16(p + 4);
	h->flags = get16(p + 6);
	memcpy(h->db_uuid, p + 8, 16);
	h->page_size = get32(p + 24);
	h->n_frames = get32(p + 28);
	h->wal_salt1 = get32(p + 32);
	h->wal_salt2 = get32(p + 36);
	h->first_frame = get32(p + 40);
	h->db_size = get32(p + 44);
	if (h->version == 2 && len < TXN_HDR_SIZE) {
		snprintf(why, whylen, "a version 2 transaction record of %zu bytes: "
			"shorter than its %d-byte header", len, TXN_HDR_SIZE);
		memset(h, 0, sizeof(*h));
		return false;
	}
	if (h->version == 2)
		h->commit_ms = get64(p + 48);
	if ((wrong = hdr_wrong(h)) != NULL) {
		snprintf(why, whylen, "a transaction record with a bad %s", wrong);
		memset(h, 0, sizeof(*h));
		return false;
	}
	if ((uint64_t)len != txn_record_len_v(h->version, h->n_frames, h->page_size)) {
		snprintf(why, whylen, "a transaction record of %zu bytes: %u frames of "
			"%u-byte pages make %llu", len, h->n_frames, h->page_size,
			(unsigned long long)txn_record_len_v(h->version, h->n_frames,
				h->page_size));
		memset(h, 0, sizeof(*h));
		return false;
	}
	if (UINT32_MAX - h->first_frame < h->n_frames - 1) {
		snprintf(why, whylen, "a transaction record whose frames pass the "
			"last WAL frame index");
		memset(h, 0, sizeof(*h));
		return false;
	}
	for (uint32_t i = 0; i < h->n_frames; i++) {
		uint32_t pgno = get32(p + txn_hdr_size(h->version) +
			(size_t)i * (TXN_FRAME_HDR_SIZE + h->page_size));

		if (pgno == 0) {
			snprintf(why, whylen, "a transaction record whose frame %u has "
				"page number 0", i);
			memset(h, 0, sizeof(*h));
			return false;
		}
	}
	return true;
}

void
txn_frame(const void *buf, const struct txn_hdr *h, uint32_t i, uint32_t *pgno,
		const uint8_t **page)
{
	const uint8_t *f = (const uint8_t *)buf + txn_hdr_size(h->version) +
		(size_t)i * (TXN_FRAME_HDR_SIZE + h->page_size);

	*pgno = get32(f);
	*page = f + TXN_FRAME_HDR_SIZE;
}
