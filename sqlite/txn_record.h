/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * txn_record.h -- one committed SQLite transaction (or one part of a large
 * one) as the payload of a librepl record: what replvfs appends at COMMIT
 * and what a replica applies.  Little-endian, a header (48 bytes in
 * version 1, 56 in version 2), then the frames:
 *
 *   offset size
 *        0    4  magic "RSQL"
 *        4    2  version: 1, or 2 (what writers write)
 *        6    2  flags: TXN_F_FIRST, TXN_F_LAST, TXN_F_WAL_RESET
 *        8   16  db_uuid: the database's identity, chosen at its creation
 *       24    4  page_size: a power of two, 512 .. 65536
 *       28    4  n_frames: 1 .. TXN_FRAMES_MAX
 *       32    4  wal_salt1 \  the -wal generation the frames were
 *       36    4  wal_salt2 /  written in (a WAL restart changes them)
 *       40    4  first_frame: the WAL frame index of frame 0 (from 1)
 *       44    4  db_size: pages in the database after the commit, on a
 *                TXN_F_LAST part only (0 otherwise)
 *       48    8  commit_ms, version 2 only: the primary's wall clock
 *                when it appended the transaction, in ms since 1970 (not
 *                0); every part of a transaction carries the same value,
 *                and a primary process never stamps one below the one
 *                before (docs/sqlite.md, "Backup and restore")
 *   48 | 56       n_frames x { pgno (4, from 1), page (page_size bytes) }
 *
 * A transaction is one record (FIRST | LAST) unless it is larger than a
 * record may be; then FIRST, middle parts (neither flag), LAST, in LSN
 * order.  WAL frame headers and their checksums are not carried: a
 * replica writes its own.  Every field of bytes read back is checked
 * (txn_record_parse): these bytes come from a log or a peer.  Parsers
 * take both versions (a log or an archive written before version 2 holds
 * version 1 records, which carry no time: commit_ms 0).
 */
#ifndef REPLSQLITE_TXN_RECORD_H
#define REPLSQLITE_TXN_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TXN_MAGIC "RSQL"
#define TXN_VERSION 2			/* what writers write */
#define TXN_HDR_SIZE_V1 48
#define TXN_HDR_SIZE 56			/* version 2's: the largest */
#define TXN_FRAME_HDR_SIZE 4		/* the page number before each page */
#define TXN_PAGE_MIN 512
#define TXN_PAGE_MAX 65536
#define TXN_FRAMES_MAX (UINT32_C(1) << 20)

#define TXN_F_FIRST	(1u << 0)	/* the transaction's first part */
#define TXN_F_LAST	(1u << 1)	/* its last part: db_size is set */
#define TXN_F_WAL_RESET	(1u << 2)	/* the -wal was restarted before it */
#define TXN_F_KNOWN	(TXN_F_FIRST | TXN_F_LAST | TXN_F_WAL_RESET)

struct txn_hdr {
	uint16_t version;
	uint16_t flags;
	uint8_t db_uuid[16];
	uint32_t page_size;
	uint32_t n_frames;
	uint32_t wal_salt1, wal_salt2;
	uint32_t first_frame;
	uint32_t db_size;
	uint64_t commit_ms;		/* version 2; 0 in version 1 */
};

/* a version's header size (version 1: 48, else 56) */
static inline uint32_t
txn_hdr_size(uint16_t version)
{
	return version == 1 ? TXN_HDR_SIZE_V1 : TXN_HDR_SIZE;
}

/* a record's length for a version, its n_frames and page_size */
static inline uint64_t
txn_record_len_v(uint16_t version, uint32_t n_frames, uint32_t page_size)
{
	return txn_hdr_size(version) +
		(uint64_t)n_frames * (TXN_FRAME_HDR_SIZE + page_size);
}

/* ... as writers write it (TXN_VERSION) */
static inline uint64_t
txn_record_len(uint32_t n_frames, uint32_t page_size)
{
	return txn_record_len_v(TXN_VERSION, n_frames, page_size);
}

/*
 * h's header (txn_hdr_size(h->version) bytes) into out; false when h is
 * not a header parse would take
 */
bool txn_hdr_encode(const struct txn_hdr *h, uint8_t out[TXN_HDR_SIZE]);
/* a frame's page number as its 4 bytes */
void txn_pgno_encode(uint32_t pgno, uint8_t out[TXN_FRAME_HDR_SIZE]);

/*
 * Parses a whole record of len bytes: the header, and that the frames fill
 * it exactly, each with a page number from 1.  true with *h, or false with
 * why (a sentence naming the field) and *h zeroed.
 */
bool txn_record_parse(const void *buf, size_t len, struct txn_hdr *h,
		char *why, size_t whylen);

/* frame i (< h->n_frames) of a record parse accepted */
void txn_frame(const void *buf, const struct txn_hdr *h, uint32_t i,
		uint32_t *pgno, const uint8_t **page);

#endif
