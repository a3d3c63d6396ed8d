/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl-bench -- durable appends, alone or replicated, beside their floor
 * measured in the same run on the same medium:
 *
 *   ours:  repl_append(size) then repl_wait_durable(lsn), per thread, timed
 *          from the append to the return of the wait (group commit shares
 *          persists and flushes between threads);
 *   floor: memcpy of the same size into the backend's memory + one persist
 *          of that range, single-threaded; with replicas, plus a TCP round
 *          trip carrying `size` bytes and an 8-byte acknowledgement, each
 *          measured alone (the floor's percentiles are the sums of theirs).
 *
 *   repl-bench [-b file|crash|pmem] [-d DIR] [-s SIZE] [-t THREADS] [-n OPS]
 *              [-r REPLICAS] [-q QUORUM] [-p PORT] [-P BUSY_POLL_US] [-T]
 *
 * OPS is per thread.  REPLICAS (0..3) are forked processes on the same
 * backend and directory, listening on PORT + 2i (control) and PORT + 2i + 1
 * (data), over libfabric "tcp" on loopback; the floor's TCP pair uses
 * PORT + 2 * REPLICAS (default PORT: 20000 + 8 * (pid % 1500)).  QUORUM
 * defaults to REPLICAS.  -P sets repl_cfg.busy_poll_us (default -1,
 * adaptive; 0 never).  -T prints the result as one row of
 * repl-bench-matrix's markdown table.  The CPU time this process and the
 * replicas spent over the timed phase is printed per append.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_floor.h"
#include "bench_util.h"
#include "proc_counts.h"
#include "repl.h"

#define MAX_REPLICAS 3
#define MAX_THREADS 64
#define WAIT_MS 10000	/* a durable wait longer than this is a failure */

static const uint8_t cluster_uuid[16] = "repl-bench-uuid";

struct opts {
	enum repl_backend backend;
	const char *backend_name;
	const char *dir;
	size_t size;
	int threads;
	long ops;
	int replicas;
	int quorum;
	int port;
	int busy_poll_us;
	int table;
};

struct worker {
	struct repl *repl;
	const struct opts *o;
	uint64_t *lat;
	atomic_int *abort;
	int failed;
};

/* what must be undone on every way out, a signal's included */
static struct {
	pid_t self;
	struct repl *repl;
	char log[512], floor[512], rep[MAX_REPLICAS][512];
	pid_t pid[MAX_REPLICAS];
} live;

/* a forked replica's: its signal handler stops it */
static struct repl_replica_node *_Atomic replica_node;
static volatile sig_atomic_t replica_stop;

/* returns how many did not exit cleanly */
static int
stop_replicas(void)
{
	int bad = 0;

	for (int i = 0; i < MAX_REPLICAS; i++)
		if (live.pid[i] > 0)
			kill(live.pid[i], SIGTERM);
	for (int i = 0; i < MAX_REPLICAS; i++) {
		int status = 0;

		if (live.pid[i] <= 0)
			continue;
		while (waitpid(live.pid[i], &status, 0) < 0 && errno == EINTR)
			;
		bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		live.pid[i] = 0;
	}
	return bad;
}

static void
remove_files(void)
{
	if (live.log[0])
		unlink(live.log);
	if (live.floor[0])
		unlink(live.floor);
	for (int i = 0; i < MAX_REPLICAS; i++)
		if (live.rep[i][0])
			unlink(live.rep[i]);
}

static int
cleanup(void)
{
	int bad;

	if (live.repl)
		repl_close(&live.repl);
	bad = stop_replicas();
	remove_files();
	return bad;
}

/* only async-signal-safe calls here: no repl_close */
static void
on_signal(int sig)
{
	(void)sig;
	/* a forked child before it set its own handlers */
	if (getpid() != live.self)
		_exit(1);
	stop_replicas();
	remove_files();
	_exit(1);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "repl-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(1);
}

/* ---------------------------------------------------------------- */
/* the replicas                                                     */

static void
on_replica_stop(int sig)
{
	struct repl_replica_node *node = atomic_load(&replica_node);

	(void)sig;
	replica_stop = 1;
	if (node)
		repl_replica_stop(node);
}

static void __attribute__((noreturn))
replica_main(const struct opts *o, int i, size_t size, int ready_fd)
{
	struct sigaction sa = { .sa_handler = on_replica_stop };
	char ctl[16], data[16];
	struct repl_replica_cfg cfg = {
		.path = live.rep[i], .backend = o->backend,
		.size = size, .create = 1, .node_id = 2 + (uint32_t)i,
		.provider = "tcp", .addr = "127.0.0.1", .ctl_port = ctl,
		.data_port = data, .timeout_ms = 3000,
	};
	struct repl_replica_node *node = NULL;
	ssize_t n;
	int ret;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* the bench may die without stopping it: go with it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != live.self)
		_exit(1);
	snprintf(ctl, sizeof(ctl), "%d", o->port + 2 * i);
	snprintf(data, sizeof(data), "%d", o->port + 2 * i + 1);
	memcpy(cfg.cluster_uuid, cluster_uuid, sizeof(cfg.cluster_uuid));
	if ((ret = repl_replica_open(&cfg, &node)) == 0) {
		atomic_store(&replica_node, node);
		if (replica_stop)	/* a signal before the handle was there */
			repl_replica_stop(node);
		/* listening: the bench notices a missing byte */
		n = write(ready_fd, "R", 1);
		(void)n;
		ret = repl_replica_run(node);
		atomic_store(&replica_node, NULL);
		repl_replica_close(&node);
	}
	unlink(cfg.path);
	_exit(ret ? 1 : 0);
}

