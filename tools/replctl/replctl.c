/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replctl.c -- replctl: the administration tool of an rpma-repl cluster.
 *
 * Offline, on a log image (a stopped node's too; only read, with pread):
 *
 *   replctl dump [--backend pmem|file|crash] [--from LSN] [--to LSN]
 *		[--json] [--payload hex|full|none] LOG
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
 * append, read, bench, and with a coordinator (repld.conf(5)) switchover,
 * failover, maintenance and history (see usage below and replctl(8)).
 *
 * Global options (-s, -c, --json, --timeout) may come before the command
 * or anywhere among its arguments.  Exit codes (replctl(8), EXIT STATUS):
 * 0 ok; 1 the command failed (the daemon refused: answered an error; or
 * verify found a mismatch); 2 usage error; 3 the log cannot be opened or
 * read; 4 the daemon cannot be reached; 5 records not acknowledged durable
 * (the outcome unknown), or status of a node that cannot acknowledge.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
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

bool
opt_u64(const char *what, const char *s, uint64_t min, uint64_t max,
		uint64_t *out)
{
	uint64_t v;

	if (arg_u64(s, 0, UINT64_MAX, &v) && v >= min && v <= max) {
		*out = v;
		return true;
	}
	if (arg_u64(s, 0, UINT64_MAX, &v))
		fprintf(stderr, "replctl: %s: %s is out of range (%" PRIu64 "..%"
			PRIu64 ")\n", what, s, min, max);
	else
		fprintf(stderr, "replctl: %s: \"%s\" is not a number%s\n", what, s,
			strlen(s) > 20 && s[0] >= '0' && s[0] <= '9' ?
			" (or too large)" : "");
	return false;
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: replctl [-s SOCKET | -c FILE] [--json] [--timeout MS] "
		"COMMAND [ARGS]  |  --help  |  --version\n"
		"  (the options in brackets may also follow the command)\n"
		"live (through repld's admin socket):\n"
		"  status                            the node and its replicas\n"
		"  peers                             the replicas and their links\n"
		"  verify [--from LSN] [--to LSN]    checksums: primary vs replicas\n"
		"  promote [--force]                 a replica becomes the primary\n"
		"  fence                             the primary steps down\n"
		"  switchover [--to NODE] [--wait S] the primary hands its role on\n"
		"  failover --to NODE [--wait S]     NODE takes over, primary or not\n"
		"  maintenance on [--reason TEXT] | off  no automatic failover while on\n"
		"  history                           the promotions etcd recorded\n"
		"  add HOST:PORT [--quorum K]        add a replica (primary)\n"
		"  remove HOST:PORT [--quorum K]     remove a replica (primary)\n"
		"  reload                            re-read the membership (SIGHUP)\n"
		"  release LSN                       a checkpointer: records up to LSN may go\n"
		"  append [--client-id ID] [--whole] [--skip-empty]  stdin's lines as records\n"
		"  read [--from LSN] [--follow] [--count N] [--payload text|hex|raw]\n"
		"  bench [--records N] [--seconds S] [--size BYTES] [--depth D]\n"
		"        [--clients C] [--csv FILE]  append latency and throughput\n"
		"offline (on a log file):\n"
		"  dump [--backend pmem|file|crash] [--from LSN] [--to LSN] [--json]\n"
		"       [--payload hex|full|none] LOG     decode a log\n"
		"  status [--json] LOG               a log's short form\n"
		"offline (on an archive, repld.conf(5) archive):\n"
		"  archive list|verify ARCHIVE       its segments; every checksum\n"
		"  archive prune [--keep-bases N] [--keep-days D] ARCHIVE\n"
		"  restore --archive ARCHIVE (--to-lsn N | --to-time T | --latest)\n"
		"          [--node-id N] [--cluster-uuid U] [--log-size SIZE] DIR\n"
		"exit: 0 ok, 1 failed, 2 usage, 3 log unreadable, 4 daemon unreachable,\n"
		"      5 not acknowledged durable (status: the node cannot acknowledge)\n");
}

/* every command: its name and what runs it (argv[0] the command) */
static const struct {
	const char *name;
	int (*run)(int argc, char *argv[], struct live_opts *o);
} commands[] = {
	{ "status", cmd_status },	/* with a LOG operand: offline */
	{ "peers", cmd_live },
	{ "verify", cmd_live },
	{ "promote", cmd_live },
	{ "fence", cmd_live },
	{ "switchover", cmd_switchover },	/* with a coordinator */
	{ "failover", cmd_switchover },
	{ "maintenance", cmd_maintenance },
	{ "history", cmd_history },
	{ "add", cmd_live },
	{ "remove", cmd_live },
	{ "reload", cmd_live },
	{ "release", cmd_live },
	{ "append", cmd_append },
	{ "read", cmd_read },
	{ "bench", cmd_bench },
	{ "dump", cmd_dump },
	{ "archive", cmd_archive },
	{ "restore", cmd_restore },
};

int
main(int argc, char *argv[])
{
	enum { OPT_HELP = 'h', OPT_VERSION = 0x200 };
	static const struct option main_opts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct live_opts o;
	const char *cmd;
	int c;

	/* the global options before the command (up to it; the rest later) */
	live_opts_init(&o);
	optind = 0;
	while ((c = live_getopt(argc, argv, true, "h", main_opts, &o)) != -1) {
		if (c == OPT_HELP) {
			usage(stdout);
			return EXIT_OK;
		}
		if (c == OPT_VERSION) {
			printf("replctl %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		}
		return EXIT_USAGE;	/* said already */
	}
	if (optind == argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	if (strcmp(cmd, "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].run(argc - optind, argv + optind, &o);
	fprintf(stderr, "replctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return EXIT_USAGE;
}
