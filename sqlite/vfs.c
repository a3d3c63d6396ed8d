/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vfs.c -- the "repl" VFS: SQLite's default VFS with the -wal's writes
 * watched.  A database opened through it (file:NAME?vfs=repl&repl_conf=
 * FILE) has its log opened as the primary (rv_db.c); every WAL frame
 * written is staged, and the write of the commit frame's page appends the
 * transaction as one record.  The COMMIT waits for it in the connection's
 * WAL hook, once SQLite has let its write lock go (or, when the hook is
 * not ours, in that write).  Strict, a read of the -wal by a connection
 * that does not hold the write lock waits until the frame it reads is
 * durable, and a connection that held the lock waits at its next read
 * lock (rv_db_readers.c): no reader of this process sees a transaction
 * before it is durable where the configuration says.
 *
 * The database file, the -shm and every other file pass through
 * unchanged.  The VFS reports SQLITE_IOCAP_POWERSAFE_OVERWRITE, so that
 * SQLite never pads a commit frame with copies of itself; and it refuses
 * the writes of a rollback-journal transaction (main_write_ok): a
 * database of this VFS is in WAL mode, where each transaction is frames.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "replvfs.h"
#include "rv_admin.h"
#include "rv_node.h"
#include "rv_check.h"
#include "rv_db.h"
#include "rv_ha.h"
#include "rv_wal_map.h"
#include "repld_conf.h"

#define WAL_HDR 32

enum rv_kind { RV_OTHER = 0, RV_MAIN, RV_WAL };

struct rv_file {
	sqlite3_file base;
	enum rv_kind kind;
	struct rv_db *db;		/* RV_MAIN, RV_WAL (NULL: a replica's) */
	/*
	 * RV_MAIN, RV_WAL of a database with failover (rv_ha.h): its node,
	 * the node's generation the file opened in (once past, every call
	 * fails: stale()), and whether it opened on a replica (reads only).
	 */
	struct rv_ha *ha;
	uint64_t gen;
	bool replica;
	bool told;			/* stale: said once in SQLite's log */
	bool wal_mode;			/* RV_MAIN: its header says WAL mode */
	bool write_locked;		/* RV_MAIN: its connection holds
					   SQLite's WAL write lock */
	uint64_t seen_lsn;		/* RV_MAIN: appended when it let the
					   write lock go (rv_shm_lock) */
	struct rv_file *owner;		/* RV_WAL: its connection's RV_MAIN */
	struct rv_wal_map map;		/* RV_WAL: where a commit reads its pages */
	sqlite3_file real[];		/* the default VFS's file, szOsFile bytes */
};

static sqlite3_vfs *under;		/* the default VFS */

static sqlite3_file *
real_of(sqlite3_file *f)
{
	return ((struct rv_file *)f)->real;
}

/* the node changed role since the file opened: the application reopens */
static bool
stale(struct rv_file *rf)
{
	if (rf->ha == NULL || rf->gen == rv_ha_gen(rf->ha))
		return false;
	if (!rf->told && rf->kind == RV_MAIN) {
		rf->told = true;
		sqlite3_log(REPLVFS_IOERR_ROLE, "replvfs: a connection opened on the %s "
			"is used after its node changed role: close it and open the "
			"database again", rf->replica ? "replica" : "primary");
	}
	return true;
}

/* ---- methods: passed through, the -wal's writes watched ---- */

static int
rv_close(sqlite3_file *f)
{
	struct rv_file *rf = (struct rv_file *)f;
	int rc = rf->real->pMethods ? rf->real->pMethods->xClose(rf->real) : SQLITE_OK;

	if (rf->kind == RV_WAL)
		rv_wal_map_close(&rf->map);
	rv_db_put(rf->db);
	rf->db = NULL;
	rv_ha_put(rf->ha);
	rf->ha = NULL;
	return rc;
}

static int
rv_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct rv_file *rf = (struct rv_file *)f;
	int rc;

	if (stale(rf))
		return REPLVFS_IOERR_ROLE;
	/* strict: no frame of a commit in flight, but to the writer */
	if (rf->kind == RV_WAL && rf->db != NULL &&
	    (rf->owner == NULL || !rf->owner->write_locked) &&
	    (rc = rv_db_wal_read(rf->db, off)) != SQLITE_OK)
		return rc;
	return real_of(f)->pMethods->xRead(real_of(f), buf, amt, off);
}

