/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fault_sweep.c -- every engine fault point (common/fault.h) a primary and
 * its replica pass, failed one at a time (debug builds only).
 *
 * The scenario, over ofi tcp on 127.0.0.1 with TLS where openssl can make
 * the test CA: a fresh replica and primary (bootstrap), records appended
 * and waited for, both closed; the primary restarted on its log, every
 * record acknowledged so far read back, more appended and waited for,
 * closed; the replica stopped.  Run N fails point N of one side (the
 * primary's process, or the replica's): each run is a child process of
 * its own, its replicas children of it, so that LeakSanitizer checks
 * every one at its exit and a crash or a hang ends one run only (each is
 * killed after RUN_TIMEOUT_S).  A run passes if no
 * process crashed or leaked and, after a clean reopen without faults,
 * every record whose wait_durable returned 0 is there with its payload.
 * A side's sweep ends at the first run whose scenario passed fewer than N
 * points: that run has no fault, and everything in it must succeed.
 * "fault_sweep run SIDE N PORT DIR tls|tcp" does one run by hand (the
 * certificates of make-test-ca.sh in DIR/tls).
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fault.h"
#include "repl.h"
#include "replica/replica.h"
#include "../lib/test_ports.h"

#define LOG_SIZE (128u << 10)
#define RECORDS 4		/* per phase, waited for in pairs */
#define MAX_LSN 64
#define RUN_TIMEOUT_S 20
#define MAX_RUNS 1000		/* per side: a scenario that never ends */
#define SLOTS 4			/* runs at a time: each mostly waits */

/* a run's exit: passed with its point hit; failed; passed, no point hit */
#define RUN_HIT 0
#define RUN_FAILED 1
#define RUN_NO_FAULT 3

static const uint8_t uuid[16] = "fault-sweep-uuid";

static long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* a run                                                              */

struct run {
	const char *side;	/* "primary" or "replica": whose points fail */
	long n;
	const char *dir;	/* the TLS files; NULL: plain TCP */
	char ppath[128], rpath[128];
	char ctl[12], data1[12], data2[12], fence[12];
	char ca[600], pcert[600], pkey[600], rcert[600], rkey[600];
	char payload[MAX_LSN][48];	/* what each LSN was appended with */
	bool acked[MAX_LSN];		/* a wait for it returned 0 */
	int errors;			/* steps that failed */
	int failed;			/* a check that failed */
};

#define CHECK(r, cond) do { if (!(cond)) { fprintf(stderr, \
	"fault_sweep: %s:%d: %s failed\n", __FILE__, __LINE__, #cond); \
	(r)->failed = 1; } } while (0)

static atomic_int child_stop;

static void
on_term(int sig)
{
	(void)sig;
	child_stop = 1;
}

static void
ready_cb(void *arg)
{
	int fd = *(int *)arg;

	(void)!write(fd, "r", 1);
}

/*
 * A replica process: waits for "g" on go (or starts at once if go < 0),
 * fails point `fault` of its own (0: none), serves until SIGTERM, and
 * reports the points it passed on report.  exit() rather than _exit():
 * LeakSanitizer checks it.
 */
static pid_t
replica_fork(struct run *r, const char *data_port, long fault, int go,
		int go_wr, int *ready_rd, int *report_rd)
{
	int ready[2], report[2];
	pid_t pid;

	if (pipe(ready) || pipe(report))
		exit(99);
	pid = fork();
	if (pid < 0)
		exit(99);
	if (pid > 0) {
		close(ready[1]);
		close(report[1]);
		*ready_rd = ready[0];
		*report_rd = report[0];
		return pid;
	}
	close(ready[0]);
	close(report[0]);
	if (go_wr >= 0)
		close(go_wr);	/* an EOF if the run ends without a go */
	signal(SIGTERM, on_term);
	if (go >= 0) {
		char c = 0;

		if (read(go, &c, 1) != 1 || c != 'g')
			exit(0);	/* not needed */
	}
	{
		struct replica_cfg cfg = { .path = r->rpath,
			.backend = RPMA_EXT_MEM_CRASH, .size = LOG_SIZE,
			.create = 1, .node_id = 10, .provider = "tcp",
			.addr = "127.0.0.1", .ctl_port = r->ctl,
			.data_port = data_port, .timeout_ms = 1000,
			.stop = &child_stop, .ready = ready_cb,
			.ready_arg = &ready[1] };
		long passed;
		int ret;

		memcpy(cfg.cluster_uuid, uuid, 16);
		if (r->dir) {
			cfg.tls_ca = r->ca;
			cfg.tls_cert = r->rcert;
			cfg.tls_key = r->rkey;
		}
		fault_set(fault);
		ret = replica_run(&cfg);
		passed = fault_count();
		if (ret)
			fprintf(stderr, "fault_sweep: replica_run: %d\n", ret);
		(void)!write(report[1], &passed, sizeof(passed));
	}
	exit(0);
}

