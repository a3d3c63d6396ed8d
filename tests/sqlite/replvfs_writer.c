/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replvfs_writer -- the application of the SQLite failover test: it opens
 * a database through replvfs, checks it against the transactions
 * acknowledged so far, then commits transactions until it is killed.
 *
 *   replvfs_writer EXTENSION URI ACKED [SECONDS [LINGER]]
 *   replvfs_writer --hash FILE
 *
 * ACKED lists, a line each, the ids of the transactions whose COMMIT
 * returned SQLITE_OK (appended after the COMMIT, so a kill may leave one
 * committed id out of it, never one in it that was not acknowledged).
 * Each transaction inserts its id into two tables, a(id, payload) and
 * b(id, id * 7), payloads of 1 to 3 pages every 64th, so a transaction is
 * present whole or not at all.
 *
 * At open: PRAGMA integrity_check is "ok"; every acknowledged id is in a
 * and b; a and b hold the same ids; b's values are right.  Prints
 * "checked: A acknowledged present, R rows, next N" and exits 1 with what
 * is wrong otherwise.  Then it commits until SECONDS (0: forever), prints
 * "hash H rows R" of its database, stays open LINGER seconds (so that the
 * replicas learn the last commit point) and exits 0; a COMMIT that fails
 * exits 3.  --hash prints that line of FILE, opened read-only with plain
 * SQLite (a replica's copy).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sql_app.h"

static void
check(const char *acked_path, int64_t *next)
{
	sqlite3_stmt *st, *in_a, *in_b;
	FILE *f;
	int64_t id, n = 0;
	const char *ok;

	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		die(1, "integrity_check");
	ok = (const char *)sqlite3_column_text(st, 0);
	if (ok == NULL || strcmp(ok, "ok") != 0) {
		fprintf(stderr, "replvfs_writer: integrity_check: %s\n", ok ? ok : "?");
		exit(1);
	}
	sqlite3_finalize(st);
	if (one_int("SELECT count(*) FROM a WHERE id NOT IN (SELECT id FROM b)") != 0 ||
	    one_int("SELECT count(*) FROM b WHERE id NOT IN (SELECT id FROM a)") != 0 ||
	    one_int("SELECT count(*) FROM b WHERE v != id * 7") != 0) {
		fprintf(stderr, "replvfs_writer: a partial transaction: a and b differ\n");
		exit(1);
	}
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM a WHERE id = ?", -1, &in_a, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT 1 FROM b WHERE id = ?", -1, &in_b, NULL))
		die(1, "prepare");
	if ((f = fopen(acked_path, "r")) != NULL) {
		while (fscanf(f, "%" SCNd64, &id) == 1) {
			sqlite3_bind_int64(in_a, 1, id);
			sqlite3_bind_int64(in_b, 1, id);
			if (sqlite3_step(in_a) != SQLITE_ROW ||
			    sqlite3_step(in_b) != SQLITE_ROW) {
				fprintf(stderr, "replvfs_writer: acknowledged transaction "
					"%" PRId64 " is lost\n", id);
				exit(1);
			}
			sqlite3_reset(in_a);
			sqlite3_reset(in_b);
			n++;
		}
		fclose(f);
	}
	sqlite3_finalize(in_a);
	sqlite3_finalize(in_b);
	*next = one_int("SELECT coalesce(max(id), 0) + 1 FROM a");
	printf("checked: %" PRId64 " acknowledged present, %" PRId64 " rows, next %"
		PRId64 "\n", n, one_int("SELECT count(*) FROM a"), *next);
	fflush(stdout);
}

