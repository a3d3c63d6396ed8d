/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replvfs_bank -- the application of the SQLite failovers test
 * (replvfs_failovers.sh): bank transfers whose total is conserved, over
 * indexed tables, with savepoints, rollbacks, large transactions, schema
 * changes, VACUUM and explicit checkpoints, so that a database rebuilt
 * or copied wrongly shows as a broken invariant, not only as a lost row.
 *
 *   replvfs_bank EXTENSION URI ACKED [--go FILE] [--stop FILE] [--die FILE]
 *                [--seconds S] [--linger S] [--large-every N]
 *                [--large-kb MIN:MAX] [--slow FILE [--mbps M]] [--seed N]
 *   replvfs_bank --hash FILE [--hold-until FLAG]
 *
 * ACKED lists, a line each, the ids of the transfers whose COMMIT returned
 * SQLITE_OK (appended after the COMMIT: a kill may leave one committed id
 * out of it, never one in it that was not acknowledged).
 *
 * The database: accounts(id, owner, balance), ACCOUNTS accounts that
 * began with INITIAL each, indexed on owner and on balance; transfers(id,
 * src, dst, amount, payload), indexed on (src, dst) and on dst; every
 * transaction moves an amount from one account to another and logs it as
 * one transfer row whose id is the transaction's.  Mixed in:
 *   - a SAVEPOINT with a transfer in it, rolled back with ROLLBACK TO;
 *   - whole transactions rolled back (their id is used again);
 *   - every N-th transfer (--large-every, 16) a large one: a payload of
 *     2 to 6 MiB (--large-kb), up to a few thousand pages, which spill
 *     from the page cache into the -wal before COMMIT; half of them (and
 *     the one a dying checkpoint follows) are medium, under 1000 pages
 *     after a checkpoint that empties the -wal, and are followed by a
 *     checkpoint that copies all of their pages; the large payloads
 *     before the last are dropped by the next transaction (freed pages),
 *     so that the database stays about the size of two of them;
 *   - schema changes: a table `side` (SIDE_ROWS rows, created whole) and
 *     an index on transfers(amount), each created or dropped now and then;
 *   - now and then VACUUM (the whole database in one transaction);
 *   - PRAGMA wal_checkpoint(PASSIVE|RESTART|TRUNCATE) between transactions,
 *     and after most large ones, when the -wal is long.
 * Before a large transaction it prints "large ID BYTES T", after its
 * COMMIT "large done ID T"; before a checkpoint "checkpoint MODE T" (or
 * "checkpoint MODE before-large T", "checkpoint MODE after-large T"),
 * after it "checkpoint done T"; around
 * VACUUM "vacuum T" and "vacuum done T" (T: seconds since the start), so
 * that the test can time a kill into one of them.  Once the --die FILE
 * exists, the next large transaction is a medium one, and the checkpoint
 * after it kills the process (SIGKILL) at a random point of it, printing
 * "dying D s into the checkpoint ..." first.
 *
 * At open it checks: PRAGMA integrity_check is "ok"; the accounts are all
 * there and their total is ACCOUNTS * INITIAL; each account's balance less
 * INITIAL is what its transfers brought in less what they took out (a
 * transaction present in part breaks this); `side`, when there, holds its
 * SIDE_ROWS rows; every acknowledged id is a transfer.  Prints
 * "checked: A acknowledged present, T transfers, total X conserved, next N"
 * and "hash H rows R" of the database as opened, or exits 1 saying what is
 * wrong.  With --go it then waits for FILE to exist before it writes (the
 * test compares the replicas' copies with that hash meanwhile).  It
 * commits until killed, for S seconds, or until the --stop FILE exists;
 * then it prints "hash H rows R" again, stays open --linger seconds (so
 * that the replicas learn the last commit point) and exits 0.  A COMMIT
 * that fails exits 3.  While the --slow FILE exists it writes M MiB/s at
 * most (--mbps, 8; payloads, and the pages that VACUUM and dropped
 * payloads rewrite), so that a replica down for a few seconds, whose
 * copy holds the log, does not fill it (docs/sqlite.md, "A replica down
 * holds the log"); otherwise as fast as it can.
 *
 * --hash FILE opens FILE read-only with plain SQLite (a replica's copy),
 * and in one read transaction prints "hash H rows R" and "integrity: ok"
 * (or what integrity_check says); exits 1 when integrity_check is not ok,
 * 2 when the file cannot be read.  With --hold-until, its read
 * transaction first prints "holding" and waits (holding SQLite's SHARED
 * lock of the file) until FLAG exists: a long reader of a copy.
 *
 * SQLite's own log (replvfs's notices and errors) goes to stderr.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sql_app.h"

#define ACCOUNTS	200
#define INITIAL		1000000
#define SIDE_ROWS	64
#define MEDIUM_MAX	(3400 * 1024)	/* a payload under 1000 pages */

static struct timespec t_start;

static double
elapsed(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t_start.tv_sec) +
		(double)(now.tv_nsec - t_start.tv_nsec) / 1e9;
}

/* the test reads stdout while this runs: every line goes out at once */
static void
say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void
execf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
execf(int code, const char *fmt, ...)
{
	va_list ap;
	char *sql;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	if (sql == NULL)
		die(code, "out of memory");
	exec(sql, code);
	sqlite3_free(sql);
}

/* xorshift64*: reproducible from the seed the run prints */
static uint64_t rng_state;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int64_t
rnd_range(int64_t lo, int64_t hi)	/* lo..hi inclusive */
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* PRAGMA integrity_check's rows, joined; true when it says "ok" */
static bool
integrity(char *out, size_t len)
{
	sqlite3_stmt *st;
	size_t used = 0;
	int rc;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(20)", -1, &st, NULL) != SQLITE_OK) {
		snprintf(out, len, "cannot run: %s", sqlite3_errmsg(db));
		return false;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *row = (const char *)sqlite3_column_text(st, 0);

		if (used < len)
			used += (size_t)snprintf(out + used, len - used, "%s%s",
				used ? "; " : "", row ? row : "?");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		snprintf(out, len, "failed: %s", sqlite3_errmsg(db));
		return false;
	}
	return strcmp(out, "ok") == 0;
}

