/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.h -- replctl's side of repld's admin socket (admin_proto.h):
 * which socket, connecting, sending requests, reading one-line replies.
 */
#ifndef REPLCTL_CLIENT_H
#define REPLCTL_CLIENT_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "json_in.h"

#define EXIT_UNREACHABLE 4

struct client {
	const char *path;
	int fd;
	int timeout_ms;
	int64_t deadline;	/* client_open()'s time plus timeout_ms */
	bool whole;		/* every wait ends at deadline (client_call) */
	char *in;		/* received, not yet returned */
	size_t have, cap;
	size_t line_len;	/* of the line last returned (consumed next) */
	bool timed_out;		/* client_reply failed for --timeout */
	char why[300];		/* the last failure, naming the socket */
};

/* -s given several times: the nodes among which the primary is found */
#define LIVE_SOCKETS_MAX 16

/* the global options every live command takes */
struct live_opts {
	const char *socket;	/* resolved: -s, -c FILE's, $REPLD_SOCKET, default */
	bool json;
	int timeout_ms;
	bool timeout_given;	/* --timeout: it bounds every command */
	const char *sock_arg, *conf_arg;	/* -s, -c as given */
	/* -s given more than once: the nodes; the primary among them is used */
	const char *socks[LIVE_SOCKETS_MAX];
	int n_socks;
	bool one_node;		/* the command acts on the node it names (promote) */
};

void live_opts_init(struct live_opts *o);

/*
 * getopt_long over argv[0..argc) (argv[0] the program or the command):
 * the global options -s, -c, --json, --timeout are taken into o wherever
 * they come, the caller's own (own_short, own_long ending in a zeroed
 * entry; either NULL) are returned one per call.  -1 at the end (operands
 * from optind on); '?' for an unknown option, a missing or bad value
 * (message printed).  before_command: stop at the first operand, the
 * command.  Start each argv with optind = 0.
 */
int live_getopt(int argc, char *argv[], bool before_command, const char *own_short,
		const struct option *own_long, struct live_opts *o);

/*
 * After the options: the socket they name.  With several -s, the first
 * of them whose daemon answers a STATUS as the primary (each asked within
 * --timeout, at most 2 s), else the first that answers at all, else the
 * first.  0, or EXIT_USAGE with a message printed (both -s and -c; -c
 * FILE does not load; several -s for a command that acts on one node).
 */
int live_opts_resolve(struct live_opts *o);
/* with several -s: the first whose daemon answers STATUS as the primary
 * (each asked as live_opts_resolve asks), NULL when none does */
const char *live_primary_among(const struct live_opts *o);

/* 0, or -1 with c->why set */
int client_open(struct client *c, const struct live_opts *o);
void client_close(struct client *c);
/*
 * Room for `bytes` unsent in c's socket (the kernel caps it at
 * net.core.wmem_max): requests in flight and their records go out each in
 * one send, with no wait for the daemon to read part of one first
 */
void client_sndbuf(struct client *c, size_t bytes);
/* the pid of the process that listens on c's socket (0: unknown here) */
pid_t client_peer_pid(const struct client *c);
/* send a request line (LF added) and, for APPEND, its record */
int client_send(struct client *c, const char *line, const void *data, size_t len);
/* the next reply line (without its LF), valid until the next call; NULL: c->why */
const char *client_reply(struct client *c, size_t *len);

/*
 * One request, one reply, parsed: 0, the reply as an object (*doc, to
 * json_decref) and as its text (*reply, to free); EXIT_UNREACHABLE when
 * the daemon does not answer, EXIT_FAILED when the answer is not a reply
 * (a message printed for both).
 */
int client_call(const struct live_opts *o, const char *line, json_t **doc,
		char **reply);

/* a reply {"ok":false,...}: print "replctl: ERROR: message" and return 1 */
int client_failed(const json_t *doc, const char *what);

/*
 * Whether the daemon at o's socket answers a STATUS (within --timeout, at
 * most 2 s): true with a sentence on what it is in why (a primary: its
 * replicas streaming and quorum), false with why it did not answer.
 */
bool client_answers(const struct live_opts *o, char *why, size_t len);

/*
 * Appends sent on c got no reply (client_reply NULL): EXIT_UNACKED when
 * the wait ran out (c->timed_out) while the daemon still answers a STATUS
 * -- the records are taken and wait for its quorum, their outcome
 * unknown -- else EXIT_UNREACHABLE; the reason printed, after what.
 */
int client_not_acked(const struct live_opts *o, struct client *c, const char *what);

/*
 * An append's error reply: one that leaves the record's outcome unknown
 * (REPL_E_TIMEDOUT, REPL_E_UNKNOWN: EXIT_UNACKED), or a refusal
 * (EXIT_FAILED).
 */
int client_error_exit(const json_t *doc);

/*
 * status's coordinator block (coord_show.c), after the rest: nothing when
 * the STATUS d has no "coordinator" object (none configured)
 */
void print_coordinator(const json_t *d);

#endif
