/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.h -- what rpma-bench, repl-bench and replctl bench share:
 * the clock, percentiles, the medium's name, and the network floor (a TCP
 * round trip carrying the payload); the medium's is bench_floor.h.
 *
 * Latencies are in nanoseconds; percentiles come back in microseconds.
 * The floors return 0, or -1 after saying why on stderr.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_stats {
	double p50, p99, p999;	/* microseconds */
};

uint64_t bench_now_ns(void);
void bench_sort(uint64_t *v, long n);
/* v sorted ascending */
double bench_pct(const uint64_t *v, long n, double p);
/* sorts lat, then takes its percentiles */
struct bench_stats bench_summarize(uint64_t *lat, long n);
/* the filesystem holding dir: "tmpfs", "ext4", ... */
const char *bench_fs_name(const char *dir);
/* "PROGRAM: message" on stderr */
void bench_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The network floor: ops round trips over a loopback TCP pair on port,
 * each `size` bytes to a forked echo process and 8 bytes back once all of
 * them arrived (delivery-complete).  lat[i] is round trip i.
 */
int bench_tcp_round_trips(int port, size_t size, long ops, uint64_t *lat,
		uint64_t *total_ns);

#endif