/* FNV-1a 64 */
static void
fnv(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 1099511628211ull;
}

/* every row of a statement into the hash; SQLITE_DONE, or SQLite's error */
static int
hash_rows(sqlite3_stmt *st, uint64_t *h, uint64_t *rows)
{
	int cols = sqlite3_column_count(st), rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int c = 0; c < cols; c++) {
			uint8_t type = (uint8_t)sqlite3_column_type(st, c);
			int64_t i;
			double d;
			uint32_t len;
			const void *p;

			fnv(h, &type, 1);
			switch (type) {
			case SQLITE_INTEGER:
				i = sqlite3_column_int64(st, c);
				fnv(h, &i, sizeof(i));
				break;
			case SQLITE_FLOAT:
				d = sqlite3_column_double(st, c);
				fnv(h, &d, sizeof(d));
				break;
			case SQLITE_TEXT:
			case SQLITE_BLOB:
				p = type == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, c) :
					sqlite3_column_blob(st, c);
				len = (uint32_t)sqlite3_column_bytes(st, c);
				fnv(h, &len, sizeof(len));
				if (p != NULL)
					fnv(h, p, len);
				break;
			default:	/* NULL: its type says it */
				break;
			}
		}
		(*rows)++;
	}
	return rc;
}

/* a query's rows into the hash; false with SQLite's error in err */
static bool
hash_query(const char *sql, uint64_t *h, uint64_t *rows, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return false;
	}
	rc = hash_rows(st, h, rows);
	/* the error, before the finalize clears it */
	if (rc != SQLITE_DONE)
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE;
}

