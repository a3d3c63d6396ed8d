/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replctl.h -- what replctl's commands share: exit codes, the offline
 * commands' output helpers (the log is read through librepl's
 * repl_reader_*), and the commands.
 */
#ifndef REPLCTL_H
#define REPLCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "repl.h"

#define EXIT_OK		0
#define EXIT_FAILED	1
#define EXIT_USAGE	2
#define EXIT_NO_LOG	3
/* 4, EXIT_UNREACHABLE (client.h): the daemon cannot be reached */
/*
 * The daemon answers, but records are not acknowledged durable: an append
 * it took and did not acknowledge (its outcome unknown: REPL_E_TIMEDOUT,
 * REPL_E_UNKNOWN, or no acknowledgement within --timeout), or status of a
 * node that cannot acknowledge now.
 */
#define EXIT_UNACKED	5

/* a command-line number: decimal, or hexadecimal with 0x; min..max */
bool arg_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/*
 * arg_u64 for the value of `what` (an option such as "--from", or an
 * operand's name): false with the option and the value named on stderr
 * (not a number, or out of min..max).
 */
bool opt_u64(const char *what, const char *s, uint64_t min, uint64_t max,
		uint64_t *out);

const char *health_str(const struct repl_log_header *h);
void uuid_str(const uint8_t u[16], char out[37]);
void json_str(FILE *f, const char *s);

/* ms_show.c: the stored membership, offline */
void ms_summary(const struct repl_membership *ms, char *buf, size_t len);
void ms_nodes_text(FILE *f, const struct repl_membership *ms, const char *indent);
void ms_json(FILE *f, const struct repl_membership *ms);

/*
 * The commands (replctl.c's table): argv[0] the command; the global
 * options (client.h: struct live_opts) may come anywhere among its
 * arguments too, into o.  Each returns the exit status.
 */
struct live_opts;
/* offline, on a log image */
int cmd_dump(int argc, char *argv[], struct live_opts *o);
/* status LOG offline; status alone live (cmd_live) */
int cmd_status(int argc, char *argv[], struct live_opts *o);
/* against a running repld: status, peers, verify, promote, fence, ... */
int cmd_live(int argc, char *argv[], struct live_opts *o);
int cmd_append(int argc, char *argv[], struct live_opts *o);
int cmd_bench(int argc, char *argv[], struct live_opts *o);
int cmd_read(int argc, char *argv[], struct live_opts *o);
/* switchover and failover: the request, then STATUS until it is done */
int cmd_switchover(int argc, char *argv[], struct live_opts *o);
/* with a coordinator: the maintenance key on or off; the promotions */
int cmd_maintenance(int argc, char *argv[], struct live_opts *o);
int cmd_history(int argc, char *argv[], struct live_opts *o);
/* offline, on an archive: list, verify, prune; a log rebuilt from one */
int cmd_archive(int argc, char *argv[], struct live_opts *o);
/*
 * "replctl: CMD: archive A: WHY" on stderr, naming the archive once: the
 * archive's own messages begin with it already
 */
void archive_error(const char *cmd, const char *archive, const char *why);
int cmd_restore(int argc, char *argv[], struct live_opts *o);
/* ms since 1970 as "YYYY-MM-DDTHH:MM:SSZ" into out */
const char *utc_text(uint64_t ms, char *out, size_t len);

#endif