/* the floor's medium: the core's name of the log's backend */
static enum rpma_ext_mem_backend
floor_backend(enum repl_backend b)
{
	switch (b) {
	case REPL_BACKEND_PMEM:		return RPMA_EXT_MEM_PMEM;
	case REPL_BACKEND_CRASH:	return RPMA_EXT_MEM_CRASH;
	case REPL_BACKEND_FILE:
	default:			return RPMA_EXT_MEM_FILE;
	}
}

/* forked before any thread exists: fork() copies only the caller */
static void
start_replicas(const struct opts *o, size_t size)
{
	for (int i = 0; i < o->replicas; i++) {
		struct pollfd pfd;
		int fds[2];
		char c;

		snprintf(live.rep[i], sizeof(live.rep[i]), "%s/repl-bench-replica-%d-%d",
			o->dir, i, (int)live.self);
		if (pipe(fds))
			fail("pipe: %s", strerror(errno));
		fflush(NULL);
		live.pid[i] = fork();
		if (live.pid[i] == 0) {
			close(fds[0]);
			replica_main(o, i, size, fds[1]);
		}
		close(fds[1]);
		if (live.pid[i] < 0) {
			close(fds[0]);
			fail("fork: %s", strerror(errno));
		}
		pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
		if (poll(&pfd, 1, 10000) != 1 || read(fds[0], &c, 1) != 1) {
			close(fds[0]);
			fail("replica %d did not start (ports %d, %d)", i,
				o->port + 2 * i, o->port + 2 * i + 1);
		}
		close(fds[0]);
	}
}

static void
wait_replicas_up(const struct opts *o)
{
	uint64_t until = bench_now_ns() + 10000000000ull;
	struct repl_status st;

	for (;;) {
		if (repl_status(live.repl, &st))
			fail("repl_status failed");
		if (st.replicas_up == o->replicas)
			return;
		if (bench_now_ns() > until)
			break;
		usleep(10000);
	}
	for (int i = 0; i < o->replicas; i++) {
		struct repl_replica_status rs = { 0 };

		if (repl_replica_status(live.repl, i, &rs) == 0 &&
		    rs.state != REPL_REPLICA_STREAMING)
			fprintf(stderr, "repl-bench: replica %d is not streaming: %s\n",
				i, rs.why[0] ? rs.why : "(no reason given)");
	}
	fail("only %d of %d replicas up after 10 s", st.replicas_up, o->replicas);
}

/* every replica flushed every record: a close then cuts no write short */
static void
wait_replicas_flushed(const struct opts *o)
{
	uint64_t until = bench_now_ns() + 10000000000ull;
	struct repl_status st;

	if (repl_status(live.repl, &st))
		fail("repl_status failed");
	for (int i = 0; i < o->replicas; i++) {
		struct repl_replica_status rs = { 0 };

		while (repl_replica_status(live.repl, i, &rs) == 0 &&
		       rs.state == REPL_REPLICA_STREAMING && rs.flushed_lsn < st.last_lsn &&
		       bench_now_ns() < until)
			usleep(1000);
		if (rs.state != REPL_REPLICA_STREAMING || rs.flushed_lsn < st.last_lsn)
			fail("replica %d did not catch up with LSN %llu: %s", i,
				(unsigned long long)st.last_lsn,
				rs.why[0] ? rs.why : "(no reason given)");
	}
}

/* ---------------------------------------------------------------- */
/* ours                                                             */