/* wait for a replica's "ready": 0, or -1 if it ended first */
static int
replica_ready(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

/*
 * Stop a replica, collect its exit and what it reported (-1: nothing).
 * One never told to go ends on its own (EOF on go): it is not signalled,
 * since a SIGTERM landing in its exit's leak check fails it (exit 1, no
 * report).
 */
static long
replica_stop(struct run *r, pid_t pid, int report_fd, const char *which,
		bool signal_it)
{
	long passed = -1;
	int status = 0;

	if (signal_it)
		kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fault_sweep: the %s replica ended with status "
			"0x%x\n", which, status);
		r->failed = 1;
	}
	if (read(report_fd, &passed, sizeof(passed)) != sizeof(passed))
		passed = -1;
	close(report_fd);
	return passed;
}

static int
primary_open(struct run *r, int create, struct repl **repl)
{
	struct repl_replica rep = { "127.0.0.1", r->ctl };
	struct repl_cfg c = { .path = r->ppath, .backend = REPL_BACKEND_CRASH,
		.size = LOG_SIZE, .create = create, .bootstrap = create,
		.refuse_if_superseded = !create, .node_id = 1,
		.full_timeout_ms = 500, .replicas = &rep, .n_replicas = 1,
		.quorum = 1, .heartbeat_ms = 50, .down_timeout_ms = 500,
		.promote_wait_ms = 1500, .listen_addr = "127.0.0.1",
		.listen_port = r->fence };

	memcpy(c.cluster_uuid, uuid, 16);
	if (r->dir) {
		c.tls_ca = r->ca;
		c.tls_cert = r->pcert;
		c.tls_key = r->pkey;
	}
	return repl_open(&c, repl);
}

/*
 * Append RECORDS records, waiting for each pair: a wait that returns 0
 * acknowledges the records appended before it.  The first error ends it.
 */
static int
append_some(struct run *r, struct repl *repl, int phase)
{
	uint64_t first = 0, lsn = 0;
	int ret;

	for (int i = 0; i < RECORDS; i++) {
		char buf[48];
		int len = snprintf(buf, sizeof(buf), "run %ld phase %d record %d",
			r->n, phase, i);

		if ((ret = repl_append(repl, buf, (size_t)len, &lsn)))
			return ret;
		if (lsn >= MAX_LSN)
			return -1;
		if (!first)
			first = lsn;
		memcpy(r->payload[lsn], buf, (size_t)len + 1);
		if (i % 2 == 0)
			continue;
		if ((ret = repl_wait_durable(repl, lsn, 1500)))
			return ret;
		for (uint64_t l = first; l <= lsn; l++)
			r->acked[l] = true;
		first = 0;
	}
	return 0;
}

/* every acknowledged record is in repl with its payload: the lost ones */
static int
lost(struct run *r, struct repl *repl)
{
	int n = 0;

	for (int l = 0; l < MAX_LSN; l++) {
		char buf[64];
		size_t len = 0;

		if (!r->acked[l])
			continue;
		if (repl_read(repl, (uint64_t)l, buf, sizeof(buf), &len) != 0 ||
		    len != strlen(r->payload[l]) ||
		    memcmp(buf, r->payload[l], len) != 0) {
			fprintf(stderr, "fault_sweep: acknowledged LSN %d (\"%s\") "
				"is lost\n", l, r->payload[l]);
			n++;
		}
	}
	return n;
}

static long run_t0;

/* where a run is, with the time: a failed run's log shows where it went */
static void
step(const char *what)
{
	fprintf(stderr, "fault_sweep: +%ld ms: %s\n", now_ms() - run_t0, what);
}

static void
say(const char *what, int ret)
{
	if (ret)
		fprintf(stderr, "fault_sweep: %s: %d (%s)\n", what, ret,
			repl_strerror(ret));
}

/*
 * One phase of the scenario: open (create: the first), check what is
 * acknowledged so far, append more.  Failed steps count in r->errors.
 */
