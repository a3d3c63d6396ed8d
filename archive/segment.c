/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * segment.c -- the format of the archive's objects: a segment (records in
 * LSN order) and a base (a file's bytes), encoded and parsed totally.
 *
 * Every number is little-endian; every CRC is CRC-32C (crc.c, the
 * log's).  An object is a 96-byte header, then its body:
 *
 *   offset size  field
 *      0     8   magic, the ASCII bytes "RREPLARC"
 *      8     2   version: 1
 *     10     2   kind: 1 a segment, 2 a base
 *     12     4   flags: bit 0 the body is zstd (one or more frames); the
 *                other bits 0
 *     16    16   the cluster's uuid (the archive's cluster-uuid object)
 *     32     8   first LSN    a segment: its first and last record's,
 *     40     8   last LSN     1 <= first <= last; a base: both its LSN
 *     48     8   first time   milliseconds since the epoch: a segment's
 *     56     8   last time    first and last record's; a base's: both
 *                             when it was taken
 *     64     8   record count: a segment's, last - first + 1; a base: 0
 *     72     8   stored length: the body's bytes as stored, which follow
 *                the header to the object's end (at most 4 GiB)
 *     80     8   raw length: the body's bytes uncompressed (at most
 *                4 GiB); without zstd the stored length
 *     88     4   CRC of the stored body
 *     92     4   CRC of bytes 0..91 (the header up to here)
 *
 * A base's raw body is the file's bytes.  A segment's raw body is its
 * records back to back, each a 44-byte header and its payload:
 *
 *   offset size  field
 *      0     8   LSN: the header's first LSN, then each one more
 *      8     8   epoch
 *     16     8   client id
 *     24     8   time (ms): the first record's is the header's first
 *                time, the last one's its last time
 *     32     4   flags: bit 0 an epoch's start (ARCHIVE_REC_EPOCH_START,
 *                whose payload is empty); the other bits 0
 *     36     4   payload length (at most 1 GiB)
 *     40     4   CRC of the payload
 *     44   len   payload
 *
 * and nothing after the last record.  A reader checks the header's CRC
 * and fields, the body's length and CRC, decompresses to no more than
 * the raw length (a small body that would grow past it is refused as it
 * grows), and walks every record before it hands out the first one.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

static const uint8_t magic[8] = { 'R', 'R', 'E', 'P', 'L', 'A', 'R', 'C' };
#define FORMAT_VERSION 1

void
archive_hdr_encode(const struct archive_hdr *h, uint8_t out[ARCHIVE_HDR_SIZE])
{
	memcpy(out, magic, 8);
	out[8] = FORMAT_VERSION;
	out[9] = 0;
	out[10] = (uint8_t)h->kind;
	out[11] = 0;
	archive_put_le32(out + 12, h->flags);
	memcpy(out + 16, h->uuid, 16);
	archive_put_le64(out + 32, h->first_lsn);
	archive_put_le64(out + 40, h->last_lsn);
	archive_put_le64(out + 48, h->first_ms);
	archive_put_le64(out + 56, h->last_ms);
	archive_put_le64(out + 64, h->count);
	archive_put_le64(out + 72, h->stored_len);
	archive_put_le64(out + 80, h->raw_len);
	archive_put_le32(out + 88, h->body_crc);
	archive_put_le32(out + 92, archive_crc(out, 92));
}

