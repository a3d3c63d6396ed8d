/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * io-floor -- what the machine itself takes for the two halves of a
 * durable replicated append, without any replication engine or database:
 *
 *   tcp SIZE:            a loopback TCP round trip, SIZE bytes to a forked
 *                        echo process and 8 back (bench_util.h's floor);
 *   overwrite DIR SIZE:  pwrite of SIZE bytes + fdatasync, into a file in
 *                        DIR whose blocks were all written and synced before
 *                        (only the data goes to the disk);
 *   fresh DIR SIZE:      the same into a file only fallocated (ext4 or xfs
 *                        also commit the extent's conversion to written).
 *
 *   io-floor tcp SIZE [SECONDS] [PORT]
 *   io-floor overwrite|fresh DIR SIZE [SECONDS]
 *
 * Runs about SECONDS (default 1), at most 1,000,000 operations, and prints
 * one line: "p50_us p99_us ops_per_s ops".  tools/bench/vs-postgres puts it
 * beside the databases' rows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_OPS 1000000L
#define FILE_BYTES (64L << 20)	/* the file the disk floors write into */

static int
usage(void)
{
	fprintf(stderr, "usage: io-floor tcp SIZE [SECONDS] [PORT]\n"
		"       io-floor overwrite|fresh DIR SIZE [SECONDS]\n");
	return 2;
}

static void
print(uint64_t *lat, long n, uint64_t total_ns)
{
	struct bench_stats s = bench_summarize(lat, n);

	printf("%.2f %.2f %.0f %ld\n", s.p50, s.p99,
		(double)n / ((double)total_ns / 1e9), n);
}

/* round trips in batches until the time is up: the floor forks per batch */
static int
tcp(size_t size, double seconds, int port, uint64_t *lat)
{
	uint64_t t_end = bench_now_ns() + (uint64_t)(seconds * 1e9), total = 0, t;
	long n = 0, batch = 2000;

	while (n + batch <= MAX_OPS && bench_now_ns() < t_end) {
		if (bench_tcp_round_trips(port, size, batch, lat + n, &t))
			return 1;
		n += batch;
		total += t;
	}
	print(lat, n, total);
	return 0;
}

static int
disk(const char *dir, int fresh, size_t size, double seconds, uint64_t *lat)
{
	char path[4096];
	long slots = FILE_BYTES / (long)size, n = 0;
	char *buf = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
	uint64_t t0, t_end;
	int fd, ret = 1;

	if (buf == NULL || slots < 1)
		return 1;
	memset(buf, 0x5a, size);
	snprintf(path, sizeof(path), "%s/io-floor-%d", dir, (int)getpid());
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0) {
		bench_say("%s: %s", path, strerror(errno));
		free(buf);
		return 1;
	}
	if (fresh) {
		if ((errno = posix_fallocate(fd, 0, FILE_BYTES)) != 0) {
			bench_say("fallocate %s: %s", path, strerror(errno));
			goto out;
		}
	} else {
		for (long i = 0; i < slots; i++)
			if (pwrite(fd, buf, size, (off_t)(i * (long)size)) != (ssize_t)size) {
				bench_say("write %s: %s", path, strerror(errno));
				goto out;
			}
	}
	if (fsync(fd)) {
		bench_say("fsync %s: %s", path, strerror(errno));
		goto out;
	}
	t0 = bench_now_ns();
	t_end = t0 + (uint64_t)(seconds * 1e9);
	/* a fresh file is never written twice: it stops when it is full */
	while (n < MAX_OPS && (!fresh || n < slots) && bench_now_ns() < t_end) {
		uint64_t t = bench_now_ns();

		if (pwrite(fd, buf, size, (off_t)((n % slots) * (long)size)) != (ssize_t)size ||
		    fdatasync(fd)) {
			bench_say("pwrite+fdatasync %s: %s", path, strerror(errno));
			goto out;
		}
		lat[n++] = bench_now_ns() - t;
	}
	print(lat, n, bench_now_ns() - t0);
	ret = 0;
out:
	close(fd);
	unlink(path);
	free(buf);
	return ret;
}

int
main(int argc, char *argv[])
{
	uint64_t *lat;
	int ret;

	if (argc < 3)
		return usage();
	if ((lat = calloc(MAX_OPS, sizeof(*lat))) == NULL) {
		bench_say("out of memory");
		return 1;
	}
	if (strcmp(argv[1], "tcp") == 0 && argc <= 5) {
		size_t size = strtoul(argv[2], NULL, 0);
		double seconds = argc > 3 ? atof(argv[3]) : 1;
		int port = argc > 4 ? atoi(argv[4]) : 20000 + (int)(getpid() % 1500) * 8;

		ret = size ? tcp(size, seconds, port, lat) : usage();
	} else if ((strcmp(argv[1], "overwrite") == 0 || strcmp(argv[1], "fresh") == 0) &&
		   argc >= 4 && argc <= 5) {
		size_t size = strtoul(argv[3], NULL, 0);
		double seconds = argc > 4 ? atof(argv[4]) : 1;

		ret = size ? disk(argv[2], strcmp(argv[1], "fresh") == 0, size, seconds,
			lat) : usage();
	} else {
		ret = usage();
	}
	free(lat);
	return ret;
}
