/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl-bench -- the local log's append + persist, beside its floor measured
 * in the same run on the same medium:
 *
 *   ours:  repl_append(size) then repl_wait_durable(lsn), per thread, timed
 *          from the append to the return of the wait (group commit shares
 *          persists between threads);
 *   floor: memcpy of the same size into the backend's memory + one persist
 *          of that range, single-threaded.
 *
 *   repl-bench [-b file|crash|pmem] [-d DIR] [-s SIZE] [-t THREADS] [-n OPS]
 *
 * OPS is per thread.  Prints p50/p99/p99.9 latency and throughput, the
 * medium (durable or not), and the ratio ours/floor at p50.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "repl.h"
#include "rpma.h"

struct opts {
	enum repl_backend backend;
	const char *backend_name;
	const char *dir;
	size_t size;
	int threads;
	long ops;
};

struct worker {
	struct repl *repl;
	const struct opts *o;
	uint64_t *lat;
	int failed;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
pct(const uint64_t *v, long n, double p)
{
	return (double)v[(long)(p / 100.0 * (double)(n - 1) + 0.5)] / 1000.0;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	char *buf = malloc(w->o->size);

	if (buf == NULL) {
		w->failed = 1;
		return NULL;
	}
	memset(buf, 0x5a, w->o->size);
	for (long i = 0; i < w->o->ops; i++) {
		uint64_t t = now_ns(), lsn;

		if (repl_append(w->repl, buf, w->o->size, &lsn) ||
		    repl_wait_durable(w->repl, lsn, 1000)) {
			w->failed = 1;
			break;
		}
		w->lat[i] = now_ns() - t;
		/* this log is its own database: it checkpoints every 32 (untimed) */
		if (lsn % 32 == 0 && repl_release(w->repl, lsn > 64 ? lsn - 64 : 0)) {
			w->failed = 1;
			break;
		}
	}
	free(buf);
	return NULL;
}

static const char *
fs_name(const char *dir)
{
	struct statfs st;

	if (statfs(dir, &st))
		return "?";
	switch ((unsigned long)st.f_type) {
	case 0x01021994: return "tmpfs";
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	default: return "other";
	}
}

int
main(int argc, char *argv[])
{
	struct opts o = { .backend = REPL_BACKEND_FILE, .backend_name = "file",
		.dir = "/tmp", .size = 64, .threads = 1, .ops = 2000 };
	char path[512];
	struct repl_cfg cfg = { .create = 1, .node_id = 1, .epoch = 1,
		.full_timeout_ms = 1000 };
	struct repl *repl = NULL;
	struct rpma_ext_mem *mem = NULL;
	uint64_t *lat, *flat, t0, total;
	long n;
	int opt, failed = 0;
	bool durable = false;
	char *ptr, *buf;

	while ((opt = getopt(argc, argv, "b:d:s:t:n:")) != -1) {
		switch (opt) {
		case 'b':
			o.backend_name = optarg;
			o.backend = strcmp(optarg, "crash") == 0 ? REPL_BACKEND_CRASH :
				strcmp(optarg, "pmem") == 0 ? REPL_BACKEND_PMEM :
				REPL_BACKEND_FILE;
			break;
		case 'd': o.dir = optarg; break;
		case 's': o.size = strtoul(optarg, NULL, 0); break;
		case 't': o.threads = atoi(optarg); break;
		case 'n': o.ops = atol(optarg); break;
		default:
			fprintf(stderr, "usage: repl-bench [-b file|crash|pmem] [-d DIR] "
				"[-s SIZE] [-t THREADS] [-n OPS]\n");
			return 2;
		}
	}
	if (o.size == 0 || o.threads < 1 || o.threads > 64 || o.ops < 1)
		return 2;
	n = o.ops * o.threads;
	lat = calloc((size_t)n, sizeof(*lat));
	flat = calloc((size_t)o.ops, sizeof(*flat));
	buf = malloc(o.size);
	if (lat == NULL || flat == NULL || buf == NULL)
		return 1;
	memset(buf, 0x5a, o.size);

	/* the floor: copy + one persist, on the same medium */
	snprintf(path, sizeof(path), "%s/repl-bench-floor-%d", o.dir, (int)getpid());
	if (rpma_ext_mem_open((enum rpma_ext_mem_backend)o.backend, path,
			o.size * 64 + (1 << 20), RPMA_EXT_MEM_CREATE, &mem)) {
		fprintf(stderr, "repl-bench: %s: %s\n", path, rpma_ext_errormsg());
		return 1;
	}
	rpma_ext_mem_get_ptr(mem, (void **)&ptr);
	rpma_ext_mem_is_durable(mem, &durable);
	for (long i = 0; i < o.ops; i++) {
		size_t off = (size_t)(i % 64) * o.size;
		uint64_t t = now_ns();
		memcpy(ptr + off, buf, o.size);
		rpma_ext_mem_persist(mem, off, o.size);
		flat[i] = now_ns() - t;
	}
	rpma_ext_mem_close(&mem);
	unlink(path);

	/* ours */
	snprintf(path, sizeof(path), "%s/repl-bench-log-%d", o.dir, (int)getpid());
	cfg.path = path;
	cfg.backend = o.backend;
	cfg.size = 8192 + (o.size + 64) * 64 * (size_t)o.threads + (1 << 20);
	if (repl_open(&cfg, &repl)) {
		fprintf(stderr, "repl-bench: cannot create the log %s\n", path);
		return 1;
	}
	/*
	 * One untimed lap over the ring first, as a log in service has done:
	 * the floor's memory is warm too (page faults, first-touch allocation).
	 */
	for (size_t bytes = 0; bytes < cfg.size + o.size;) {
		uint64_t lsn;

		if (repl_append(repl, buf, o.size, &lsn) ||
		    (lsn % 64 == 0 && (repl_wait_durable(repl, lsn, 1000) ||
			repl_release(repl, lsn > 16 ? lsn - 16 : 0)))) {
			fprintf(stderr, "repl-bench: the warm-up lap failed\n");
			return 1;
		}
		bytes += o.size + 48;
	}
	{
		pthread_t th[64];
		struct worker w[64];

		t0 = now_ns();
		for (int i = 0; i < o.threads; i++) {
			w[i] = (struct worker){ .repl = repl, .o = &o, .lat = lat + i * o.ops };
			pthread_create(&th[i], NULL, work, &w[i]);
		}
		for (int i = 0; i < o.threads; i++) {
			pthread_join(th[i], NULL);
			failed |= w[i].failed;
		}
		total = now_ns() - t0;
	}
	repl_close(&repl);
	unlink(path);
	if (failed) {
		fprintf(stderr, "repl-bench: an append or wait failed\n");
		return 1;
	}
	qsort(lat, (size_t)n, sizeof(*lat), cmp_u64);
	qsort(flat, (size_t)o.ops, sizeof(*flat), cmp_u64);
	printf("repl-bench: %zu B, %d thread(s), %ld appends each, backend %s in %s (%s, %s)\n",
		o.size, o.threads, o.ops, o.backend_name, o.dir, fs_name(o.dir),
		durable ? "durable" : "NOT durable");
	printf("%-26s %10s %10s %10s %12s\n", "", "p50 us", "p99 us", "p99.9 us", "appends/s");
	printf("%-26s %10.1f %10.1f %10.1f %12.0f\n", "append+durable (ours)",
		pct(lat, n, 50), pct(lat, n, 99), pct(lat, n, 99.9),
		(double)n / ((double)total / 1e9));
	printf("%-26s %10.1f %10.1f %10.1f\n", "copy+persist (floor)",
		pct(flat, o.ops, 50), pct(flat, o.ops, 99), pct(flat, o.ops, 99.9));
	printf("ratio ours/floor at p50: %.2f\n", pct(lat, n, 50) / pct(flat, o.ops, 50));
	free(lat);
	free(flat);
	free(buf);
	return 0;
}
