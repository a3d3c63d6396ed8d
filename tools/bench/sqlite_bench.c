/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sqlite_bench.c -- sqlite-bench: single-row INSERT transactions against
 * one SQLite database, plain or through replvfs, timed per COMMIT.
 *
 *   sqlite-bench [--ext LIBREPLVFS] [--clients C] [--records N]
 *                [--seconds S] [--warmup W] [--synchronous FULL|NORMAL]
 *                [--label TEXT] DATABASE
 *
 * DATABASE is a file name or a URI (file:app.db?vfs=repl&repl_conf=...);
 * --ext loads the extension first (the repl VFS).  The table is
 * t(id INTEGER PRIMARY KEY, c INT, v INT); each transaction is one
 * autocommit INSERT of (client, sequence).  With one client it runs
 * --records transactions after --warmup; with more, each client has its
 * own connection and runs for --seconds, retrying SQLITE_BUSY (counted).
 * One line of results, latency from the step's start to its return,
 * then this process's cost per COMMIT over the same stretch (all its
 * threads: SQLite's, and librepl's through replvfs): system calls (the
 * raw_syscalls tracepoint, proc_counts.h; -1 where it cannot be used),
 * context switches and CPU time:
 *
 *   LABEL clients=C commits=N p50_us=.. p90_us=.. p99_us=.. max_us=.. \
 *   rate=../s busy=.. syscalls=.. switches=.. cpu_us=..
 *
 * A benchmark, not a test: the numbers mean something only beside
 * another system's in the same run (tools/bench/sqlite-vs).
 */
#include "config.h"

#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "bench_util.h"
#include "proc_counts.h"

#define MAX_CLIENTS 64
#define LAT_MAX 2000000L		/* latencies kept per client */

struct client {
	int id;
	sqlite3 *db;
	sqlite3_stmt *ins;
	uint64_t *lat;
	long n;
	uint64_t busy;
	int err;
};

static const char *db_name;
static const char *sync_mode = "FULL";
static long records = 5000, warmup = 200;
static double seconds = 5;
static int clients = 1;
static atomic_int go, stop;

static int
open_db(struct client *c, char *why, size_t whylen)
{
	char sql[128];
	int rc;

	rc = sqlite3_open_v2(db_name, &c->db, SQLITE_OPEN_READWRITE |
		SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "open %s: %s", db_name,
			c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
		return -1;
	}
	sqlite3_busy_timeout(c->db, 0);	/* retried and counted here */
	snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s", sync_mode);
	/* the first connection makes the table, before anyone prepares */
	if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK ||
	    (c->id == 1 && sqlite3_exec(c->db, "PRAGMA journal_mode=WAL; "
			"CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, c INT, "
			"v INT)", NULL, NULL, NULL) != SQLITE_OK) ||
	    sqlite3_prepare_v2(c->db, "INSERT INTO t(c, v) VALUES(?, ?)", -1,
			&c->ins, NULL) != SQLITE_OK) {
		snprintf(why, whylen, "%s: %s", db_name, sqlite3_errmsg(c->db));
		return -1;
	}
	return 0;
}

/* one transaction; its latency in ns, or 0 on failure (c->err) */
static uint64_t
insert(struct client *c, long seq)
{
	uint64_t t0 = bench_now_ns();
	int rc;

	sqlite3_bind_int(c->ins, 1, c->id);
	sqlite3_bind_int64(c->ins, 2, seq);
	/* another connection writes: retry after 20 us, doubling to 500 us
	 * (SQLite's own busy handler sleeps whole milliseconds) */
	for (useconds_t wait = 20; (rc = sqlite3_step(c->ins)) == SQLITE_BUSY;
	     wait = wait < 500 ? 2 * wait : 500) {
		c->busy++;
		sqlite3_reset(c->ins);
		usleep(wait);
	}
	sqlite3_reset(c->ins);
	if (rc != SQLITE_DONE) {
		c->err = rc;
		return 0;
	}
	return bench_now_ns() - t0;
}

static void *
run(void *arg)
{
	struct client *c = arg;
	long seq = 0;
	uint64_t ns;

	while (!atomic_load(&go))
		usleep(100);
	while (!atomic_load(&stop) && c->n < LAT_MAX) {
		if ((ns = insert(c, ++seq)) == 0)
			break;
		c->lat[c->n++] = ns;
	}
	return NULL;
}

/* SQLite's error log (replvfs says there why an open failed) */
static void
sqlite_log(void *arg, int code, const char *msg)
{
	(void)arg;
	if (code != SQLITE_NOTICE && code != SQLITE_WARNING_AUTOINDEX)
		fprintf(stderr, "sqlite-bench: sqlite (%d): %s\n", code, msg);
}

/* this process's CPU time so far, in microseconds */
static double
cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
		ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void