static void *
work(void *arg)
{
	struct worker *w = arg;
	char *buf = malloc(w->o->size);

	if (buf == NULL) {
		w->failed = 1;
		atomic_store(w->abort, 1);
		return NULL;
	}
	memset(buf, 0x5a, w->o->size);
	for (long i = 0; i < w->o->ops && !atomic_load(w->abort); i++) {
		uint64_t t = bench_now_ns(), lsn;
		int ret;

		if ((ret = repl_append(w->repl, buf, w->o->size, &lsn)) ||
		    (ret = repl_wait_durable(w->repl, lsn, WAIT_MS))) {
			fprintf(stderr, "repl-bench: append or wait %ld: %s\n", i,
				repl_strerror(ret));
			w->failed = 1;
			break;
		}
		w->lat[i] = bench_now_ns() - t;
		/* this log is its own database: it checkpoints every 32 (untimed) */
		if (lsn % 32 == 0 &&
		    (ret = repl_release(w->repl, lsn > 64 ? lsn - 64 : 0))) {
			fprintf(stderr, "repl-bench: release: %s\n", repl_strerror(ret));
			w->failed = 1;
			break;
		}
	}
	if (w->failed)
		atomic_store(w->abort, 1);
	free(buf);
	return NULL;
}

/* append until the ring lapped once, as a log in service has */
static void
warm_up(const struct opts *o, size_t log_size, const char *buf)
{
	for (size_t bytes = 0; bytes < log_size + o->size;) {
		uint64_t lsn;
		int ret;

		if ((ret = repl_append(live.repl, buf, o->size, &lsn)) ||
		    (lsn % 64 == 0 &&
		     ((ret = repl_wait_durable(live.repl, lsn, WAIT_MS)) ||
		      (ret = repl_release(live.repl, lsn > 16 ? lsn - 16 : 0)))))
			fail("the warm-up lap failed: %s", repl_strerror(ret));
		bytes += o->size + 48;
	}
}

static uint64_t
run_threads(const struct opts *o, uint64_t *lat)
{
	pthread_t th[MAX_THREADS];
	struct worker w[MAX_THREADS];
	atomic_int abort_all = 0;
	int failed = 0, started;
	uint64_t t0 = bench_now_ns(), total;

	for (started = 0; started < o->threads; started++) {
		w[started] = (struct worker){ .repl = live.repl, .o = o,
			.lat = lat + started * o->ops, .abort = &abort_all };
		if (pthread_create(&th[started], NULL, work, &w[started])) {
			atomic_store(&abort_all, 1);
			failed = 1;
			break;
		}
	}
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		failed |= w[i].failed;
	}
	total = bench_now_ns() - t0;
	if (failed)
		fail("the timed appends failed");
	return total;
}

/* ---------------------------------------------------------------- */

/* user + system CPU time of process pid so far, in us (clock ticks) */
static int64_t
cpu_us(pid_t pid)
{
	char path[64], line[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	/* after the name: state, then fields 4..13, then utime and stime */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			&ut, &st) != 2)
		return 0;
	return (int64_t)((ut + st) * 1000000ull / (unsigned long long)sysconf(_SC_CLK_TCK));
}

static void
usage(void)
{
	fprintf(stderr, "usage: repl-bench [-b file|crash|pmem] [-d DIR] [-s SIZE] "
		"[-t THREADS] [-n OPS] [-r REPLICAS] [-q QUORUM] [-p PORT] "
		"[-P BUSY_POLL_US] [-T]\n");
	exit(2);
}

static void
parse(int argc, char *argv[], struct opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "b:d:s:t:n:r:q:p:P:Th")) != -1) {
		switch (opt) {
		case 'b':
			o->backend_name = optarg;
			if (strcmp(optarg, "file") == 0)
				o->backend = REPL_BACKEND_FILE;
			else if (strcmp(optarg, "crash") == 0)
				o->backend = REPL_BACKEND_CRASH;
			else if (strcmp(optarg, "pmem") == 0)
				o->backend = REPL_BACKEND_PMEM;
			else
				usage();
			break;
		case 'd': o->dir = optarg; break;
		case 's': o->size = strtoul(optarg, NULL, 0); break;
		case 't': o->threads = atoi(optarg); break;
		case 'n': o->ops = atol(optarg); break;
		case 'r': o->replicas = atoi(optarg); break;
		case 'q': o->quorum = atoi(optarg); break;
		case 'p': o->port = atoi(optarg); break;
		case 'P': o->busy_poll_us = atoi(optarg); break;
		case 'T': o->table = 1; break;
		default: usage();
		}
	}
	if (optind != argc || o->size == 0 || o->threads < 1 ||
	    o->threads > MAX_THREADS || o->ops < 1 || o->replicas < 0 ||
	    o->replicas > MAX_REPLICAS || o->port < 0 || o->port > 65535 - 8 ||
	    o->busy_poll_us < REPL_BUSY_POLL_AUTO || o->busy_poll_us > REPL_BUSY_POLL_MAX)
		usage();
	if (o->quorum < 0)
		o->quorum = o->replicas;
	if (o->quorum > o->replicas)
		usage();
	/* below Linux's ephemeral ports (32768..), which connections take */
	if (o->port == 0)
		o->port = 20000 + (int)(getpid() % 1500) * 8;
}

