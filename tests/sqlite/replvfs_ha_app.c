/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replvfs_ha_app -- the application of the automatic-failover test of
 * replvfs (replvfs_ha.sh): one runs on every node, its database opened
 * with a repl_conf that has a coordinator, so the process is a primary or
 * a replica as the coordinator decides.  It writes whenever its node is
 * the primary and reopens its connection whenever the role changes.
 *
 *   replvfs_ha_app EXTENSION URI ACKED EVENTS
 *   replvfs_ha_app --check FILE ACKED
 *
 * It loops until SIGTERM (then exit 0): BEGIN IMMEDIATE; next id =
 * max(id) + 1; insert it into a(id, payload) and b(id, id * 7); COMMIT.
 * The payload starts with the writer's tag, "p<pid>.<ms>.", then random
 * bytes (1 to 3 pages every 64th id), so an id committed by an old
 * primary and lost cannot pass for the one a new primary commits with
 * the same id.  On SQLITE_OK of COMMIT it appends "ID TAG" to ACKED
 * (shared by every node, O_APPEND, after the COMMIT returned: a kill may
 * leave a committed id out, never put one in that was not acknowledged).
 *
 * Errors: SQLITE_READONLY (a replica): sleep 20 ms and try again;
 * SQLITE_BUSY / SQLITE_LOCKED: again; SQLITE_ERROR on a replica (its copy
 * without the tables yet): again; SQLITE_IOERR (among them SQLITE_IOERR |
 * 64 << 8, the node's role changed): close the connection and open it
 * again (every 50 ms until the open works); anything else the same, noted
 * "unexpected" in EVENTS.  Each time the connection opens as the primary it checks the
 * database before its first write: PRAGMA integrity_check is ok, every
 * acknowledged id is in a and b with its writer's tag, a and b hold the
 * same ids, b's values are right; otherwise it says what is wrong on
 * stderr, "FAIL ..." in EVENTS, and exits 1.  SIGUSR1: stop writing
 * (stay open, as the primary: its replicas learn its last commit point);
 * SIGUSR2: write again.
 *
 * EVENTS gets a line per event, appended and written at once, times in
 * ms of CLOCK_REALTIME (bash's EPOCHREALTIME):
 *   start PID T TAG
 *   open ROLE T OPEN_MS PRIMARY    (repl_role() and repl_primary() of a
 *                                   new connection; PRIMARY JSON or null)
 *   checked ACKED ROWS NEXT T      (the primary's check passed)
 *   first_commit T ID              (the first COMMIT of a connection that
 *                                   opened as the primary)
 *   readonly T EXT MESSAGE         (the first refused write of a replica's
 *                                   connection)
 *   reopen T EXT WHERE MESSAGE     (why the connection is closed)
 *   unexpected T EXT WHERE MESSAGE (an error this test does not expect:
 *                                   the connection is reopened)
 *   open_failed T EXT MESSAGE      (the first failure of a series)
 *   opened after N failed opens
 *   paused T LAST_ID / resumed T
 *   exit T COMMITS
 *
 * --check opens FILE (a replica's copy) read-only with plain SQLite and
 * runs the same check; prints "checked: ..." and exits 0, or 1.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sql_app.h"

/* replvfs's codes of its HA mode (sqlite/replvfs.h, docs/sqlite.md) */
#define HA_READONLY (SQLITE_READONLY | (64 << 8))
#define HA_ROLE_CHANGED (SQLITE_IOERR | (64 << 8))

static volatile sig_atomic_t stopping, paused;
static int events_fd = -1;
static char tag[32];	/* "p<pid>.<ms>.", the start of every payload */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* one line into EVENTS, in one write: the test reads it while we run */
static void
event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
event(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (events_fd >= 0 && write(events_fd, line, (size_t)n) != n)
		perror("replvfs_ha_app: events");
}

static void
on_signal(int sig)
{
	if (sig == SIGTERM)
		stopping = 1;
	else
		paused = sig == SIGUSR1;
}

/*
 * SQLite's log on stderr, each line with its time (ms, as EVENTS').  A
 * replica refuses a write every 20 ms, each time with the same two lines:
 * a line like one of the last few printed is counted, not printed.
 * replvfs's threads log too (its coordinator, the replica): one at a time.
 */
#define LOG_KEEP 4
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_log[LOG_KEEP][512];
static unsigned long repeats;

static void
ha_log(void *arg, int code, const char *msg)
{
	char line[512];

	(void)arg;
	snprintf(line, sizeof(line), "sqlite (%d): %s", code, msg);
	pthread_mutex_lock(&log_lock);
	for (int i = 0; i < LOG_KEEP; i++) {
		if (strcmp(line, last_log[i]) == 0) {
			repeats++;
			pthread_mutex_unlock(&log_lock);
			return;
		}
	}
	if (repeats > 0)
		fprintf(stderr, "(%lu more of the lines before)\n", repeats);
	repeats = 0;
	fprintf(stderr, "%" PRId64 " %s\n", now_ms(), line);
	memmove(last_log[1], last_log[0], sizeof(last_log[0]) * (LOG_KEEP - 1));
	snprintf(last_log[0], sizeof(last_log[0]), "%s", line);
	pthread_mutex_unlock(&log_lock);
}

/* the check's failure: stderr, EVENTS, exit 1 */
static void
check_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void
check_fail(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: FAIL: %s\n", app_name, msg);
	event("FAIL %" PRId64 " %s", now_ms(), msg);
	exit(1);
}

/*
 * A query of the check: its integer in *v, or SQLite's code.  An error is
 * not the database's fault (the role may change under the check): the
 * caller reopens.
 */
static int
query_int(const char *sql, int64_t *v)
{
	sqlite3_stmt *st;
	int rc;

	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) != SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_ERROR;
	} else {
		rc = sqlite3_extended_errcode(db);
	}
	sqlite3_finalize(st);
	return rc;
}

/* who wrote id in a (the start of its payload), for a lost id's message */
static const char *
writer_of(int64_t id)
{
	static char who[48];
	sqlite3_stmt *st;

	snprintf(who, sizeof(who), "no row");
	if (sqlite3_prepare_v2(db, "SELECT CAST(substr(payload, 1, 24) AS TEXT) "
			"FROM a WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
		return "?";
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW)
		snprintf(who, sizeof(who), "a row by %.24s",
			(const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return who;
}

/*
 * The database against ACKED, on db: PRAGMA integrity_check, a and b
 * alike, every acknowledged id there with its writer's tag.  A finding
 * exits 1 (check_fail); SQLite's error code is returned (the connection
 * must be reopened), else SQLITE_OK with the acknowledged ids found in
 * *n, a's rows in *rows and the next id in *next.
 */
static int
check(const char *acked_path, int64_t *n, int64_t *rows, int64_t *next)
{
	sqlite3_stmt *st = NULL, *in_a = NULL, *in_b = NULL;
	FILE *f;
	int64_t id, v;
	char t[32];
	int rc;

	if ((rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL)) !=
			SQLITE_OK)
		return rc;
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? SQLITE_ERROR : sqlite3_extended_errcode(db);
	}
	/*
	 * integrity_check reports a page it could not read as a finding: one
	 * that failed because the node changed role meanwhile says nothing of
	 * the file, and the connection is reopened
	 */
	if (sqlite3_column_text(st, 0) != NULL &&
	    strstr((const char *)sqlite3_column_text(st, 0), "error code=16394") != NULL) {
		sqlite3_finalize(st);
		return HA_ROLE_CHANGED;
	}
	if (sqlite3_column_text(st, 0) == NULL ||
	    strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
		check_fail("integrity_check: %s", sqlite3_column_text(st, 0) ?
			(const char *)sqlite3_column_text(st, 0) : "NULL");
	sqlite3_finalize(st);
	if ((rc = query_int("SELECT count(*) FROM a WHERE id NOT IN (SELECT id FROM b)"
			" OR (SELECT count(*) FROM b) != (SELECT count(*) FROM a)", &v)) != 0)
		return rc;
	if (v != 0)
		check_fail("a partial transaction: a and b hold different ids");
	if ((rc = query_int("SELECT count(*) FROM b WHERE v IS NOT id * 7", &v)) != 0)
		return rc;
	if (v != 0)
		check_fail("b holds %" PRId64 " values that are not their id * 7", v);
	if ((rc = sqlite3_prepare_v2(db, "SELECT 1 FROM a WHERE id = ?1 AND "
			"substr(CAST(payload AS BLOB), 1, length(CAST(?2 AS BLOB))) = "
			"CAST(?2 AS BLOB)",
			-1, &in_a, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_prepare_v2(db, "SELECT 1 FROM b WHERE id = ?", -1, &in_b,
			NULL)) != SQLITE_OK)
		goto out;
	*n = 0;
	if ((f = fopen(acked_path, "r")) != NULL) {
		while (rc == SQLITE_OK && fscanf(f, "%" SCNd64 " %31s", &id, t) == 2) {
			sqlite3_bind_int64(in_a, 1, id);
			sqlite3_bind_text(in_a, 2, t, -1, SQLITE_STATIC);
			sqlite3_bind_int64(in_b, 1, id);
			if ((rc = sqlite3_step(in_a)) == SQLITE_DONE)
				check_fail("acknowledged transaction %" PRId64 " (by %s) "
					"is lost: a has %s", id, t, writer_of(id));
			if (rc == SQLITE_ROW && (rc = sqlite3_step(in_b)) == SQLITE_DONE)
				check_fail("acknowledged transaction %" PRId64 " (by %s) "
					"is not in b", id, t);
			rc = rc == SQLITE_ROW ? SQLITE_OK : sqlite3_extended_errcode(db);
			sqlite3_reset(in_a);
			sqlite3_reset(in_b);
			(*n)++;
		}
		fclose(f);
	}
	if (rc == SQLITE_OK && (rc = query_int("SELECT count(*) FROM a", rows)) == 0)
		rc = query_int("SELECT coalesce(max(id), 0) + 1 FROM a", next);
out:
	sqlite3_finalize(in_a);
	sqlite3_finalize(in_b);
	return rc;
}

/* --check FILE ACKED: a replica's copy, read-only with plain SQLite */
static int
check_copy(const char *file, const char *acked_path)
{
	int64_t n = 0, rows = 0, next = 0;
	char uri[4200];
	int rc;

	snprintf(uri, sizeof(uri), "file:%s?mode=ro", file);
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
			NULL) != SQLITE_OK)
		die(1, file);
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, 10000);
	if ((rc = check(acked_path, &n, &rows, &next)) != SQLITE_OK) {
		fprintf(stderr, "%s: %s: %d %s\n", app_name, file, rc, sqlite3_errmsg(db));
		return 1;
	}
	printf("checked: %" PRId64 " acknowledged present, %" PRId64 " rows, next %"
		PRId64 "\n", n, rows, next);
	sqlite3_close(db);
	return 0;
}

/* the connection and what it knows of itself */
static struct {
	bool primary;		/* repl_role() said so at open */
	bool committed;		/* a COMMIT of it succeeded */
	bool refused;		/* a write of it was refused (a replica) */
	sqlite3_stmt *next, *ins_a, *ins_b;
} conn;

static void
conn_close(void)
{
	sqlite3_finalize(conn.next);
	sqlite3_finalize(conn.ins_a);
	sqlite3_finalize(conn.ins_b);
	conn.next = conn.ins_a = conn.ins_b = NULL;
	/* a statement left in SQLite's hands is let go with the connection */
	sqlite3_close_v2(db);
	db = NULL;
}

/*
 * sqlite3_exec of sql; SQLite's extended code (sqlite3_exec keeps only the
 * primary code's byte of some)
 */
static int
run(const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? rc : sqlite3_extended_errcode(db);
}

/* why the last open failed */
static char open_error[256];

/*
 * Open URI and learn the node's role: SQLITE_OK, or SQLite's code (the
 * connection closed again).  As the primary: WAL mode, the tables, the
 * check before the first write.
 */
static int
conn_open(const char *uri, const char *acked_path)
{
	int64_t t0 = now_ms(), n, rows, next;
	sqlite3_stmt *st;
	const char *role, *primary;
	int rc;

	memset(&conn, 0, sizeof(conn));
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
		SQLITE_OPEN_URI, NULL);
	if (db == NULL) {
		snprintf(open_error, sizeof(open_error), "out of memory");
		return SQLITE_NOMEM;
	}
	sqlite3_extended_result_codes(db, 1);
	if (rc != SQLITE_OK) {
		rc = sqlite3_extended_errcode(db);
		goto fail;
	}
	sqlite3_busy_timeout(db, 2000);
	if ((rc = sqlite3_prepare_v2(db, "SELECT repl_role(), repl_primary()", -1, &st,
			NULL)) != SQLITE_OK)
		goto fail;
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		rc = sqlite3_extended_errcode(db);
		sqlite3_finalize(st);
		goto fail;
	}
	role = (const char *)sqlite3_column_text(st, 0);
	primary = (const char *)sqlite3_column_text(st, 1);
	conn.primary = role != NULL && strcmp(role, "primary") == 0;
	event("open %s %" PRId64 " %" PRId64 " %s", role ? role : "NULL", now_ms(),
		now_ms() - t0, primary ? primary : "null");
	sqlite3_finalize(st);
	if (!conn.primary)
		return SQLITE_OK;
	if ((rc = run("PRAGMA journal_mode=WAL")) != SQLITE_OK ||
	    (rc = run("CREATE TABLE IF NOT EXISTS a(id INTEGER PRIMARY KEY, payload BLOB);"
			"CREATE TABLE IF NOT EXISTS b(id INTEGER PRIMARY KEY, v)")) != SQLITE_OK ||
	    (rc = check(acked_path, &n, &rows, &next)) != SQLITE_OK)
		goto fail;
	event("checked %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, n, rows, next,
		now_ms());
	return SQLITE_OK;
fail:
	snprintf(open_error, sizeof(open_error), "%s", sqlite3_errmsg(db));
	conn_close();
	return rc;
}

