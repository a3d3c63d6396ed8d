/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replctl.c -- replctl: the administration tool of an rpma-repl cluster.
 *
 * Offline, on a log image (a stopped node's too; only read, with pread):
 *
 *   replctl dump [--backend pmem|file|crash] [--from LSN] [--to LSN]
 *		[--json] [--payload hex|none] LOG
 *	its header, then one line per record from the checkpoint on (the
 *	record's epoch is the low 32 bits it stores), then where and why the
 *	log ends: the first slot that holds no record of the expected LSN
 *	and lap, or a damaged one (recovery would end the log there too; not
 *	a failure).  Every backend keeps the region as the file's bytes, so
 *	--backend changes nothing offline; device-dax cannot be read so.
 *
 *   replctl status [--json] LOG
 *	the log's short form: first and last LSN, epoch, tail epoch,
 *	used/size, health (offline: only whether it was closed cleanly),
 *	membership.
 *
 * Live, against a running repld through its admin socket (-s SOCKET, or
 * -c FILE's admin_socket, or $REPLD_SOCKET, or /run/repld/repld.sock):
 * status, peers, verify, promote, fence, add, remove, reload, release,
 * append, read, bench (see usage below and replctl(8)).
 *
 * Exit codes: 0 ok; 1 the command failed (the daemon answered an error,
 * or verify found a mismatch); 2 usage error; 3 the log cannot be opened
 * or read; 4 the daemon cannot be reached.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "replctl.h"

bool
arg_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	char *end;

	/* no sign, no space, no octal surprise: strtoull would take them */
	if (!(*digits >= '0' && *digits <= '9') &&
	    !(hex && strchr("abcdefABCDEF", *digits) && *digits))
		return false;
	errno = 0;
	*out = strtoull(digits, &end, hex ? 16 : 10);
	return errno == 0 && *end == '\0' && *out >= min && *out <= max;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: replctl [-s SOCKET | -c FILE] [--json] [--timeout MS] "
		"COMMAND [ARGS]  |  --help  |  --version\n"
		"live (through repld's admin socket):\n"
		"  status                            the node and its replicas\n"
		"  peers                             the replicas and their links\n"
		"  verify [--from LSN] [--to LSN]    checksums: primary vs replicas\n"
		"  promote [--force]                 a replica becomes the primary\n"
		"  fence                             the primary steps down\n"
		"  add HOST:PORT [--quorum K]        add a replica (primary)\n"
		"  remove HOST:PORT [--quorum K]     remove a replica (primary)\n"
		"  reload                            re-read the membership (SIGHUP)\n"
		"  release LSN                       a checkpointer: records up to LSN may go\n"
		"  append [--client-id ID] [--whole] records from stdin\n"
		"  read [--from LSN] [--follow] [--count N] [--payload text|hex|raw]\n"
		"  bench [--records N] [--seconds S] [--size BYTES] [--depth D]\n"
		"offline (on a log file):\n"
		"  dump [--backend pmem|file|crash] [--from LSN] [--to LSN] [--json]\n"
		"       [--payload hex|none] LOG     decode a log\n"
		"  status [--json] LOG               a log's short form\n"
		"exit: 0 ok, 1 failed, 2 usage, 3 log unreadable, 4 daemon unreachable\n");
}

int
main(int argc, char *argv[])
{
	static const struct option help[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct live_opts o;
	int c, ret;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("replctl %s\n", PACKAGE_VERSION);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	/* a LOG argument makes status offline */
	if (strcmp(argv[1], "status") == 0) {
		for (int i = 2; i < argc; i++)
			if (argv[i][0] != '-')
				return cmd_status(argc - 1, argv + 1);
	}
	/* the global options before the command ("+": up to it) */
	live_opts_init(&o);
	optind = 0;
	while ((c = live_getopt(argc, argv, true, "h", help, &o)) != -1) {
		if (c != 'h')
			return EXIT_USAGE;	/* said already */
		usage(stdout);
		return EXIT_OK;
	}
	if (optind == argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((ret = cmd_live(argc - optind, argv + optind, &o)) >= 0)
		return ret;
	fprintf(stderr, "replctl: unknown command '%s'\n", argv[optind]);
	usage(stderr);
	return EXIT_USAGE;
}
