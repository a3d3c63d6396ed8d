/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl_reader.c -- a log read offline (repl.h: repl_reader_*), with pread
 * only: nothing is mapped writable and nothing is written, and the log's
 * lock is not taken, so it is safe on a stopped node's log (wal_open would
 * mark the header open) and harmless on one a process has open.  It
 * follows the format at the top of log/wal.c and the validity rule of its
 * recovery, and is total: a short file, garbage or a damaged record only
 * ends what it reports.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/membership.h"
#include "crc32c.h"
#include "facade.h"
#include "log/wal_internal.h"

_Static_assert(REPL_MEMBERS_MAX == MEMBERSHIP_NODES_MAX &&
	REPL_MEMBER_HOST_MAX == MEMBER_HOST_MAX, "membership geometry differs");

struct repl_reader {
	int fd;
	uint64_t size;		/* of the file */
	struct wal_hdr hdr;	/* the valid copy with the larger seq */
	int hdr_copy;
	struct membership ms;	/* config_epoch 0: none stored */
	uint8_t *buf;		/* a record's payload */
	size_t buf_size;
};

/* exactly len bytes at off, or -1 (a short file is not a log) */
static int
rd(const struct repl_reader *r, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > r->size || len > r->size - off)
		return -1;
	while (done < len) {
		ssize_t n = pread(r->fd, (char *)buf + done, len - done,
				(off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static void
say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

int
repl_reader_open(const char *path, struct repl_reader **reader_ptr, char *why,
		size_t whylen)
{
	struct repl_reader *r;
	struct wal_hdr a, b;
	const char *wa = "unreadable", *wb = "unreadable";
	bool va = false, vb = false;
	struct stat st;
	int ret = REPL_E_CORRUPT;

	if (path == NULL || reader_ptr == NULL) {
		say(why, whylen, "no path");
		return REPL_E_INVAL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		say(why, whylen, "%s: out of memory", path);
		return REPL_E_NOMEM;
	}
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		say(why, whylen, "cannot open %s: %s", path, strerror(errno));
		free(r);
		return REPL_E_IO;
	}
	if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		say(why, whylen, "%s: not a regular file (a log image is read "
			"offline from its file)", path);
		ret = REPL_E_INVAL;
		goto fail;
	}
	r->size = (uint64_t)st.st_size;
	if (r->size < RING_OFF + 4096) {
		say(why, whylen, "%s: %llu bytes, too short for a log", path,
			(unsigned long long)r->size);
		goto fail;
	}
	if (rd(r, 0, &a, sizeof(a)) == 0)
		va = wal_hdr_check(&a, r->size, &wa);
	if (rd(r, HDR_COPY_SIZE, &b, sizeof(b)) == 0)
		vb = wal_hdr_check(&b, r->size, &wb);
	if (!va && !vb) {
		say(why, whylen, "%s: no valid log header (copy A: %s; copy B: %s)",
			path, wa, wb);
		goto fail;
	}
	r->hdr_copy = (va && (!vb || a.seq >= b.seq)) ? 0 : 1;
	r->hdr = r->hdr_copy == 0 ? a : b;

	/* the membership: of two valid copies the larger epoch wins */
	for (int k = 0; k < 2; k++) {
		uint8_t buf[MEMBERSHIP_SIZE];
		struct membership m;
		const char *bad;

		if (rd(r, (uint64_t)k * HDR_COPY_SIZE + MEMBERSHIP_OFF, buf,
				sizeof(buf)) ||
		    (membership_decode(buf, sizeof(buf), &m, &bad) &&
		     membership_decode_v1(buf, sizeof(buf), &m, &bad)))
			continue;
		if (m.config_epoch > r->ms.config_epoch)
			r->ms = m;
	}
	*reader_ptr = r;
	return 0;
fail:
	close(r->fd);
	free(r);
	return ret;
}

int
repl_reader_close(struct repl_reader **reader_ptr)
{
	if (reader_ptr == NULL)
		return REPL_E_INVAL;
	if (*reader_ptr == NULL)
		return 0;
	close((*reader_ptr)->fd);
	free((*reader_ptr)->buf);
	free(*reader_ptr);
	*reader_ptr = NULL;
	return 0;
}

void
facade_membership_out(const struct membership *ms, struct repl_membership *out)
{
	memset(out, 0, sizeof(*out));
	if (ms->config_epoch == 0)
		return;
	out->config_epoch = ms->config_epoch;
	out->version = ms->v1 ? 1 : 2;
	out->k = ms->k;
	out->k_old = ms->k_old;
	out->flags = ((ms->flags & MEMBERSHIP_F_JOINT) ? REPL_MEMBERSHIP_JOINT : 0) |
		((ms->flags & MEMBERSHIP_F_FROM_JOINT) ? REPL_MEMBERSHIP_FROM_JOINT : 0);
	out->n_new = membership_nodes(ms, MEMBER_F_NEW);
	out->n_old = membership_nodes(ms, MEMBER_F_OLD);
	out->count = ms->count;
	for (uint32_t i = 0; i < ms->count && i < MEMBERSHIP_NODES_MAX; i++) {
		const struct member *m = &ms->m[i];
		struct repl_member *o = &out->nodes[i];

		o->node_id = m->node_id;
		snprintf(o->host, sizeof(o->host), "%s", m->host);
		o->port = m->port;
		o->incarnation = m->incarnation;
		o->flags = ((m->flags & MEMBER_F_NEW) ? REPL_MEMBER_NEW : 0) |
			((m->flags & MEMBER_F_OLD) ? REPL_MEMBER_OLD : 0);
	}
}

int
repl_reader_header(struct repl_reader *reader, struct repl_log_header *hdr)
{
	const struct wal_hdr *h;

	if (reader == NULL || hdr == NULL)
		return REPL_E_INVAL;
	h = &reader->hdr;
	memset(hdr, 0, sizeof(*hdr));
	memcpy(hdr->cluster_uuid, h->cluster_uuid, sizeof(hdr->cluster_uuid));
	hdr->node_id = h->node_id;
	hdr->epoch = h->epoch;
	hdr->ring_size = h->ring_size;
	hdr->file_size = reader->size;
	hdr->header_copy = reader->hdr_copy;
	hdr->seq = h->seq;
	hdr->incarnation = h->incarnation;
	hdr->checkpoint_lsn = h->ck_lsn;
	hdr->checkpoint_off = h->ck_off;
	hdr->checkpoint_lap = h->ck_lap;
	hdr->checkpoint_epoch = h->ck_epoch;
	/* the medium's counters need the device; offline only the state */
	hdr->clean = h->state != STATE_OPEN;
	hdr->promise_pending = (h->flags & WAL_F_PROMISE_PENDING) != 0;
	hdr->restored = (h->flags & WAL_F_RESTORED) != 0;
	facade_membership_out(&reader->ms, &hdr->membership);
	return 0;
}

/* the payload at p into r->buf and its chained CRC; -1 unreadable, -2 no memory */
static int
rec_read(struct repl_reader *r, const struct log_pos *p, const struct rec_hdr *h,
		uint32_t *crc)
{
	if (h->len > r->buf_size) {
		uint8_t *b = realloc(r->buf, h->len);

		if (b == NULL)
			return -2;
		r->buf = b;
		r->buf_size = h->len;
	}
	if (h->len && rd(r, RING_OFF + p->off + REC_HDR, r->buf, h->len))
		return -1;
	*crc = rpma_crc32c(wal_rec_crc_start(h, p->crc), r->buf, h->len);
	return 0;
}

#define END(dmg, ...) do { \
	e->damaged = (dmg); \
	snprintf(e->why, sizeof(e->why), __VA_ARGS__); \
	goto out; \
} while (0)