static void
phase(struct run *r, int create)
{
	struct repl *repl = NULL;
	int ret;

	step(create ? "the first open" : "the restart");
	if ((ret = primary_open(r, create, &repl))) {
		say(create ? "the first open" : "the restart", ret);
		r->errors++;
		return;
	}
	if (lost(r, repl))
		r->failed = 1;
	step("append");
	ret = append_some(r, repl, create ? 1 : 2);
	say("append or wait", ret);
	r->errors += ret != 0;
	if (create && ret == 0) {
		/*
		 * One not waited for: the close gives it to the replica, but
		 * this log never persists it, so the restart copies it back
		 * from there (promote.c's pull of the tail).
		 */
		uint64_t lsn;

		ret = repl_append(repl, "not waited for", 14, &lsn);
		say("the last append", ret);
		r->errors += ret != 0;
	}
	step("close");
	CHECK(r, repl_close(&repl) == 0);
}

/* everything acknowledged is there after a reopen without faults */
static void
check_clean(struct run *r, bool replica_up)
{
	struct repl *repl = NULL;
	int ret;

	if (!replica_up) {
		fprintf(stderr, "fault_sweep: no replica for the clean reopen\n");
		r->failed = 1;
		return;
	}
	step("the clean reopen");
	if ((ret = primary_open(r, 0, &repl))) {
		say("the clean reopen", ret);
		r->failed = 1;
		return;
	}
	if (lost(r, repl))
		r->failed = 1;
	CHECK(r, repl_close(&repl) == 0);
	step("checked");
}

static int
run_main(struct run *r)
{
	bool fault_primary = strcmp(r->side, "primary") == 0;
	int ready1, report1, ready2 = -1, report2 = -1, go[2], n_acked = 0;
	long passed;
	pid_t r1, r2 = 0;
	bool up;

	snprintf(r->ppath, sizeof(r->ppath), "/dev/shm/rpma-fault-%d-p",
		(int)getpid());
	snprintf(r->rpath, sizeof(r->rpath), "/dev/shm/rpma-fault-%d-r",
		(int)getpid());
	unlink(r->ppath);
	unlink(r->rpath);
	run_t0 = now_ms();
	/*
	 * The replicas before any thread.  A faulted one is followed by a
	 * faultless one for the check; a faultless one does the check too.
	 */
	r1 = replica_fork(r, r->data1, fault_primary ? 0 : r->n, -1, -1, &ready1,
		&report1);
	if (!fault_primary) {
		if (pipe(go))
			return 99;
		r2 = replica_fork(r, r->data2, 0, go[0], go[1], &ready2, &report2);
		close(go[0]);
	}
	fault_set(fault_primary ? r->n : 0);

	if ((up = replica_ready(ready1) == 0)) {
		phase(r, 1);
		phase(r, 0);
	} else {
		r->errors++;	/* its setup failed: nothing to open against */
	}
	passed = fault_count();
	fault_set(0);
	step("the scenario ended");
	for (int l = 0; l < MAX_LSN; l++)
		n_acked += r->acked[l];
	if (fault_primary) {
		/* (a failed replica, without a fault of its own, fails the run) */
		if (n_acked)
			check_clean(r, up);
		close(ready1);
		replica_stop(r, r1, report1, "faultless", true);
	} else {
		close(ready1);
		passed = replica_stop(r, r1, report1, "faulted", true);
		if (n_acked)
			(void)!write(go[1], "g", 1);
		close(go[1]);
		if (n_acked)
			check_clean(r, replica_ready(ready2) == 0);
		close(ready2);
		replica_stop(r, r2, report2, "checking", n_acked != 0);
	}
	step("the replicas stopped");
	printf("%ld %d %d\n", passed, n_acked, r->errors);
	fflush(stdout);
	unlink(r->ppath);
	unlink(r->rpath);
	if (r->failed)
		return RUN_FAILED;
	if (passed >= r->n)
		return RUN_HIT;
	/* no fault: every step must have succeeded */
	if (r->errors) {
		fprintf(stderr, "fault_sweep: %d step(s) failed without a fault\n",
			r->errors);
		return RUN_FAILED;
	}
	return RUN_NO_FAULT;
}

/* ------------------------------------------------------------------ */
/* the sweep                                                          */

struct slot {
	pid_t pid;
	long n;
	long started;		/* ms */
	int out;		/* its stdout */
	char err[700];		/* its stderr */
};

