/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * json_in.h -- a JSON reader for the daemon's replies: the text is split
 * into a flat array of tokens (no allocation beyond the caller's array);
 * lookups walk it.  Total: any bytes give tokens or an error.
 */
#ifndef REPLCTL_JSON_IN_H
#define REPLCTL_JSON_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jtype { J_OBJECT = 1, J_ARRAY, J_STRING, J_NUMBER, J_TRUE, J_FALSE, J_NULL };

struct jtok {
	enum jtype type;
	size_t start, end;	/* J_STRING: inside the quotes */
	int size;		/* direct children: members (key + value) or items */
	int next;		/* the token after this one's subtree */
};

struct jdoc {
	const char *text;
	struct jtok *t;
	int n, cap;
};

/* 0, or -1 (why names the byte offset and the fault) */
int json_parse(struct jdoc *d, const char *text, size_t len, struct jtok *toks,
		int cap, char *why, size_t whylen);

/* the value of key in the object at token obj, or -1 */
int json_get(const struct jdoc *d, int obj, const char *key);
/* the i-th item of the array at token arr, or -1 */
int json_item(const struct jdoc *d, int arr, int i);

/* the value at token i (and a default when absent or another type) */
uint64_t json_u64(const struct jdoc *d, int i, uint64_t dflt);
int64_t json_i64(const struct jdoc *d, int i, int64_t dflt);
bool json_bool(const struct jdoc *d, int i, bool dflt);
/* a string, unescaped into out (cut to outlen); "" when absent */
const char *json_text(const struct jdoc *d, int i, char *out, size_t outlen);

#endif
