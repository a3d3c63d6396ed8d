/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writer.c -- records in, segments out: records are encoded into one
 * buffer (grown by doubling, kept between segments: nothing is allocated
 * per record), which is published as a segment when the next record would
 * take it past segment_bytes, or at a flush.  A record that does not
 * follow the last one is refused: the archive never has a hole the writer
 * made.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

struct archive_writer {
	struct archive_target *t;
	uint64_t segment_bytes;
	struct archive_zstd *zstd;	/* NULL: stored as is */

	uint8_t *buf;			/* the pending records, encoded */
	size_t len, cap;
	uint64_t first, count;		/* the pending records' LSNs */
	uint64_t first_ms, last_ms;

	uint64_t next;			/* the LSN to add next; 0: any */
	uint64_t archived;		/* the newest LSN published */
};

int
archive_writer_open(struct archive_target *t, const struct archive_writer_cfg *cfg,
		struct archive_writer **wp, char *why, size_t whylen)
{
	struct archive_writer *w;
	struct archive_listing l;
	uint64_t end = 0;

	*wp = NULL;
	if (cfg->segment_bytes > ARCHIVE_SEGMENT_BYTES_MAX)
		return archive_fail(why, whylen, "archive %s: segment_bytes %" PRIu64
			" is more than 1 GiB", t->url, cfg->segment_bytes);
	if (cfg->zstd_level < 0 || cfg->zstd_level > ARCHIVE_ZSTD_LEVEL_MAX)
		return archive_fail(why, whylen, "archive %s: zstd_level %d is not 0..%d",
			t->url, cfg->zstd_level, ARCHIVE_ZSTD_LEVEL_MAX);
	if (archive_list_names(t, &l, why, whylen) != 0)
		return -1;
	/* the newest segment's end: a gap before it is the listing's to show */
	for (size_t i = 0; i < l.n_segments; i++)
		if (l.obj[i].last_lsn > end)
			end = l.obj[i].last_lsn;
	archive_listing_free(&l);

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return archive_fail(why, whylen, "archive %s: out of memory", t->url);
	w->t = t;
	w->segment_bytes = cfg->segment_bytes > 0 ? cfg->segment_bytes :
		ARCHIVE_SEGMENT_BYTES_DEFAULT;
	if (cfg->zstd_level > 0) {
		w->zstd = archive_zstd_new(cfg->zstd_level);
		if (w->zstd == NULL) {
			free(w);
			return archive_fail(why, whylen, "archive %s: zstd: out of memory",
				t->url);
		}
	}
	w->archived = end;
	w->next = end == 0 ? 0 : end + 1;
	*wp = w;
	return 0;
}

uint64_t
archive_writer_next(const struct archive_writer *w)
{
	return w->next;
}

uint64_t
archive_writer_archived(const struct archive_writer *w)
{
	return w->archived;
}

uint64_t
archive_writer_pending_bytes(const struct archive_writer *w)
{
	return w->len;
}

int
archive_writer_flush(struct archive_writer *w, char *why, size_t whylen)
{
	struct archive_hdr h = { .kind = ARCHIVE_SEGMENT };
	uint8_t hdr[ARCHIVE_HDR_SIZE];
	struct iovec iov[2];
	const void *body = w->buf;
	size_t body_len = w->len;
	char name[96];

	if (w->count == 0)
		return 0;
	if (w->zstd != NULL) {
		if (archive_zstd_compress(w->zstd, w->buf, w->len, &body, &body_len, why,
				whylen) != 0)
			return -1;
		h.flags = ARCHIVE_FLAG_ZSTD;
	}
	memcpy(h.uuid, w->t->uuid, 16);
	h.first_lsn = w->first;
	h.last_lsn = w->first + w->count - 1;
	h.first_ms = w->first_ms;
	h.last_ms = w->last_ms;
	h.count = w->count;
	h.stored_len = body_len;
	h.raw_len = w->len;
	h.body_crc = archive_crc(body, body_len);
	archive_hdr_encode(&h, hdr);
	iov[0] = (struct iovec){ hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)body, body_len };
	archive_segment_name(name, h.first_lsn, h.last_lsn);
	if (archive_put(w->t, name, iov, 2, why, whylen) != 0)
		return -1;
	w->archived = h.last_lsn;
	w->len = 0;
	w->count = 0;
	return 0;
}

