/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_int.h -- what archive/'s files share and its users do not see:
 * the target's functions (a directory, or an S3-compatible object store),
 * the objects' names, their format (segment.c), zstd (compress.c), S3's
 * XML answers (s3_xml.c).
 */
#ifndef ARCHIVE_ARCHIVE_INT_H
#define ARCHIVE_ARCHIVE_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "archive.h"

/* ---- limits: every size read from a target is bounded by these ---- */

#define ARCHIVE_REC_MAX		(1ull << 30)	/* one record's payload */
#define ARCHIVE_BODY_MAX	(1ull << 32)	/* an object's body, stored or raw */
#define ARCHIVE_SEGMENT_BYTES_MAX (1ull << 30)	/* archive_writer_cfg's */
#define ARCHIVE_SEGMENT_BYTES_DEFAULT (16ull << 20)
#define ARCHIVE_ZSTD_LEVEL_MAX	19

/* ---- names ---- */

#define ARCHIVE_UUID_OBJECT	"cluster-uuid"
#define ARCHIVE_TMP_PREFIX	".tmp-"

/* "seg/FIRST-LAST.rseg" and "base/LSN.rbase", 20 decimal digits each */
void archive_segment_name(char out[96], uint64_t first, uint64_t last);
void archive_base_name(char out[96], uint64_t lsn);
/* a name of either form, totally (0), or not one of the archive's (-1) */
int archive_name_parse(const char *name, enum archive_kind *kind, uint64_t *first,
		uint64_t *last);

/* ---- the target's functions ---- */

struct archive_target_ops {
	/* publish name whole with the bytes of iov: after a crash, either
	   the old object (or none) or this one */
	int (*put)(struct archive_target *t, const char *name, const struct iovec *iov,
			int iovcnt, char *why, size_t whylen);
	/* the whole object into *buf (malloc'd), at most max bytes, else -1;
	   a missing object: 1 */
	int (*get)(struct archive_target *t, const char *name, uint64_t max, void **buf,
			size_t *len, char *why, size_t whylen);
	/* its first len bytes (fewer when shorter: *got) and its size */
	int (*head)(struct archive_target *t, const char *name, void *buf, size_t len,
			size_t *got, uint64_t *size, char *why, size_t whylen);
	/* the names of the archive's segments and bases (any order, malloc'd) */
	int (*list)(struct archive_target *t, char ***names, size_t *n, char *why,
			size_t whylen);
	/* a missing object is no error */
	int (*del)(struct archive_target *t, const char *name, char *why, size_t whylen);
	void (*close)(struct archive_target *t);
};

struct archive_target {
	const struct archive_target_ops *ops;
	char url[512];			/* as opened: what errors name */
	uint8_t uuid[16];
	bool uuid_stored;		/* the uuid object is in the target */
	void *impl;			/* the target's own */
};

/*
 * the directory target: its ops and state made in t (the url's path).
 * writer: the archiver's open, which makes the directories and removes the
 * temporary files a kill left; a reader's (replctl) changes nothing: the
 * directory must be there, and an archiver's files in flight stay.
 */
int archive_dir_open(struct archive_target *t, const char *path, bool writer,
		char *why, size_t whylen);

/* the S3 target (target_s3.c): url "s3://BUCKET[/PREFIX]", the endpoint,
   region and credentials from the environment (repld.conf(5)) */
int archive_s3_open(struct archive_target *t, const char *url, char *why,
		size_t whylen);
/* keys asked for in one listing request (1..1000; 1000 by default): the
   tests make pages small to cross many of them */
void archive_s3_set_page_keys(struct archive_target *t, unsigned n);

/* put, storing the cluster's uuid first when the target has none yet */
int archive_put(struct archive_target *t, const char *name, const struct iovec *iov,
		int iovcnt, char *why, size_t whylen);

/* contiguous_to and gap_at of a sorted listing */
void archive_listing_reach(struct archive_listing *l);

/* ---- the objects' format (segment.c) ---- */

#define ARCHIVE_HDR_SIZE	96
#define ARCHIVE_REC_HDR_SIZE	44
#define ARCHIVE_FLAG_ZSTD	(1u << 0)
#define ARCHIVE_FLAGS_KNOWN	ARCHIVE_FLAG_ZSTD
#define ARCHIVE_REC_FLAGS_KNOWN	ARCHIVE_REC_EPOCH_START

