/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read.c -- replctl read: the primary's committed records from an LSN on,
 * through its admin socket (READ FROM [follow], admin_proto.h).  While it
 * reads, its position holds the primary's retention (within
 * retention.reader_max_lag).  Each record is printed once received:
 *
 *   text (default)	LSN LEN BYTES, the bytes with \, and any byte
 *			outside printable ASCII, as \xHH (lossless)
 *   --payload hex	LSN LEN HEX
 *   --payload raw	the record's bytes and a LF: replctl append's input
 *   --json		{"lsn":N,"len":L,"payload":"HEX"} per line
 *
 * Without --follow it ends at the commit LSN it reaches; with it, it goes
 * on until interrupted, the primary steps down, or the reader is lost.
 * Given several nodes (-s more than once), a follower goes on across a
 * failover: when its primary's stream ends (it stepped down, was fenced,
 * stopped, or the connection closed) it waits for one of the nodes to be
 * the primary and reads on there from the LSN the stream ended at.  A
 * committed record is at the same LSN on every later primary (it was
 * durable on a quorum), so nothing is skipped and nothing printed twice.
 * The stream is read with a buffer of its own: records are bytes, not
 * lines, so client_reply() serves only the first answer.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin_proto.h"
#include "client.h"
#include "replctl.h"

#define STREAM_CAP (2 * ADMIN_RECORD_MAX + ADMIN_REPLY_MAX)

enum payload { PAYLOAD_TEXT, PAYLOAD_HEX, PAYLOAD_RAW };

struct stream {
	int fd;
	const char *path;
	char *buf;
	size_t start, end;
	int idle_ms;		/* without --follow: the daemon's silence bound */
	char why[320];
};

/* at least n bytes from start on, reading as needed; 0, or -1 with why */
static int
want(struct stream *s, size_t n)
{
	while (s->end - s->start < n) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		ssize_t r;
		int pr;

		if (s->end == STREAM_CAP) {
			memmove(s->buf, s->buf + s->start, s->end - s->start);
			s->end -= s->start;
			s->start = 0;
		}
		/* what was printed goes out before it waits: a follower's
		   records reach a pipe or file as they come */
		fflush(stdout);
		pr = poll(&p, 1, s->idle_ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0) {
			snprintf(s->why, sizeof(s->why), "repld at %s: no answer in "
				"%d ms (--timeout)", s->path, s->idle_ms);
			return -1;
		}
		r = read(s->fd, s->buf + s->end, STREAM_CAP - s->end);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			snprintf(s->why, sizeof(s->why), "repld at %s: the connection "
				"closed mid-stream%s%s", s->path, r < 0 ? ": " :
				" (the daemon stopped?)", r < 0 ? strerror(errno) : "");
			return -1;
		}
		s->end += (size_t)r;
	}
	return 0;
}

/* the next line (NUL in place of its LF) and its length; NULL: why */
static char *
next_line(struct stream *s, size_t *len)
{
	size_t scanned = 0;
	char *lf;

	while ((lf = memchr(s->buf + s->start + scanned, '\n',
			s->end - s->start - scanned)) == NULL) {
		scanned = s->end - s->start;
		if (scanned >= ADMIN_REPLY_MAX) {
			snprintf(s->why, sizeof(s->why), "repld at %s: a reply longer "
				"than %d bytes", s->path, ADMIN_REPLY_MAX);
			return NULL;
		}
		if (want(s, scanned + 1) != 0)
			return NULL;
	}
	*lf = '\0';
	*len = (size_t)(lf - (s->buf + s->start));
	lf = s->buf + s->start;
	s->start += *len + 1;
	return lf;
}

static void
print_record(enum payload mode, bool json, uint64_t lsn, const unsigned char *p,
		size_t len)
{
	static const char hex[] = "0123456789abcdef";

	if (mode == PAYLOAD_RAW && !json) {
		fwrite(p, 1, len, stdout);
		putchar('\n');
		return;
	}
	if (json)
		printf("{\"lsn\":%" PRIu64 ",\"len\":%zu,\"payload\":\"", lsn, len);
	else
		printf("%" PRIu64 " %zu ", lsn, len);
	for (size_t i = 0; i < len; i++) {
		if (json || mode == PAYLOAD_HEX) {
			putchar(hex[p[i] >> 4]);
			putchar(hex[p[i] & 15]);
		} else if (p[i] >= ' ' && p[i] <= '~' && p[i] != '\\') {
			putchar(p[i]);
		} else {
			printf("\\x%c%c", hex[p[i] >> 4], hex[p[i] & 15]);
		}
	}
	fputs(json ? "\"}\n" : "\n", stdout);
}

/*
 * How a stream ended, and for a follower given several nodes whether it
 * reads on at the next primary: not after the reader was lost (its
 * records may be gone), nor after an end it asked for.
 */
struct stream_end {
	bool resumable;		/* the primary went: read on elsewhere */
	uint64_t next;		/* where to read on from */
	uint64_t seen;		/* records printed so far (--count) */
};