/*
 * A hash of the database's content: the schema (sqlite_master without
 * root page numbers, which VACUUM may move), then every row of every table
 * in name order, each in rowid order, each value with its type.  So two
 * files hash the same exactly when plain SQL sees the same database.
 * true, or false with SQLite's error in err (a malformed file).
 */
static bool
content_hash(uint64_t *hash, uint64_t *rows, char *err, size_t errlen)
{
	sqlite3_stmt *names;
	bool ok;
	int rc = SQLITE_DONE;

	*hash = 1469598103934665603ull;
	*rows = 0;
	/* the schema first: index and table changes show without rows */
	if (!hash_query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER "
			"BY type, name", hash, rows, err, errlen))
		return false;
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = "
			"'table' AND name NOT LIKE 'sqlite_%' ORDER BY name", -1,
			&names, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		return false;
	}
	ok = true;
	while (ok && (rc = sqlite3_step(names)) == SQLITE_ROW) {
		const char *tbl = (const char *)sqlite3_column_text(names, 0);
		char *sql = sqlite3_mprintf("SELECT * FROM \"%w\" ORDER BY rowid", tbl);

		fnv(hash, tbl, strlen(tbl) + 1);
		ok = hash_query(sql, hash, rows, err, errlen);
		sqlite3_free(sql);
	}
	if (ok && rc != SQLITE_DONE) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		ok = false;
	}
	sqlite3_finalize(names);
	return ok;
}

static void
print_hash(void)
{
	uint64_t h, rows;
	char err[256];

	if (!content_hash(&h, &rows, err, sizeof(err))) {
		fprintf(stderr, "replvfs_bank: hashing the database: %s\n", err);
		exit(1);
	}
	say("hash %016" PRIx64 " rows %" PRIu64 "\n", h, rows);
}

/*
 * --hash FILE [--hold-until FLAG]: a replica's copy, read as any reader
 * would; with FLAG the read transaction, once it holds SQLite's SHARED
 * lock of the file, first waits until FLAG exists (60 s at most): a long
 * reader that the copy's applier must wait for
 */
static int
hash_file(const char *path, const char *hold)
{
	char uri[4200], ok[2048], err[256];
	uint64_t h, rows;
	bool good;

	snprintf(uri, sizeof(uri), "file:%s?mode=ro", path);
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
			NULL) != SQLITE_OK) {
		fprintf(stderr, "replvfs_bank: %s: %s\n", path, sqlite3_errmsg(db));
		return 2;
	}
	/* the copy's applier holds the file's lock for a batch at a time */
	sqlite3_busy_timeout(db, 5000);
	/* one read transaction: the hash and the check see one commit */
	if (sqlite3_exec(db, "BEGIN; SELECT count(*) FROM sqlite_master", NULL, NULL,
			NULL) != SQLITE_OK) {
		fprintf(stderr, "replvfs_bank: %s: %s\n", path, sqlite3_errmsg(db));
		return 2;
	}
	if (hold != NULL) {
		printf("holding\n");
		fflush(stdout);
	}
	for (int i = 0; hold != NULL && i < 3000 && access(hold, F_OK) != 0; i++) {
		struct timespec ts = { 0, 20 * 1000000L };

		nanosleep(&ts, NULL);
	}
	good = integrity(ok, sizeof(ok));
	if (!content_hash(&h, &rows, err, sizeof(err))) {
		/* a malformed file may not even read: say what integrity said */
		printf("hash unreadable (%s)\nintegrity: %s\n", err, ok);
		return good ? 2 : 1;
	}
	printf("hash %016" PRIx64 " rows %" PRIu64 "\nintegrity: %s\n", h, rows, ok);
	(void)sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	return good ? 0 : 1;
}

