/* SPDX-License-Identifier: BSD-3-Clause */
/* rv_apply.c -- transaction records written into a database file (rv_apply.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_record.h"
#include "rv_apply.h"
#include "rv_base.h"
#include "txn_record.h"

#define DB_HDR_WRITE_VERSION	18	/* 1 legacy (rollback), 2 WAL */
#define DB_HDR_CHANGE_COUNTER	24
#define DB_HDR_VALID_FOR	92

static void
put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int
rv_write_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

int
rv_apply_record(struct rv_apply *a, uint64_t lsn, uint64_t txid,
		const void *data, size_t len, char *why, size_t whylen)
{
	struct txn_hdr h;
	char err[256];

	/*
	 * A primary's file for a copy being remade (image_record.h): no
	 * transaction, and nothing for a file that follows the log.
	 */
	if (image_record_is(data, len)) {
		a->applied_lsn = lsn;
		return 0;
	}
	if (!txn_record_parse(data, len, &h, err, sizeof(err))) {
		snprintf(why, whylen, "%s: the record at LSN %llu is not a replvfs "
			"transaction: %s", a->name, (unsigned long long)lsn, err);
		return -1;
	}
	if (memcmp(h.db_uuid, a->db_uuid, sizeof(h.db_uuid)) != 0) {
		snprintf(why, whylen, "%s: the record at LSN %llu is another "
			"database's (its identity is not the log's cluster UUID)",
			a->name, (unsigned long long)lsn);
		return -1;
	}
	if (a->page_size != 0 && h.page_size != a->page_size) {
		snprintf(why, whylen, "%s: the record at LSN %llu has %u-byte pages, "
			"the records before it %u", a->name, (unsigned long long)lsn,
			h.page_size, a->page_size);
		return -1;
	}
	/* the writer makes one record of each transaction (docs/sqlite.md) */
	if ((h.flags & (TXN_F_FIRST | TXN_F_LAST)) != (TXN_F_FIRST | TXN_F_LAST)) {
		snprintf(why, whylen, "%s: the record at LSN %llu is a part of a "
			"transaction (flags %#x): parts are not applied", a->name,
			(unsigned long long)lsn, h.flags);
		return -1;
	}
	a->page_size = h.page_size;
	for (uint32_t i = 0; i < h.n_frames; i++) {
		const uint8_t *page;
		uint8_t first[TXN_PAGE_MAX];
		uint32_t pgno;

		txn_frame(data, &h, i, &pgno, &page);
		if (pgno == 1 && a->rollback_header) {
			/*
			 * Readers of a replica's copy are plain SQLite in
			 * rollback-journal mode (rv_copy.c): page 1 says so,
			 * and its change counter tells them to drop their
			 * cache.
			 */
			memcpy(first, page, h.page_size);
			first[DB_HDR_WRITE_VERSION] = 1;
			first[DB_HDR_WRITE_VERSION + 1] = 1;
			a->change_counter++;
			put_be32(first + DB_HDR_CHANGE_COUNTER, a->change_counter);
			put_be32(first + DB_HDR_VALID_FOR, a->change_counter);
			page = first;
		}
		if (rv_write_all(a->fd, page, h.page_size,
				(off_t)(pgno - 1) * h.page_size) != 0) {
			snprintf(why, whylen, "%s: page %u of the record at LSN %llu: %s",
				a->name, pgno, (unsigned long long)lsn, strerror(errno));
			return -1;
		}
#ifdef RPMA_DEBUG_FAULT_INJECTION
		if (a->crash_after_pages != 0 && --a->crash_after_pages == 0)
			raise(SIGKILL);
#endif
	}
	if (ftruncate(a->fd, (off_t)h.db_size * h.page_size) != 0) {
		snprintf(why, whylen, "%s: the record at LSN %llu: truncating to %u "
			"pages: %s", a->name, (unsigned long long)lsn, h.db_size,
			strerror(errno));
		return -1;
	}
	a->db_pages = h.db_size;
	a->applied_lsn = lsn;
	a->txid = txid;
	a->records++;
	return 0;
}