/* a reply of the stream that is not a record: ends it; the exit code */
static int
stream_end(const json_t *d, const struct live_opts *o, const char *line,
		bool resume, struct stream_end *e)
{
	uint64_t next = jin_u64(d, "next", e->next);

	e->next = next;
	if (jin_bool(d, "ok", false)) {
		if (o->json)
			printf("%s\n", line);
		return EXIT_OK;
	}
	e->resumable = strcmp(jin_str(d, "error"), "READER_LOST") != 0;
	if (resume && e->resumable)
		return EXIT_FAILED;	/* not the end: it reads on elsewhere */
	if (o->json)
		printf("%s\n", line);
	client_failed(d, "read");
	fprintf(stderr, "replctl: read: read on from LSN %" PRIu64 "\n", next);
	return EXIT_FAILED;
}

static int
stream_records(struct stream *s, const struct live_opts *o, enum payload mode,
		uint64_t count, bool resume, struct stream_end *e)
{
	char from[sizeof(s->why) + 32], why[sizeof(s->why) + 200];

	snprintf(from, sizeof(from), "repld at %s", s->path);
	for (;;) {
		size_t len, rec_len;
		uint64_t lsn;
		char *line;
		json_t *d;
		int ret;

		if ((line = next_line(s, &len)) == NULL) {
			/* the daemon stopped or died: its records are on the next */
			e->resumable = true;
			if (!resume)
				fprintf(stderr, "replctl: read: %s\n", s->why);
			return EXIT_UNREACHABLE;
		}
		if ((d = json_in_reply(line, len, from, why, sizeof(why))) == NULL) {
			fprintf(stderr, "replctl: read: %s\n", why);
			return EXIT_FAILED;
		}
		if (!jin_bool(d, "ok", false) || json_object_get(d, "lsn") == NULL) {
			ret = stream_end(d, o, line, resume, e);
			json_decref(d);
			return ret;
		}
		lsn = jin_u64(d, "lsn", 0);
		rec_len = (size_t)jin_u64(d, "len", 0);
		json_decref(d);
		if (rec_len > ADMIN_RECORD_MAX) {
			fprintf(stderr, "replctl: read: repld at %s: record %" PRIu64
				" of %zu bytes, more than a record may be\n", s->path,
				lsn, rec_len);
			return EXIT_FAILED;
		}
		if (want(s, rec_len) != 0) {
			e->resumable = true;
			if (!resume)
				fprintf(stderr, "replctl: read: %s\n", s->why);
			return EXIT_UNREACHABLE;
		}
		print_record(mode, o->json, lsn,
			(const unsigned char *)s->buf + s->start, rec_len);
		s->start += rec_len;
		e->next = lsn + 1;
		if (count && ++e->seen == count) {
			fflush(stdout);
			return EXIT_OK;
		}
	}
}

/* read_once's: the primary went, the follower reads on at the next one */
#define EXIT_RESUME (-1)
/* how long a follower waits for the next primary */
#define FOLLOW_WAIT_MS 30000

/*
 * One READ at o->socket from e->next, its records printed; EXIT_RESUME
 * when the stream ended because the primary went and the follower goes on
 * (--follow with several -s), else the command's exit status.
 */
static int
read_once(struct live_opts *o, struct stream *s, bool follow, enum payload mode,
		uint64_t count, bool resumed, struct stream_end *e)
{
	bool resume = follow && o->n_socks > 1;
	char line[ADMIN_LINE_MAX], why[400];
	struct client c;
	const char *r;
	json_t *d;
	size_t len;
	int ret;

	if (client_open(&c, o) != 0) {
		if (resume && resumed)
			return EXIT_RESUME;	/* gone again before it answered */
		fprintf(stderr, "replctl: %s\n", c.why);
		return EXIT_UNREACHABLE;
	}
	snprintf(line, sizeof(line), "READ %" PRIu64 "%s", e->next,
		follow ? " follow" : "");
	if (client_send(&c, line, NULL, 0) != 0 ||
	    (r = client_reply(&c, &len)) == NULL) {
		client_close(&c);
		if (resume && resumed)
			return EXIT_RESUME;
		fprintf(stderr, "replctl: read: %s\n", c.why);
		return EXIT_UNREACHABLE;
	}
	snprintf(why, sizeof(why), "repld at %s", c.path);
	if ((d = json_in_reply(r, len, why, why, sizeof(why))) == NULL) {
		fprintf(stderr, "replctl: read: %s\n", why);
		client_close(&c);
		return EXIT_FAILED;
	}
	if (!jin_bool(d, "ok", false)) {
		/* the node that answered is no primary (yet): look again */
		if (resume && resumed && (strcmp(jin_str(d, "error"), "WRONG_ROLE") == 0 ||
		    strcmp(jin_str(d, "error"), "REPL_E_FENCED") == 0 ||
		    strcmp(jin_str(d, "error"), "STOPPING") == 0 ||
		    strcmp(jin_str(d, "error"), "REOPENING") == 0 ||
		    strcmp(jin_str(d, "error"), "BUSY") == 0)) {
			json_decref(d);
			client_close(&c);
			return EXIT_RESUME;
		}
		if (o->json)
			printf("%.*s\n", (int)len, r);
		ret = client_failed(d, "read");
		json_decref(d);
		client_close(&c);
		return ret;
	}
	json_decref(d);
	/* the stream: what client_reply read beyond its line comes first */
	s->start = 0;
	s->end = c.have - c.line_len;
	memcpy(s->buf, c.in + c.line_len, s->end);
	s->fd = c.fd;
	s->path = c.path;
	/* a follower waits for records as long as it takes */
	s->idle_ms = follow ? -1 : c.timeout_ms;
	e->resumable = false;
	ret = stream_records(s, o, mode, count, resume, e);
	client_close(&c);
	if (ret != EXIT_OK && resume && e->resumable) {
		fflush(stdout);
		fprintf(stderr, "replctl: read: the stream from %s ended at LSN %"
			PRIu64 ": following the next primary among the %d nodes "
			"given\n", o->socket, e->next, o->n_socks);
		return EXIT_RESUME;
	}
	return ret;
}

