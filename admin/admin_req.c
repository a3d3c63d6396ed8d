/* SPDX-License-Identifier: BSD-3-Clause */
/* admin_req.c -- the admin socket's requests, parsed totally */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "admin_proto.h"
#include "admin_req.h"

#define ARGS_MAX 4

static const struct {
	const char *name;
	enum admin_verb verb;
	int min_args, max_args;
} verbs[] = {
	{ "STATUS", ADMIN_STATUS, 0, 0 },
	{ "APPEND", ADMIN_APPEND, 1, 2 },
	{ "VERIFY", ADMIN_VERIFY, 0, 2 },
	{ "PROMOTE", ADMIN_PROMOTE, 0, 1 },
	{ "FENCE", ADMIN_FENCE, 0, 0 },
	{ "ADD", ADMIN_ADD, 1, 2 },
	{ "REMOVE", ADMIN_REMOVE, 1, 2 },
	{ "RELOAD", ADMIN_RELOAD, 0, 0 },
	{ "RELEASE", ADMIN_RELEASE, 1, 1 },
	{ "READ", ADMIN_READ, 1, 2 },
	{ "SWITCHOVER", ADMIN_SWITCHOVER, 0, 1 },
	{ "FAILOVER", ADMIN_FAILOVER, 1, 1 },
	{ "MAINTENANCE", ADMIN_MAINTENANCE, 1, 1 },	/* on REASON: the rest */
	{ "HISTORY", ADMIN_HISTORY, 0, 0 },
};

const char *
admin_verb_name(enum admin_verb v)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (verbs[i].verb == v)
			return verbs[i].name;
	return "?";
}