usage(void)
{
	fprintf(stderr, "usage: sqlite-bench [--ext LIB] [--clients C] [--records N] "
		"[--seconds S] [--warmup W] [--synchronous FULL|NORMAL] [--label T] "
		"DATABASE\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ext", required_argument, NULL, 'e' },
		{ "clients", required_argument, NULL, 'c' },
		{ "records", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "synchronous", required_argument, NULL, 'y' },
		{ "label", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	static struct client cl[MAX_CLIENTS];
	static struct proc_counts pc;
	double cpu0;
	const char *ext = NULL, *label = "sqlite";
	pthread_t th[MAX_CLIENTS];
	uint64_t *all, t0, busy = 0;
	char why[512];
	long total = 0;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'e': ext = optarg; break;
		case 'c': clients = atoi(optarg); break;
		case 'n': records = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'w': warmup = atol(optarg); break;
		case 'y': sync_mode = optarg; break;
		case 'l': label = optarg; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || clients < 1 || clients > MAX_CLIENTS || records < 1 ||
	    seconds <= 0 || warmup < 0 || (strcmp(sync_mode, "FULL") != 0 &&
	    strcmp(sync_mode, "NORMAL") != 0))
		usage();
	db_name = argv[optind];
	sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, NULL);
	if (ext != NULL) {
		sqlite3 *l;
		char *err = NULL;

		if (sqlite3_open(":memory:", &l) != SQLITE_OK ||
		    sqlite3_enable_load_extension(l, 1) != SQLITE_OK ||
		    sqlite3_load_extension(l, ext, NULL, &err) != SQLITE_OK) {
			bench_say("loading %s: %s", ext, err ? err : sqlite3_errmsg(l));
			return 1;
		}
		sqlite3_close(l);
	}
	for (int i = 0; i < clients; i++) {
		cl[i].id = i + 1;
		if ((cl[i].lat = malloc(sizeof(uint64_t) * LAT_MAX)) == NULL ||
		    open_db(&cl[i], why, sizeof(why)) != 0) {
			bench_say("%s", cl[i].lat ? why : "out of memory");
			return 1;
		}
	}
	for (long i = 0; i < warmup; i++)
		if (insert(&cl[0], -i - 1) == 0) {
			bench_say("warm-up: %s", sqlite3_errstr(cl[0].err));
			return 1;
		}
	proc_counts_start(&pc, 0);
	cpu0 = cpu_us();
	t0 = bench_now_ns();
	if (clients == 1) {
		while (cl[0].n < records && cl[0].n < LAT_MAX) {
			uint64_t ns = insert(&cl[0], cl[0].n + 1);

			if (ns == 0)
				break;
			cl[0].lat[cl[0].n++] = ns;
		}
	} else {
		for (int i = 0; i < clients; i++)
			if (pthread_create(&th[i], NULL, run, &cl[i]) != 0) {
				bench_say("cannot start client %d", i);
				return 1;
			}
		atomic_store(&go, 1);
		while (bench_now_ns() - t0 < (uint64_t)(seconds * 1e9))
			sqlite3_sleep(10);
		atomic_store(&stop, 1);
		for (int i = 0; i < clients; i++)
			pthread_join(th[i], NULL);
	}
	t0 = bench_now_ns() - t0;
	cpu0 = cpu_us() - cpu0;
	proc_counts_stop(&pc);
	for (int i = 0; i < clients; i++) {
		if (cl[i].err) {
			bench_say("client %d: %s", i + 1, sqlite3_errstr(cl[i].err));
			return 1;
		}
		total += cl[i].n;
		busy += cl[i].busy;
	}
	if (total == 0 || (all = malloc(sizeof(uint64_t) * (size_t)total)) == NULL) {
		bench_say("no commits");
		return 1;
	}
	total = 0;
	for (int i = 0; i < clients; i++) {
		memcpy(all + total, cl[i].lat, sizeof(uint64_t) * (size_t)cl[i].n);
		total += cl[i].n;
	}
	bench_sort(all, total);
	printf("%s clients=%d commits=%ld p50_us=%.0f p90_us=%.0f p99_us=%.0f "
		"max_us=%.0f rate=%.0f/s busy=%llu syscalls=%.1f switches=%.2f "
		"cpu_us=%.1f\n", label, clients, total,
		bench_pct(all, total, 50), bench_pct(all, total, 90),
		bench_pct(all, total, 99), all[total - 1] / 1e3,
		total / (t0 / 1e9), (unsigned long long)busy,
		pc.have_syscalls ? (double)pc.syscalls / (double)total : -1.0,
		(double)pc.switches / (double)total, cpu0 / (double)total);
	for (int i = 0; i < clients; i++) {
		sqlite3_finalize(cl[i].ins);
		sqlite3_close(cl[i].db);
		free(cl[i].lat);
	}
	free(all);
	return 0;
}