/* the first open of the cluster's database: the accounts, in one COMMIT */
static void
create_schema(void)
{
	if (one_int("SELECT count(*) FROM sqlite_master WHERE name = 'accounts'") != 0)
		return;
	exec("BEGIN IMMEDIATE;"
		"CREATE TABLE accounts(id INTEGER PRIMARY KEY, owner TEXT, balance INT);"
		"CREATE INDEX accounts_owner ON accounts(owner);"
		"CREATE INDEX accounts_balance ON accounts(balance);"
		"CREATE TABLE transfers(id INTEGER PRIMARY KEY, src INT, dst INT, "
		"amount INT, payload BLOB);"
		"CREATE INDEX transfers_src ON transfers(src, dst);"
		"CREATE INDEX transfers_dst ON transfers(dst);", 1);
	execf(1, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
		"WHERE i < %d) INSERT INTO accounts SELECT i, 'owner-' || i, %d FROM n",
		ACCOUNTS, INITIAL);
	exec("COMMIT", 1);
}

static void
check(const char *acked_path, int64_t *next)
{
	sqlite3_stmt *in;
	char ok[2048];
	FILE *f;
	int64_t id, n = 0, bad;
	char *sql;

	if (!integrity(ok, sizeof(ok))) {
		fprintf(stderr, "replvfs_bank: integrity_check: %s\n", ok);
		exit(1);
	}
	if (one_int("SELECT count(*) FROM accounts") != ACCOUNTS ||
	    one_int("SELECT sum(balance) FROM accounts") != (int64_t)ACCOUNTS * INITIAL) {
		fprintf(stderr, "replvfs_bank: the total is not conserved: %" PRId64
			" accounts hold %" PRId64 ", not %d * %d\n",
			one_int("SELECT count(*) FROM accounts"),
			one_int("SELECT coalesce(sum(balance), 0) FROM accounts"),
			ACCOUNTS, INITIAL);
		exit(1);
	}
	/* each account's balance is what its transfers say: none in part */
	sql = sqlite3_mprintf("SELECT count(*) FROM accounts a WHERE a.balance - %d "
		"!= (SELECT coalesce(sum(amount), 0) FROM transfers WHERE dst = a.id) "
		"- (SELECT coalesce(sum(amount), 0) FROM transfers WHERE src = a.id)",
		INITIAL);
	bad = one_int(sql);
	sqlite3_free(sql);
	if (bad != 0) {
		fprintf(stderr, "replvfs_bank: a partial transaction: %" PRId64
			" accounts' balances differ from their transfers\n", bad);
		exit(1);
	}
	if (one_int("SELECT count(*) FROM transfers WHERE src = dst OR amount "
			"NOT BETWEEN 1 AND 1000") != 0) {
		fprintf(stderr, "replvfs_bank: a transfer row that no transaction wrote\n");
		exit(1);
	}
	if (one_int("SELECT count(*) FROM sqlite_master WHERE name = 'side'") != 0 &&
	    (n = one_int("SELECT count(*) FROM side")) != SIDE_ROWS) {
		fprintf(stderr, "replvfs_bank: a partial transaction: side holds %"
			PRId64 " rows, not %d\n", n, SIDE_ROWS);
		exit(1);
	}
	n = 0;
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM transfers WHERE id = ?", -1, &in,
			NULL) != SQLITE_OK)
		die(1, "prepare");
	if ((f = fopen(acked_path, "r")) != NULL) {
		while (fscanf(f, "%" SCNd64, &id) == 1) {
			sqlite3_bind_int64(in, 1, id);
			if (sqlite3_step(in) != SQLITE_ROW) {
				fprintf(stderr, "replvfs_bank: acknowledged transaction "
					"%" PRId64 " is lost\n", id);
				exit(1);
			}
			sqlite3_reset(in);
			n++;
		}
		fclose(f);
	}
	sqlite3_finalize(in);
	*next = one_int("SELECT coalesce(max(id), 0) + 1 FROM transfers");
	say("checked: %" PRId64 " acknowledged present, %" PRId64 " transfers, total %"
		PRId64 " conserved, next %" PRId64 "\n", n,
		one_int("SELECT count(*) FROM transfers"),
		one_int("SELECT sum(balance) FROM accounts"), *next);
}

static bool
has(const char *name)
{
	char *sql = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE name = %Q",
		name);
	bool r = one_int(sql) != 0;

	sqlite3_free(sql);
	return r;
}

