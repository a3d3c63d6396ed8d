/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * status.c -- replctl status: LOG, a log's short form read offline;
 * without one, the running node's (live.c)
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "client.h"
#include "replctl.h"

/* the log at path, offline */
static int
status_log(const char *path, bool json)
{
	struct repl_reader *rd = NULL;
	struct repl_log_header hdr;
	struct repl_log_summary s;
	char err[512];

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

int
cmd_status(int argc, char *argv[], struct live_opts *o)
{
	int c;

	/* the global options anywhere; a LOG operand makes it offline */
	optind = 0;
	while ((c = live_getopt(argc, argv, false, NULL, NULL, o)) != -1)
		if (c == '?')
			goto usage;
	if (argc - optind == 0)
		return cmd_live(argc, argv, o);
	if (argc - optind == 1)
		return status_log(argv[optind], o->json);
	fprintf(stderr, "replctl: status takes at most one operand, a LOG\n");
usage:
	fprintf(stderr, "usage: replctl status [--json]  |  replctl status [--json] LOG\n");
	return EXIT_USAGE;
}
