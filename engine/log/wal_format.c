/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_format.c -- the rules of the on-media format (wal.c's top comment)
 * as pure functions of the bytes: the log itself and readers of a stopped
 * node's log (replctl) judge headers and records by the same code.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "log/wal_internal.h"

const char wal_magic[8] = { 'R', 'P', 'L', 'W', 'A', 'L', 0, 1 };

uint32_t
wal_hdr_crc(const struct wal_hdr *h)
{
	return rpma_crc32c(0, h, offsetof(struct wal_hdr, crc));
}

uint64_t
wal_new_incarnation(void)
{
	uint64_t v = 0;

	/* never 0; without entropy (early boot), time and pid still differ */
	while (v == 0) {
		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			v = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
				((uint64_t)getpid() << 16);
		}
	}
	return v;
}

bool
wal_hdr_from_v1(struct wal_hdr *h, uint64_t size)
{
	struct wal_hdr v2 = *h;
	uint32_t reserved, crc;

	if (memcmp(h->magic, wal_magic, sizeof(h->magic)) != 0 || h->version != 1)
		return false;
	memcpy(&reserved, (const char *)h + WAL_V1_HDR_SIZE - 8, 4);
	memcpy(&crc, (const char *)h + WAL_V1_HDR_SIZE - 4, 4);
	if (reserved != 0 || crc != rpma_crc32c(0, h, WAL_V1_HDR_SIZE - 4))
		return false;
	/* the fields version 2 added: not known yet (the caller upgrades) */
	v2.epoch_inc = v2.ck_epoch = 0;
	v2.flags = 0;
	v2.version = WAL_VERSION;
	v2.incarnation = 1;	/* for the check of the other fields */
	v2.crc = wal_hdr_crc(&v2);
	if (!wal_hdr_check(&v2, size, NULL))
		return false;
	v2.incarnation = 0;
	*h = v2;
	h->version = 1;		/* says it came from version 1 */
	return true;
}

bool
wal_hdr_check(const struct wal_hdr *h, uint64_t size, const char **why)
{
	const char *w = NULL;

	if (memcmp(h->magic, wal_magic, sizeof(h->magic)) != 0)
		w = "bad magic";
	else if (h->version != WAL_VERSION)
		w = "unknown version";
	else if (h->crc != wal_hdr_crc(h))
		w = "checksum mismatch";
	else if (h->ring_off != RING_OFF || h->ring_size < 4096 ||
		 size < RING_OFF || h->ring_size > size - RING_OFF ||
		 (h->ring_size & 7) != 0)
		w = "ring does not fit the file (truncated?)";
	else if (h->ck_off > h->ring_size - REC_HDR || (h->ck_off & 7) != 0 ||
		 h->ck_lap == 0 || h->ck_lsn == 0)
		w = "checkpoint out of range";
	else if (h->state > STATE_OPEN)
		w = "bad state";
	else if (h->flags & ~WAL_F_KNOWN)
		w = "unknown flags";
	else if (h->incarnation == 0)
		w = "incarnation is 0";
	if (why)
		*why = w;
	return w == NULL;
}

void
wal_pos_next(uint64_t ring_size, struct log_pos *p, uint32_t len, bool wrap,
		uint32_t crc)
{
	if (wrap) {
		p->off = 0;
		p->lap++;
	} else {
		p->off += REC_HDR + wal_align8(len);
		p->lsn++;
		if (ring_size - p->off < REC_HDR) {
			p->off = 0;
			p->lap++;
		}
	}
	p->crc = crc;
}

uint64_t
wal_pos_distance(uint64_t ring_size, const struct log_pos *from,
		const struct log_pos *to)
{
	if (to->lap == from->lap)
		return to->off - from->off;
	return ring_size - from->off + to->off;
}

enum wal_slot
wal_slot_check(const struct rec_hdr *h, const struct log_pos *p,
		uint64_t ring_size, const char **why)
{
	const char *w = NULL;
	enum wal_slot kind = (h->flags & FLAG_WRAP) ? WAL_SLOT_WRAP : WAL_SLOT_RECORD;
	const uint32_t known = FLAG_WRAP | FLAG_EPOCH_START;

	if (h->lsn != p->lsn || h->lap != p->lap) {
		w = "not the next record: the end of the log";
		kind = WAL_SLOT_END;
	} else if (h->reserved != 0) {
		w = "reserved field is not 0";
	} else if (h->flags & ~known) {
		w = "unknown flags";
	} else if ((h->flags & known) == known) {
		w = "a WRAP that starts an epoch";
	} else if ((h->flags & FLAG_WRAP) && h->len != 0) {
		w = "a WRAP with a length";
	} else if ((h->flags & FLAG_EPOCH_START) && h->len != 0) {
		w = "an epoch-start record with a payload";
	} else if ((uint64_t)REC_HDR + wal_align8(h->len) > ring_size - p->off) {
		w = "its length runs past the ring's end";
	}
	if (w && kind != WAL_SLOT_END)
		kind = WAL_SLOT_BAD;
	if (why)
		*why = w;
	return kind;
}

uint32_t
wal_rec_crc_start(const struct rec_hdr *h, uint32_t prev)
{
	struct rec_hdr z = *h;

	z.crc = 0;
	return rpma_crc32c(prev, &z, sizeof(z));
}
