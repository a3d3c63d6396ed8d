/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wal_write_order -- the order of SQLite's writes to a -wal, as replvfs
 * relies on it (docs/sqlite.md, "The record"), pinned against the SQLite
 * this is built with.  Plain SQLite (no replication) runs through a VFS
 * that records every write and truncation of the -wal; the record is then
 * checked against these rules:
 *
 *   - the 32-byte header is written before any frame of a generation, and
 *     the generation's frames count from 1 (the header's page size sets
 *     the frame size);
 *   - a new frame is its 24-byte header, then at once its page;
 *   - a new frame lies past the last commit frame and at most one past the
 *     transaction's highest (lower: a rollback or savepoint undo writes
 *     over frames no commit covers);
 *   - a page written without its header goes over a frame of the
 *     transaction not yet committed (a spilled page written again);
 *   - after a commit frame's page, until the next new frame, only headers
 *     of that transaction's frames are written again (checksum rewrites),
 *     naming the same pages, the commit flag only on the commit frame;
 *   - the -wal is truncated to 0, or (journal_size_limit) behind every
 *     frame its generation wrote, never into them: the frames of a
 *     transaction stay in the file until its COMMIT, where replvfs reads
 *     them (sqlite/rv_wal_map.h);
 *   - nothing else is written.
 *
 * The workload, at page sizes 512, 4096 and 65536, with synchronous=FULL:
 * single-row transactions; a transaction whose pages spill from a cache
 * of 10 and are changed again; one rolled back after spilling; one with a
 * savepoint rolled back after spilling; checkpoints RESTART and TRUNCATE,
 * each followed by transactions; a generation begun under
 * journal_size_limit.  Each shape must have happened (spilled
 * pages rewritten, checksums rewritten, frames rewound, new generations):
 * a check that never met a shape would pin nothing.  Exits 0, or 1 with
 * the first write that breaks a rule.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#define WAL_HDR 32
#define FRAME_HDR 24

/* ---- the recording VFS ---- */

enum ev_kind { EV_WRITE, EV_TRUNCATE };

struct ev {
	enum ev_kind kind;
	int64_t off;
	int amt;
	uint32_t w0, w1;	/* the write's first two big-endian words */
};

static struct ev *evs;
static size_t n_evs, cap_evs;

struct rec_file {
	sqlite3_file base;
	sqlite3_file *real;
	bool wal;
};

static sqlite3_vfs *under;

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
record(enum ev_kind kind, int64_t off, int amt, const void *buf)
{
	struct ev *e;

	if (n_evs == cap_evs) {
		cap_evs = cap_evs ? 2 * cap_evs : 4096;
		if ((evs = realloc(evs, cap_evs * sizeof(*evs))) == NULL) {
			fprintf(stderr, "wal_write_order: out of memory\n");
			exit(99);
		}
	}
	e = &evs[n_evs++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->off = off;
	e->amt = amt;
	if (buf != NULL && amt >= 8) {
		e->w0 = be32(buf);
		e->w1 = be32((const uint8_t *)buf + 4);
	}
	/* a WAL header's page size is its third word */
	if (buf != NULL && off == 0 && amt == WAL_HDR)
		e->w1 = be32((const uint8_t *)buf + 8);
}

#define REAL(f) (((struct rec_file *)(f))->real)

static int
rec_close(sqlite3_file *f)
{
	return REAL(f)->pMethods->xClose(REAL(f));
}

static int
rec_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	return REAL(f)->pMethods->xRead(REAL(f), buf, amt, off);
}

static int
rec_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	if (((struct rec_file *)f)->wal)
		record(EV_WRITE, off, amt, buf);
	return REAL(f)->pMethods->xWrite(REAL(f), buf, amt, off);
}

static int
rec_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	if (((struct rec_file *)f)->wal)
		record(EV_TRUNCATE, size, 0, NULL);
	return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int
rec_sync(sqlite3_file *f, int flags)
{
	return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int
rec_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int
rec_lock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xLock(REAL(f), lock);
}

static int
rec_unlock(sqlite3_file *f, int lock)
{
	return REAL(f)->pMethods->xUnlock(REAL(f), lock);
}

static int
rec_check_reserved(sqlite3_file *f, int *out)
{
	return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int
rec_file_control(sqlite3_file *f, int op, void *arg)
{
	return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int
rec_sector_size(sqlite3_file *f)
{
	return REAL(f)->pMethods->xSectorSize(REAL(f));
}

/* what replvfs says of itself: no padding after a commit frame */
static int
rec_device_characteristics(sqlite3_file *f)
{
	return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)) |
		SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

static int
rec_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, pp);
}

static int
rec_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}

static void
rec_shm_barrier(sqlite3_file *f)
{
	REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int
rec_shm_unmap(sqlite3_file *f, int delete_flag)
{
	return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag);
}

