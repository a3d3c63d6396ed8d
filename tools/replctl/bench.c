/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.c -- replctl bench: appends through the primary's admin socket
 * from CLIENTS connections (a thread each), DEPTH requests in flight on
 * each, every append timed from its send to its durable acknowledgement.
 * Prints latency percentiles and throughput of what was acknowledged; on
 * a terminal a progress line on stderr meanwhile; with --csv one row per
 * acknowledged append.
 *
 * It ends with the system calls and context switches per acknowledged
 * append of replctl itself and of the daemon, found by the pid behind
 * the socket (SO_PEERCRED) or named by --pid, as tools/bench/repl-bench
 * counts them (proc_counts.c).
 *
 * This measures the daemon's socket path (a script's or a non-C
 * program's view); a database linking librepl skips the socket, and
 * tools/bench measures the engine itself.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "admin_proto.h"
#include "bench_util.h"
#include "client.h"
#include "proc_counts.h"
#include "replctl.h"

#define RECORDS_DEFAULT 10000
#define SIZE_DEFAULT 128
#define DEPTH_DEFAULT 16
#define DEPTH_MAX 1024
#define CLIENTS_MAX ADMIN_CLIENTS_MAX
#define SAMPLES_MAX 20000000ull	/* with --seconds: the most kept */
#define PROGRESS_EVERY_NS 250000000ull
#define SNDBUF_MAX (4u << 20)	/* the socket room asked for, at most */

/* one acknowledged append */
struct sample {
	uint64_t start_ns;	/* its send, since the run's start */
	uint64_t lat_ns;	/* send to durable acknowledgement */
	uint64_t lsn;
	uint32_t client;
};

/* what every client of a run shares */
struct run {
	const struct live_opts *o;
	uint64_t size, depth, cap;	/* cap: the appends the run may send */
	uint64_t t0, t_end;		/* t_end 0: no time bound */
	const char *payload;
	atomic_uint_fast64_t tickets;	/* appends claimed (each < cap sent) */
	atomic_uint_fast64_t done, failed;	/* acknowledged durable; refused */
	atomic_uint_fast64_t finished;	/* clients that ended */
	atomic_uint_fast64_t last_ns;	/* when the last of them ended */
	atomic_bool stop;		/* a failure: every client stops sending */
	atomic_int ret;			/* the first failure's exit status */
	atomic_bool said;		/* the first refusal shown */
	const char *nl;			/* before a message: "\n" after progress */
};

struct client_run {
	struct run *r;
	uint32_t index;
	pthread_t thread;
	struct sample *s;
	uint64_t n, cap;
};

static void
fail_run(struct run *r, int ret)
{
	int none = 0;

	atomic_compare_exchange_strong(&r->ret, &none, ret);
	atomic_store(&r->stop, true);
}

static bool
keep(struct client_run *cr, const struct sample *s)
{
	if (cr->n == cr->cap) {
		uint64_t cap = cr->cap ? 2 * cr->cap : 4096;
		struct sample *n = realloc(cr->s, cap * sizeof(*n));

		if (n == NULL)
			return false;
		cr->s = n;
		cr->cap = cap;
	}
	cr->s[cr->n++] = *s;
	return true;
}

/* one reply: kept when acknowledged; false when the run must stop */
static bool
take(struct client_run *cr, const char *reply, size_t len, uint64_t start,
		uint64_t end)
{
	struct run *r = cr->r;
	char why[400];
	json_t *d = json_in_reply(reply, len, "repld", why, sizeof(why));
	bool ok = jin_bool(d, "ok", false);

	if (ok) {
		struct sample s = { start - r->t0, end - start, jin_u64(d, "lsn", 0),
			cr->index };

		if (!keep(cr, &s)) {
			fprintf(stderr, "%sreplctl: bench: out of memory\n", r->nl);
			fail_run(r, EXIT_FAILED);
			ok = false;
		} else {
			atomic_fetch_add(&r->done, 1);
		}
	} else {
		bool no = false;

		atomic_fetch_add(&r->failed, 1);
		/* what is not an acknowledgement is shown as it came, once */
		if (atomic_compare_exchange_strong(&r->said, &no, true))
			fprintf(stderr, "%sreplctl: bench: an append failed: %.*s\n",
				r->nl, (int)len, reply);
		fail_run(r, d ? client_error_exit(d) : EXIT_FAILED);
	}
	json_decref(d);
	return ok;
}

