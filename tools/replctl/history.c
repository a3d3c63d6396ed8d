/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history.c -- replctl history: the promotions the coordinators recorded
 * in etcd (history/<epoch> keys), oldest first, as a node with a
 * coordinator reads them: the epoch, its node, the LSN its epoch starts
 * after, when it was made and how long the epoch before it lasted.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "replctl.h"

const char *
utc_text(uint64_t ms, char *out, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	if (gmtime_r(&s, &tm) == NULL ||
	    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, len, "%" PRIu64 " ms", ms);
	return out;
}

/* an epoch's length: ms below 10 s, then seconds, then h, m and s */
static const char *
lasted(uint64_t ms, char *out, size_t len)
{
	uint64_t s = ms / 1000;

	if (ms < 10000)
		snprintf(out, len, "%" PRIu64 " ms", ms);
	else if (s < 3600)
		snprintf(out, len, "%.1f s", (double)ms / 1000);
	else
		snprintf(out, len, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600,
			s / 60 % 60, s % 60);
	return out;
}

static void
print_history(const json_t *d)
{
	const json_t *arr = json_object_get(d, "epochs");
	uint64_t total = jin_u64(d, "total", 0), invalid = jin_u64(d, "invalid", 0);
	char when[40], dur[40];

	if (json_array_size(arr) == 0) {
		printf("no promotion recorded (each promotion a coordinator makes "
			"is)\n");
	} else {
		printf("%-20s %-5s %20s %-20s %s\n", "EPOCH", "NODE", "FROM-LSN",
			"PROMOTED-AT", "PREVIOUS-LASTED");
		for (size_t i = 0; i < json_array_size(arr); i++) {
			const json_t *e = json_array_get(arr, i);
			const json_t *prev = json_object_get(e, "previous_ms");

			printf("%-20" PRIu64 " %-5" PRIu64 " %20" PRIu64 " %-20s %s\n",
				jin_u64(e, "epoch", 0), jin_u64(e, "node_id", 0),
				jin_u64(e, "from_lsn", 0),
				utc_text(jin_u64(e, "at_ms", 0), when, sizeof(when)),
				json_is_integer(prev) ? lasted((uint64_t)json_integer_value(prev),
				dur, sizeof(dur)) : "-");
		}
	}
	if (total > json_array_size(arr))
		printf("%" PRIu64 " promotions recorded: the newest %zu shown\n", total,
			json_array_size(arr));
	if (invalid > 0)
		printf("%" PRIu64 " history key%s whose value is not one of repld's: "
			"left out\n", invalid, invalid == 1 ? "" : "s");
}

int
cmd_history(int argc, char *argv[], struct live_opts *o)
{
	json_t *d;
	char *reply;
	int c, ret;

	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, NULL, o)) != -1)
		return EXIT_USAGE;	/* '?': said already */
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	if (argc - optind != 0) {
		fprintf(stderr, "replctl: history takes no operand\n"
			"usage: replctl history [--json]\n");
		return EXIT_USAGE;
	}
	if ((ret = client_call(o, "HISTORY", &d, &reply)) != 0)
		return ret;
	if (o->json)
		printf("%s\n", reply);
	if (!jin_bool(d, "ok", false))
		ret = client_failed(d, "history");
	else if (!o->json)
		print_history(d);
	json_decref(d);
	free(reply);
	if (ret == 0 && fflush(stdout) != 0)
		ret = EXIT_FAILED;
	return ret;
}