/*
 * A write of the database file itself.  In WAL mode those are a
 * checkpoint's copies of frames the log holds.  Outside it they would be
 * a rollback-journal transaction, which no record carries: refused, but
 * for the one that makes a new, empty database a WAL one (PRAGMA
 * journal_mode=WAL: page 1 with its format bytes 18 and 19 set to 2).
 */
static int
main_write_ok(struct rv_file *rf, const uint8_t *buf, int amt, sqlite3_int64 off)
{
	sqlite3_int64 size = 0;
	uint8_t hdr[20];

	if (rf->wal_mode)
		return SQLITE_OK;
	if (rf->real->pMethods->xFileSize(rf->real, &size) != SQLITE_OK)
		return SQLITE_IOERR_WRITE;
	if (size >= (sqlite3_int64)sizeof(hdr) &&
	    rf->real->pMethods->xRead(rf->real, hdr, sizeof(hdr), 0) == SQLITE_OK &&
	    hdr[18] == 2 && hdr[19] == 2) {
		rf->wal_mode = true;
		return SQLITE_OK;
	}
	if (size == 0 && off == 0 && amt >= 20 && buf[18] == 2 && buf[19] == 2)
		return SQLITE_OK;
	sqlite3_log(SQLITE_IOERR, "replvfs: a write of a database not in WAL mode "
		"is refused: its transactions would not be in the log (a new "
		"database: PRAGMA journal_mode=WAL before anything else; an "
		"existing one is not taken over)");
	return SQLITE_IOERR_WRITE;
}

static int
rv_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct rv_file *rf = (struct rv_file *)f;
	int rc;

	if (stale(rf))
		return REPLVFS_IOERR_ROLE;
	if (rf->replica)
		return REPLVFS_READONLY_REPLICA;
	if (rf->kind == RV_MAIN && ((rc = main_write_ok(rf, buf, amt, off)) != SQLITE_OK ||
	    (rc = rv_db_checkpoint_write(rf->db)) != SQLITE_OK))
		return rc;
	/* the -wal gets the bytes first: SQLite reads its frames back */
	rc = rf->real->pMethods->xWrite(rf->real, buf, amt, off);
	if (rc != SQLITE_OK || rf->kind != RV_WAL)
		return rc;
	return rv_db_wal_write(rf->db, &rf->map, buf, amt, off);
}

static int
rv_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct rv_file *rf = (struct rv_file *)f;

	if (stale(rf))
		return REPLVFS_IOERR_ROLE;
	if (rf->replica)
		return REPLVFS_READONLY_REPLICA;
	if (rf->kind == RV_WAL && size == 0)
		rv_db_wal_reset(rf->db);
	return rf->real->pMethods->xTruncate(rf->real, size);
}

/*
 * The -wal is not synced: a COMMIT is durable in the log, and every open
 * rebuilds the database file from the log (rv_rebuild), so the -wal is a
 * cache of what the log holds.  The database file is synced as usual.
 */
static int
rv_sync(sqlite3_file *f, int flags)
{
	if (((struct rv_file *)f)->kind == RV_WAL)
		return SQLITE_OK;
	return real_of(f)->pMethods->xSync(real_of(f), flags);
}

static int
rv_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return real_of(f)->pMethods->xFileSize(real_of(f), size);
}

/*
 * A replica's connection reads: its first step to a write (RESERVED) is
 * refused, and SQLite's log says where the primary is.
 */
static int
rv_lock(sqlite3_file *f, int level)
{
	struct rv_file *rf = (struct rv_file *)f;

	if (level > SQLITE_LOCK_NONE && stale(rf))
		return REPLVFS_IOERR_ROLE;
	if (rf->replica && level >= SQLITE_LOCK_RESERVED) {
		rv_ha_say_read_only(rf->ha);
		return REPLVFS_READONLY_REPLICA;
	}
	return rf->real->pMethods->xLock(rf->real, level);
}

