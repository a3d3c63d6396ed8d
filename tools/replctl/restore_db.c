/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * restore_db.c -- replctl restore --database: a replvfs database file as
 * of a transaction, from an archive's bases and transaction records
 * (sqlite/txn_record.h): the newest base at or before the point, then the
 * records after it applied with the code a replica's copy applies them
 * with (sqlite/rv_apply.h), into DIR/replvfs.db through a temporary file
 * renamed over it.
 *
 * The point is a transaction's: the last one whose record is at or before
 * --to-lsn, or, for --to-time, the last before the first (in LSN order)
 * whose commit time is after it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "image_record.h"
#include "restore_db.h"
#include "rv_apply.h"
#include "txn_record.h"

#define DB_HDR_CHANGE_COUNTER 24

/* a transaction of the database, or NULL: a new primary's record, an image */
static bool
txn_of(const struct archive_record *r, struct txn_hdr *h, char *why, size_t whylen)
{
	if ((r->flags & ARCHIVE_REC_EPOCH_START) || r->len == 0 ||
	    image_record_is(r->data, r->len))
		return false;
	return txn_record_parse(r->data, r->len, h, why, whylen);
}

struct find_end {
	uint64_t to_time_ms;		/* 0: no time bound */
	uint64_t end;			/* the last transaction within it */
	uint64_t end_time_ms;
	uint64_t transactions;
	char why[400];
};

static int
find_end_record(void *arg, const struct archive_record *r)
{
	struct find_end *f = arg;
	struct txn_hdr h;
	char err[160];
	uint64_t ms;

	if ((r->flags & ARCHIVE_REC_EPOCH_START) || r->len == 0 ||
	    image_record_is(r->data, r->len))
		return 0;
	if (!txn_of(r, &h, err, sizeof(err))) {
		snprintf(f->why, sizeof(f->why), "the record at LSN %" PRIu64 " is not "
			"a replvfs transaction (%s): the archive is not a replvfs "
			"database's", r->lsn, err);
		return -1;
	}
	/* version 1 records carry no commit time: the archiver's stamp */
	ms = h.version >= 2 ? h.commit_ms : r->time_ms;
	if (f->to_time_ms && ms > f->to_time_ms)
		return 1;
	if (h.flags & TXN_F_LAST) {
		f->end = r->lsn;
		f->end_time_ms = ms;
		f->transactions++;
	}
	return 0;
}

int
restore_db_end(struct archive_target *t, uint64_t from, uint64_t to,
		uint64_t to_time_ms, uint64_t *end, uint64_t *end_time_ms, char *why,
		size_t whylen)
{
	struct find_end f = { .to_time_ms = to_time_ms };

	*end = *end_time_ms = 0;
	if (archive_read(t, from, to, find_end_record, &f, why, whylen) != 0) {
		if (f.why[0] != '\0')
			snprintf(why, whylen, "%s", f.why);
		return -1;
	}
	*end = f.end;
	*end_time_ms = f.end_time_ms;
	return 0;
}

struct applying {
	struct rv_apply a;
	uint64_t transactions;
	char why[400];
};

static int
apply_record(void *arg, const struct archive_record *r)
{
	struct applying *ap = arg;

	if ((r->flags & ARCHIVE_REC_EPOCH_START) || r->len == 0)
		return 0;
	if (rv_apply_record(&ap->a, r->lsn, r->client_id, r->data, r->len, ap->why,
			sizeof(ap->why)) != 0)
		return -1;
	if (!image_record_is(r->data, r->len))
		ap->transactions++;
	return 0;
}

static int
fail(char *why, size_t whylen, const char *path, const char *what)
{
	snprintf(why, whylen, "%s: %s: %s", path, what, strerror(errno));
	return -1;
}

int
restore_db_build(struct archive_target *t, uint64_t from, uint64_t end,
		const char *path, struct restore_db_result *res, char *why,
		size_t whylen)
{
	struct applying ap = { .a = { .fd = -1, .name = path, .rollback_header = true } };
	char tmp[4200];
	uint8_t hdr[DB_HDR_CHANGE_COUNTER + 4];
	uint64_t base = 0;
	int got;

	memset(res, 0, sizeof(*res));
	if (snprintf(tmp, sizeof(tmp), "%s.restoring", path) >= (int)sizeof(tmp)) {
		snprintf(why, whylen, "%s: path too long", path);
		return -1;
	}
	(void)unlink(tmp);
	if ((got = archive_get_base(t, end, tmp, &base, why, whylen)) < 0)
		return -1;
	if (got == 0 && from != 1) {
		snprintf(why, whylen, "the archive holds no base at or before LSN %" PRIu64
			" and its records begin at LSN %" PRIu64 ", not 1: the "
			"transactions before them are in no base it holds, so the "
			"database as of LSN %" PRIu64 " cannot be made", end, from, end);
		return -1;
	}
	if (got == 1 && base + 1 < from) {
		snprintf(why, whylen, "the newest base at or before LSN %" PRIu64 " is at "
			"LSN %" PRIu64 ", but the archive's records begin at LSN %" PRIu64
			": the ones between are missing", end, base, from);
		(void)unlink(tmp);
		return -1;
	}
	if ((ap.a.fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return fail(why, whylen, tmp, "opening");
	/* the change counter goes on from the base's: readers' caches name it */
	if (pread(ap.a.fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr))
		ap.a.change_counter = (uint32_t)hdr[24] << 24 | (uint32_t)hdr[25] << 16 |
			(uint32_t)hdr[26] << 8 | hdr[27];
	memcpy(ap.a.db_uuid, archive_target_uuid(t), sizeof(ap.a.db_uuid));
	if (end > base && archive_read(t, got ? base + 1 : from, end, apply_record, &ap,
			why, whylen) != 0) {
		if (ap.why[0] != '\0')
			snprintf(why, whylen, "%s", ap.why);
		goto failed;
	}
	if (fsync(ap.a.fd) != 0) {
		fail(why, whylen, tmp, "syncing");
		goto failed;
	}
	close(ap.a.fd);
	/* a -wal or -shm beside an older file there is not this database's */
	if (rv_drop_wal(path, why, whylen) != 0) {
		(void)unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		fail(why, whylen, path, "renaming the restored file over it");
		(void)unlink(tmp);
		return -1;
	}
	res->base_lsn = got ? base : 0;
	res->transactions = ap.transactions;
	res->pages = ap.a.db_pages;
	return 0;
failed:
	close(ap.a.fd);
	(void)unlink(tmp);
	return -1;
}
