/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_out.h -- what the admin socket's replies are made of, with jansson:
 * the values the protocol bounds (admin_proto.h) and the reply as a line.
 */
#ifndef REPLD_JSON_OUT_H
#define REPLD_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* an unsigned number; NULL above INT64_MAX, which a reply never holds */
json_t *jo_u64(uint64_t v);
/* a string (NULL: ""); bytes of text that is not UTF-8 become '?' */
json_t *jo_str(const char *s);

/*
 * The reply (taken, NULL allowed) as one LF-terminated line in buf.  One
 * that cannot be made (NULL: out of memory or a number out of range) or
 * does not fit in cap is replaced by an ERROR reply saying so.  Its
 * length, LF included; 0 only when cap cannot hold that either.
 */
size_t jo_line(json_t *reply, char *buf, size_t cap);

#endif