/*
 * One transaction: BEGIN IMMEDIATE (the write lock first: the max(id) read
 * is the one the insert follows), the next id, its rows, COMMIT.  SQLITE_OK
 * with its id in *id, or the failed step's extended code (the transaction
 * rolled back) and the step in *where.
 */
static int
write_one(int64_t *id, const char **where)
{
	int rc;

	*where = "BEGIN";
	if ((rc = run("BEGIN IMMEDIATE")) != SQLITE_OK)
		return rc;
	/* prepared once a write began: a replica's copy may lack the tables */
	*where = "prepare";
	if ((conn.next == NULL && (rc = sqlite3_prepare_v2(db,
			"SELECT coalesce(max(id), 0) + 1 FROM a", -1, &conn.next, NULL))) ||
	    (conn.ins_a == NULL && (rc = sqlite3_prepare_v2(db,
			"INSERT INTO a VALUES(?1, CAST(?2 || randomblob(?3) AS BLOB))", -1,
			&conn.ins_a, NULL))) ||
	    (conn.ins_b == NULL && (rc = sqlite3_prepare_v2(db,
			"INSERT INTO b VALUES(?1, ?1 * 7)", -1, &conn.ins_b, NULL))))
		goto fail;
	*where = "max(id)";
	if (sqlite3_step(conn.next) != SQLITE_ROW)
		goto fail;
	*id = sqlite3_column_int64(conn.next, 0);
	sqlite3_reset(conn.next);
	sqlite3_bind_int64(conn.ins_a, 1, *id);
	sqlite3_bind_text(conn.ins_a, 2, tag, -1, SQLITE_STATIC);
	sqlite3_bind_int(conn.ins_a, 3, *id % 64 == 0 ? 4096 * (int)(1 + *id % 3) : 48);
	sqlite3_bind_int64(conn.ins_b, 1, *id);
	*where = "INSERT";
	if (sqlite3_step(conn.ins_a) != SQLITE_DONE || sqlite3_step(conn.ins_b) != SQLITE_DONE)
		goto fail;
	sqlite3_reset(conn.ins_a);
	sqlite3_reset(conn.ins_b);
	*where = "COMMIT";
	if ((rc = run("COMMIT")) != SQLITE_OK)
		goto fail;
	return SQLITE_OK;
fail:
	rc = sqlite3_extended_errcode(db);
	if (rc == SQLITE_OK)
		rc = SQLITE_ERROR;
	if (conn.next)
		sqlite3_reset(conn.next);
	if (conn.ins_a)
		sqlite3_reset(conn.ins_a);
	if (conn.ins_b)
		sqlite3_reset(conn.ins_b);
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	sqlite3 *loader;
	char *err = NULL, line[64];
	int64_t id, last_id = 0, commits = 0;
	bool was_paused = false;
	int open_failing = 0;
	const char *where;
	int acked_fd, rc;

	app_name = "replvfs_ha_app";
	if (argc == 4 && strcmp(argv[1], "--check") == 0)
		return check_copy(argv[2], argv[3]);
	if (argc != 5) {
		fprintf(stderr, "usage: replvfs_ha_app EXTENSION URI ACKED EVENTS\n"
			"       replvfs_ha_app --check FILE ACKED\n");
		return 2;
	}
	if ((acked_fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			0644)) < 0 ||
	    (events_fd = open(argv[4], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
			0644)) < 0) {
		perror(acked_fd < 0 ? argv[3] : argv[4]);
		return 1;
	}
	snprintf(tag, sizeof(tag), "p%ld.%" PRId64 ".", (long)getpid(),
		now_ms() % 100000000);
	/* no SA_RESTART: a sleep ends at once, and the loop looks at the flags */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	event("start %ld %" PRId64 " %s", (long)getpid(), now_ms(), tag);
	/* what replvfs says: the primary a replica names, why a call failed */
	sqlite3_config(SQLITE_CONFIG_LOG, ha_log, NULL);
	if (sqlite3_open(":memory:", &loader) != SQLITE_OK ||
	    sqlite3_enable_load_extension(loader, 1) != SQLITE_OK ||
	    sqlite3_load_extension(loader, argv[1], NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "replvfs_ha_app: %s: %s\n", argv[1], err ? err : "?");
		return 1;
	}
	while (!stopping) {
		if (db == NULL) {
			rc = conn_open(argv[2], argv[3]);
			if (rc != SQLITE_OK) {
				if (open_failing++ == 0)
					event("open_failed %" PRId64 " %d %s", now_ms(), rc,
						open_error);
				sleep_ms(50);
				continue;
			}
			if (open_failing > 1)
				event("opened after %d failed opens", open_failing);
			open_failing = 0;
		}
		if (paused != was_paused) {
			was_paused = paused;
			if (was_paused)
				event("paused %" PRId64 " %" PRId64, now_ms(), last_id);
			else
				event("resumed %" PRId64, now_ms());
		}
		if (was_paused) {
			sleep_ms(20);
			continue;
		}
		if ((rc = write_one(&id, &where)) == SQLITE_OK) {
			int len = snprintf(line, sizeof(line), "%" PRId64 " %s\n", id, tag);

			if (write(acked_fd, line, (size_t)len) != len) {
				perror(argv[3]);
				return 1;
			}
			if (!conn.committed)
				event("first_commit %" PRId64 " %" PRId64, now_ms(), id);
			conn.committed = true;
			last_id = id;
			commits++;
			continue;
		}
		switch (rc & 0xff) {
		case SQLITE_READONLY:
			/* a replica: as expected until it is promoted */
			if (!conn.refused)
				event("%s %" PRId64 " %d %s %s", conn.primary ||
					rc != HA_READONLY ? "unexpected" : "readonly",
					now_ms(), rc, where,
					sqlite3_errmsg(db));
			conn.refused = true;
			sleep_ms(20);
			break;
		case SQLITE_BUSY:
		case SQLITE_LOCKED:
			sleep_ms(5);
			break;
		case SQLITE_ERROR:
			/* a replica's copy without the tables yet */
			if (!conn.primary) {
				sleep_ms(20);
				break;
			}
			/* fall through */
		default:
			if (rc == HA_ROLE_CHANGED || (rc & 0xff) == SQLITE_IOERR) {
				event("reopen %" PRId64 " %d %s %s", now_ms(), rc, where,
					sqlite3_errmsg(db));
				conn_close();
				break;
			}
			event("unexpected %" PRId64 " %d %s %s", now_ms(), rc, where,
				sqlite3_errmsg(db));
			conn_close();
			/* not at once: an error that stays would spin */
			sleep_ms(50);
			break;
		}
	}
	event("exit %" PRId64 " %" PRId64, now_ms(), commits);
	if (db != NULL)
		conn_close();
	sqlite3_close(loader);
	close(acked_fd);
	close(events_fd);
	return 0;
}