static void
report(const struct opts *o, bool durable, uint64_t *lat, uint64_t total,
		uint64_t *tlat, uint64_t *plat)
{
	long n = o->ops * o->threads;
	struct bench_stats ours = bench_summarize(lat, n);
	struct bench_stats tcp = { 0, 0, 0 }, cp = bench_summarize(plat, o->ops);
	struct bench_stats floor;
	double rate = (double)n / ((double)total / 1e9);

	if (o->replicas)
		tcp = bench_summarize(tlat, o->ops);
	floor = (struct bench_stats){ tcp.p50 + cp.p50, tcp.p99 + cp.p99,
		tcp.p999 + cp.p999 };
	if (o->table) {
		printf("| %s %s | %zu | %d | %d | %d | %.2f | %.2f | %.2f | %.0f "
			"| %.2f | %.2f | %.2f | %.0f | %.2f |\n",
			o->backend_name, o->dir, o->size, o->threads, o->replicas,
			o->quorum, ours.p50, ours.p99, ours.p999, rate, floor.p50,
			floor.p99, floor.p999, 1e6 / floor.p50, ours.p50 / floor.p50);
		return;
	}
	printf("repl-bench: %zu B, %d thread(s), %ld appends each, %d replica(s), "
		"quorum %d, backend %s in %s (%s, %s)\n",
		o->size, o->threads, o->ops, o->replicas, o->quorum, o->backend_name,
		o->dir, bench_fs_name(o->dir), durable ? "durable" : "NOT durable");
	printf("%-26s %10s %10s %10s %12s\n", "", "p50 us", "p99 us", "p99.9 us",
		"ops/s");
	printf("%-26s %10.2f %10.2f %10.2f %12.0f\n", "append+durable (ours)",
		ours.p50, ours.p99, ours.p999, rate);
	if (o->replicas)
		printf("%-26s %10.2f %10.2f %10.2f\n", "tcp round trip (floor)",
			tcp.p50, tcp.p99, tcp.p999);
	printf("%-26s %10.2f %10.2f %10.2f\n", "copy+persist (floor)",
		cp.p50, cp.p99, cp.p999);
	if (o->replicas)
		printf("%-26s %10.2f %10.2f %10.2f %12.0f\n", "floor (sum of the two)",
			floor.p50, floor.p99, floor.p999, 1e6 / floor.p50);
	printf("ops/s: ours = appends made durable per second, all threads; "
		"floor = 1 / its p50\n");
	if (o->replicas)
		printf("floor = tcp round trip + copy+persist, each measured alone "
			"in this run: each percentile is the sum of theirs\n");
	printf("ratio ours/floor at p50: %.2f\n", ours.p50 / floor.p50);
}

