/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replctl.c -- replctl: the administration tool of an rpma-repl cluster.
 *
 *   replctl dump [--backend pmem|file|crash] [--from LSN] [--to LSN]
 *		[--json] [--payload hex|none] LOG
 *	decode a log image offline (a stopped node's too): its header, then
 *	one line per record from the checkpoint on (the record's epoch is
 *	the low 32 bits it stores), then where and why the log ends: the
 *	first slot that holds no record of the expected LSN and lap, or a
 *	damaged one (recovery would end the log there too; not a failure).
 *	The image is only read, with pread: every backend keeps the region
 *	as the file's bytes, so --backend changes nothing offline, and a
 *	device-dax node cannot be read this way.
 *
 *   replctl status [--json] LOG
 *	the log's short form: first and last LSN, epoch, tail epoch,
 *	used/size, health, membership.
 *
 * Offline "health" knows only whether the log was closed cleanly: the
 * medium's counters are read by the process that opens the log.
 *
 * Exit codes: 0 ok; 1 the command failed (e.g. a mismatch); 2 usage error;
 * 3 the log cannot be opened or read (no file, not a log, truncated).
 */
#include "config.h"

#include <string.h>

#include "replctl.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: replctl COMMAND [ARGS]\n"
		"  dump [--backend pmem|file|crash] [--from LSN] [--to LSN] [--json]\n"
		"       [--payload hex|none] LOG     decode a log offline\n"
		"  status [--json] LOG               a log's short form, offline\n");
}

int
main(int argc, char *argv[])
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (strcmp(argv[1], "status") == 0)
		return cmd_status(argc - 1, argv + 1);
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	fprintf(stderr, "replctl: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
