/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive.h -- the archive of a cluster's committed records: segments of
 * records in LSN order, and bases, on a target (a directory, or an
 * S3-compatible object store behind the same target functions).
 *
 * Every object is written whole under a temporary name and then published
 * by a rename (on S3 one PUT, which is atomic), so a crash at any point
 * leaves every published object whole; names carry what they hold (a
 * segment's first and last LSN), so a listing is the archive's index and
 * nothing else has to be kept consistent with it.  Each object carries a CRC-32C of its
 * bytes that every read checks.  All bytes read from a target are
 * untrusted: parsed totally, with errors naming the object and the field.
 *
 * Errors: 0, or -1 with why (a sentence naming the target and the object).
 */
#ifndef ARCHIVE_ARCHIVE_H
#define ARCHIVE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARCHIVE_WHY_MAX 256

/* ---- the target ---- */

struct archive_target;

/*
 * url: a directory path ("/var/backups/repl", or "file:///var/...");
 * the directory is made when missing (its parent must exist).  Or
 * "s3://BUCKET/PREFIX" (PREFIX optional): objects in an existing bucket
 * of an S3-compatible store, the endpoint, region and credentials from
 * the environment (target_s3.c; repld.conf(5), archive.target).  The
 * archive's cluster uuid is stored in it at the first write and checked
 * at every open after: an archive of another cluster is refused.
 * cluster_uuid NULL: the archive's own is taken (a restore that does not
 * know it); refused when the target holds no archive yet.  Opening a
 * directory removes the temporary files of writers that are gone (S3
 * has none).
 */
int archive_target_open(const char *url, const uint8_t cluster_uuid[16],
		struct archive_target **tp, char *why, size_t whylen);
void archive_target_close(struct archive_target **tp);
/* the cluster uuid of the archive (given, or taken from it) */
const uint8_t *archive_target_uuid(const struct archive_target *t);

/* ---- what an archive holds ---- */

enum archive_kind { ARCHIVE_SEGMENT = 1, ARCHIVE_BASE = 2 };

struct archive_object {
	enum archive_kind kind;
	uint64_t first_lsn, last_lsn;	/* a segment's; a base: both its LSN */
	uint64_t first_ms, last_ms;	/* wall-clock stamps of its first and
					   last record (a base: when taken) */
	uint64_t bytes;			/* as stored */
	char name[96];			/* its name in the target */
};

struct archive_listing {
	struct archive_object *obj;	/* segments then bases, each by LSN */
	size_t n_segments, n_bases;
	/*
	 * the archive's newest LSN reachable without a gap from its oldest
	 * segment or base (0: empty), and where the first gap begins (0: none)
	 */
	uint64_t contiguous_to, gap_at;
};

/*
 * Each object's header is read (its times; a base covers its one LSN in
 * the reach): -1 when one is damaged or is not what its name says, naming
 * it (archive_verify counts such objects instead).  Names of no object
 * of the archive's (temporary files, anything else) are not listed.
 */
int archive_list(struct archive_target *t, struct archive_listing *out,
		char *why, size_t whylen);
/*
 * The names only, parsed and sorted as archive_list's (segments then
 * bases, each by LSN): one listing of the target, no object read (on S3
 * no request per object); times and sizes are 0.
 */
int archive_list_names(struct archive_target *t, struct archive_listing *out,
		char *why, size_t whylen);
void archive_listing_free(struct archive_listing *l);

/* ---- writing ---- */

struct archive_writer_cfg {
	uint64_t segment_bytes;		/* publish a segment at this size (of
					   its records, before zstd): when the
					   next record would take it past;
					   0: 16 MiB; at most 1 GiB */
	int zstd_level;			/* 0: stored as is; 1..19: zstd */
};

struct archive_writer;

/*
 * Records are added in LSN order, each one LSN after the last; the first
 * added must be next (archive_writer_next): the archive's contiguous end
 * + 1, or any LSN when the archive is empty (a raw log's archive starts
 * wherever the archiver starts).  A record that is not next is refused
 * (-1, why says what was expected): the caller lost records.
 * Precisely, next is the newest segment's last LSN + 1 (with a gap in the
 * archive, past it: a writer never fills a hole, which the listing shows),
 * and any LSN when the archive holds no segment.  LSN 0 is no record's.
 * A record refused (-1) is not added and changes nothing, including one
 * refused because the full segment before it could not be published.
 */
int archive_writer_open(struct archive_target *t, const struct archive_writer_cfg *cfg,
		struct archive_writer **wp, char *why, size_t whylen);
uint64_t archive_writer_next(const struct archive_writer *w);	/* 0: any */
#define ARCHIVE_REC_EPOCH_START	(1u << 0)	/* a new primary's first
						   record: no payload */
int archive_writer_add(struct archive_writer *w, uint64_t lsn, uint64_t epoch,
		uint64_t client_id, uint64_t time_ms, unsigned flags,
		const void *data, size_t len, char *why, size_t whylen);
/*
 * The records before lsn are lost to the archive (they left the log
 * before they were read): what was added is published, and the next
 * record added must be lsn, past a gap the listing then shows.  lsn must
 * be past next.
 */
int archive_writer_skip_to(struct archive_writer *w, uint64_t lsn, char *why,
		size_t whylen);
/* publish what was added and is not published yet (nothing: 0) */
int archive_writer_flush(struct archive_writer *w, char *why, size_t whylen);
/* the newest LSN published (durable in the archive); 0: none */
uint64_t archive_writer_archived(const struct archive_writer *w);
/* bytes added and not published yet */
uint64_t archive_writer_pending_bytes(const struct archive_writer *w);
void archive_writer_close(struct archive_writer **wp);	/* drops the unpublished */

/* a base: the file at path as it is now, standing for every record <= lsn
   (one file, at most 4 GiB, held in memory while it goes either way) */
int archive_put_base(struct archive_target *t, uint64_t lsn, const char *path,
		int zstd_level, char *why, size_t whylen);
/* the newest base with LSN <= max_lsn (UINT64_MAX: the newest), written to
   path through a temporary file renamed over it: 1 with *lsn, 0: none */
int archive_get_base(struct archive_target *t, uint64_t max_lsn, const char *path,
		uint64_t *lsn, char *why, size_t whylen);

/* ---- reading ---- */

struct archive_record {
	uint64_t lsn, epoch, client_id, time_ms;
	unsigned flags;			/* ARCHIVE_REC_* */
	const void *data;		/* valid in the callback only */
	size_t len;
};

/* return 0 to go on, 1 to stop (not an error), -1 to fail */
typedef int archive_record_fn(void *arg, const struct archive_record *r);

/*
 * Every record from..to (inclusive; to 0: the archive's end), in LSN
 * order, each segment's checksum checked before its first record is
 * given.  -1 when a segment fails its check, or from..to crosses a gap.
 * from 0: the oldest segment's first LSN; to 0: the newest segment's last
 * (the contiguous end when there is no gap; with one after from, the read
 * fails naming the LSNs missing rather than stop short of the end).
 * A range reaching outside the archive's segments is refused.
 */
int archive_read(struct archive_target *t, uint64_t from, uint64_t to,
		archive_record_fn *cb, void *arg, char *why, size_t whylen);

/* read and check every object; *bad objects failed (named in why, the
   first): -1 when any did */
int archive_verify(struct archive_target *t, uint64_t *checked, uint64_t *bad,
		char *why, size_t whylen);

/*
 * Retention: delete what no restore to a point kept needs.  Keep the
 * newest keep_bases bases (0: keep all) and everything after the oldest
 * of them; with keep_ms > 0 also keep every object whose last record is
 * younger than now_ms - keep_ms (and what a restore to it needs).  For an
 * archive without bases (a raw log's) only keep_ms applies.  *deleted
 * objects deleted.
 * Precisely (archive/prune.c): with bases, the archive is cut at a base's
 * LSN, the oldest kept base: bases before it and segments whose last LSN
 * is at or before it go.  keep_ms pulls the cut back to the newest base at
 * or before the first LSN of the oldest segment whose last record is
 * young (no such base: nothing goes), and to the oldest young base.
 * Without bases, segments go from the oldest on while their last record is
 * not young; keep_ms 0 keeps them all.  Oldest first, so a crash midway
 * leaves no hole.
 */
int archive_prune(struct archive_target *t, unsigned keep_bases, uint64_t keep_ms,
		uint64_t now_ms, uint64_t *deleted, char *why, size_t whylen);

#endif
