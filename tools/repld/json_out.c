/* SPDX-License-Identifier: BSD-3-Clause */
/* json_out.c -- the admin socket's replies with jansson (see json_out.h) */
#include <stdlib.h>
#include <string.h>

#include "json_out.h"

/* answered without allocating: the error is the reply when it cannot be made */
static const char not_made[] = "{\"ok\":false,\"error\":\"ERROR\",\"code\":0,"
	"\"message\":\"the reply cannot be made (out of memory, or a number "
	"out of the protocol's range)\"}";
static const char too_long[] = "{\"ok\":false,\"error\":\"ERROR\",\"code\":0,"
	"\"message\":\"the reply does not fit the protocol's limit\"}";

json_t *
jo_u64(uint64_t v)
{
	/* jansson's integers, like most JSON readers', are signed 64-bit */
	return v <= INT64_MAX ? json_integer((json_int_t)v) : NULL;
}

json_t *
jo_str(const char *s)
{
	json_t *j;
	char *ascii;

	if (s == NULL)
		s = "";
	if ((j = json_string(s)) != NULL || (ascii = strdup(s)) == NULL)
		return j;
	/*
	 * Not UTF-8 (a configured path, say): JSON cannot carry it, but the
	 * rest of the text still says something.
	 */
	for (char *p = ascii; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(ascii);
	free(ascii);
	return j;
}

size_t
jo_line(json_t *reply, char *buf, size_t cap)
{
	const char *e = not_made;
	size_t n = 0;

	if (cap == 0) {
		json_decref(reply);
		return 0;
	}
	if (reply) {
		/* the keys in the order made (jansson 2.14 keeps it anyway) */
		n = json_dumpb(reply, buf, cap - 1, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(reply);
		if (n > 0 && n <= cap - 1)
			e = NULL;
		else if (n > 0)
			e = too_long;
	}
	if (e) {
		if ((n = strlen(e)) > cap - 1)
			return 0;
		memcpy(buf, e, n);
	}
	buf[n++] = '\n';
	return n;
}
