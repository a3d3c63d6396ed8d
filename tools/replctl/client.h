/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.h -- replctl's side of repld's admin socket (admin_proto.h):
 * which socket, connecting, sending requests, reading one-line replies.
 */
#ifndef REPLCTL_CLIENT_H
#define REPLCTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	char why[300];		/* the last failure, naming the socket */
};

/* the global options every live command takes */
struct live_opts {
	const char *socket;	/* resolved: -s, -c FILE's, $REPLD_SOCKET, default */
	bool json;
	int timeout_ms;
	bool timeout_given;	/* --timeout: it bounds every command */
};

/*
 * Parse -s SOCKET, -c FILE, --json, --timeout MS from argv (they may come
 * before or after the command's own arguments); the rest is left in
 * argv[0..*argc).  0, or EXIT_USAGE with a message printed.
 */
int live_opts_parse(int *argc, char *argv[], struct live_opts *o);

/* 0, or -1 with c->why set */
int client_open(struct client *c, const struct live_opts *o);
void client_close(struct client *c);
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

#endif
