/* SPDX-License-Identifier: BSD-3-Clause */
/* json_in.c -- the daemon's replies with jansson (see json_in.h) */
#include <stdio.h>

#include "json_in.h"

json_t *
json_in_reply(const char *text, size_t len, const char *from, char *why,
		size_t whylen)
{
	json_error_t err;
	json_t *doc;

	/*
	 * A reply is one line holding one object: text after it is refused
	 * (no JSON_DISABLE_EOF_CHECK), and so is a key given twice, which
	 * would leave it open which of the two replctl acted on.
	 */
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (doc == NULL) {
		snprintf(why, whylen, "%s answered what is not a reply: %s (line %d, "
			"column %d, byte %d)", from, err.text, err.line, err.column,
			err.position);
		return NULL;
	}
	if (!json_is_object(doc)) {
		snprintf(why, whylen, "%s answered what is not a reply: a JSON %s, "
			"not an object", from, json_is_array(doc) ? "array" : "value");
		json_decref(doc);
		return NULL;
	}
	return doc;
}

uint64_t
jin_u64(const json_t *obj, const char *key, uint64_t dflt)
{
	json_t *v = json_object_get(obj, key);

	/* jansson refuses integers above INT64_MAX: a reply has none */
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return dflt;
	return (uint64_t)json_integer_value(v);
}

bool
jin_bool(const json_t *obj, const char *key, bool dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

const char *
jin_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}