/* wait (up to FOLLOW_WAIT_MS) for one of the nodes to be the primary */
static bool
next_primary(struct live_opts *o, uint64_t next)
{
	for (int waited = 0;; waited += 200) {
		const char *p = live_primary_among(o);

		if (p != NULL) {
			o->socket = p;
			return true;
		}
		if (waited >= FOLLOW_WAIT_MS) {
			fprintf(stderr, "replctl: read: none of the %d nodes given is "
				"the primary after %d s: read on from LSN %" PRIu64
				" once one is\n", o->n_socks, FOLLOW_WAIT_MS / 1000, next);
			return false;
		}
		(void)poll(NULL, 0, 200);
	}
}

int
cmd_read(int argc, char *argv[], struct live_opts *o)
{
	enum { OPT_FROM = 1, OPT_FOLLOW, OPT_PAYLOAD, OPT_COUNT };
	static const struct option opts[] = {
		{ "from", required_argument, NULL, OPT_FROM },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "payload", required_argument, NULL, OPT_PAYLOAD },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ NULL, 0, NULL, 0 },
	};
	enum payload mode = PAYLOAD_TEXT;
	uint64_t from = 0, count = 0;
	bool follow = false;
	struct stream s = { .fd = -1 };
	struct stream_end e = { 0 };
	int ret = 0, opt;

	optind = 0;
	while ((opt = live_getopt(argc, argv, false, NULL, opts, o)) != -1) {
		if (opt == OPT_FOLLOW) {
			follow = true;
		} else if (opt == OPT_FROM) {
			if (!arg_u64(optarg, 0, INT64_MAX, &from)) {
				fprintf(stderr, "replctl: read: --from \"%s\" is not an "
					"LSN (0..%lld)\n", optarg, (long long)INT64_MAX);
				return EXIT_USAGE;
			}
		} else if (opt == OPT_COUNT) {
			if (!arg_u64(optarg, 1, UINT64_MAX, &count)) {
				fprintf(stderr, "replctl: read: --count \"%s\" is not a "
					"number of records (1 or more)\n", optarg);
				return EXIT_USAGE;
			}
		} else if (opt == OPT_PAYLOAD && strcmp(optarg, "text") == 0) {
			mode = PAYLOAD_TEXT;
		} else if (opt == OPT_PAYLOAD && strcmp(optarg, "hex") == 0) {
			mode = PAYLOAD_HEX;
		} else if (opt == OPT_PAYLOAD && strcmp(optarg, "raw") == 0) {
			mode = PAYLOAD_RAW;
		} else {
			if (opt == OPT_PAYLOAD)
				fprintf(stderr, "replctl: read: --payload \"%s\" is not "
					"text, hex or raw\n", optarg);
			ret = EXIT_USAGE;
			break;
		}
	}
	if (ret || optind != argc) {
		fprintf(stderr, "usage: replctl read [--from LSN] [--follow] "
			"[--count N] [--payload text|hex|raw]\n");
		return EXIT_USAGE;
	}
	if ((ret = live_opts_resolve(o)) != 0)
		return ret;
	if ((s.buf = malloc(STREAM_CAP)) == NULL) {
		fprintf(stderr, "replctl: read: out of memory\n");
		return EXIT_FAILED;
	}
	e.next = from;
	for (bool resumed = false;; resumed = true) {
		ret = read_once(o, &s, follow, mode, count, resumed, &e);
		if (ret != EXIT_RESUME)
			break;
		/* a deposed primary may still say it is one for a moment */
		(void)poll(NULL, 0, 100);
		if (!next_primary(o, e.next)) {
			ret = EXIT_UNREACHABLE;
			break;
		}
	}
	free(s.buf);
	return ret;
}