int
main(int argc, char *argv[])
{
	struct opts o = { .backend = REPL_BACKEND_FILE, .backend_name = "file",
		.dir = "/tmp", .size = 64, .threads = 1, .ops = 2000, .quorum = -1,
		.busy_poll_us = REPL_BUSY_POLL_AUTO };
	/*
	 * full_timeout_ms: an append waits this long for room while a replica
	 * that lags (a loaded machine) holds the small ring; 1 s failed 1 run
	 * in 4 there, and a wait shows in the tail instead
	 */
	struct repl_cfg cfg = { .create = 1, .bootstrap = 1, .node_id = 1, .epoch = 1,
		.full_timeout_ms = 10000, .provider = "tcp" };
	struct repl_replica reps[MAX_REPLICAS];
	char ports[MAX_REPLICAS][16];
	uint64_t reconnects[MAX_REPLICAS] = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t *lat, *plat, *tlat, total;
	int64_t cpu_self, cpu_reps = 0;
	static struct proc_counts count_self, count_reps[MAX_REPLICAS];
	bool durable = false;
	char *buf;

	parse(argc, argv, &o);
	live.self = getpid();
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* the engine's errors and warnings (a replica down) on stderr */
	repl_log_set_threshold(REPL_LOG_THRESHOLD_STDERR, REPL_LOG_LEVEL_WARNING);

	lat = calloc((size_t)(o.ops * o.threads), sizeof(*lat));
	plat = calloc((size_t)o.ops, sizeof(*plat));
	tlat = calloc((size_t)o.ops, sizeof(*tlat));
	buf = malloc(o.size);
	if (lat == NULL || plat == NULL || tlat == NULL || buf == NULL)
		fail("out of memory");
	memset(buf, 0x5a, o.size);

	/* the floor first: nothing of ours is running yet */
	snprintf(live.floor, sizeof(live.floor), "%s/repl-bench-floor-%d", o.dir,
		(int)live.self);
	if (o.replicas &&
	    bench_tcp_round_trips(o.port + 2 * o.replicas, o.size, o.ops, tlat, &total))
		fail("the tcp floor failed");
	if (bench_copy_persist(floor_backend(o.backend), live.floor,
			o.size * 64 + (1 << 20), o.size, 64, o.ops, plat, &total, &durable))
		fail("the copy+persist floor failed");

	/* ours */
	snprintf(live.log, sizeof(live.log), "%s/repl-bench-log-%d", o.dir,
		(int)live.self);
	cfg.path = live.log;
	cfg.backend = o.backend;
	/* room for the 64 + 32 records the checkpoints keep, one per thread in
	 * flight, and a replica lagging by as much again */
	cfg.size = 8192 + (o.size + 64) * 64 * (size_t)(o.threads + 2) + (1 << 20);
	memcpy(cfg.cluster_uuid, cluster_uuid, sizeof(cfg.cluster_uuid));
	start_replicas(&o, cfg.size);
	for (int i = 0; i < o.replicas; i++) {
		snprintf(ports[i], sizeof(ports[i]), "%d", o.port + 2 * i);
		reps[i] = (struct repl_replica){ "127.0.0.1", ports[i] };
	}
	cfg.replicas = reps;
	cfg.n_replicas = o.replicas;
	cfg.quorum = o.quorum;
	cfg.busy_poll_us = o.busy_poll_us;
	if (repl_open(&cfg, &live.repl))
		fail("cannot create the log %s", live.log);
	wait_replicas_up(&o);
	warm_up(&o, cfg.size, buf);
	for (int i = 0; i < o.replicas; i++) {
		struct repl_replica_status rs = { 0 };

		repl_replica_status(live.repl, i, &rs);
		reconnects[i] = rs.reconnects;
	}
	cpu_self = cpu_us(getpid());
	for (int i = 0; i < o.replicas; i++)
		cpu_reps -= cpu_us(live.pid[i]);
	proc_counts_start(&count_self, 0);
	for (int i = 0; i < o.replicas; i++)
		proc_counts_start(&count_reps[i], live.pid[i]);
	total = run_threads(&o, lat);
	proc_counts_stop(&count_self);
	for (int i = 0; i < o.replicas; i++)
		proc_counts_stop(&count_reps[i]);
	cpu_self = cpu_us(getpid()) - cpu_self;
	for (int i = 0; i < o.replicas; i++)
		cpu_reps += cpu_us(live.pid[i]);
	/* a replica that left midway makes this another measurement */
	for (int i = 0; i < o.replicas; i++) {
		struct repl_replica_status rs = { 0 };

		if (repl_replica_status(live.repl, i, &rs) ||
		    rs.state != REPL_REPLICA_STREAMING || rs.reconnects != reconnects[i])
			fail("replica %d went down during the run: %s", i,
				rs.why[0] ? rs.why : "(no reason given)");
	}
	wait_replicas_flushed(&o);
	if (repl_close(&live.repl))
		fail("closing the log failed");
	if (cleanup())
		fail("a replica did not exit cleanly");
	report(&o, durable, lat, total, tlat, plat);
	if (!o.table) {
		double n = (double)o.ops * o.threads;

		printf("cpu: %.1f us per append here, %.1f in the replica%s "
			"(%.0f%% of a core in all over the run)\n", (double)cpu_self / n,
			(double)cpu_reps / n, o.replicas == 1 ? "" : "s",
			100.0 * (double)(cpu_self + cpu_reps) / ((double)total / 1000.0));
		proc_counts_print(&count_self, "here", n);
		for (int i = 0; i < o.replicas; i++) {
			char who[32];

			snprintf(who, sizeof(who), "replica %d", i + 1);
			proc_counts_print(&count_reps[i], who, n);
		}
	}
	free(lat);
	free(plat);
	free(tlat);
	free(buf);
	return 0;
}