static void *
client_main(void *arg)
{
	struct client_run *cr = arg;
	struct run *r = cr->r;
	uint64_t sent_at[DEPTH_MAX], sent = 0, answered = 0;
	bool more = true;
	char line[64], what[64];
	struct client c;

	snprintf(line, sizeof(line), "APPEND %" PRIu64, r->size);
	snprintf(what, sizeof(what), "bench: client %" PRIu32, cr->index);
	if (client_open(&c, r->o) != 0) {
		fprintf(stderr, "%sreplctl: %s\n", r->nl, c.why);
		fail_run(r, EXIT_UNREACHABLE);
		goto out;
	}
	/* what may be in flight fits the socket: each append one send */
	client_sndbuf(&c, r->depth * (r->size + strlen(line) + 1) < SNDBUF_MAX ?
		r->depth * (r->size + strlen(line) + 1) : SNDBUF_MAX);
	for (;;) {
		const char *reply;
		size_t len;

		more = more && !atomic_load(&r->stop) &&
			(r->t_end == 0 || bench_now_ns() < r->t_end);
		/* keep depth in flight, while the run has appends to give */
		if (more && sent - answered < r->depth) {
			if (atomic_fetch_add(&r->tickets, 1) >= r->cap) {
				more = false;
				continue;
			}
			sent_at[sent % DEPTH_MAX] = bench_now_ns();
			if (client_send(&c, line, r->payload, r->size) != 0) {
				fprintf(stderr, "%s", r->nl);
				fail_run(r, client_not_acked(r->o, &c, what));
				break;
			}
			sent++;
			continue;
		}
		if (answered == sent)
			break;
		if ((reply = client_reply(&c, &len)) == NULL) {
			fprintf(stderr, "%s", r->nl);
			fail_run(r, client_not_acked(r->o, &c, what));
			break;
		}
		/* answers come in request order */
		if (!take(cr, reply, len, sent_at[answered % DEPTH_MAX], bench_now_ns()))
			more = false;	/* stop sending; take what is on its way */
		answered++;
	}
	client_close(&c);
out:
	/* the run's end: not when the main thread's nap notices it */
	for (uint64_t now = bench_now_ns(), was = atomic_load(&r->last_ns);
	     now > was && !atomic_compare_exchange_weak(&r->last_ns, &was, now);)
		;
	atomic_fetch_add(&r->finished, 1);
	return NULL;
}

static int
by_start(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->client < y->client ? -1 : x->client > y->client;
}