static int port_base;

/* the distinct points failed (FUNCTION (FILE:LINE)), over both sides */
static char sites[128][300];
static int n_sites;

static void
site_note(const char *point)
{
	if (strcmp(point, "no point hit") == 0)
		return;
	for (int i = 0; i < n_sites; i++)
		if (strcmp(sites[i], point) == 0)
			return;
	if (n_sites < 128)
		snprintf(sites[n_sites++], sizeof(sites[0]), "%s", point);
}

/* a run's configuration: its ports from base, its TLS files in dir/tls */
static void
run_init(struct run *r, const char *side, long n, int base, const char *dir,
		bool tls)
{
	memset(r, 0, sizeof(*r));
	r->side = side;
	r->n = n;
	r->dir = tls ? dir : NULL;
	snprintf(r->ctl, sizeof(r->ctl), "%d", base);
	snprintf(r->data1, sizeof(r->data1), "%d", base + 1);
	snprintf(r->data2, sizeof(r->data2), "%d", base + 2);
	snprintf(r->fence, sizeof(r->fence), "%d", base + 3);
	snprintf(r->ca, sizeof(r->ca), "%s/tls/ca.pem", dir);
	snprintf(r->pcert, sizeof(r->pcert), "%s/tls/primary.pem", dir);
	snprintf(r->pkey, sizeof(r->pkey), "%s/tls/primary.key", dir);
	snprintf(r->rcert, sizeof(r->rcert), "%s/tls/replica1.pem", dir);
	snprintf(r->rkey, sizeof(r->rkey), "%s/tls/replica1.key", dir);
}

/* run n of side in a child process (its own process group) */
static void
spawn(struct slot *s, const char *side, long n, const char *dir, bool tls)
{
	int out[2];

	snprintf(s->err, sizeof(s->err), "%s/run-%s-%ld.err", dir, side, n);
	if (pipe(out))
		exit(99);
	s->n = n;
	s->started = now_ms();
	fflush(stdout);		/* no buffered line goes to the child too */
	fflush(stderr);
	s->pid = fork();
	if (s->pid < 0)
		exit(99);
	if (s->pid == 0) {
		static struct run r;
		int fd = open(s->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		setpgid(0, 0);	/* its replicas too: a hung run is killed whole */
		if (fd < 0 || dup2(fd, 2) < 0 || dup2(out[1], 1) < 0)
			_exit(99);
		close(fd);
		close(out[0]);
		close(out[1]);
		/* a run's 4 ports are not reused for 256 runs */
		run_init(&r, side, n, port_base +
			(int)(((n * 2 + (side[0] == 'r')) % 256) * 4), dir, tls);
		/* exit(), not _exit(): LeakSanitizer checks the run */
		exit(run_main(&r));
	}
	setpgid(s->pid, s->pid);
	close(out[1]);
	s->out = out[0];
}

/* the point a run failed, as its log names it */
static void
point_of(const char *err, char *buf, size_t n)
{
	char line[512];
	FILE *f = fopen(err, "r");

	snprintf(buf, n, "no point hit");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "engine fault injected in ");

		if (p) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, n, "%s", p + strlen("engine fault injected in "));
			break;
		}
	}
	fclose(f);
}

static void
show_log(const char *err)
{
	char line[512];
	FILE *f = fopen(err, "r");

	if (f == NULL)
		return;
	fprintf(stderr, "---- %s\n", err);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fprintf(stderr, "----\n");
	fclose(f);
}

/* wait for one of the running slots: its result */
static int
reap(struct slot *slots, int *running, struct slot *done)
{
	for (;;) {
		for (int i = 0; i < *running; i++) {
			struct slot *s = &slots[i];
			int status = 0;
			pid_t got = waitpid(s->pid, &status, WNOHANG);

			if (got == 0 && now_ms() - s->started > RUN_TIMEOUT_S * 1000) {
				fprintf(stderr, "fault_sweep: run %ld hangs: killed\n",
					s->n);
				kill(-s->pid, SIGKILL);
				got = waitpid(s->pid, &status, 0);
				status = -1;
			}
			if (got == 0)
				continue;
			/* what is left of its process group, and its logs */
			kill(-s->pid, SIGKILL);
			{
				char path[64];

				snprintf(path, sizeof(path),
					"/dev/shm/rpma-fault-%d-p", (int)s->pid);
				unlink(path);
				snprintf(path, sizeof(path),
					"/dev/shm/rpma-fault-%d-r", (int)s->pid);
				unlink(path);
			}
			*done = *s;
			slots[i] = slots[--*running];
			if (status == -1)
				return RUN_FAILED;
			if (!WIFEXITED(status)) {
				fprintf(stderr, "fault_sweep: run %ld: signal %d\n",
					done->n, WTERMSIG(status));
				return RUN_FAILED;
			}
			return WEXITSTATUS(status);
		}
		(void)poll(NULL, 0, 20);
	}
}