static int
rv_unlock(sqlite3_file *f, int level)
{
	/* after a commit's frames: an arm a commit without frames left
	 * must not carry over to another connection's commit */
	if (((struct rv_file *)f)->kind == RV_MAIN && level == SQLITE_LOCK_NONE)
		rv_db_disarm_pending();
	return real_of(f)->pMethods->xUnlock(real_of(f), level);
}

static int
rv_check_reserved(sqlite3_file *f, int *out)
{
	return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}

/*
 * "PRAGMA journal_mode" to anything but WAL is refused on our databases.
 * On a replica's connection the database is its primary's, in WAL mode:
 * asking for WAL changes nothing there and says "wal", so an application
 * that sets it at every open opens on a replica too.
 */
static int
pragma(struct rv_file *rf, char **arg)
{
	const char *name = arg[1], *value = arg[2];

	if (rf->replica && name != NULL && sqlite3_stricmp(name, "journal_mode") == 0 &&
	    value != NULL && sqlite3_stricmp(value, "wal") == 0) {
		arg[0] = sqlite3_mprintf("wal");
		return SQLITE_OK;
	}
	if (name != NULL && sqlite3_stricmp(name, "journal_mode") == 0 &&
	    value != NULL && sqlite3_stricmp(value, "wal") != 0) {
		arg[0] = sqlite3_mprintf("replvfs: a replicated database stays in "
			"WAL mode (journal_mode=%s refused)", value);
		return SQLITE_ERROR;
	}
	return rf->real->pMethods->xFileControl(rf->real, SQLITE_FCNTL_PRAGMA, arg);
}

static int
rv_file_control(sqlite3_file *f, int op, void *arg)
{
	struct rv_file *rf = (struct rv_file *)f;

	if (op == SQLITE_FCNTL_PRAGMA && rf->kind == RV_MAIN)
		return pragma(rf, arg);
	return rf->real->pMethods->xFileControl(rf->real, op, arg);
}

static int
rv_sector_size(sqlite3_file *f)
{
	return real_of(f)->pMethods->xSectorSize(real_of(f));
}

static int
rv_device_characteristics(sqlite3_file *f)
{
	return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f)) |
		SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

static int
rv_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	if (stale((struct rv_file *)f))
		return REPLVFS_IOERR_ROLE;
	return real_of(f)->pMethods->xShmMap(real_of(f), pg, pgsz, extend, pp);
}

/* SQLite's WAL write lock, the first of the -shm's locks; the readers' from 3 */
#define SHM_WRITE_LOCK 0
#define SHM_READ_LOCK_0 3

static int
rv_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	struct rv_file *rf = (struct rv_file *)f;
	int rc;

	if ((flags & SQLITE_SHM_LOCK) && stale(rf))
		return REPLVFS_IOERR_ROLE;
	/*
	 * Strict: a connection that wrote may hold commits in flight in its
	 * page cache; its next read transaction waits for them
	 * (rv_db_readers.c)
	 */
	if (rf->seen_lsn != 0 && rf->db != NULL && offset >= SHM_READ_LOCK_0 &&
	    flags == (SQLITE_SHM_LOCK | SQLITE_SHM_SHARED)) {
		if ((rc = rv_db_wait_seen(rf->db, rf->seen_lsn)) != SQLITE_OK)
			return rc;
		rf->seen_lsn = 0;
	}
	rc = real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
	/* who writes reads the commits in flight it builds on (rv_read) */
	if (rc == SQLITE_OK && offset <= SHM_WRITE_LOCK && SHM_WRITE_LOCK < offset + n) {
		if (rf->write_locked && (flags & SQLITE_SHM_UNLOCK) && rf->db != NULL)
			rf->seen_lsn = rv_db_appended_lsn(rf->db);
		rf->write_locked = (flags & SQLITE_SHM_LOCK) && (flags & SQLITE_SHM_EXCLUSIVE);
	}
	return rc;
}

static void
rv_shm_barrier(sqlite3_file *f)
{
	real_of(f)->pMethods->xShmBarrier(real_of(f));
}