/* version 2: no xFetch, so SQLite reads through xRead (mmap is off) */
static const sqlite3_io_methods rec_methods = {
	.iVersion = 2,
	.xClose = rec_close,
	.xRead = rec_read,
	.xWrite = rec_write,
	.xTruncate = rec_truncate,
	.xSync = rec_sync,
	.xFileSize = rec_file_size,
	.xLock = rec_lock,
	.xUnlock = rec_unlock,
	.xCheckReservedLock = rec_check_reserved,
	.xFileControl = rec_file_control,
	.xSectorSize = rec_sector_size,
	.xDeviceCharacteristics = rec_device_characteristics,
	.xShmMap = rec_shm_map,
	.xShmLock = rec_shm_lock,
	.xShmBarrier = rec_shm_barrier,
	.xShmUnmap = rec_shm_unmap,
};

static int
rec_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
		int *out_flags)
{
	struct rec_file *rf = (struct rec_file *)f;
	int rc;

	(void)vfs;
	memset(rf, 0, sizeof(*rf));
	rf->real = (sqlite3_file *)(rf + 1);
	rf->wal = (flags & SQLITE_OPEN_WAL) != 0;
	if ((rc = under->xOpen(under, name, rf->real, flags, out_flags)) != SQLITE_OK)
		return rc;
	rf->base.pMethods = &rec_methods;
	return SQLITE_OK;
}

static sqlite3_vfs rec_vfs;

static void
register_vfs(void)
{
	under = sqlite3_vfs_find(NULL);
	/* the default VFS's own calls, with its pAppData: only xOpen differs */
	rec_vfs = *under;
	rec_vfs.pNext = NULL;
	rec_vfs.zName = "rec";
	rec_vfs.szOsFile = (int)sizeof(struct rec_file) + under->szOsFile;
	rec_vfs.xOpen = rec_open;
	if (sqlite3_vfs_register(&rec_vfs, 0) != SQLITE_OK) {
		fprintf(stderr, "wal_write_order: sqlite3_vfs_register failed\n");
		exit(99);
	}
}

/* ---- the rules ---- */

struct seen {
	unsigned headers, commits, spill_rewrites, cksum_rewrites, rewinds;
	unsigned limit_cuts;
};

static int
broken(size_t i, const char *rule)
{
	const struct ev *e = &evs[i];

	fprintf(stderr, "wal_write_order: write %zu (%s of %d bytes at offset %" PRId64
		"): %s\n", i, e->kind == EV_TRUNCATE ? "truncate" : "write", e->amt,
		e->off, rule);
	return 1;
}

static int
check(struct seen *s)
{
	uint32_t ps = 0, *pgno = NULL, cap = 0;
	uint32_t last_commit = 0, committed_first = 0, txn_top = 0, pending = 0;
	bool pending_commit = false, after_commit = false;
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n_evs; i++) {
		const struct ev *e = &evs[i];
		int64_t step = FRAME_HDR + (int64_t)ps, at = e->off - WAL_HDR;
		uint32_t f;

		if (e->kind == EV_TRUNCATE) {
			if (pending != 0)
				return broken(i, "truncated between a frame's header and page");
			if (e->off == 0) {
				ps = 0;
				continue;
			}
			if (ps == 0 || e->off < WAL_HDR + (int64_t)txn_top * step)
				return broken(i, "the -wal truncated into the frames of "
					"its generation");
			s->limit_cuts++;
			continue;
		}
		if (e->off == 0 && e->amt == WAL_HDR) {
			if (pending != 0)
				return broken(i, "a WAL header between a frame's header and page");
			ps = e->w1;
			if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0)
				return broken(i, "a WAL header with a bad page size");
			last_commit = committed_first = txn_top = 0;
			after_commit = false;
			s->headers++;
			continue;
		}
		if (ps == 0)
			return broken(i, "a frame written before the generation's header");
		if (at < 0 || (at % step != 0 && at % step != FRAME_HDR))
			return broken(i, "neither the header, a frame's header nor a page");
		f = (uint32_t)(at / step) + 1;
		if (f >= cap) {
			uint32_t nc = cap ? 2 * cap : 1024;

			while (nc <= f)
				nc *= 2;
			if ((pgno = realloc(pgno, nc * sizeof(*pgno))) == NULL)
				return broken(i, "out of memory");
			memset(pgno + cap, 0, (nc - cap) * sizeof(*pgno));
			cap = nc;
		}
		if (at % step == 0) {
			if (e->amt != FRAME_HDR)
				return broken(i, "a frame's header that is not 24 bytes");
			if (pending != 0)
				return broken(i, "a frame's header before the last one's page");
			if (f <= last_commit) {
				if (!after_commit || f < committed_first)
					return broken(i, "a committed frame's header written again "
						"outside the checksum rewrite of its COMMIT");
				if (e->w0 != pgno[f] || (e->w1 != 0) != (f == last_commit))
					return broken(i, "a checksum rewrite that changes the page "
						"or the commit flag");
				s->cksum_rewrites++;
				continue;
			}
			if (f > txn_top + 1)
				return broken(i, "a new frame past the next one");
			if (f <= txn_top)
				s->rewinds++;
			txn_top = f;
			pgno[f] = e->w0;
			pending = f;
			pending_commit = e->w1 != 0;
			after_commit = false;
			continue;
		}
		if (e->amt != (int)ps)
			return broken(i, "a page that is not the header's page size");
		if (pending != 0) {
			if (f != pending)
				return broken(i, "a page of another frame than the header just written");
			pending = 0;
			if (pending_commit) {
				committed_first = last_commit + 1;
				last_commit = f;
				after_commit = true;
				s->commits++;
				/* frames past it were rolled back: the next is f + 1 */
				txn_top = f;
			}
			continue;
		}
		if (f <= last_commit || f > txn_top)
			return broken(i, "a page written again outside the transaction's "
				"uncommitted frames");
		s->spill_rewrites++;
	}
	free(pgno);
	return pending != 0 ? broken(n_evs - 1, "the last frame has no page") : 0;
}