int
archive_hdr_parse(const void *buf, size_t len, uint64_t size, const uint8_t *uuid,
		const char *what, struct archive_hdr *h, char *why, size_t whylen)
{
	const uint8_t *p = buf;
	uint32_t crc, kind, version;

	if (len < ARCHIVE_HDR_SIZE)
		return archive_fail(why, whylen, "%s: header: %zu bytes, not %d", what,
			len, ARCHIVE_HDR_SIZE);
	if (memcmp(p, magic, 8) != 0)
		return archive_fail(why, whylen, "%s: header: magic is not \"RREPLARC\"",
			what);
	version = (uint32_t)p[8] | (uint32_t)p[9] << 8;
	if (version != FORMAT_VERSION)
		return archive_fail(why, whylen, "%s: header: version %" PRIu32
			" (this build reads %d)", what, version, FORMAT_VERSION);
	crc = archive_crc(p, 92);
	if (crc != archive_get_le32(p + 92))
		return archive_fail(why, whylen, "%s: header: CRC 0x%08" PRIx32
			" of bytes 0..91 is not the stored 0x%08" PRIx32, what, crc,
			archive_get_le32(p + 92));
	kind = (uint32_t)p[10] | (uint32_t)p[11] << 8;
	if (kind != ARCHIVE_SEGMENT && kind != ARCHIVE_BASE)
		return archive_fail(why, whylen, "%s: header: kind %" PRIu32
			" (1: segment, 2: base)", what, kind);
	memset(h, 0, sizeof(*h));
	h->kind = (enum archive_kind)kind;
	h->flags = archive_get_le32(p + 12);
	memcpy(h->uuid, p + 16, 16);
	h->first_lsn = archive_get_le64(p + 32);
	h->last_lsn = archive_get_le64(p + 40);
	h->first_ms = archive_get_le64(p + 48);
	h->last_ms = archive_get_le64(p + 56);
	h->count = archive_get_le64(p + 64);
	h->stored_len = archive_get_le64(p + 72);
	h->raw_len = archive_get_le64(p + 80);
	h->body_crc = archive_get_le32(p + 88);

	if (h->flags & ~(uint32_t)ARCHIVE_FLAGS_KNOWN)
		return archive_fail(why, whylen, "%s: header: unknown flags 0x%" PRIx32,
			what, h->flags & ~(uint32_t)ARCHIVE_FLAGS_KNOWN);
	if (uuid != NULL && memcmp(uuid, h->uuid, 16) != 0)
		return archive_fail(why, whylen, "%s: header: cluster uuid is not the "
			"archive's (an object of another cluster)", what);
	if (h->kind == ARCHIVE_SEGMENT) {
		if (h->first_lsn == 0 || h->first_lsn > h->last_lsn)
			return archive_fail(why, whylen, "%s: header: LSNs %" PRIu64
				"..%" PRIu64 " are no range (first >= 1, first <= last)",
				what, h->first_lsn, h->last_lsn);
		if (h->count != h->last_lsn - h->first_lsn + 1 || h->count == 0)
			return archive_fail(why, whylen, "%s: header: record count %"
				PRIu64 " for LSNs %" PRIu64 "..%" PRIu64, what, h->count,
				h->first_lsn, h->last_lsn);
		if (h->count > h->raw_len / ARCHIVE_REC_HDR_SIZE)
			return archive_fail(why, whylen, "%s: header: %" PRIu64
				" records cannot fit a raw length of %" PRIu64, what,
				h->count, h->raw_len);
	} else {
		if (h->first_lsn != h->last_lsn || h->count != 0 ||
				h->first_ms != h->last_ms)
			return archive_fail(why, whylen, "%s: header: a base with LSNs %"
				PRIu64 "..%" PRIu64 ", %" PRIu64 " records, times %" PRIu64
				"..%" PRIu64 " (one LSN, no records, one time)", what,
				h->first_lsn, h->last_lsn, h->count, h->first_ms, h->last_ms);
	}
	if (h->stored_len > ARCHIVE_BODY_MAX || h->raw_len > ARCHIVE_BODY_MAX)
		return archive_fail(why, whylen, "%s: header: stored length %" PRIu64
			", raw length %" PRIu64 ": more than 4 GiB", what, h->stored_len,
			h->raw_len);
	if (size < ARCHIVE_HDR_SIZE || h->stored_len != size - ARCHIVE_HDR_SIZE)
		return archive_fail(why, whylen, "%s: stored length %" PRIu64 " but the "
			"object has %" PRIu64 " bytes after its header (truncated or "
			"grown)", what, h->stored_len,
			size < ARCHIVE_HDR_SIZE ? 0 : size - ARCHIVE_HDR_SIZE);
	if (!(h->flags & ARCHIVE_FLAG_ZSTD) && h->raw_len != h->stored_len)
		return archive_fail(why, whylen, "%s: header: raw length %" PRIu64
			" of a body stored as is of %" PRIu64 " bytes", what, h->raw_len,
			h->stored_len);
	return 0;
}

void
archive_rec_encode(uint8_t out[ARCHIVE_REC_HDR_SIZE], uint64_t lsn, uint64_t epoch,
		uint64_t client_id, uint64_t time_ms, uint32_t flags, uint32_t len,
		uint32_t crc)
{
	archive_put_le64(out, lsn);
	archive_put_le64(out + 8, epoch);
	archive_put_le64(out + 16, client_id);
	archive_put_le64(out + 24, time_ms);
	archive_put_le32(out + 32, flags);
	archive_put_le32(out + 36, len);
	archive_put_le32(out + 40, crc);
}

static void
rec_decode(const uint8_t *p, struct archive_record *r, uint32_t *crc)
{
	r->lsn = archive_get_le64(p);
	r->epoch = archive_get_le64(p + 8);
	r->client_id = archive_get_le64(p + 16);
	r->time_ms = archive_get_le64(p + 24);
	r->flags = archive_get_le32(p + 32);
	r->len = archive_get_le32(p + 36);
	*crc = archive_get_le32(p + 40);
	r->data = p + ARCHIVE_REC_HDR_SIZE;
}