struct archive_hdr {
	enum archive_kind kind;
	uint32_t flags;			/* ARCHIVE_FLAG_* */
	uint8_t uuid[16];
	uint64_t first_lsn, last_lsn;
	uint64_t first_ms, last_ms;
	uint64_t count;			/* records (a base: 0) */
	uint64_t stored_len, raw_len;	/* the body's, as stored and raw */
	uint32_t body_crc;		/* CRC-32C of the stored body */
};

void archive_hdr_encode(const struct archive_hdr *h, uint8_t out[ARCHIVE_HDR_SIZE]);
/*
 * The header at buf (len: the bytes read, at least the header's; size:
 * the object's), checked totally: magic, version, its CRC, kind, flags,
 * LSNs, lengths against size and the limits; uuid (NULL: any) matched.
 * what names the object in why.
 */
int archive_hdr_parse(const void *buf, size_t len, uint64_t size, const uint8_t *uuid,
		const char *what, struct archive_hdr *h, char *why, size_t whylen);

/* a record's header, as encoded before its payload in a segment's body */
void archive_rec_encode(uint8_t out[ARCHIVE_REC_HDR_SIZE], uint64_t lsn, uint64_t epoch,
		uint64_t client_id, uint64_t time_ms, uint32_t flags, uint32_t len,
		uint32_t crc);

/*
 * A whole object (header and body) checked totally against what it must
 * be (kind; uuid, NULL: any; the LSNs its name says, NULL: any): its raw body
 * in *raw (malloc'd when decompressed: *owned, else pointing into buf).
 * A segment's records are all checked; cb (may be NULL) is then given
 * each one: 1 from it stops.
 */
int archive_object_parse(const void *buf, size_t len, enum archive_kind kind,
		const uint8_t *uuid, const struct archive_object *named, const char *what,
		struct archive_hdr *h, const void **raw, void **owned, char *why,
		size_t whylen);
int archive_segment_records(const struct archive_hdr *h, const void *raw,
		archive_record_fn *cb, void *arg, const char *what, char *why,
		size_t whylen);

/* ---- zstd (compress.c) ---- */

struct archive_zstd;
struct archive_zstd *archive_zstd_new(int level);
void archive_zstd_free(struct archive_zstd *z);
/* src compressed into z's buffer: *out, *outlen valid until the next call */
int archive_zstd_compress(struct archive_zstd *z, const void *src, size_t len,
		const void **out, size_t *outlen, char *why, size_t whylen);
/* exactly raw_len bytes from src (one or more frames, nothing after);
   *dst malloc'd, grown with what comes out, never past raw_len */
int archive_zstd_decompress(const void *src, size_t len, uint64_t raw_len, void **dst,
		const char *what, char *why, size_t whylen);

/* ---- S3's XML answers (s3_xml.c) ---- */

struct s3_list_page {
	char **keys;			/* as the server gives them */
	size_t n;
	bool truncated;			/* more pages follow ... */
	char *next_token;		/* ... from this continuation token */
};

/* a ListObjectsV2 answer, totally: -1 with why (no page) when it is not
   a well-formed ListBucketResult */
int s3_list_parse(const char *doc, size_t len, struct s3_list_page *page, char *why,
		size_t whylen);
void s3_list_page_free(struct s3_list_page *page);
/* an Error document's Code and Message (printable, cut to fit): -1 when
   it is not one */
int s3_error_parse(const char *doc, size_t len, char *code, size_t code_len,
		char *message, size_t message_len);

/* ---- small helpers ---- */

__attribute__((format(printf, 3, 4)))
int archive_fail(char *why, size_t whylen, const char *fmt, ...);

/*
 * file.c: the regular file at path, at most max bytes, into *buf (the
 * caller frees it): 0, 1 when there is no such file, -1 with why (what
 * names the file there).  A file that grew while read: refused with
 * grow_fails, else what it held when it was looked at.
 */
int archive_file_read(const char *path, const char *what, uint64_t max,
		bool grow_fails, void **buf, size_t *len, char *why, size_t whylen);

/* crc.c: CRC-32C of len bytes (crc32c("123456789") == 0xE3069283) */
uint32_t archive_crc(const void *buf, size_t len);

static inline void
archive_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void
archive_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t
archive_get_le32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint64_t
archive_get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#endif
