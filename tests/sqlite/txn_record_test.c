/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txn_record_test.c -- replvfs's transaction records (sqlite/txn_record.c):
 * a record written reads back the same, field by field and frame by frame;
 * every header field a log or a peer could get wrong is refused whole,
 * with a sentence naming it.  Version 1 records (no commit time) still
 * read; version 2 carries one.  The same for the image records
 * (sqlite/image_record.c), which a transaction's parse refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_record.h"
#include "txn_record.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
	fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define PAGE 512

/* a record of n frames, page i filled with byte i + 1, pgno 3 i + 1 */
static size_t
make(uint8_t *buf, const struct txn_hdr *h)
{
	size_t off = txn_hdr_size(h->version);

	if (!txn_hdr_encode(h, buf))
		return 0;
	for (uint32_t i = 0; i < h->n_frames; i++) {
		txn_pgno_encode(3 * i + 1, buf + off);
		memset(buf + off + TXN_FRAME_HDR_SIZE, (int)(i + 1), h->page_size);
		off += TXN_FRAME_HDR_SIZE + h->page_size;
	}
	return off;
}

static struct txn_hdr
good(void)
{
	struct txn_hdr h = {
		.version = TXN_VERSION, .flags = TXN_F_FIRST | TXN_F_LAST,
		.page_size = PAGE, .n_frames = 3, .wal_salt1 = 0x11223344,
		.wal_salt2 = 0xdeadbeef, .first_frame = 7, .db_size = 9,
		.commit_ms = UINT64_C(1767225600123),
	};

	for (int i = 0; i < 16; i++)
		h.db_uuid[i] = (uint8_t)(0xa0 + i);
	return h;
}

static int
same(const struct txn_hdr *a, const struct txn_hdr *b)
{
	return a->version == b->version && a->flags == b->flags &&
		memcmp(a->db_uuid, b->db_uuid, 16) == 0 && a->page_size == b->page_size &&
		a->n_frames == b->n_frames && a->wal_salt1 == b->wal_salt1 &&
		a->wal_salt2 == b->wal_salt2 && a->first_frame == b->first_frame &&
		a->db_size == b->db_size && a->commit_ms == b->commit_ms;
}

static void
round_trip(void)
{
	static uint8_t buf[TXN_HDR_SIZE + 3 * (TXN_FRAME_HDR_SIZE + PAGE)];
	struct txn_hdr h = good(), got;
	char why[160];
	size_t len = make(buf, &h);
	uint32_t pgno;
	const uint8_t *page;

	CHECK(len == txn_record_len(3, PAGE) && len == sizeof(buf));
	/* the layout is the header comment's, little-endian */
	CHECK(memcmp(buf, "RSQL", 4) == 0 && buf[4] == 2 && buf[5] == 0 &&
		buf[6] == 3 && buf[24] == 0 && buf[25] == 2 && buf[28] == 3 &&
		buf[32] == 0x44 && buf[35] == 0x11 && buf[40] == 7 && buf[44] == 9 &&
		buf[48] == (uint8_t)h.commit_ms && buf[53] == (uint8_t)(h.commit_ms >> 40) &&
		buf[55] == 0 && len == 56 + 3 * (4 + PAGE));
	CHECK(txn_record_parse(buf, len, &got, why, sizeof(why)));
	CHECK(same(&got, &h));
	for (uint32_t i = 0; i < 3; i++) {
		txn_frame(buf, &got, i, &pgno, &page);
		CHECK(pgno == 3 * i + 1 && page[0] == i + 1 && page[PAGE - 1] == i + 1);
	}
	/* a middle part: neither flag, no db_size */
	h.flags = 0;
	h.db_size = 0;
	CHECK(make(buf, &h) == len && txn_record_parse(buf, len, &got, why, sizeof(why)));
	CHECK(got.flags == 0 && got.db_size == 0);
}

static void
refused(void)
{
	static uint8_t buf[TXN_HDR_SIZE + 3 * (TXN_FRAME_HDR_SIZE + PAGE) + 1];
	struct txn_hdr h = good(), got, bad;
	char why[160];
	size_t len = make(buf, &h);
	static const struct {
		size_t at;
		uint8_t v;
		const char *named;
	} flips[] = {
		{ 0, 'X', "magic" }, { 4, 3, "version" }, { 4, 1, "bytes" },
		{ 6, 0x0b, "flags" }, { 48, 0, "commit_ms" },
		{ 25, 3, "page_size" }, { 24, 0x01, "page_size" },
		{ 28, 0, "n_frames" }, { 28, 4, "bytes" }, { 40, 0, "first_frame" },
		{ 44, 0, "db_size" }, { TXN_HDR_SIZE, 0, "page number 0" },
	};

	for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
		uint8_t was = buf[flips[i].at];

		buf[flips[i].at] = flips[i].v;
		if (flips[i].at == 44 || flips[i].at == TXN_HDR_SIZE)
			memset(buf + flips[i].at, 0, 4);
		if (flips[i].at == 48)
			memset(buf + flips[i].at, 0, 8);
		why[0] = '\0';
		got.n_frames = 99;
		CHECK(!txn_record_parse(buf, len, &got, why, sizeof(why)));
		CHECK(got.n_frames == 0 && got.page_size == 0);
		if (strstr(why, flips[i].named) == NULL && !(flips[i].at == 0 &&
		    strstr(why, "RSQL"))) {
			failures++;
			fprintf(stderr, "FAIL: byte %zu: \"%s\" does not name %s\n",
				flips[i].at, why, flips[i].named);
		}
		make(buf, &h);
		(void)was;
	}
	/* a byte more or less than the frames fill, or shorter than a header */
	CHECK(!txn_record_parse(buf, len + 1, &got, why, sizeof(why)));
	CHECK(!txn_record_parse(buf, len - 1, &got, why, sizeof(why)));
	CHECK(!txn_record_parse(buf, 47, &got, why, sizeof(why)) && strstr(why, "header"));
	CHECK(!txn_record_parse(buf, 55, &got, why, sizeof(why)) && strstr(why, "header"));
	CHECK(!txn_record_parse(NULL, 0, &got, why, sizeof(why)));
	/* db_size on a part that is not the last one */
	bad = h;
	bad.flags = TXN_F_FIRST;
	CHECK(!txn_hdr_encode(&bad, buf));
	/* frames that run past the last WAL frame index */
	bad = h;
	bad.first_frame = UINT32_MAX - 1;
	CHECK(make(buf, &bad) == len && !txn_record_parse(buf, len, &got, why, sizeof(why)));
	CHECK(strstr(why, "frame index") != NULL);
}

