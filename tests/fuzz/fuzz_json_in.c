/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: replctl's reader of the daemon's replies (json_in:
 * jansson's json_loadb and the field lookups) on arbitrary bytes, as a
 * broken or hostile daemon might answer.  Besides "no crash, no
 * over-read, no leak": a failure names where the bytes came from and
 * why, a success is an object, and the lookups take any tree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_in.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* every lookup replctl makes, on every object of the tree */
static void
walk(const json_t *v, int depth)
{
	const char *key;
	json_t *m;

	if (depth > 64)
		return;
	if (json_is_object(v)) {
		(void)jin_u64(v, "lsn", 0);
		(void)jin_bool(v, "ok", false);
		CHECK(jin_str(v, "message") != NULL);
		json_object_foreach((json_t *)v, key, m) {
			(void)jin_u64(v, key, 0);
			(void)jin_bool(v, key, false);
			CHECK(jin_str(v, key) != NULL);
			walk(m, depth + 1);
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			walk(json_array_get(v, i), depth + 1);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char from[] = "repld at /fuzz";
	char why[300] = "";
	/* a copy of exactly size bytes: a read past them is caught */
	char *buf = malloc(size ? size : 1);
	json_t *doc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	doc = json_in_reply(buf, size, from, why, sizeof(why));
	if (doc == NULL) {
		CHECK(strncmp(why, from, strlen(from)) == 0);
		CHECK(strlen(why) > strlen(from));
	} else {
		CHECK(json_is_object(doc));
		walk(doc, 0);
		json_decref(doc);
	}
	free(buf);
	return 0;
}
