/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * append.c -- replctl append: records from stdin through the primary's
 * admin socket, each line one record (without its LF), or all of stdin
 * one record (--whole).  A record is at least a byte: an empty line ends
 * the command as bad input (exit 2, its line number named) unless
 * --skip-empty.  Requests are pipelined WINDOW deep; each LSN is printed
 * (and flushed: a script reads them as they come) once the daemon says it
 * is durable, at the latest when the next line has been read.
 */
#include "config.h"

#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_proto.h"
#include "client.h"
#include "replctl.h"

#define WINDOW 64

#define ERRORS_SHOWN 3

static uint64_t failures;

/*
 * One reply: its LSN printed, or its error (the first failure's exit
 * status into *ret: client_error_exit's); -1 when none came (the caller
 * asks client_not_acked why).
 */
static int
take_reply(struct client *c, const struct live_opts *o, uint64_t recno, int *ret)
{
	const char *r;
	char from[sizeof(c->why)], why[sizeof(c->why) + 200];
	json_t *d;
	size_t len;

	if ((r = client_reply(c, &len)) == NULL)
		return -1;
	snprintf(from, sizeof(from), "repld at %s", c->path);
	if ((d = json_in_reply(r, len, from, why, sizeof(why))) == NULL) {
		fprintf(stderr, "replctl: append: %s\n", why);
		return -1;
	}
	if (o->json)
		printf("%.*s\n", (int)len, r);
	if (!jin_bool(d, "ok", false)) {
		char what[64];

		snprintf(what, sizeof(what), "append: record %" PRIu64, recno);
		/* one cause fails a pipeline's worth: show the first few */
		if (failures++ < ERRORS_SHOWN)
			client_failed(d, what);
		if (*ret == 0)
			*ret = client_error_exit(d);
	} else if (!o->json) {
		printf("%" PRIu64 "\n", jin_u64(d, "lsn", 0));
	}
	fflush(stdout);
	json_decref(d);
	return 0;
}

/* an answer has (begun to) come in: taking it does not wait for the daemon */
static bool
reply_ready(const struct client *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	return c->have > c->line_len || poll(&p, 1, 0) == 1;
}

int
cmd_append(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_CLIENT_ID = 1, OPT_WHOLE, OPT_SKIP_EMPTY };
	static const struct option opts[] = {
		{ "client-id", required_argument, NULL, OPT_CLIENT_ID },
		{ "whole", no_argument, NULL, OPT_WHOLE },
		{ "skip-empty", no_argument, NULL, OPT_SKIP_EMPTY },
		{ NULL, 0, NULL, 0 },
	};
	bool whole = false, skip_empty = false;
	uint64_t lineno = 0;
	uint64_t id = 0;
	bool has_id = false;
	char line[ADMIN_LINE_MAX];
	struct client c;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t sent = 0, answered = 0;
	bool lost = false;	/* answers stopped: outcomes unknown */
	int ret = 0, opt;

	optind = 0;
	while ((opt = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		if (opt == OPT_WHOLE) {
			whole = true;
		} else if (opt == OPT_SKIP_EMPTY) {
			skip_empty = true;
		} else if (opt == OPT_CLIENT_ID &&
			   opt_u64("--client-id", optarg, 0, UINT64_MAX, &id)) {
			has_id = true;
		} else {
			ret = EXIT_USAGE;
			break;
		}
	}
	if (ret || optind != argc) {
		fprintf(stderr, "usage: replctl append [--client-id ID] [--whole]"
			" [--skip-empty] < RECORDS\n");
		return EXIT_USAGE;
	}
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	if (client_open(&c, o) != 0) {
		fprintf(stderr, "replctl: %s\n", c.why);
		return EXIT_UNREACHABLE;
	}
	for (;;) {
		size_t len;

		if (whole) {
			size_t have = 0;

			if ((buf = malloc(ADMIN_RECORD_MAX + 1)) == NULL)
				break;
			while (have <= ADMIN_RECORD_MAX &&
			       (len = fread(buf + have, 1, ADMIN_RECORD_MAX + 1 - have,
					stdin)) > 0)
				have += len;
			if (have == 0 || have > ADMIN_RECORD_MAX) {
				fprintf(stderr, "replctl: append --whole: stdin holds %s "
					"(a record is 1..%u bytes)\n", have ? "more" :
					"nothing", ADMIN_RECORD_MAX);
				ret = EXIT_USAGE;
				break;
			}
			len = have;
			/* the record in one send, not in turns with the daemon */
			client_sndbuf(&c, len + sizeof(line));
		} else {
			if ((n = getline(&buf, &cap, stdin)) < 0)
				break;
			lineno++;
			len = (size_t)n;
			if (len && buf[len - 1] == '\n')
				len--;
			if (len == 0 && skip_empty)
				continue;
			/* the daemon takes no empty record: say which line it is */
			if (len == 0) {
				fprintf(stderr, "replctl: append: line %" PRIu64 " is "
					"empty: a record is 1..%u bytes (--skip-empty "
					"skips such lines); nothing from it on is "
					"appended\n", lineno, ADMIN_RECORD_MAX);
				ret = EXIT_USAGE;
				break;
			}
			if (len > ADMIN_RECORD_MAX) {
				fprintf(stderr, "replctl: append: line %" PRIu64 " is "
					"longer than a record may be (%u bytes); nothing "
					"from it on is appended\n", lineno,
					ADMIN_RECORD_MAX);
				ret = EXIT_USAGE;
				break;
			}
		}
		if (has_id)
			snprintf(line, sizeof(line), "APPEND %zu %" PRIu64, len, id);
		else
			snprintf(line, sizeof(line), "APPEND %zu", len);
		if (client_send(&c, line, buf, len) != 0) {
			lost = true;
			break;
		}
		sent++;
		/* the answers already here: printed now, not a window later */
		while (answered < sent && reply_ready(&c))
			if (take_reply(&c, o, ++answered, &ret) != 0) {
				lost = true;
				break;
			}
		if (lost)
			break;
		if (sent - answered == WINDOW) {
			if (take_reply(&c, o, ++answered, &ret) != 0) {
				lost = true;
				break;
			}
		}
		if (whole)
			break;
	}
	/* what was sent may have been answered already: print those too */
	while (!lost && answered < sent)
		if (take_reply(&c, o, ++answered, &ret) != 0)
			lost = true;
	if (lost) {
		char what[100];
		int why;

		snprintf(what, sizeof(what), "append: record %" PRIu64 " and later",
			answered);
		why = client_not_acked(o, &c, what);
		/* a bad line's 2 stands; else the reason the answers stopped */
		if (ret != EXIT_USAGE)
			ret = why;
	}
	if (failures > ERRORS_SHOWN)
		fprintf(stderr, "replctl: append: %" PRIu64 " more records failed\n",
			failures - ERRORS_SHOWN);
	free(buf);
	client_close(&c);
	return ret;
}