int
archive_writer_add(struct archive_writer *w, uint64_t lsn, uint64_t epoch,
		uint64_t client_id, uint64_t time_ms, unsigned flags,
		const void *data, size_t len, char *why, size_t whylen)
{
	size_t need = ARCHIVE_REC_HDR_SIZE + len;

	if (lsn == 0 || lsn == UINT64_MAX)
		return archive_fail(why, whylen, "archive %s: LSN %" PRIu64 " is no "
			"record's", w->t->url, lsn);
	if (w->next != 0 && lsn != w->next)
		return archive_fail(why, whylen, "archive %s: record of LSN %" PRIu64
			" where %" PRIu64 " is next (records lost between?)", w->t->url,
			lsn, w->next);
	if (flags & ~(unsigned)ARCHIVE_REC_FLAGS_KNOWN)
		return archive_fail(why, whylen, "archive %s: record of LSN %" PRIu64
			": unknown flags 0x%x", w->t->url, lsn, flags);
	if ((flags & ARCHIVE_REC_EPOCH_START) && len != 0)
		return archive_fail(why, whylen, "archive %s: record of LSN %" PRIu64
			": an epoch's start carries no payload (%zu bytes)", w->t->url,
			lsn, len);
	if (len > ARCHIVE_REC_MAX || (len > 0 && data == NULL))
		return archive_fail(why, whylen, "archive %s: record of LSN %" PRIu64
			": payload of %zu bytes %s", w->t->url, lsn, len,
			data == NULL ? "without data" : "over 1 GiB");
	/* a full segment goes out first: a failure leaves this record unadded */
	if (w->count > 0 && w->len + need > w->segment_bytes &&
			archive_writer_flush(w, why, whylen) != 0)
		return -1;
	if (w->len + need > w->cap) {
		size_t cap = w->cap > 0 ? w->cap * 2 : 65536;
		uint8_t *p;

		while (cap < w->len + need)
			cap *= 2;
		p = realloc(w->buf, cap);
		if (p == NULL)
			return archive_fail(why, whylen, "archive %s: out of memory for "
				"%zu bytes of records", w->t->url, cap);
		w->buf = p;
		w->cap = cap;
	}
	archive_rec_encode(w->buf + w->len, lsn, epoch, client_id, time_ms, flags,
		(uint32_t)len, archive_crc(data, len));
	if (len > 0)
		memcpy(w->buf + w->len + ARCHIVE_REC_HDR_SIZE, data, len);
	w->len += need;
	if (w->count == 0) {
		w->first = lsn;
		w->first_ms = time_ms;
	}
	w->last_ms = time_ms;
	w->count++;
	w->next = lsn + 1;
	return 0;
}

void
archive_writer_close(struct archive_writer **wp)
{
	struct archive_writer *w;

	if (wp == NULL || *wp == NULL)
		return;
	w = *wp;
	archive_zstd_free(w->zstd);
	free(w->buf);
	free(w);
	*wp = NULL;
}

int
archive_writer_skip_to(struct archive_writer *w, uint64_t lsn, char *why,
		size_t whylen)
{
	if (lsn == 0 || (w->next != 0 && lsn <= w->next))
		return archive_fail(why, whylen, "archive %s: a skip to LSN %" PRIu64
			" does not pass the next LSN %" PRIu64, w->t->url, lsn, w->next);
	if (archive_writer_flush(w, why, whylen) != 0)
		return -1;
	w->next = lsn;
	return 0;
}
