/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the archive's objects (archive/segment.c) from
 * arbitrary bytes, as a target may hold them.  The first byte picks how
 * the rest is taken: bit 0 set, the object's magic, version, stored
 * length and CRCs (header, body, and each record's payload where the body
 * is stored as is) are made right first, so that the fuzzer spends its
 * time past them, in the records and in zstd; bit 1 set, the object must
 * be of a cluster other than the one it names.  Besides "no crash": an
 * object refused says why; one accepted gives exactly its records, in LSN
 * order, each within the body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

struct walk {
	const struct archive_hdr *h;
	const uint8_t *raw;
	uint64_t next, n;
};

static int
each(void *arg, const struct archive_record *r)
{
	struct walk *w = arg;
	const uint8_t *p = r->data;

	CHECK(r->lsn == w->next);
	CHECK(p >= w->raw && p + r->len <= w->raw + w->h->raw_len);
	CHECK(!(r->flags & ARCHIVE_REC_EPOCH_START) || r->len == 0);
	w->next++;
	w->n++;
	return 0;
}

/* magic, version, lengths and CRCs made right, as bit 0 asks */
static void
fix(uint8_t *p, size_t size)
{
	static const uint8_t magic[8] = { 'R', 'R', 'E', 'P', 'L', 'A', 'R', 'C' };
	uint64_t stored = size - ARCHIVE_HDR_SIZE, off = 0;
	uint8_t *body = p + ARCHIVE_HDR_SIZE;

	memcpy(p, magic, 8);
	p[8] = 1;
	p[9] = 0;
	archive_put_le64(p + 72, stored);
	if (!(archive_get_le32(p + 12) & ARCHIVE_FLAG_ZSTD)) {
		archive_put_le64(p + 80, stored);
		while (stored - off >= ARCHIVE_REC_HDR_SIZE) {
			uint64_t len = archive_get_le32(body + off + 36);

			if (len > stored - off - ARCHIVE_REC_HDR_SIZE)
				break;
			archive_put_le32(body + off + 40, archive_crc(body + off +
				ARCHIVE_REC_HDR_SIZE, (size_t)len));
			off += ARCHIVE_REC_HDR_SIZE + len;
		}
	}
	archive_put_le32(p + 88, archive_crc(body, (size_t)stored));
	archive_put_le32(p + 92, archive_crc(p, 92));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t other[16] = { 0xff };
	struct archive_hdr h;
	const void *raw;
	void *owned;
	uint8_t *obj;
	char why[ARCHIVE_WHY_MAX] = "";
	unsigned mode;
	int rc;

	if (size < 1)
		return 0;
	mode = data[0];
	size--;
	obj = malloc(size > 0 ? size : 1);
	if (obj == NULL)
		return 0;
	memcpy(obj, data + 1, size);
	if ((mode & 1) && size >= ARCHIVE_HDR_SIZE)
		fix(obj, size);
	for (int kind = ARCHIVE_SEGMENT; kind <= ARCHIVE_BASE; kind++) {
		why[0] = '\0';
		rc = archive_object_parse(obj, size, (enum archive_kind)kind,
			(mode & 2) ? other : NULL, NULL, "fuzz", &h, &raw, &owned, why,
			sizeof(why));
		if (rc != 0) {
			CHECK(rc == -1 && why[0] != '\0' && raw == NULL && owned == NULL);
			continue;
		}
		CHECK(!(mode & 2) || memcmp(h.uuid, other, 16) == 0);
		CHECK(h.kind == (enum archive_kind)kind);
		CHECK(h.stored_len + ARCHIVE_HDR_SIZE == size);
		CHECK(owned == NULL || owned == raw);
		if (kind == ARCHIVE_SEGMENT) {
			struct walk w = { .h = &h, .raw = raw, .next = h.first_lsn };

			CHECK(archive_segment_records(&h, raw, each, &w, "fuzz", why,
				sizeof(why)) == 0);
			CHECK(w.n == h.count && w.next == h.last_lsn + 1);
		}
		free(owned);
	}
	free(obj);
	return 0;
}