static int
rv_shm_unmap(sqlite3_file *f, int del)
{
	/* a stale primary's -shm is the copy's to remove, not its */
	if (stale((struct rv_file *)f))
		del = 0;
	return real_of(f)->pMethods->xShmUnmap(real_of(f), del);
}

static int
rv_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	return real_of(f)->pMethods->xFetch(real_of(f), off, amt, pp);
}

static int
rv_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return real_of(f)->pMethods->xUnfetch(real_of(f), off, p);
}

static const sqlite3_io_methods rv_methods = {
	.iVersion = 3,
	.xClose = rv_close,
	.xRead = rv_read,
	.xWrite = rv_write,
	.xTruncate = rv_truncate,
	.xSync = rv_sync,
	.xFileSize = rv_file_size,
	.xLock = rv_lock,
	.xUnlock = rv_unlock,
	.xCheckReservedLock = rv_check_reserved,
	.xFileControl = rv_file_control,
	.xSectorSize = rv_sector_size,
	.xDeviceCharacteristics = rv_device_characteristics,
	.xShmMap = rv_shm_map,
	.xShmLock = rv_shm_lock,
	.xShmBarrier = rv_shm_barrier,
	.xShmUnmap = rv_shm_unmap,
	.xFetch = rv_fetch,
	.xUnfetch = rv_unfetch,
};

/* ---- the VFS ---- */

/* an existing -wal's header: its page size and salts */
static int
wal_opened(struct rv_file *rf)
{
	sqlite3_int64 size = 0;
	uint8_t hdr[WAL_HDR];
	int rc;

	if ((rc = rf->real->pMethods->xFileSize(rf->real, &size)) != SQLITE_OK)
		return rc;
	if (size < WAL_HDR)
		return SQLITE_OK;
	if ((rc = rf->real->pMethods->xRead(rf->real, hdr, WAL_HDR, 0)) != SQLITE_OK)
		return rc;
	return rv_db_wal_seen(rf->db, hdr);
}

/* repl_commit: "strict" (the default) or "pipelined"; false: strict */
static bool
commit_mode(sqlite3_filename name)
{
	const char *m = sqlite3_uri_parameter(name, "repl_commit");

	return m != NULL && sqlite3_stricmp(m, "pipelined") == 0;
}

/*
 * A connection's database: the node's when repl_conf names a coordinator
 * (rv_ha.h: the primary's database, or on a replica none), else the
 * database opened as the primary (rv_db.h).  0, or -1 with why.
 */
static int
main_open(struct rv_file *rf, sqlite3_filename name, rv_rebuild_check *check,
		char *why, size_t whylen)
{
	const char *conf_path = sqlite3_uri_parameter(name, "repl_conf");
	const struct rv_db_how how = {
		.bootstrap = sqlite3_uri_boolean(name, "repl_bootstrap", 0),
		.timeout_ms = (int)sqlite3_uri_int64(name, "repl_timeout_ms",
			REPLVFS_TIMEOUT_MS),
		.pipelined = commit_mode(name),
		.check = check,
	};
	struct repld_conf conf;
	char err[512];
	int role;

	rf->ha = rv_ha_find(name);
	if (rf->ha == NULL && (rf->db = rv_db_find(name)) != NULL)
		return 0;
	if (rf->ha == NULL && conf_path != NULL && *conf_path != '\0') {
		if (repld_conf_load(conf_path, &conf, err, sizeof(err)) != 0) {
			snprintf(why, whylen, "replvfs: %s: %s", conf_path, err);
			return -1;
		}
		if (conf.coordinator.n_endpoints > 0) {
			rf->ha = rv_ha_get(name, conf_path, &conf, &how, why, whylen);
			if (rf->ha == NULL)
				return -1;
		} else {
			repld_conf_free(&conf);
		}
	}
	if (rf->ha == NULL) {
		rf->db = rv_db_get(name, conf_path, how.bootstrap, how.timeout_ms,
			how.pipelined, check, why, whylen);
		return rf->db != NULL ? 0 : -1;
	}
	/* a change of role ends within a promotion's time, or the open fails */
	role = rv_ha_attach(rf->ha, how.timeout_ms > 30000 ? how.timeout_ms : 30000,
		&rf->gen, &rf->db, why, whylen);
	if (role < 0) {
		rv_ha_put(rf->ha);
		rf->ha = NULL;
		return -1;
	}
	rf->replica = role == RV_HA_REPLICA;
	return 0;
}