/*
 * Fail every point of one side in turn, SLOTS runs at a time, until a run
 * passes fewer points than its N (*points: how many): the runs.
 */
static int
sweep(const char *side, const char *dir, bool tls, long *points, int *bad)
{
	struct slot slots[SLOTS], s;
	long next = 1, end = 0;
	int running = 0, runs = 0;

	while (running > 0 || (!end && next <= MAX_RUNS)) {
		int ret;

		while (!end && running < SLOTS && next <= MAX_RUNS)
			spawn(&slots[running++], side, next++, dir, tls);
		ret = reap(slots, &running, &s);
		runs++;
		{
			char point[300], line[64] = "";
			ssize_t got = read(s.out, line, sizeof(line) - 1);
			long passed;

			close(s.out);
			line[got > 0 ? got : 0] = '\0';
			line[strcspn(line, "\n")] = '\0';
			point_of(s.err, point, sizeof(point));
			site_note(point);
			printf("%s #%ld: %s in %ld ms: %s (passed, acked, failed "
				"steps: %s)\n", side, s.n, ret == RUN_FAILED ? "FAIL" :
				ret == RUN_NO_FAULT ? "no fault" : "ok",
				now_ms() - s.started, point, line);
			passed = got > 0 ? strtol(line, NULL, 10) : -1;
			if (passed >= 0 && passed < s.n && (!end || s.n < end)) {
				end = s.n;
				*points = passed;
			}
			if (ret != RUN_HIT && ret != RUN_NO_FAULT) {
				show_log(s.err);
				(*bad)++;
			}
		}
		unlink(s.err);
	}
	if (!end) {
		fprintf(stderr, "fault_sweep: %s: every one of %d runs hit a "
			"point\n", side, MAX_RUNS);
		(*bad)++;
	}
	return runs;
}

static int
make_ca(const char *dir)
{
	char cmd[1024];
	int ret;

	snprintf(cmd, sizeof(cmd), "sh %s %s/tls >/dev/null 2>&1", MAKE_TEST_CA,
		dir);
	ret = system(cmd);
	return WIFEXITED(ret) ? WEXITSTATUS(ret) : 99;
}

int
main(int argc, char *argv[])
{
	char dir[] = "/tmp/rpma-fault-sweep-XXXXXX";
	struct timespec t0, t1;
	long points[2] = { 0, 0 };
	int runs[2], bad = 0;
	bool tls;

	if (argc == 7 && strcmp(argv[1], "run") == 0) {
		/* one run by hand: run SIDE N PORT DIR tls|tcp */
		static struct run r;

		run_init(&r, argv[2], atol(argv[3]), atoi(argv[4]), argv[5],
			strcmp(argv[6], "tls") == 0);
		return run_main(&r);
	}
	if (!REPL_FAULT_ENABLED) {
		printf("fault_sweep: SKIP: this build has no fault injection "
			"(configure --enable-debug)\n");
		return 77;
	}
	if (mkdtemp(dir) == NULL)
		return 99;
	tls = make_ca(dir) == 0;
	if (!tls)
		printf("fault_sweep: no test CA (openssl?): plain TCP, the TLS "
			"points are not reached\n");
	/* only the provider the runs use: libfabric starts faster */
	setenv("FI_PROVIDER", "tcp", 0);
	/* a block no other test holds (tests/lib/test_ports.h) */
	port_base = test_ports(1024);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	runs[0] = sweep("primary", dir, tls, &points[0], &bad);
	runs[1] = sweep("replica", dir, tls, &points[1], &bad);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("fault_sweep: the scenario passes %ld points in the primary and "
		"%ld in the replica; %d runs failed %d distinct points, %d runs "
		"failed, %.1f s\n", points[0], points[1], runs[0] + runs[1],
		n_sites, bad,
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		(void)!system(cmd);
	}
	return bad ? 1 : 0;
}
