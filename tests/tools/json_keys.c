/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_keys.c -- the keys of JSON objects, one "PATH TYPE" line each, for
 * the tests that hold replctl's output against replctl(8)'s schemas.
 *
 * Reads one JSON object per line on stdin; for each, prints every member
 * at every depth as its path -- nested objects' keys joined with ".",
 * an array's elements as "[]" (its objects' keys as "key[].member") --
 * and its type: string, integer, real, boolean, null, object, array.
 * Each object's lines are followed by a line "--".  Exit 1 when a line is
 * not a JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "real";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

static void walk(const char *path, const json_t *v);

static void
members(const char *prefix, const json_t *obj)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		size_t n = strlen(prefix) + strlen(key) + 2;
		char *path = malloc(n);

		if (path == NULL)
			exit(2);
		snprintf(path, n, "%s%s%s", prefix, prefix[0] ? "." : "", key);
		walk(path, v);
		free(path);
	}
}

static void
walk(const char *path, const json_t *v)
{
	printf("%s %s\n", path, type_name(v));
	if (json_is_object(v)) {
		members(path, v);
	} else if (json_is_array(v)) {
		size_t n = strlen(path) + 3, i;
		char *elem = malloc(n);
		json_t *e;

		if (elem == NULL)
			exit(2);
		snprintf(elem, n, "%s[]", path);
		json_array_foreach(v, i, e)
			walk(elem, e);
		free(elem);
	}
}

int
main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;

	while ((len = getline(&line, &cap, stdin)) > 0) {
		json_error_t err;
		json_t *doc;

		lineno++;
		doc = json_loadb(line, (size_t)len, 0, &err);
		if (!json_is_object(doc)) {
			fprintf(stderr, "json_keys: line %ld: not a JSON object: %s\n",
				lineno, doc ? "another value" : err.text);
			json_decref(doc);
			free(line);
			return 1;
		}
		members("", doc);
		printf("--\n");
		json_decref(doc);
	}
	free(line);
	return 0;
}
