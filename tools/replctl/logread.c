/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * logread.c -- a log image read with pread only: nothing is mapped writable
 * and nothing is written, so it is safe on a stopped node's log (wal_open
 * would mark the header open).  It follows the format at the top of
 * engine/log/wal.c and the validity rule of its recovery, and is total: a
 * short file, garbage or a damaged record only ends what it reports.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "replctl.h"

/* exactly len bytes at off, or -1 (a short file is not a log) */
static int
rd(const struct logimg *img, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	if (off > img->size || len > img->size - off)
		return -1;
	while (done < len) {
		ssize_t n = pread(img->fd, (char *)buf + done, len - done,
				(off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

int
logimg_open(const char *path, struct logimg *img, char *err, size_t errlen)
{
	struct wal_hdr a, b;
	const char *wa = "unreadable", *wb = "unreadable";
	bool va = false, vb = false;
	struct stat st;

	memset(img, 0, sizeof(*img));
	img->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return EXIT_NO_LOG;
	}
	if (fstat(img->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (a log image is read "
			"offline from its file)", path);
		goto fail;
	}
	img->size = (uint64_t)st.st_size;
	if (img->size < RING_OFF + 4096) {
		snprintf(err, errlen, "%s: %llu bytes, too short for a log", path,
			(unsigned long long)img->size);
		goto fail;
	}
	if (rd(img, 0, &a, sizeof(a)) == 0)
		va = wal_hdr_check(&a, img->size, &wa);
	if (rd(img, HDR_COPY_SIZE, &b, sizeof(b)) == 0)
		vb = wal_hdr_check(&b, img->size, &wb);
	if (!va && !vb) {
		snprintf(err, errlen, "%s: no valid log header (copy A: %s; copy B: %s)",
			path, wa, wb);
		goto fail;
	}
	img->hdr_copy = (va && (!vb || a.seq >= b.seq)) ? 0 : 1;
	img->hdr = img->hdr_copy == 0 ? a : b;

	/* the membership: of two valid copies the larger epoch wins */
	for (int k = 0; k < 2; k++) {
		uint8_t buf[MEMBERSHIP_SIZE];
		struct membership m;
		const char *why;

		if (rd(img, (uint64_t)k * HDR_COPY_SIZE + MEMBERSHIP_OFF, buf, sizeof(buf)) ||
		    (membership_decode(buf, sizeof(buf), &m, &why) &&
		     membership_decode_v1(buf, sizeof(buf), &m, &why)))
			continue;
		if (m.config_epoch > img->ms.config_epoch)
			img->ms = m;
	}
	return 0;
fail:
	close(img->fd);
	img->fd = -1;
	return EXIT_NO_LOG;
}

void
logimg_close(struct logimg *img)
{
	if (img->fd >= 0)
		close(img->fd);
	img->fd = -1;
}

/* the chained CRC of h (crc zeroed) and the payload at off, or -1 */
static int
rec_crc(const struct logimg *img, const struct log_pos *p,
		const struct rec_hdr *h, struct logrec *r, uint32_t *crc)
{
	uint8_t buf[65536];
	uint64_t at = RING_OFF + p->off + REC_HDR, left = h->len;

	*crc = wal_rec_crc_start(h, p->crc);
	r->head_len = 0;
	while (left > 0) {
		size_t n = left < sizeof(buf) ? (size_t)left : sizeof(buf);

		if (rd(img, at, buf, n))
			return -1;
		if (r->head_len == 0) {
			r->head_len = n < sizeof(r->head) ? n : sizeof(r->head);
			memcpy(r->head, buf, r->head_len);
		}
		*crc = rpma_crc32c(*crc, buf, n);
		at += n;
		left -= n;
	}
	return 0;
}

#define END(dmg, ...) do { \
	end->damaged = (dmg); \
	snprintf(end->why, sizeof(end->why), __VA_ARGS__); \
	goto out; \
} while (0)

int
logimg_walk(struct logimg *img, logrec_fn *cb, void *arg, struct logend *end)
{
	const uint64_t rs = img->hdr.ring_size;
	struct log_pos head = { .lsn = img->hdr.ck_lsn, .off = img->hdr.ck_off,
		.lap = img->hdr.ck_lap, .crc = img->hdr.ck_crc };
	struct log_pos p = head;
	int ret = 0;

	memset(end, 0, sizeof(*end));
	for (;;) {
		struct logrec r;
		struct rec_hdr *h = &r.h;
		const char *why = NULL;
		uint32_t crc;

		if (rs - p.off < REC_HDR)
			END(true, "no room for a record header before the ring's end");
		if (rd(img, RING_OFF + p.off, h, sizeof(*h)))
			END(true, "cannot read the record header");
		if (h->lsn == 0 && h->lap == 0)
			END(false, "never written: the end of the log");
		switch (wal_slot_check(h, &p, rs, &why)) {
		case WAL_SLOT_END:
			END(false, "holds LSN %llu lap %llu, not this one: the end of "
				"the log", (unsigned long long)h->lsn,
				(unsigned long long)h->lap);
		case WAL_SLOT_BAD:
			/* it claims to be the next record: what is wrong is damage */
			END(true, "damaged: %s (flags %#x, length %u, reserved %#x)",
				why, h->flags, h->len, h->reserved);
		default:
			break;
		}
		r.off = p.off;
		if (rec_crc(img, &p, h, &r, &crc))
			END(true, "damaged: cannot read the payload");
		if (crc != h->crc)
			END(true, "damaged or torn: CRC mismatch (stored %08x, computed %08x)",
				h->crc, crc);
		if (!(h->flags & FLAG_WRAP) && cb && (ret = cb(arg, &r)) != 0)
			END(false, "stopped");
		wal_pos_next(rs, &p, h->len, h->flags & FLAG_WRAP, h->crc);
		if (wal_pos_distance(rs, &head, &p) >= rs)
			END(true, "a full circle of the ring: cannot be");
	}
out:
	end->at = p;
	return ret;
}


static int
sum_rec(void *arg, const struct logrec *r)
{
	struct logsum *s = arg;

	if (s->records++ == 0)
		s->first_lsn = r->h.lsn;
	s->last_lsn = r->h.lsn;
	s->tail_epoch = r->h.epoch;
	return 0;
}

int
logimg_summary(struct logimg *img, struct logsum *s)
{
	struct log_pos head = { .lsn = img->hdr.ck_lsn, .off = img->hdr.ck_off,
		.lap = img->hdr.ck_lap };

	memset(s, 0, sizeof(*s));
	logimg_walk(img, sum_rec, s, &s->end);
	s->used = wal_pos_distance(img->hdr.ring_size, &head, &s->end.at);
	return 0;
}

const char *
health_str(const struct wal_hdr *h)
{
	/* the medium's counters need the device; offline only the state */
	return h->state == STATE_OPEN ? "not-closed" : "clean";
}

void
uuid_str(const uint8_t u[16], char out[37])
{
	char *o = out;

	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		o += sprintf(o, "%02x", u[i]);
	}
}

void
json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c == '\t')
			fputs("\\t", f);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(f, "\\u%04x", *c);	/* not UTF-8: each byte */
		else
			fputc(*c, f);
	}
	fputc('"', f);
}