/*
 * Version 1, as logs and archives written before commit times hold it:
 * 48 bytes of header, read with commit_ms 0; a time on it is refused
 */
static void
version1(void)
{
	static uint8_t buf[TXN_HDR_SIZE_V1 + 3 * (TXN_FRAME_HDR_SIZE + PAGE)];
	struct txn_hdr h = good(), got;
	char why[160];
	uint32_t pgno;
	const uint8_t *page;
	size_t len;

	h.version = 1;
	CHECK(!txn_hdr_encode(&h, buf));
	h.commit_ms = 0;
	len = make(buf, &h);
	CHECK(len == sizeof(buf) && len == txn_record_len_v(1, 3, PAGE));
	CHECK(txn_record_parse(buf, len, &got, why, sizeof(why)));
	CHECK(got.version == 1 && got.commit_ms == 0 && got.n_frames == 3);
	txn_frame(buf, &got, 2, &pgno, &page);
	CHECK(pgno == 7 && page[0] == 3 && page + PAGE == buf + len);
	/* the same bytes as version 2 lack 8: refused */
	buf[4] = 2;
	CHECK(!txn_record_parse(buf, len, &got, why, sizeof(why)));
}

/* an image record: read back the same; each bad field refused, named */
static void
image(void)
{
	static uint8_t buf[IMG_HDR_SIZE + 2 * PAGE];
	struct img_hdr h = {
		.version = IMG_VERSION, .flags = IMG_F_FIRST, .page_size = PAGE,
		.n_pages = 2, .base_lsn = (UINT64_C(7) << 32) | 5, .first_pgno = 1,
		.db_pages = 9,
	}, got, bad;
	struct txn_hdr t;
	char why[160];
	size_t len = IMG_HDR_SIZE + 2 * PAGE;

	for (int i = 0; i < 16; i++)
		h.db_uuid[i] = (uint8_t)(0xb0 + i);
	CHECK(image_hdr_encode(&h, buf));
	memset(buf + IMG_HDR_SIZE, 1, PAGE);
	memset(buf + IMG_HDR_SIZE + PAGE, 2, PAGE);
	CHECK(image_record_is(buf, len));
	CHECK(image_record_parse(buf, len, &got, why, sizeof(why)));
	CHECK(got.flags == IMG_F_FIRST && got.base_lsn == h.base_lsn &&
	      got.n_pages == 2 && got.db_pages == 9 && got.first_pgno == 1 &&
	      memcmp(got.db_uuid, h.db_uuid, 16) == 0);
	CHECK(image_page(buf, &got, 1)[0] == 2 && image_page(buf, &got, 0)[PAGE - 1] == 1);
	/* no transaction: the rebuild and a copy tell it apart */
	CHECK(!txn_record_parse(buf, len, &t, why, sizeof(why)));
	CHECK(!image_record_parse(buf, len - 1, &got, why, sizeof(why)) &&
	      strstr(why, "make") != NULL && got.base_lsn == 0);
	CHECK(!image_record_parse(buf, 47, &got, why, sizeof(why)) && strstr(why, "header"));
	bad = h;
	bad.base_lsn = 0;
	CHECK(!image_hdr_encode(&bad, buf));
	bad = h;
	bad.first_pgno = 2;		/* a first record begins at page 1 */
	CHECK(!image_hdr_encode(&bad, buf));
	bad = h;
	bad.flags = 0;
	bad.first_pgno = 9;		/* pages past the file's */
	CHECK(!image_hdr_encode(&bad, buf));
	bad = h;
	bad.n_pages = 0;		/* no pages only in an empty file's image */
	CHECK(!image_hdr_encode(&bad, buf));
	bad.flags = IMG_F_FIRST | IMG_F_LAST;
	bad.db_pages = 0;
	CHECK(image_hdr_encode(&bad, buf) &&
	      image_record_parse(buf, IMG_HDR_SIZE, &got, why, sizeof(why)));
	/* an unknown flag bit, written over a good header */
	CHECK(image_hdr_encode(&h, buf));
	buf[6] |= 0x80;
	CHECK(!image_record_parse(buf, len, &got, why, sizeof(why)) &&
	      strstr(why, "flags") != NULL);
	buf[6] &= 0x7f;
	buf[24] = 0x11;			/* page size 529: no power of two */
	CHECK(!image_record_parse(buf, len, &got, why, sizeof(why)) &&
	      strstr(why, "page_size") != NULL);
}

int
main(void)
{
	round_trip();
	refused();
	version1();
	image();
	if (failures) {
		fprintf(stderr, "txn_record_test: %d checks failed\n", failures);
		return 1;
	}
	printf("txn_record_test: all checks passed\n");
	return 0;
}
