/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * image_record.h -- a primary's database file, page by page, as librepl
 * records: what a replica's copy that cannot follow its log is remade from
 * (rv_image.c writes them, rv_copy.c applies them).  Little-endian, 48
 * bytes of header, then the pages:
 *
 *   offset size
 *        0    4  magic "RSQI"
 *        4    2  version (1)
 *        6    2  flags: IMG_F_FIRST (the image's first record), IMG_F_LAST
 *        8   16  db_uuid: the database's identity (the log's cluster UUID)
 *       24    4  page_size: a power of two, 512 .. 65536
 *       28    4  n_pages: pages in this record (0 only in a record that is
 *                both FIRST and LAST: an empty file)
 *       32    8  base_lsn: the primary's base when the image began: every
 *                page that no transaction after it writes is as the
 *                database at base_lsn has it (docs/sqlite.md, "Remade
 *                from the primary")
 *       40    4  first_pgno: the page number of the record's first page
 *                (from 1; 1 in a FIRST record)
 *       44    4  db_pages: pages in the file when the image began
 *       48       n_pages x page_size bytes: pages first_pgno, first_pgno+1...
 *
 * The pages are read from the primary's database file while SQLite's
 * checkpoints may write it: a page may be torn or newer than base_lsn, and
 * only a page that a transaction after base_lsn writes can be, which that
 * transaction's record rewrites whole.  Records carry no client id, and
 * are no transaction: the rebuild and a following copy pass over them.
 * Every field of bytes read back is checked (image_record_parse): they
 * come from a log or a peer.
 */
#ifndef REPLSQLITE_IMAGE_RECORD_H
#define REPLSQLITE_IMAGE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMG_MAGIC "RSQI"
#define IMG_VERSION 1
#define IMG_HDR_SIZE 48

#define IMG_F_FIRST	(1u << 0)
#define IMG_F_LAST	(1u << 1)
#define IMG_F_KNOWN	(IMG_F_FIRST | IMG_F_LAST)

struct img_hdr {
	uint16_t version;
	uint16_t flags;
	uint8_t db_uuid[16];
	uint32_t page_size;
	uint32_t n_pages;
	uint64_t base_lsn;
	uint32_t first_pgno;
	uint32_t db_pages;
};

/* the record's length for a header's n_pages and page_size */
static inline uint64_t
image_record_len(uint32_t n_pages, uint32_t page_size)
{
	return IMG_HDR_SIZE + (uint64_t)n_pages * page_size;
}

/* does the record at buf (len bytes) begin with the image magic? */
bool image_record_is(const void *buf, size_t len);
/* h's 48 bytes into out; false when h is not a header parse would take */
bool image_hdr_encode(const struct img_hdr *h, uint8_t out[IMG_HDR_SIZE]);
/*
 * Parses a whole record of len bytes.  true with *h, or false with why (a
 * sentence naming the field) and *h zeroed.
 */
bool image_record_parse(const void *buf, size_t len, struct img_hdr *h,
		char *why, size_t whylen);
/* page i (< h->n_pages) of a record parse accepted */
static inline const uint8_t *
image_page(const void *buf, const struct img_hdr *h, uint32_t i)
{
	return (const uint8_t *)buf + IMG_HDR_SIZE + (size_t)i * h->page_size;
}

#endif