/* every record of a segment's raw body checked, none given out */
static int
records_check(const struct archive_hdr *h, const uint8_t *raw, const char *what,
		char *why, size_t whylen)
{
	uint64_t off = 0, i;
	struct archive_record r;
	uint32_t crc;

	for (i = 0; i < h->count; i++) {
		uint64_t lsn = h->first_lsn + i;

		if (h->raw_len - off < ARCHIVE_REC_HDR_SIZE)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				" at body offset %" PRIu64 ": header cut at the body's end",
				what, lsn, off);
		rec_decode(raw + off, &r, &crc);
		if (r.lsn != lsn)
			return archive_fail(why, whylen, "%s: record at body offset %"
				PRIu64 ": LSN %" PRIu64 ", not the next %" PRIu64, what, off,
				r.lsn, lsn);
		if (r.flags & ~(unsigned)ARCHIVE_REC_FLAGS_KNOWN)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": unknown flags 0x%x", what, lsn, r.flags);
		if ((r.flags & ARCHIVE_REC_EPOCH_START) && r.len != 0)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": an epoch's start with a payload of %zu bytes", what, lsn,
				r.len);
		if (r.len > ARCHIVE_REC_MAX)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": length %zu exceeds 1 GiB", what, lsn, r.len);
		off += ARCHIVE_REC_HDR_SIZE;
		if (r.len > h->raw_len - off)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": length %zu past the body's end (%" PRIu64 " left)", what,
				lsn, r.len, h->raw_len - off);
		if (archive_crc(r.data, r.len) != crc)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": payload CRC mismatch", what, lsn);
		if (i == 0 && r.time_ms != h->first_ms)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": time %" PRIu64 " is not the header's first time %" PRIu64,
				what, lsn, r.time_ms, h->first_ms);
		if (i == h->count - 1 && r.time_ms != h->last_ms)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": time %" PRIu64 " is not the header's last time %" PRIu64,
				what, lsn, r.time_ms, h->last_ms);
		off += r.len;
	}
	if (off != h->raw_len)
		return archive_fail(why, whylen, "%s: %" PRIu64 " bytes after the last "
			"record (LSN %" PRIu64 ")", what, h->raw_len - off, h->last_lsn);
	return 0;
}

int
archive_object_parse(const void *buf, size_t len, enum archive_kind kind,
		const uint8_t *uuid, const struct archive_object *named, const char *what,
		struct archive_hdr *h, const void **raw, void **owned, char *why,
		size_t whylen)
{
	const uint8_t *body = (const uint8_t *)buf + ARCHIVE_HDR_SIZE;
	uint32_t crc;
	void *dec = NULL;

	*raw = NULL;
	*owned = NULL;
	if (archive_hdr_parse(buf, len, len, uuid, what, h, why, whylen) != 0)
		return -1;
	if (h->kind != kind)
		return archive_fail(why, whylen, "%s: header: kind %d where a %s is named",
			what, (int)h->kind, kind == ARCHIVE_SEGMENT ? "segment" : "base");
	if (named != NULL && (h->first_lsn != named->first_lsn ||
			h->last_lsn != named->last_lsn))
		return archive_fail(why, whylen, "%s: header: LSNs %" PRIu64 "..%" PRIu64
			", not what its name says", what, h->first_lsn, h->last_lsn);
	crc = archive_crc(body, (size_t)h->stored_len);
	if (crc != h->body_crc)
		return archive_fail(why, whylen, "%s: body: CRC 0x%08" PRIx32
			" is not the header's 0x%08" PRIx32, what, crc, h->body_crc);
	if (h->flags & ARCHIVE_FLAG_ZSTD) {
		if (archive_zstd_decompress(body, (size_t)h->stored_len, h->raw_len, &dec,
				what, why, whylen) != 0)
			return -1;
		*raw = dec;
	} else {
		*raw = body;
	}
	if (h->kind == ARCHIVE_SEGMENT &&
			records_check(h, *raw, what, why, whylen) != 0) {
		free(dec);
		*raw = NULL;
		return -1;
	}
	*owned = dec;
	return 0;
}

int
archive_segment_records(const struct archive_hdr *h, const void *raw,
		archive_record_fn *cb, void *arg, const char *what, char *why,
		size_t whylen)
{
	const uint8_t *p = raw;
	struct archive_record r;
	uint32_t crc;
	int rc;

	for (uint64_t i = 0; i < h->count; i++) {
		rec_decode(p, &r, &crc);
		rc = cb(arg, &r);
		if (rc == 1)
			return 1;
		if (rc != 0)
			return archive_fail(why, whylen, "%s: record of LSN %" PRIu64
				": refused by the reader", what, r.lsn);
		p += ARCHIVE_REC_HDR_SIZE + r.len;
	}
	return 0;
}