int
repl_reader_walk(struct repl_reader *reader, repl_reader_fn *cb, void *arg,
		struct repl_log_end *end)
{
	struct repl_log_end mine, *e = end ? end : &mine;
	const struct wal_hdr *hd;
	struct log_pos head, p;
	uint64_t rs;
	int ret = 0;

	if (reader == NULL)
		return REPL_E_INVAL;
	hd = &reader->hdr;
	rs = hd->ring_size;
	head = (struct log_pos){ .lsn = hd->ck_lsn, .off = hd->ck_off,
		.lap = hd->ck_lap, .crc = hd->ck_crc };
	p = head;
	memset(e, 0, sizeof(*e));
	for (;;) {
		struct rec_hdr h;
		const char *why = NULL;
		uint32_t crc;
		int got;

		if (rs - p.off < REC_HDR)
			END(true, "no room for a record header before the ring's end");
		if (rd(reader, RING_OFF + p.off, &h, sizeof(h)))
			END(true, "cannot read the record header");
		if (h.lsn == 0 && h.lap == 0)
			END(false, "never written: the end of the log");
		switch (wal_slot_check(&h, &p, rs, &why)) {
		case WAL_SLOT_END:
			END(false, "holds LSN %llu lap %llu, not this one: the end of "
				"the log", (unsigned long long)h.lsn,
				(unsigned long long)h.lap);
		case WAL_SLOT_BAD:
			/* it claims to be the next record: what is wrong is damage */
			END(true, "damaged: %s (flags %#x, length %u, reserved %#x)",
				why, h.flags, h.len, h.reserved);
		default:
			break;
		}
		if ((got = rec_read(reader, &p, &h, &crc)) == -2) {
			ret = REPL_E_NOMEM;
			END(false, "out of memory for a record of %u bytes", h.len);
		}
		if (got)
			END(true, "damaged: cannot read the payload");
		if (crc != h.crc)
			END(true, "damaged or torn: CRC mismatch (stored %08x, computed %08x)",
				h.crc, crc);
		if (!(h.flags & FLAG_WRAP) && cb) {
			struct repl_log_record rec = {
				.lsn = h.lsn, .epoch = h.epoch, .client_id = h.client_id,
				.len = h.len, .data = reader->buf, .off = p.off,
				.lap = h.lap,
				.epoch_start = (h.flags & FLAG_EPOCH_START) != 0,
			};

			if ((ret = cb(arg, &rec)) != 0) {
				e->stopped = 1;
				END(false, "stopped");
			}
		}
		wal_pos_next(rs, &p, h.len, h.flags & FLAG_WRAP, h.crc);
		if (wal_pos_distance(rs, &head, &p) >= rs)
			END(true, "a full circle of the ring: cannot be");
	}
out:
	e->lsn = p.lsn;
	e->off = p.off;
	e->lap = p.lap;
	return ret;
}

static int
sum_rec(void *arg, const struct repl_log_record *rec)
{
	struct repl_log_summary *s = arg;

	if (s->records++ == 0)
		s->first_lsn = rec->lsn;
	s->last_lsn = rec->lsn;
	s->tail_epoch = rec->epoch;
	return 0;
}

int
repl_reader_summary(struct repl_reader *reader, struct repl_log_summary *sum)
{
	struct log_pos head, at;
	int ret;

	if (reader == NULL || sum == NULL)
		return REPL_E_INVAL;
	head = (struct log_pos){ .lsn = reader->hdr.ck_lsn,
		.off = reader->hdr.ck_off, .lap = reader->hdr.ck_lap };
	memset(sum, 0, sizeof(*sum));
	ret = repl_reader_walk(reader, sum_rec, sum, &sum->end);
	at = (struct log_pos){ .lsn = sum->end.lsn, .off = sum->end.off,
		.lap = sum->end.lap };
	sum->used_bytes = wal_pos_distance(reader->hdr.ring_size, &head, &at);
	sum->size_bytes = reader->hdr.ring_size;
	return ret;
}