/* one transfer of amount from src to dst, logged as transfer id */
static void
transfer(int64_t id, int64_t src, int64_t dst, int64_t amount, int64_t payload)
{
	execf(3, "UPDATE accounts SET balance = balance - %" PRId64 ", owner = "
		"'owner-%" PRId64 "-%" PRId64 "' WHERE id = %" PRId64, amount, src, id, src);
	execf(3, "UPDATE accounts SET balance = balance + %" PRId64 " WHERE id = %"
		PRId64, amount, dst);
	execf(3, "INSERT INTO transfers VALUES(%" PRId64 ", %" PRId64 ", %" PRId64 ", %"
		PRId64 ", randomblob(%" PRId64 "))", id, src, dst, amount, payload);
}

/* --die: the process SIGKILLs itself after a delay (seconds) */
static void *
die_later(void *arg)
{
	double d = *(const double *)arg;
	struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };

	nanosleep(&ts, NULL);
	kill(getpid(), SIGKILL);
	return NULL;
}

/*
 * A checkpoint, of mode (NULL: a random one), printed as "checkpoint MODE
 * TAG T".  measure: it follows a medium large transaction (below), and
 * what it takes is what a dying one aims in.  dying: the process is
 * killed at a random point of it: a thread sends SIGKILL after a random
 * part of what the last measured one took, and this thread waits for it
 * once the checkpoint is done (so the kill lands in the checkpoint or just
 * after it, never in a later transaction).  Such a checkpoint takes
 * milliseconds: too short for the test to time a kill -9 from outside.
 */
static void
checkpoint(const char *mode, const char *tag, bool measure, bool dying)
{
	static const char *const modes[] = { "PASSIVE", "RESTART", "TRUNCATE" };
	static double took = 0.005, delay;
	const char *m = mode ? mode : modes[rnd() % 3];
	pthread_t killer;
	double t0;

	say("checkpoint %s %s%.3f\n", m, tag, elapsed());
	if (dying) {
		delay = took * (double)rnd_range(0, 99) / 100;
		say("dying %.4f s into the checkpoint (the last took %.4f s)\n", delay,
			took);
		if (pthread_create(&killer, NULL, die_later, &delay) != 0)
			die(1, "pthread_create");
	}
	t0 = elapsed();
	/* SQLITE_BUSY here is no failure: a checkpoint that could not finish */
	execf(3, "PRAGMA wal_checkpoint(%s)", m);
	if (measure)
		took = elapsed() - t0;
	while (dying)
		pause();
	say("checkpoint done %.3f\n", elapsed());
}

/*
 * --slow, --mbps: while the file exists, the bytes written (payloads, and
 * the pages that VACUUM and dropped payloads rewrite) are paced at
 * pace_rate a second: paid_until is when what was written is paid for
 * at that rate (time idle earns nothing), and a write waits until then
 */
static const char *slow_file;
static double pace_rate = 8 * 1048576, paid_until;

