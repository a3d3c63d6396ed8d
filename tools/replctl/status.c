/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status.c -- replctl status LOG: a log's short form, read offline
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "replctl.h"

int
cmd_status(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct repl_reader *rd = NULL;
	struct repl_log_header hdr;
	struct repl_log_summary s;
	const char *path;
	bool json = false, bad = false;
	char err[512];
	int c;

	optind = 0;
	opterr = 0;
	while (!bad && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else {
			fprintf(stderr, "replctl status: unknown option '%s'\n",
				argv[optind - 1]);
			bad = true;
		}
	}
	/* one LOG, nothing else */
	if (bad || argc - optind != 1 || argv[optind][0] == '-') {
		fprintf(stderr, "usage: replctl status [--json] LOG\n");
		return EXIT_USAGE;
	}
	path = argv[optind];
	if (repl_reader_open(path, &rd, err, sizeof(err))) {
		fprintf(stderr, "replctl status: %s\n", err);
		return EXIT_NO_LOG;
	}
	repl_reader_header(rd, &hdr);
	repl_reader_summary(rd, &s);
	if (json) {
		printf("{\"first_lsn\":%" PRIu64 ",\"last_lsn\":%" PRIu64 ",\"records\":%"
			PRIu64 ",\"epoch\":%" PRIu64 ",\"tail_epoch\":%" PRIu64 ",\"used\":%"
			PRIu64 ",\"size\":%" PRIu64 ",\"health\":\"%s\",\"tail_damaged\":%s,"
			"\"promise_pending\":%s,\"membership\":", s.first_lsn, s.last_lsn,
			s.records, hdr.epoch, s.tail_epoch, s.used_bytes, s.size_bytes,
			health_str(&hdr), s.end.damaged ? "true" : "false",
			hdr.promise_pending ? "true" : "false");
		ms_json(stdout, &hdr.membership);
		printf("}\n");
	} else {
		printf("%-12s %" PRIu64 "\n", "first LSN", s.first_lsn);
		printf("%-12s %" PRIu64 "\n", "last LSN", s.last_lsn);
		printf("%-12s %" PRIu64 "%s\n", "epoch", hdr.epoch,
			hdr.promise_pending ? " (promise pending: "
			"made anew, it has not taken its promise floor yet)" : "");
		printf("%-12s %" PRIu64 "\n", "tail epoch", s.tail_epoch);
		printf("%-12s %" PRIu64 " / %" PRIu64 " bytes\n", "used", s.used_bytes,
			s.size_bytes);
		printf("%-12s %s\n", "health", health_str(&hdr));
		{
			char sum[200];

			ms_summary(&hdr.membership, sum, sizeof(sum));
			printf("%-12s %s\n", "membership", sum);
			ms_nodes_text(stdout, &hdr.membership, "             ");
		}
		if (s.end.damaged)
			printf("%-12s LSN %" PRIu64 " at ring offset %" PRIu64 ": %s\n",
				"tail", s.end.lsn, s.end.off, s.end.why);
	}
	repl_reader_close(&rd);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
}