static int
rv_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
		int *out_flags)
{
	struct rv_file *rf = (struct rv_file *)f;
	char why[768];
	int rc;

	(void)vfs;
	memset(rf, 0, sizeof(*rf));
	if (name != NULL && (flags & SQLITE_OPEN_MAIN_DB)) {
		const char *how = sqlite3_uri_parameter(name, "repl_rebuild_check");
		rv_rebuild_check *check;

		rf->kind = RV_MAIN;
		if (!rv_check_by_name(how, &check)) {
			sqlite3_log(SQLITE_CANTOPEN, "replvfs: %s: repl_rebuild_check=%s: "
				"it is integrity, quick or off", name, how);
			return SQLITE_CANTOPEN;
		}
		if (main_open(rf, name, check, why, sizeof(why)) != 0) {
			sqlite3_log(SQLITE_CANTOPEN, "%s", why);
			return SQLITE_CANTOPEN;
		}
		/* replctl's socket is a convenience: the database opens without */
		if (sqlite3_uri_boolean(name, "repl_admin", 0) && rf->db != NULL &&
		    rv_db_admin_listen(rf->db, why, sizeof(why)) != 0)
			sqlite3_log(SQLITE_WARNING, "replvfs: %s: repl_admin=1: %s", name,
				why);
	} else if (name != NULL && (flags & SQLITE_OPEN_WAL)) {
		rf->kind = RV_WAL;
		rv_wal_map_init(&rf->map);
		rf->db = rv_db_find(sqlite3_filename_database(name));
		if ((rf->ha = rv_ha_find(sqlite3_filename_database(name))) != NULL)
			rf->gen = rv_ha_gen(rf->ha);
		/*
		 * A replica's connection found a file that came from a primary
		 * (page 1 says WAL) before the copy holds it: busy, as the copy
		 * keeps readers out until it has caught up, and never that -wal
		 * (it may hold transactions no log kept).
		 */
		if (rf->db == NULL && rf->ha != NULL) {
			rv_ha_put(rf->ha);
			rf->ha = NULL;
			return SQLITE_BUSY;
		}
		if (rf->db == NULL) {
			sqlite3_log(SQLITE_CANTOPEN, "replvfs: %s: a -wal without its "
				"database open", name);
			return SQLITE_CANTOPEN;
		}
		/* the connection's database file, which takes its -shm locks */
		rf->owner = (struct rv_file *)sqlite3_database_file_object(name);
		if (rf->owner != NULL && rf->owner->base.pMethods != &rv_methods)
			rf->owner = NULL;
	}
	rc = under->xOpen(under, name, rf->real, flags, out_flags);
	if (rc != SQLITE_OK) {
		rv_db_put(rf->db);
		rf->db = NULL;
		rv_ha_put(rf->ha);
		rf->ha = NULL;
		return rc;
	}
	rf->base.pMethods = &rv_methods;
	if (rf->kind == RV_WAL && rv_wal_map_open(&rf->map, name) != 0) {
		sqlite3_log(SQLITE_CANTOPEN, "replvfs: %s: opened for its commits' "
			"pages: %s", name, strerror(errno));
		rv_close(f);
		rf->base.pMethods = NULL;
		return SQLITE_CANTOPEN;
	}
	if (rf->kind == RV_WAL && (rc = wal_opened(rf)) != SQLITE_OK) {
		rv_close(f);
		rf->base.pMethods = NULL;
		return rc;
	}
	return SQLITE_OK;
}

static int
rv_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	return under->xDelete(under, name, sync_dir);
}

static int
rv_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return under->xAccess(under, name, flags, out);
}

static int
rv_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return under->xFullPathname(under, name, n, out);
}

static void *
rv_dl_open(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return under->xDlOpen(under, name);
}

static void
rv_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	under->xDlError(under, n, msg);
}

static void (*rv_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return under->xDlSym(under, h, sym);
}

static void
rv_dl_close(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	under->xDlClose(under, h);
}