/* a decimal number, digits only, within max */
static bool
number(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0' || strlen(s) > 20)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned d = (unsigned)(*s - '0');
		if (d > max || v > (max - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* HOST:PORT, the host printable without spaces or ':' (an IPv4 or a name) */
static bool
member(const char *s, struct admin_req *req)
{
	const char *colon = strrchr(s, ':');
	uint64_t port;
	size_t n;

	if (colon == NULL || (n = (size_t)(colon - s)) == 0 || n > ADMIN_HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~' || s[i] == ':')
			return false;
	if (!number(colon + 1, 65535, &port) || port == 0)
		return false;
	memcpy(req->host, s, n);
	req->host[n] = '\0';
	req->port = (uint16_t)port;
	return true;
}

/* s past its first `words` blank-separated words and the blanks after them */
static const char *
after_words(const char *s, int words)
{
	for (int w = 0; w < words; w++) {
		s += strspn(s, " \t");
		s += strcspn(s, " \t");
	}
	return s + strspn(s, " \t");
}

static enum admin_parse __attribute__((format(printf, 3, 4)))
bad(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return ADMIN_PARSE_BAD;
}

enum admin_parse
admin_req_parse(const char *buf, size_t len, struct admin_req *req,
		size_t *used, char *why, size_t whylen)
{
	char line[ADMIN_LINE_MAX], whole[ADMIN_LINE_MAX];
	char *argv[ARGS_MAX + 1], *save = NULL, *tok;
	const char *lf = memchr(buf, '\n', len < ADMIN_LINE_MAX ? len : ADMIN_LINE_MAX);
	size_t line_len;
	int argc = 0;
	size_t v;

	*used = 0;
	memset(req, 0, sizeof(*req));
	if (lf == NULL) {
		if (len < ADMIN_LINE_MAX)
			return ADMIN_PARSE_MORE;
		snprintf(why, whylen, "a request line longer than %d bytes",
			ADMIN_LINE_MAX - 1);
		return ADMIN_PARSE_FATAL;
	}
	line_len = (size_t)(lf - buf);
	*used = line_len + 1;
	memcpy(line, buf, line_len);
	line[line_len] = '\0';
	if (line_len && line[line_len - 1] == '\r')	/* from a terminal */
		line[--line_len] = '\0';
	if (memchr(line, '\0', line_len) != NULL)
		return bad(why, whylen, "a NUL byte in the request line");
	req->quorum = -1;
	memcpy(whole, line, line_len + 1);	/* strtok_r cuts line up */
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (argc == ARGS_MAX + 1)
			return bad(why, whylen, "too many arguments");
		argv[argc++] = tok;
		/* MAINTENANCE on's reason is the rest of the line, blanks and all */
		if (argc == 2 && strcmp(argv[0], "MAINTENANCE") == 0)
			break;
	}
	if (argc == 0)
		return bad(why, whylen, "an empty request");
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (strcmp(argv[0], verbs[v].name) == 0)
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0])) {
		/* only printable text goes back into the reply */
		char name[24];
		size_t i;

		for (i = 0; argv[0][i] && i < sizeof(name) - 1; i++)
			name[i] = (argv[0][i] > ' ' && argv[0][i] <= '~') ? argv[0][i] : '?';
		name[i] = '\0';
		return bad(why, whylen, "unknown request \"%s\" (STATUS, APPEND, "
			"VERIFY, PROMOTE, FENCE, ADD, REMOVE, RELOAD, RELEASE, READ, "
			"SWITCHOVER, FAILOVER, MAINTENANCE, HISTORY)",
			name);
	}
	req->verb = verbs[v].verb;
	if (argc - 1 < verbs[v].min_args || argc - 1 > verbs[v].max_args) {
		snprintf(why, whylen, "%s takes %d to %d arguments, not %d",
			verbs[v].name, verbs[v].min_args, verbs[v].max_args, argc - 1);
		/* an APPEND's record may follow: its length is unknown */
		return req->verb == ADMIN_APPEND ? ADMIN_PARSE_FATAL : ADMIN_PARSE_BAD;
	}
	switch (req->verb) {
	case ADMIN_APPEND: {
		uint64_t n;

		if (!number(argv[1], UINT32_MAX, &n) || n == 0 || n > ADMIN_RECORD_MAX) {
			snprintf(why, whylen, "APPEND: the length must be 1..%u bytes",
				ADMIN_RECORD_MAX);
			return ADMIN_PARSE_FATAL;
		}
		if (argc > 2 && !number(argv[2], UINT64_MAX, &req->client_id)) {
			snprintf(why, whylen, "APPEND: the client id must be a "
				"decimal number");
			return ADMIN_PARSE_FATAL;
		}
		if (len - *used < n) {
			req->head = *used;
			req->len = (size_t)n;
			*used = 0;
			return ADMIN_PARSE_MORE;
		}
		req->data = buf + *used;
		req->len = (size_t)n;
		*used += (size_t)n;
		return ADMIN_PARSE_OK;
	}
	case ADMIN_VERIFY:
		/* the reply repeats them: within a reply's numbers (admin_proto.h) */
		if ((argc > 1 && !number(argv[1], INT64_MAX, &req->from)) ||
		    (argc > 2 && !number(argv[2], INT64_MAX, &req->to)))
			return bad(why, whylen, "VERIFY: FROM and TO must be LSNs");
		if (req->to && req->from > req->to)
			return bad(why, whylen, "VERIFY: FROM is after TO");
		return ADMIN_PARSE_OK;
	case ADMIN_RELEASE:
		/* the reply repeats it: within a reply's numbers (admin_proto.h) */
		if (!number(argv[1], INT64_MAX, &req->lsn))
			return bad(why, whylen, "RELEASE: LSN must be a decimal "
				"number up to %lld, not \"%.40s\"", (long long)INT64_MAX,
				argv[1]);
		return ADMIN_PARSE_OK;
	case ADMIN_READ:
		/* the replies repeat it: within a reply's numbers (admin_proto.h) */
		if (!number(argv[1], INT64_MAX, &req->from))
			return bad(why, whylen, "READ: FROM must be a decimal LSN up "
				"to %lld, not \"%.40s\"", (long long)INT64_MAX, argv[1]);
		if (argc > 2 && strcmp(argv[2], "follow") != 0)
			return bad(why, whylen, "READ: the only option after FROM is "
				"\"follow\", not \"%.40s\"", argv[2]);
		req->follow = argc > 2;
		return ADMIN_PARSE_OK;
	case ADMIN_PROMOTE:
		if (argc > 1 && strcmp(argv[1], "force") != 0)
			return bad(why, whylen, "PROMOTE: the only argument is "
				"\"force\"");
		req->force = argc > 1;
		return ADMIN_PARSE_OK;
	case ADMIN_SWITCHOVER:
	case ADMIN_FAILOVER: {
		uint64_t id;

		if (argc > 1 && (!number(argv[1], 65535, &id) || id == 0))
			return bad(why, whylen, "%s: NODE must be a node id 1..65535, "
				"not \"%.40s\"", verbs[v].name, argv[1]);
		req->node_id = argc > 1 ? (uint32_t)id : 0;
		return ADMIN_PARSE_OK;
	}
	case ADMIN_MAINTENANCE: {
		const char *reason = after_words(whole, 2);
		size_t rl = strlen(reason);

		if (strcmp(argv[1], "on") != 0 && strcmp(argv[1], "off") != 0)
			return bad(why, whylen, "MAINTENANCE: the first argument is "
				"\"on\" or \"off\", not \"%.40s\"", argv[1]);
		req->maintenance_on = strcmp(argv[1], "on") == 0;
		if (!req->maintenance_on && rl > 0)
			return bad(why, whylen, "MAINTENANCE off takes no reason");
		if (rl > ADMIN_REASON_MAX)
			return bad(why, whylen, "MAINTENANCE on: the reason is %zu "
				"bytes, more than %d", rl, ADMIN_REASON_MAX);
		for (size_t i = 0; i < rl; i++)
			if ((unsigned char)reason[i] < 0x20 || reason[i] == 0x7f)
				return bad(why, whylen, "MAINTENANCE on: a control "
					"character in the reason");
		memcpy(req->reason, reason, rl + 1);
		return ADMIN_PARSE_OK;
	}
	case ADMIN_ADD:
	case ADMIN_REMOVE: {
		uint64_t q;

		if (!member(argv[1], req))
			return bad(why, whylen, "%s: the member must be HOST:PORT "
				"(its control port)", verbs[v].name);
		if (argc > 2) {
			if (!number(argv[2], 8, &q))
				return bad(why, whylen, "%s: the quorum must be 0..8",
					verbs[v].name);
			req->quorum = (int)q;
		}
		return ADMIN_PARSE_OK;
	}
	default:
		return ADMIN_PARSE_OK;
	}
}