struct rebuild {
	struct rv_apply a;
	char *why;
	size_t whylen;
};

static int
rebuild_one(void *arg, uint64_t lsn, const void *data, size_t len)
{
	struct rebuild *r = arg;

	return rv_apply_record(&r->a, lsn, 0, data, len, r->why, r->whylen) ? 1 : 0;
}

static void
sync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd;

	if (copy == NULL)
		return;
	if ((fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

int
rv_drop_wal(const char *path, char *why, size_t whylen)
{
	char side[4200];

	for (int i = 0; i < 2; i++) {
		snprintf(side, sizeof(side), "%s%s", path, i ? "-shm" : "-wal");
		if (unlink(side) != 0 && errno != ENOENT) {
			snprintf(why, whylen, "%.256s: %s", side, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/*
 * The bases a rebuild can start from when the log no longer holds its
 * first records: of the database's own marker and the copy's (copy_path,
 * may be NULL), those whose LSN reaches need, the newest first (the same
 * file named twice counts once).  The count (0 with why), or -1 with why.
 */
static int
pick_bases(const char *path, const char *copy_path, const uint8_t db_uuid[16],
		uint64_t need, const char *bases[2], uint64_t lsns[2], char *why,
		size_t whylen)
{
	const char *cand[2] = { path, copy_path };
	char said[2][400];
	int n = 0;

	for (int i = 0; i < 2; i++) {
		uint64_t l;
		int ret;

		said[i][0] = '\0';
		if (cand[i] == NULL || (i == 1 && strcmp(cand[1], cand[0]) == 0))
			continue;
		ret = rv_base_read(cand[i], db_uuid, &l, said[i], sizeof(said[i]));
		if (ret == 0)
			snprintf(said[i], sizeof(said[i]), "%.256s has no base marker",
				cand[i]);
		else if (ret > 0 && l < need)
			snprintf(said[i], sizeof(said[i]), "%.256s holds up to LSN %llu",
				cand[i], (unsigned long long)l);
		else if (ret > 0) {
			bases[n] = cand[i];
			lsns[n++] = l;
		}
	}
	if (n == 2 && lsns[1] > lsns[0]) {
		const char *pb = bases[0];
		uint64_t pl = lsns[0];

		bases[0] = bases[1], lsns[0] = lsns[1];
		bases[1] = pb, lsns[1] = pl;
	}
	if (n == 0)
		snprintf(why, whylen, "%s: the log no longer holds LSN %llu and before "
			"(released), and no base holds them: %s%s%s", path,
			(unsigned long long)need, said[0], said[1][0] ? "; " : "",
			said[1]);
	return n;
}

/* the base's bytes into fd; 0, or -1 with why */
static int
copy_base(const char *base, int fd, char *why, size_t whylen)
{
	uint8_t buf[1 << 16];
	ssize_t n;
	int in;

	if ((in = open(base, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "%s: %s", base, strerror(errno));
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (n < 0)
		snprintf(why, whylen, "%s: copying it: %s", base, strerror(errno));
	close(in);
	return n < 0 ? -1 : 0;
}

/*
 * One attempt: the log's records over a copy of base (NULL: over nothing)
 * in tmp, synced and checked.  0 with the file open in *fd, -1 with why.
 */
static int
rebuild_into(struct repl *repl, const char *path, const char *tmp, mode_t mode,
		const char *base, const uint8_t db_uuid[16], rv_rebuild_check *check,
		uint64_t *records, int *fd, char *why, size_t whylen)
{
	static const uint8_t wal_mode[2] = { 2, 2 };
	struct rebuild r = { .why = why, .whylen = whylen };
	int ret;

	if ((r.a.fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) < 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	r.a.name = path;
	memcpy(r.a.db_uuid, db_uuid, sizeof(r.a.db_uuid));
	if (base != NULL && copy_base(base, r.a.fd, why, whylen) != 0)
		goto fail;
	ret = repl_iterate(repl, 0, rebuild_one, &r);
	if (ret < 0) {
		snprintf(why, whylen, "%s: reading its log: %s", path, repl_strerror(ret));
		goto fail;
	}
	if (ret > 0)
		goto fail;
	*records = r.a.records;
	/* a replica's copy says rollback journal on page 1: this is WAL's */
	if (base != NULL && pwrite(r.a.fd, wal_mode, 2, DB_HDR_WRITE_VERSION) != 2) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (fsync(r.a.fd) != 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	/*
	 * What the database will be is checked before it replaces anything:
	 * a base that is not what its marker says shows here, not later in
	 * the application's queries
	 */
	if ((r.a.records > 0 || base != NULL) && check != NULL &&
	    check(tmp, why, whylen) != 0)
		goto fail;
	*fd = r.a.fd;
	return 0;
fail:
	close(r.a.fd);
	return -1;
}

int
rv_rebuild(struct repl *repl, const char *path, const char *copy_path,
		const uint8_t db_uuid[16], rv_rebuild_check *check, uint64_t *records,
		char *why, size_t whylen)
{
	struct repl_status rs;
	const char *bases[2] = { NULL, NULL };
	uint64_t lsns[2] = { 0, 0 }, base_lsn = 0;
	char tmp[4096], tried[600] = "";
	struct stat st;
	mode_t mode = 0644;
	int ret, n_bases = 1, fd = -1, i;

	if (snprintf(tmp, sizeof(tmp), "%s-repl-rebuild", path) >= (int)sizeof(tmp)) {
		snprintf(why, whylen, "%s: the path is too long", path);
		return -1;
	}
	if ((ret = repl_status(repl, &rs)) != 0) {
		snprintf(why, whylen, "%s: its log: %s", path, repl_strerror(ret));
		return -1;
	}
	if (rs.first_lsn > 1 && (n_bases = pick_bases(path, copy_path, db_uuid,
			rs.first_lsn - 1, bases, lsns, why, whylen)) <= 0)
		return -1;
	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	/* each usable base in turn, the newest first, until one checks out */
	for (i = 0; i < n_bases; i++) {
		if (rebuild_into(repl, path, tmp, mode, bases[i], db_uuid, check,
				records, &fd, why, whylen) == 0)
			break;
		if (bases[i] == NULL)
			return -1;
		if (i + 1 < n_bases)
			snprintf(tried, sizeof(tried), "%.590s", why);
	}
	if (i == n_bases) {
		if (tried[0] != '\0') {
			size_t at = strlen(why);

			snprintf(why + at, whylen - at, "; before that, from the newer "
				"base: %s", tried);
		}
		return -1;
	}
	base_lsn = bases[i] != NULL ? lsns[i] : 0;
	if (*records == 0 && bases[i] == NULL) {
		/* nothing to rebuild from: a file with pages is not the log's */
		close(fd);
		unlink(tmp);
		if (stat(path, &st) == 0 && st.st_size > 0) {
			snprintf(why, whylen, "%s: its log holds no transaction, yet the "
				"file holds %lld bytes: open it with repl_bootstrap=1 to "
				"make it the log's (or remove it)", path,
				(long long)st.st_size);
			return -1;
		}
		return 0;
	}
	/* the old -wal's frames are not the log's: gone before the rename */
	if (rv_drop_wal(path, why, whylen) != 0)
		goto fail;
	if (rename(tmp, path) != 0) {
		snprintf(why, whylen, "%s -> %s: %s", tmp, path, strerror(errno));
		goto fail;
	}
	sync_dir_of(path);
	/* every record the log holds is in the file now: it is a base */
	if (rs.last_lsn > base_lsn)
		base_lsn = rs.last_lsn;
	ret = rv_base_write(path, fd, db_uuid, base_lsn, why, whylen);
	close(fd);
	return ret;
fail:
	close(fd);
	unlink(tmp);
	return -1;
}