/* ---- the workload ---- */

static sqlite3 *db;

static void
sql(const char *q)
{
	char *err = NULL;

	if (sqlite3_exec(db, q, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "wal_write_order: %s: %s\n", q, err ? err : "?");
		exit(1);
	}
}

static void
small(int n)
{
	for (int i = 0; i < n; i++)
		sql("INSERT INTO t(g, p) VALUES(1, randomblob(40))");
}

#define ROWS(n, len) "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 " \
	"FROM n WHERE i < " #n ") INSERT INTO t(g, p) SELECT 2, randomblob(" #len ") FROM n"

static int
run(const char *dir, int page_size)
{
	char path[4096], q[64];
	struct seen s;

	snprintf(path, sizeof(path), "%s/order-%d.db", dir, page_size);
	unlink(path);
	n_evs = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			"rec") != SQLITE_OK) {
		fprintf(stderr, "wal_write_order: open %s: %s\n", path, sqlite3_errmsg(db));
		return 1;
	}
	snprintf(q, sizeof(q), "PRAGMA page_size=%d", page_size);
	sql(q);
	sql("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	    "CREATE TABLE t(id INTEGER PRIMARY KEY, g INT, p BLOB)");
	small(20);
	/* spilled, then changed again: rewritten in place, checksums again */
	sql("PRAGMA cache_size=10; BEGIN;" ROWS(400, 3000) ";"
	    "UPDATE t SET p = randomblob(3000) WHERE g = 2; COMMIT");
	small(3);
	/* spilled, then rolled back: the next transaction writes over it */
	sql("BEGIN;" ROWS(400, 3000) "; ROLLBACK");
	small(3);
	/* a savepoint rolled back after spilling */
	sql("BEGIN;" ROWS(50, 3000) "; SAVEPOINT s;" ROWS(400, 3000) ";"
	    "ROLLBACK TO s;" ROWS(20, 100) "; COMMIT");
	small(3);
	sql("PRAGMA cache_size=-2000; PRAGMA wal_checkpoint(RESTART)");
	small(5);
	sql("PRAGMA wal_checkpoint(TRUNCATE)");
	small(5);
	/* the first commit of a generation cuts the -wal behind its frames */
	sql("PRAGMA journal_size_limit=0; BEGIN;" ROWS(100, 3000) "; COMMIT;"
	    "PRAGMA wal_checkpoint(RESTART)");
	small(5);
	sql("PRAGMA journal_size_limit=-1");
	sqlite3_close(db);
	unlink(path);
	if (check(&s) != 0)
		return 1;
	printf("wal_write_order: page size %d: %zu writes, %u generations, %u commits, "
		"%u spilled pages rewritten, %u checksum rewrites, %u frames rewound, "
		"%u cut behind\n", page_size, n_evs, s.headers, s.commits,
		s.spill_rewrites, s.cksum_rewrites, s.rewinds, s.limit_cuts);
	if (s.headers < 3 || s.commits < 40 || s.spill_rewrites == 0 ||
	    s.cksum_rewrites == 0 || s.rewinds == 0 || s.limit_cuts == 0) {
		fprintf(stderr, "wal_write_order: page size %d: a shape of the workload "
			"did not happen, so its rule was not checked\n", page_size);
		return 1;
	}
	return 0;
}

int
main(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	static const int sizes[] = { 512, 4096, 65536 };

	printf("wal_write_order: SQLite %s\n", sqlite3_libversion());
	register_vfs();
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (run(dir, sizes[i]) != 0)
			return 1;
	free(evs);
	return 0;
}
