/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.c -- replctl bench: appends through the primary's admin socket,
 * DEPTH requests in flight on one connection, each timed from its send to
 * its durable acknowledgement.  Prints latency percentiles and
 * throughput; on a terminal a progress line on stderr meanwhile.
 *
 * This measures the daemon's socket path (a script's or a non-C
 * program's view); a database linking librepl skips the socket, and
 * tools/bench measures the engine itself.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin_proto.h"
#include "bench_util.h"
#include "client.h"
#include "replctl.h"

#define DEPTH_MAX 1024
#define PROGRESS_EVERY_NS 250000000ull

enum { OPT_RECORDS = 1, OPT_SECONDS, OPT_SIZE, OPT_DEPTH };

static int
usage(void)
{
	fprintf(stderr, "usage: replctl bench [--records N] [--seconds S]"
		" [--size BYTES] [--depth D] [--json]\n"
		"  N 1..100000000 (default 10000), S 1..3600, BYTES 1..%u "
		"(default 128), D 1..%d (default 16)\n",
		ADMIN_RECORD_MAX, DEPTH_MAX);
	return EXIT_USAGE;
}

int
cmd_bench(int argc, char *argv[], struct live_opts *o)
{
	static const struct option opts[] = {
		{ "records", required_argument, NULL, OPT_RECORDS },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t records = 10000, seconds = 0, size = 128, depth = 16;
	uint64_t *lat = NULL, *sent_at = NULL, cap, sent = 0, answered = 0;
	uint64_t done = 0, failed = 0;	/* acknowledged durable; refused */
	bool records_given = false;
	uint64_t t0, t_end = 0, next_progress;
	bool tty = isatty(2);
	char line[64], *payload = NULL;
	struct client c;
	int ret = 0, opt;

	optind = 0;
	while ((opt = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		bool ok = false;

		if (opt == OPT_RECORDS)
			ok = records_given = arg_u64(optarg, 1, 100000000, &records);
		else if (opt == OPT_SECONDS)
			ok = arg_u64(optarg, 1, 3600, &seconds);
		else if (opt == OPT_SIZE)
			ok = arg_u64(optarg, 1, ADMIN_RECORD_MAX, &size);
		else if (opt == OPT_DEPTH)
			ok = arg_u64(optarg, 1, DEPTH_MAX, &depth);
		if (!ok)
			return usage();
	}
	if (optind != argc)
		return usage();
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	/*
	 * With --seconds, room for what a fast daemon could do; with both,
	 * whichever ends first.
	 */
	cap = seconds ? (seconds * 200000 < 20000000 ? seconds * 200000 : 20000000) :
		records;
	if (seconds && records_given && records < cap)
		cap = records;
	if ((lat = malloc(cap * sizeof(*lat))) == NULL ||
	    (sent_at = malloc(DEPTH_MAX * sizeof(*sent_at))) == NULL ||
	    (payload = malloc(size)) == NULL) {
		fprintf(stderr, "replctl: bench: out of memory\n");
		free(lat);
		free(sent_at);
		return EXIT_FAILED;
	}
	for (uint64_t i = 0; i < size; i++)
		payload[i] = (char)('a' + i % 26);
	if (client_open(&c, o) != 0) {
		fprintf(stderr, "replctl: %s\n", c.why);
		ret = EXIT_UNREACHABLE;
		goto out;
	}
	snprintf(line, sizeof(line), "APPEND %" PRIu64, size);
	t0 = bench_now_ns();
	next_progress = t0 + PROGRESS_EVERY_NS;
	if (seconds)
		t_end = t0 + seconds * 1000000000ull;
	for (;;) {
		bool more = seconds ? bench_now_ns() < t_end && sent < cap : sent < records;

		/* keep depth in flight; then take one answer */
		if (more && sent - answered < depth) {
			sent_at[sent % DEPTH_MAX] = bench_now_ns();
			if (client_send(&c, line, payload, size) != 0) {
				fprintf(stderr, "\nreplctl: bench: %s\n", c.why);
				ret = EXIT_UNREACHABLE;
				/* stop sending; take the answers already on their way */
				records = sent;
				t_end = t0;
				continue;
			}
			sent++;
			continue;
		}
		if (answered == sent)
			break;
		{
			const char *r;
			char why[400];
			uint64_t t;
			json_t *d;
			size_t len;

			if ((r = client_reply(&c, &len)) == NULL) {
				fprintf(stderr, "\nreplctl: bench: %s\n", c.why);
				ret = EXIT_UNREACHABLE;
				break;
			}
			/* answers come in request order */
			t = bench_now_ns() - sent_at[answered % DEPTH_MAX];
			answered++;
			/* what is not an acknowledgement is shown as it came */
			d = json_in_reply(r, len, "repld", why, sizeof(why));
			if (jin_bool(d, "ok", false)) {
				lat[done++] = t;	/* only what became durable counts */
			} else {
				if (failed++ == 0)
					fprintf(stderr, "\nreplctl: bench: an append failed: "
						"%.*s\n", (int)len, r);
				more = false;
				records = sent;	/* stop sending; drain */
				t_end = t0;
			}
			json_decref(d);
		}
		if (tty && bench_now_ns() >= next_progress) {
			double s = (double)(bench_now_ns() - t0) / 1e9;

			fprintf(stderr, "\rbench: %" PRIu64 " records durable, %.0f "
				"records/s   ", done, (double)done / s);
			next_progress += PROGRESS_EVERY_NS;
		}
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	if (ret == 0 && failed)
		ret = EXIT_FAILED;
	/* answered at all: the figures of what was acknowledged (none: zeros) */
	if (answered) {
		double s = (double)(bench_now_ns() - t0) / 1e9, p50 = 0, p90 = 0;
		double p99 = 0, p999 = 0, max = 0;

		if (done) {
			bench_sort(lat, (long)done);
			p50 = bench_pct(lat, (long)done, 50);	/* microseconds */
			p90 = bench_pct(lat, (long)done, 90);
			p99 = bench_pct(lat, (long)done, 99);
			p999 = bench_pct(lat, (long)done, 99.9);
			max = lat[done - 1] / 1e3;
		}
		if (o->json)
			printf("{\"records\":%" PRIu64 ",\"failed\":%" PRIu64 ",\"size\":"
				"%" PRIu64 ",\"depth\":%" PRIu64 ",\"seconds\":%.3f,"
				"\"records_per_s\":%.0f,\"bytes_per_s\":%.0f,\"latency_us\":"
				"{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p99_9\":%.1f,"
				"\"max\":%.1f}}\n", done, failed, size, depth, s,
				(double)done / s, (double)(done * size) / s,
				p50, p90, p99, p999, max);
		else
			printf("bench: %" PRIu64 " records of %" PRIu64 " bytes durable, depth "
				"%" PRIu64 ", in %.2f s: %.0f records/s, %.2f MiB/s%s\n"
				"latency (us, append to durable acknowledgement): p50 %.1f  "
				"p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
				done, size, depth, s, (double)done / s,
				(double)(done * size) / s / (1 << 20),
				failed ? " (an append FAILED: the run stopped)" : "",
				p50, p90, p99, p999, max);
	}
	client_close(&c);
out:
	free(lat);
	free(sent_at);
	free(payload);
	return ret;
}