/* FNV-1a over every row of a and b, in id order */
static void
print_hash(void)
{
	static const char *const sql[] = { "SELECT id, p FROM a ORDER BY id",
		"SELECT id, v FROM b ORDER BY id" };
	uint64_t h = 1469598103934665603ull, rows = 0;
	sqlite3_stmt *st;

	for (int t = 0; t < 2; t++) {
		if (sqlite3_prepare_v2(db, sql[t], -1, &st, NULL) != SQLITE_OK)
			die(1, sql[t]);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0);
			const uint8_t *b = sqlite3_column_blob(st, 1);
			int n = sqlite3_column_bytes(st, 1);

			for (int i = 0; i < 8; i++)
				h = (h ^ (uint8_t)(id >> (8 * i))) * 1099511628211ull;
			for (int i = 0; b != NULL && i < n; i++)
				h = (h ^ b[i]) * 1099511628211ull;
			rows++;
		}
		sqlite3_finalize(st);
	}
	printf("hash %016" PRIx64 " rows %" PRIu64 "\n", h, rows);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	sqlite3 *loader;
	sqlite3_stmt *ins_a, *ins_b;
	char *err = NULL, line[32];
	int64_t next;
	double seconds;
	struct timespec t0, now;
	int fd;

	app_name = "replvfs_writer";
	if (argc == 3 && strcmp(argv[1], "--hash") == 0) {
		char uri[4200];

		snprintf(uri, sizeof(uri), "file:%s?mode=ro", argv[2]);
		if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
				NULL) != SQLITE_OK)
			die(1, argv[2]);
		sqlite3_busy_timeout(db, 5000);
		print_hash();
		sqlite3_close(db);
		return 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: replvfs_writer EXTENSION URI ACKED [SECONDS]\n");
		return 2;
	}
	seconds = argc > 4 ? atof(argv[4]) : 0;
	/* what replvfs says (its notices, why a commit or a release failed) */
	sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, NULL);
	if (sqlite3_open(":memory:", &loader) != SQLITE_OK ||
	    sqlite3_enable_load_extension(loader, 1) != SQLITE_OK ||
	    sqlite3_load_extension(loader, argv[1], NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "replvfs_writer: %s: %s\n", argv[1], err ? err : "?");
		return 1;
	}
	if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			SQLITE_OPEN_URI, NULL) != SQLITE_OK)
		die(1, argv[2]);
	sqlite3_busy_timeout(db, 5000);
	exec("PRAGMA journal_mode=WAL", 1);
	exec("CREATE TABLE IF NOT EXISTS a(id INTEGER PRIMARY KEY, p BLOB);"
		"CREATE TABLE IF NOT EXISTS b(id INTEGER PRIMARY KEY, v INT)", 1);
	check(argv[3], &next);
	if ((fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		perror(argv[3]);
		return 1;
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO a VALUES(?, randomblob(?))", -1,
			&ins_a, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO b VALUES(?, ? * 7)", -1, &ins_b, NULL))
		die(1, "prepare");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;; next++) {
		int len;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds > 0 && (double)(now.tv_sec - t0.tv_sec) +
				(double)(now.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
			break;
		exec("BEGIN", 3);
		sqlite3_bind_int64(ins_a, 1, next);
		sqlite3_bind_int(ins_a, 2, next % 64 == 0 ? 4096 * (1 + next % 3) : 64);
		sqlite3_bind_int64(ins_b, 1, next);
		sqlite3_bind_int64(ins_b, 2, next);
		if (sqlite3_step(ins_a) != SQLITE_DONE || sqlite3_step(ins_b) != SQLITE_DONE)
			die(3, "insert");
		sqlite3_reset(ins_a);
		sqlite3_reset(ins_b);
		exec("COMMIT", 3);
		len = snprintf(line, sizeof(line), "%" PRId64 "\n", next);
		if (write(fd, line, (size_t)len) != len) {
			perror(argv[3]);
			return 1;
		}
	}
	sqlite3_finalize(ins_a);
	sqlite3_finalize(ins_b);
	close(fd);
	print_hash();
	if (argc > 5)
		sleep((unsigned)atoi(argv[5]));
	sqlite3_close(db);
	sqlite3_close(loader);
	return 0;
}
