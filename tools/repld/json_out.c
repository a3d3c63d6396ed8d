/* SPDX-License-Identifier: BSD-3-Clause */
/* json_out.c -- a JSON object into a fixed buffer (see json_out.h) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_out.h"

void
jo_init(struct json_out *j, char *buf, size_t cap)
{
	*j = (struct json_out){ .buf = buf, .cap = cap };
	if (cap)
		buf[0] = '\0';
}

static void
put(struct json_out *j, const char *s, size_t n)
{
	/* one byte stays free for the LF of jo_line */
	if (j->overflow || j->len + n + 2 > j->cap) {
		j->overflow = true;
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void
putf(struct json_out *j, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	put(j, tmp, (size_t)n);
}

/* a JSON string: quotes, backslashes and control bytes escaped */
static void
put_string(struct json_out *j, const char *s)
{
	put(j, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			put(j, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			putf(j, "\\u%04x", c);
		} else {
			put(j, s, 1);
		}
	}
	put(j, "\"", 1);
}

static void
key(struct json_out *j, const char *k)
{
	if (j->comma)
		put(j, ",", 1);
	j->comma = true;
	if (k) {
		put_string(j, k);
		put(j, ":", 1);
	}
}

void
jo_open(struct json_out *j, const char *k)
{
	key(j, k);
	put(j, "{", 1);
	j->comma = false;
}

void
jo_close(struct json_out *j)
{
	put(j, "}", 1);
	j->comma = true;
}

void
jo_array(struct json_out *j, const char *k)
{
	key(j, k);
	put(j, "[", 1);
	j->comma = false;
}

void
jo_array_end(struct json_out *j)
{
	put(j, "]", 1);
	j->comma = true;
}

void
jo_str(struct json_out *j, const char *k, const char *val)
{
	key(j, k);
	put_string(j, val ? val : "");
}

void
jo_u64(struct json_out *j, const char *k, uint64_t val)
{
	key(j, k);
	putf(j, "%llu", (unsigned long long)val);
}

void
jo_i64(struct json_out *j, const char *k, int64_t val)
{
	key(j, k);
	putf(j, "%lld", (long long)val);
}

void
jo_bool(struct json_out *j, const char *k, bool val)
{
	key(j, k);
	put(j, val ? "true" : "false", val ? 4 : 5);
}

const char *
jo_line(struct json_out *j, size_t *len)
{
	if (j->overflow)
		return NULL;
	j->buf[j->len] = '\n';
	*len = j->len + 1;
	return j->buf;
}