/* every acknowledged append, in the order of their sends (replctl(8)) */
static int
write_csv(const char *path, const struct sample *s, uint64_t n, uint64_t size)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "replctl: bench: --csv %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "start_s,latency_s,size,lsn,client\n");
	for (uint64_t i = 0; i < n; i++)
		fprintf(f, "%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu32 "\n",
			s[i].start_ns / 1e9, s[i].lat_ns / 1e9, size, s[i].lsn,
			s[i].client);
	if (fclose(f) != 0) {
		fprintf(stderr, "replctl: bench: --csv %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * The daemon behind the socket, to count its system calls: 0 when it
 * cannot be told (it is in another pid namespace, or does not answer:
 * the clients say why)
 */
static pid_t
daemon_pid(const struct live_opts *o)
{
	struct client c;
	pid_t pid;

	if (client_open(&c, o) != 0) {
		client_close(&c);
		return 0;
	}
	pid = client_peer_pid(&c);
	client_close(&c);
	return pid == getpid() ? 0 : pid;
}

/* "per append, WHO: ..." (repl-bench's line), the daemon with its pid */
static void
print_counts(const char *who, const struct proc_counts *pc, uint64_t n)
{
	char name[48];

	snprintf(name, sizeof(name), pc->self ? "%s" : "%s (pid %d)", who,
		(int)pc->pid);
	proc_counts_print(pc, name, (double)n);
}

static void
json_counts(const char *who, const struct proc_counts *pc, uint64_t n)
{
	printf("\"%s\":{", who);
	if (!pc->self)
		printf("\"pid\":%d,", (int)pc->pid);
	if (pc->have_syscalls)
		printf("\"syscalls\":%.2f,", (double)pc->syscalls / (double)n);
	printf("\"context_switches\":%.3f}", (double)pc->switches / (double)n);
}

static int
usage(void)
{
	fprintf(stderr, "usage: replctl bench [--records N] [--seconds S]"
		" [--size BYTES] [--depth D] [--clients C] [--csv FILE] [--pid PID]"
		" [--json]\n"
		"  N 1..100000000 (default %d; with --seconds alone, no bound), "
		"S 1..3600,\n  BYTES 1..%u (default %d), D 1..%d (default %d), "
		"C 1..%d (default 1),\n  PID the daemon whose system calls are "
		"counted (default: the socket's; 0: none)\n", RECORDS_DEFAULT,
		ADMIN_RECORD_MAX, SIZE_DEFAULT, DEPTH_MAX, DEPTH_DEFAULT, CLIENTS_MAX);
	return EXIT_USAGE;
}

/*
 * The progress line on a terminal: what is durable out of the total (when
 * records bound the run), the rate, and the time left by the rate or by
 * --seconds, whichever ends first.
 */
static void
progress(const struct run *r, uint64_t total, uint64_t seconds)
{
	uint64_t done = atomic_load(&r->done), now = bench_now_ns();
	double el = (double)(now - r->t0) / 1e9, rate = el > 0 ? (double)done / el : 0;
	double left = -1;
	char of[48] = "";

	if (total) {
		snprintf(of, sizeof(of), " of %" PRIu64 " (%.0f%%)", total,
			100.0 * (double)done / (double)total);
		if (rate > 0)
			left = (double)(total > done ? total - done : 0) / rate;
	}
	if (seconds && r->t_end > now) {
		double by_time = (double)(r->t_end - now) / 1e9;

		if (left < 0 || by_time < left)
			left = by_time;
	}
	if (left >= 0)
		fprintf(stderr, "\rbench: %" PRIu64 "%s records durable, %.0f records/s, "
			"%.0f s left   ", done, of, rate, left + 0.5);
	else
		fprintf(stderr, "\rbench: %" PRIu64 "%s records durable, %.0f records/s   ",
			done, of, rate);
}

int
cmd_bench(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_RECORDS = 1, OPT_SECONDS, OPT_SIZE, OPT_DEPTH, OPT_CLIENTS,
		OPT_CSV, OPT_PID };
	static const struct option opts[] = {
		{ "records", required_argument, NULL, OPT_RECORDS },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "clients", required_argument, NULL, OPT_CLIENTS },
		{ "csv", required_argument, NULL, OPT_CSV },
		{ "pid", required_argument, NULL, OPT_PID },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t records = RECORDS_DEFAULT, seconds = 0, size = SIZE_DEFAULT;
	uint64_t depth = DEPTH_DEFAULT, clients = 1, pid = 0;
	bool records_given = false, pid_given = false, tty = isatty(2), bounded;
	const char *csv = NULL;
	struct client_run *cr = NULL;
	struct sample *all = NULL;
	uint64_t *lat = NULL, n = 0, started = 0;
	char *payload = NULL;
	struct run r;
	static struct proc_counts count_self, count_daemon;
	pid_t daemon = 0;
	int ret = 0, opt;

	optind = 0;
	while ((opt = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		bool ok = false;

		if (opt == OPT_RECORDS)
			ok = records_given = opt_u64("--records", optarg, 1, 100000000,
				&records);
		else if (opt == OPT_SECONDS)
			ok = opt_u64("--seconds", optarg, 1, 3600, &seconds);
		else if (opt == OPT_SIZE)
			ok = opt_u64("--size", optarg, 1, ADMIN_RECORD_MAX, &size);
		else if (opt == OPT_DEPTH)
			ok = opt_u64("--depth", optarg, 1, DEPTH_MAX, &depth);
		else if (opt == OPT_CLIENTS)
			ok = opt_u64("--clients", optarg, 1, CLIENTS_MAX, &clients);
		else if (opt == OPT_CSV)
			ok = (csv = optarg)[0] != '\0';
		else if (opt == OPT_PID)
			ok = pid_given = opt_u64("--pid", optarg, 0, INT32_MAX, &pid);
		if (!ok)
			return usage();
	}
	if (pid && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
		fprintf(stderr, "replctl: bench: --pid %" PRIu64 ": no such process\n",
			pid);
		return EXIT_USAGE;
	}
	if (optind != argc)
		return usage();
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	r = (struct run){ .o = o, .size = size, .depth = depth,
		.nl = tty ? "\n" : "" };
	/* with --seconds, room for what a fast daemon could do; with both,
	 * whichever ends first */
	r.cap = seconds ? (seconds * 200000 < SAMPLES_MAX ? seconds * 200000 :
		SAMPLES_MAX) : records;
	if (seconds && records_given && records < r.cap)
		r.cap = records;
	if ((payload = malloc(size)) == NULL ||
	    (cr = calloc(clients, sizeof(*cr))) == NULL) {
		fprintf(stderr, "replctl: bench: out of memory\n");
		free(payload);
		return EXIT_FAILED;
	}
	for (uint64_t i = 0; i < size; i++)
		payload[i] = (char)('a' + i % 26);
	r.payload = payload;
	daemon = pid_given ? (pid_t)pid : daemon_pid(o);
	/* before the clients start: their threads inherit the count */
	proc_counts_start(&count_self, 0);
	if (daemon)
		proc_counts_start(&count_daemon, daemon);
	r.t0 = bench_now_ns();
	if (seconds)
		r.t_end = r.t0 + seconds * 1000000000ull;
	bounded = !seconds || records_given;
	for (uint64_t i = 0; i < clients; i++) {
		cr[i] = (struct client_run){ .r = &r, .index = (uint32_t)i };
		if (pthread_create(&cr[i].thread, NULL, client_main, &cr[i]) != 0) {
			fprintf(stderr, "replctl: bench: cannot start client %" PRIu64
				"\n", i);
			fail_run(&r, EXIT_FAILED);
			break;
		}
		started++;
	}
	/* the progress line, until every client ended */
	while (atomic_load(&r.finished) < started) {
		struct timespec nap = { 0, 50000000 };
		static uint64_t next;

		nanosleep(&nap, NULL);
		if (!tty || bench_now_ns() < next)
			continue;
		next = bench_now_ns() + PROGRESS_EVERY_NS;
		progress(&r, bounded ? records : 0, seconds);
	}
	for (uint64_t i = 0; i < started; i++) {
		pthread_join(cr[i].thread, NULL);
		n += cr[i].n;
	}
	proc_counts_stop(&count_self);
	if (daemon)
		proc_counts_stop(&count_daemon);
	if (tty)
		fprintf(stderr, "\r%79s\r", "");
	ret = atomic_load(&r.ret);
	if (n && ((all = malloc(n * sizeof(*all))) == NULL ||
		  (lat = malloc(n * sizeof(*lat))) == NULL)) {
		fprintf(stderr, "replctl: bench: out of memory\n");
		ret = EXIT_FAILED;
		goto out;
	}
	n = 0;
	for (uint64_t i = 0; i < started; i++) {
		if (cr[i].n)
			memcpy(all + n, cr[i].s, cr[i].n * sizeof(*all));
		n += cr[i].n;
	}
	if (n)
		qsort(all, n, sizeof(*all), by_start);
	for (uint64_t i = 0; i < n; i++)
		lat[i] = all[i].lat_ns;
	if (csv && write_csv(csv, all, n, size) != 0 && ret == 0)
		ret = EXIT_FAILED;
	/* answered at all: the figures of what was acknowledged (none: zeros) */
	if (n || atomic_load(&r.failed)) {
		double s = (double)(atomic_load(&r.last_ns) - r.t0) / 1e9, p50 = 0, p90 = 0;
		double p99 = 0, p999 = 0, max = 0;
		uint64_t failed = atomic_load(&r.failed);

		if (n) {
			bench_sort(lat, (long)n);
			p50 = bench_pct(lat, (long)n, 50);	/* microseconds */
			p90 = bench_pct(lat, (long)n, 90);
			p99 = bench_pct(lat, (long)n, 99);
			p999 = bench_pct(lat, (long)n, 99.9);
			max = lat[n - 1] / 1e3;
		}
		if (o->json) {
			printf("{\"records\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"size\":"
				"%" PRIu64 ",\"depth\":%" PRIu64 ",\"clients\":%" PRIu64
				",\"seconds\":%.3f,\"records_per_s\":%.0f,\"bytes_per_s\":"
				"%.0f,\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,"
				"\"p99_9\":%.1f,\"max\":%.1f}", n, failed, size, depth,
				clients, s, (double)n / s, (double)(n * size) / s,
				p50, p90, p99, p999, max);
			if (n) {
				printf(",\"per_append\":{");
				json_counts("replctl", &count_self, n);
				if (daemon) {
					printf(",");
					json_counts("repld", &count_daemon, n);
				}
				printf("}");
			}
			printf("}\n");
		} else {
			printf("bench: %" PRIu64 " records of %" PRIu64 " bytes durable, "
				"%" PRIu64 " client%s x depth %" PRIu64 ", in %.2f s: %.0f "
				"records/s, %.2f MiB/s%s\n"
				"latency (us, append to durable acknowledgement): p50 %.1f  "
				"p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
				n, size, clients, clients == 1 ? "" : "s", depth, s,
				(double)n / s, (double)(n * size) / s / (1 << 20),
				failed ? " (an append FAILED: the run stopped)" : "",
				p50, p90, p99, p999, max);
			if (n) {
				print_counts("replctl", &count_self, n);
				if (daemon)
					print_counts("repld", &count_daemon, n);
				else if (!pid_given)
					printf("per append, repld: not counted (its pid is "
						"not visible from here)\n");
			}
		}
	}
out:
	for (uint64_t i = 0; i < clients; i++)
		free(cr[i].s);
	free(cr);
	free(all);
	free(lat);
	free(payload);
	return ret;
}
