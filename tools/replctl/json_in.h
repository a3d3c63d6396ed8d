/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_in.h -- the daemon's replies read with jansson: a reply line as a
 * JSON object, and its fields with a default for what is absent or of
 * another type (a daemon of another version may send either).
 */
#ifndef REPLCTL_JSON_IN_H
#define REPLCTL_JSON_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/*
 * The reply text[0..len) as an object (json_decref it), or NULL with why
 * saying that what came from `from` ("repld at SOCKET") is not a reply:
 * jansson's reason and where (line, column, byte).
 */
json_t *json_in_reply(const char *text, size_t len, const char *from,
		char *why, size_t whylen);

/* obj's member key: a non-negative integer, a boolean, a string ("") */
uint64_t jin_u64(const json_t *obj, const char *key, uint64_t dflt);
bool jin_bool(const json_t *obj, const char *key, bool dflt);
const char *jin_str(const json_t *obj, const char *key);

#endif
