/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replvfs_strict_probe.c -- tests/sqlite/replvfs_strict.sh's application:
 * two writers and a reader on their own connections, while the replicas
 * are stopped.
 *
 *   replvfs_strict_probe EXT URI MODE BOOT PID...
 *
 * EXT is libreplvfs; URI the database (repl_commit=MODE is added, and
 * repl_bootstrap=1 when BOOT is 1: then the table t is made, with one
 * row).  The PIDs (the replicas' repld) are stopped with SIGSTOP; writer
 * A inserts a row, 0.5 s later writer B another, 0.5 s later reader R
 * counts the rows; 1 s later the log's appended LSN is read
 * (repl_status()) and the PIDs are continued (SIGCONT).  Once all three
 * return it prints one line:
 *
 *   n0=ROWS appended=LSNS A=ok|error:... B=... count=N|error:...
 *   read_before_cont=0|1
 *
 * (the rows before; how far the appended LSN moved while the replicas were
 * stopped; what each returned; whether R's answer came before the
 * SIGCONT).  Exit 0, or 1 with the reason on stderr.
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

static char uri[4096];

struct job {
	const char *name;
	const char *sql;
	sqlite3 *db;
	char result[256];
	int64_t count;
	uint64_t at_ns;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static sqlite3 *
connect_db(void)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		fprintf(stderr, "replvfs_strict_probe: open %s: %s\n", uri,
			db ? sqlite3_errmsg(db) : "out of memory");
		exit(1);
	}
	sqlite3_busy_timeout(db, 60000);
	return db;
}

static void
exec_or_die(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "replvfs_strict_probe: %s: %s\n", sql, err);
		exit(1);
	}
}

/* the first column of sql's first row, as text into out (false if none) */
static bool
one_text(sqlite3 *db, const char *sql, char *out, size_t outlen)
{
	sqlite3_stmt *st = NULL;
	bool ok = false;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
		snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
		ok = true;
	} else {
		snprintf(out, outlen, "error: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return ok;
}

/* the log's last LSN, from repl_status() (its first "last_lsn": the log's) */
static long long
appended_lsn(sqlite3 *db)
{
	char json[8192];
	const char *p;

	if (!one_text(db, "SELECT repl_status()", json, sizeof(json)) ||
	    (p = strstr(json, "\"last_lsn\":")) == NULL) {
		fprintf(stderr, "replvfs_strict_probe: repl_status(): %s\n", json);
		exit(1);
	}
	return strtoll(p + strlen("\"last_lsn\":"), NULL, 10);
}

/* SQLite's error log (replvfs's and the engine's lines) on stderr, timed */
static void
sqlite_log(void *arg, int code, const char *msg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "%lld.%03ld sqlite (%d): %s\n", (long long)ts.tv_sec,
		ts.tv_nsec / 1000000, code, msg);
}

static void *
run(void *arg)
{
	struct job *j = arg;
	char *err = NULL;

	j->count = -1;
	if (strncmp(j->sql, "SELECT", 6) == 0) {
		if (one_text(j->db, j->sql, j->result, sizeof(j->result)))
			j->count = strtoll(j->result, NULL, 10);
	} else if (sqlite3_exec(j->db, j->sql, NULL, NULL, &err) == SQLITE_OK) {
		snprintf(j->result, sizeof(j->result), "ok");
	} else {
		snprintf(j->result, sizeof(j->result), "error: %s", err);
		sqlite3_free(err);
	}
	j->at_ns = now_ns();
	return NULL;
}

int
main(int argc, char **argv)
{
	char *err = NULL, n0s[64];
	sqlite3 *loader, *first;
	void *lib;
	struct job jobs[3] = {
		{ .name = "A", .sql = "INSERT INTO t(v) VALUES('A')" },
		{ .name = "B", .sql = "INSERT INTO t(v) VALUES('B')" },
		{ .name = "R", .sql = "SELECT count(*) FROM t" },
	};
	pthread_t th[3];
	long long lsn0, lsn1;
	uint64_t cont;
	bool boot;

	if (argc < 5) {
		fprintf(stderr, "usage: replvfs_strict_probe EXT URI MODE BOOT PID...\n");
		return 2;
	}
	(void)sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, NULL);
	boot = strcmp(argv[4], "1") == 0;
	snprintf(uri, sizeof(uri), "%s&repl_commit=%s%s", argv[2], argv[3],
		boot ? "&repl_bootstrap=1" : "");
	if (sqlite3_open(":memory:", &loader) != SQLITE_OK ||
	    sqlite3_enable_load_extension(loader, 1) != SQLITE_OK ||
	    sqlite3_load_extension(loader, argv[1], NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "replvfs_strict_probe: %s: %s\n", argv[1], err);
		return 1;
	}
	/* librepl's own lines (its links to the replicas) on stderr too */
	if ((lib = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD)) != NULL) {
		int (*threshold)(int, int) = (int (*)(int, int))dlsym(lib,
			"repl_log_set_threshold");

		if (threshold != NULL)
			(void)threshold(1 /* STDERR */, 4 /* INFO */);
	}
	first = connect_db();
	if (boot) {
		exec_or_die(first, "PRAGMA journal_mode=WAL");
		exec_or_die(first, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)");
		exec_or_die(first, "INSERT INTO t(v) VALUES('before')");
	}
	(void)one_text(first, "SELECT count(*) FROM t", n0s, sizeof(n0s));
	for (int i = 0; i < 3; i++)
		jobs[i].db = connect_db();
	/* the reader's cache is warm: what it reads later it reads anew */
	(void)one_text(jobs[2].db, "SELECT count(*) FROM t", jobs[2].result,
		sizeof(jobs[2].result));
	lsn0 = appended_lsn(first);

	for (int i = 5; i < argc; i++)
		(void)kill((pid_t)atoi(argv[i]), SIGSTOP);
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&th[i], NULL, run, &jobs[i]) != 0) {
			fprintf(stderr, "replvfs_strict_probe: pthread_create failed\n");
			return 1;
		}
		sleep_ms(500);
	}
	sleep_ms(1000);
	lsn1 = appended_lsn(first);
	cont = now_ns();
	for (int i = 5; i < argc; i++)
		(void)kill((pid_t)atoi(argv[i]), SIGCONT);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);

	printf("n0=%s appended=%lld A=%s B=%s count=", n0s, lsn1 - lsn0, jobs[0].result,
		jobs[1].result);
	fprintf(stderr, "replvfs_strict_probe: the log's last LSN %lld before, %lld "
		"with the replicas stopped\n", lsn0, lsn1);
	if (jobs[2].count >= 0)
		printf("%lld", (long long)jobs[2].count);
	else
		printf("%s", jobs[2].result);
	printf(" read_before_cont=%d\n", jobs[2].at_ns < cont ? 1 : 0);
	for (int i = 0; i < 3; i++)
		sqlite3_close(jobs[i].db);
	sqlite3_close(first);
	sqlite3_close(loader);
	return 0;
}
