/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_out.h -- one JSON object written into a fixed buffer: the admin
 * socket's replies.  No allocation; a reply that would not fit is cut and
 * marked overflowed, which the caller turns into an error reply.
 */
#ifndef REPLD_JSON_OUT_H
#define REPLD_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_out {
	char *buf;
	size_t cap, len;
	bool comma;		/* a value precedes: the next one needs "," */
	bool overflow;
};

void jo_init(struct json_out *j, char *buf, size_t cap);
void jo_open(struct json_out *j, const char *key);	/* "{" (key NULL: none) */
void jo_close(struct json_out *j);			/* "}" */
void jo_array(struct json_out *j, const char *key);	/* "key":[ */
void jo_array_end(struct json_out *j);
void jo_str(struct json_out *j, const char *key, const char *val);
void jo_u64(struct json_out *j, const char *key, uint64_t val);
void jo_i64(struct json_out *j, const char *key, int64_t val);
void jo_bool(struct json_out *j, const char *key, bool val);
/* the text so far, LF-terminated; NULL when it overflowed */
const char *jo_line(struct json_out *j, size_t *len);

#endif