static void
pace(double bytes)
{
	double now = elapsed(), d;
	struct timespec ts;

	if (slow_file == NULL || access(slow_file, F_OK) != 0)
		return;
	paid_until = (paid_until > now ? paid_until : now) + bytes / pace_rate;
	d = paid_until - now;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static void
usage(void)
{
	fprintf(stderr, "usage: replvfs_bank EXTENSION URI ACKED [--go FILE] "
		"[--stop FILE] [--die FILE] [--seconds S] [--linger S] [--large-every N] "
		"[--large-kb MIN:MAX] [--slow FILE [--mbps M]] [--seed N]\n"
		"       replvfs_bank --hash FILE [--hold-until FLAG]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *go = NULL, *stop = NULL, *die_file = NULL;
	double seconds = 0;
	int linger = 0, large_every = 16, fd;
	int64_t large_min = 2048 * 1024, large_max = 6144 * 1024, next, nth = 0;
	int64_t last_large = 0;		/* the last large transfer, while its
					   predecessors' payloads are to go */
	uint64_t seed;
	sqlite3 *loader;
	char *err = NULL, line[32];

	app_name = "replvfs_bank";
	if (argc == 3 && strcmp(argv[1], "--hash") == 0)
		return hash_file(argv[2], NULL);
	if (argc == 5 && strcmp(argv[1], "--hash") == 0 &&
	    strcmp(argv[3], "--hold-until") == 0)
		return hash_file(argv[2], argv[4]);
	if (argc < 4)
		usage();
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
	for (int i = 4; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long lo, hi;

		if (v == NULL)
			usage();
		if (strcmp(argv[i], "--go") == 0)
			go = v;
		else if (strcmp(argv[i], "--stop") == 0)
			stop = v;
		else if (strcmp(argv[i], "--die") == 0)
			die_file = v;
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(v);
		else if (strcmp(argv[i], "--slow") == 0)
			slow_file = v;
		else if (strcmp(argv[i], "--mbps") == 0 && atof(v) > 0)
			pace_rate = atof(v) * 1048576;
		else if (strcmp(argv[i], "--linger") == 0)
			linger = atoi(v);
		else if (strcmp(argv[i], "--large-every") == 0)
			large_every = atoi(v);
		else if (strcmp(argv[i], "--seed") == 0)
			seed = strtoull(v, NULL, 0);
		else if (strcmp(argv[i], "--large-kb") == 0 &&
			 sscanf(v, "%lld:%lld", &lo, &hi) == 2 && lo > 0 && hi >= lo) {
			large_min = lo * 1024;
			large_max = hi * 1024;
		} else
			usage();
		i++;
	}
	if (large_every < 1)
		usage();
	rng_state = seed ? seed : 1;
	say("seed %" PRIu64 "\n", seed);
	/* what replvfs says (its notices, why a commit or a release failed) */
	sqlite3_config(SQLITE_CONFIG_LOG, sqlite_log, NULL);
	if (sqlite3_open(":memory:", &loader) != SQLITE_OK ||
	    sqlite3_enable_load_extension(loader, 1) != SQLITE_OK ||
	    sqlite3_load_extension(loader, argv[1], NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "replvfs_bank: %s: %s\n", argv[1], err ? err : "?");
		return 1;
	}
	if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			SQLITE_OPEN_URI, NULL) != SQLITE_OK)
		die(1, argv[2]);
	sqlite3_busy_timeout(db, 5000);
	exec("PRAGMA journal_mode=WAL", 1);
	create_schema();
	check(argv[3], &next);
	print_hash();
	if ((fd = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		perror(argv[3]);
		return 1;
	}
	/* nothing is written until the test has compared the copies */
	while (go != NULL && access(go, F_OK) != 0) {
		struct timespec ts = { 0, 20 * 1000000L };

		nanosleep(&ts, NULL);
	}
	say("going %.3f\n", elapsed());
	for (;;) {
		int64_t src, dst, amount, payload, r;
		bool large, medium, rollback, dying;
		int len;

		if ((seconds > 0 && elapsed() > seconds) ||
		    (stop != NULL && access(stop, F_OK) == 0))
			break;
		dying = die_file != NULL && access(die_file, F_OK) == 0;
		r = rnd_range(0, 999);
		/* between transactions: checkpoints of every mode, and VACUUM */
		if (r < 40) {
			checkpoint(NULL, "", false, false);
			continue;
		}
		if (r < 50) {
			say("vacuum %.3f\n", elapsed());
			exec("VACUUM", 3);
			say("vacuum done %.3f\n", elapsed());
			/* it wrote every page of the database */
			pace((double)(one_int("PRAGMA page_count") *
				one_int("PRAGMA page_size")));
			continue;
		}
		nth++;
		large = nth % large_every == 3;
		/*
		 * Half the large transactions, and the one a dying checkpoint
		 * follows, are medium: after a checkpoint that empties the -wal,
		 * under 1000 frames, so that the VFS's own checkpoint (at 1000
		 * frames, in the COMMIT) leaves them to the explicit one after
		 * the COMMIT, which then has every page of theirs to copy.
		 */
		medium = large && (dying || rnd_range(0, 1) == 0);
		if (medium)
			checkpoint("TRUNCATE", "before-large ", false, false);
		payload = medium ? rnd_range(large_min, large_min > MEDIUM_MAX ?
				large_min : large_max < MEDIUM_MAX ? large_max : MEDIUM_MAX) :
			large ? rnd_range(large_min, large_max) :
			rnd_range(0, 9) == 0 ? rnd_range(4000, 20000) : rnd_range(0, 300);
		rollback = !large && rnd_range(0, 19) == 0;
		src = rnd_range(1, ACCOUNTS);
		dst = rnd_range(1, ACCOUNTS - 1);
		dst += dst >= src;
		amount = rnd_range(1, 1000);
		if (large)
			say("large %" PRId64 " %" PRId64 " %.3f\n", next, payload, elapsed());
		exec("BEGIN IMMEDIATE", 3);
		/* schema changes, inside the transaction with a transfer */
		if (rnd_range(0, 49) == 0) {
			if (has("side"))
				exec("DROP TABLE side", 3);
			else
				execf(3, "CREATE TABLE side(k INTEGER PRIMARY KEY, v TEXT);"
					"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT "
					"i + 1 FROM n WHERE i < %d) INSERT INTO side SELECT i, "
					"hex(randomblob(100)) FROM n", SIDE_ROWS);
		}
		if (rnd_range(0, 49) == 0)
			exec(has("transfers_amount") ? "DROP INDEX transfers_amount" :
				"CREATE INDEX transfers_amount ON transfers(amount)", 3);
		/* a transfer that a savepoint takes back: none of it may show */
		if (rnd_range(0, 3) == 0) {
			exec("SAVEPOINT undone", 3);
			transfer(next, dst, src, rnd_range(1, 1000), rnd_range(0, 30000));
			exec("ROLLBACK TO undone; RELEASE undone", 3);
		}
		/* and one released into the transaction: all of it shows */
		if (rnd_range(0, 3) == 0) {
			exec("SAVEPOINT kept", 3);
			transfer(next, src, dst, amount, payload);
			exec("RELEASE kept", 3);
		} else {
			transfer(next, src, dst, amount, payload);
		}
		/*
		 * The large payloads before the last go, in the next transaction
		 * that is not large: their pages are freed (and zeroed, where
		 * SQLite deletes securely, as Debian's does) and reused.
		 */
		if (!large && last_large > 0) {
			char *sql = sqlite3_mprintf("SELECT coalesce(sum(length(payload)), "
				"0) FROM transfers WHERE id < %lld AND length(payload) > "
				"100000", (long long)last_large);

			payload += one_int(sql);	/* paced as written */
			sqlite3_free(sql);
			execf(3, "UPDATE transfers SET payload = NULL WHERE id < %" PRId64
				" AND length(payload) > 100000", last_large);
		}
		if (rollback) {
			exec("ROLLBACK", 3);
			continue;
		}
		exec("COMMIT", 3);
		len = snprintf(line, sizeof(line), "%" PRId64 "\n", next);
		if (write(fd, line, (size_t)len) != len) {
			perror(argv[3]);
			return 1;
		}
		if (large) {
			say("large done %" PRId64 " %.3f\n", next, elapsed());
			/* the -wal is long now (a medium one's all there) */
			if (medium)
				checkpoint(NULL, "after-large ", true, dying);
			else if (rnd_range(0, 1) == 0)
				checkpoint(NULL, "after-large ", false, false);
			last_large = next;
		} else {
			last_large = 0;
		}
		next++;
		pace((double)payload);
	}
	close(fd);
	print_hash();
	if (linger > 0)
		sleep((unsigned)linger);
	sqlite3_close(db);
	sqlite3_close(loader);
	return 0;
}