static int
rv_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return under->xRandomness(under, n, out);
}

static int
rv_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return under->xSleep(under, us);
}

static int
rv_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return under->xCurrentTime(under, out);
}

static int
rv_get_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return under->xGetLastError ? under->xGetLastError(under, n, out) : 0;
}

static int
rv_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	(void)vfs;
	return under->xCurrentTimeInt64(under, out);
}

static sqlite3_vfs rv_vfs = {
	.iVersion = 2,
	.zName = REPLVFS_NAME,
	.xOpen = rv_open,
	.xDelete = rv_delete,
	.xAccess = rv_access,
	.xFullPathname = rv_full_pathname,
	.xDlOpen = rv_dl_open,
	.xDlError = rv_dl_error,
	.xDlSym = rv_dl_sym,
	.xDlClose = rv_dl_close,
	.xRandomness = rv_randomness,
	.xSleep = rv_sleep,
	.xCurrentTime = rv_current_time,
	.xGetLastError = rv_get_last_error,
	.xCurrentTimeInt64 = rv_current_time_int64,
};

/*
 * A commit waits in the connection's WAL hook, which SQLite runs
 * in the committing thread after it let the write lock go.  SQLite sets
 * every new connection's WAL hook itself (its automatic checkpoint) after
 * the extensions ran, and an application may set one too, so the hook is
 * set anew by a commit hook just before each commit, which also arms this
 * thread's commit (rv_db_arm_pending): only an armed commit defers its
 * wait; one whose connection has no such commit hook (an application set
 * its own) waits in the VFS, inside the write lock.  A WAL hook replaces the
 * automatic checkpoint, so it checkpoints (PASSIVE) as that would, at
 * 1000 frames.
 */
#define AUTOCHECKPOINT_FRAMES 1000

/* the database of a connection's schema, when it is one of ours */
static struct rv_db *
db_of(sqlite3 *db, const char *schema)
{
	sqlite3_file *f = NULL;

	if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods != &rv_methods)
		return NULL;
	return ((struct rv_file *)f)->db;
}

struct rv_db *
replvfs_db_of(sqlite3 *db, const char *schema)
{
	return db_of(db, schema);
}

struct rv_ha *
replvfs_ha_of(sqlite3 *db, const char *schema)
{
	sqlite3_file *f = NULL;

	if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
	    f == NULL || f->pMethods != &rv_methods)
		return NULL;
	return ((struct rv_file *)f)->ha;
}

static int
wal_hook(void *arg, sqlite3 *db, const char *schema, int frames)
{
	int rc = rv_db_wait_pending();
	struct rv_db *d;

	(void)arg;
	/* also before the log fills: only a checkpoint lets it release */
	if (frames >= AUTOCHECKPOINT_FRAMES ||
	    ((d = db_of(db, schema)) != NULL && rv_db_checkpoint_due(d)))
		(void)sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE,
			NULL, NULL);
	return rc;
}

static int
commit_hook(void *arg)
{
	(void)sqlite3_wal_hook(arg, wal_hook, NULL);
	rv_db_arm_pending();
	return 0;
}

static int
conn_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	sqlite3_vfs *v = NULL;

	(void)err;
	(void)api;
	/* every connection: a copy's reader asks where the primary is too */
	(void)rv_node_register(db);
	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &v) == SQLITE_OK &&
	    v == &rv_vfs) {
		(void)sqlite3_commit_hook(db, commit_hook, db);
		/* without them the connection still commits: not an error */
		(void)rv_admin_register(db);
	}
	return SQLITE_OK;
}

int
replvfs_register(void)
{
	if (sqlite3_vfs_find(REPLVFS_NAME) != NULL)
		return SQLITE_OK;
	if ((under = sqlite3_vfs_find(NULL)) == NULL)
		return SQLITE_ERROR;
	rv_vfs.mxPathname = under->mxPathname;
	rv_vfs.szOsFile = (int)sizeof(struct rv_file) + under->szOsFile;
	if (sqlite3_auto_extension((void (*)(void))conn_init) != SQLITE_OK)
		return SQLITE_ERROR;
	return sqlite3_vfs_register(&rv_vfs, 0);
}
