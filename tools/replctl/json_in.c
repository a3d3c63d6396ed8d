/* SPDX-License-Identifier: BSD-3-Clause */
/* json_in.c -- a small total JSON tokenizer (see json_in.h) */
#include <stdio.h>
#include <string.h>

#include "json_in.h"

#define DEPTH_MAX 16

struct parser {
	const char *s;
	size_t len, pos;
	struct jdoc *d;
	char *why;
	size_t whylen;
};

static int
fault(struct parser *p, const char *what)
{
	snprintf(p->why, p->whylen, "at byte %zu: %s", p->pos, what);
	return -1;
}

static void
skip_ws(struct parser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
			p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int
new_tok(struct parser *p, enum jtype type, size_t start)
{
	if (p->d->n == p->d->cap)
		return fault(p, "too many values");
	p->d->t[p->d->n] = (struct jtok){ .type = type, .start = start,
		.end = start };
	return p->d->n++;
}

static int
string(struct parser *p)
{
	int t;

	p->pos++;	/* the opening quote */
	if ((t = new_tok(p, J_STRING, p->pos)) < 0)
		return -1;
	while (p->pos < p->len) {
		unsigned char c = (unsigned char)p->s[p->pos];

		if (c == '"') {
			p->d->t[t].end = p->pos++;
			p->d->t[t].next = p->d->n;
			return t;
		}
		if (c < 0x20)
			return fault(p, "a control byte in a string");
		if (c == '\\') {
			if (++p->pos >= p->len)
				break;
			c = (unsigned char)p->s[p->pos];
			if (c == 'u') {
				for (int k = 1; k <= 4; k++) {
					char h = p->pos + (size_t)k < p->len ?
						p->s[p->pos + (size_t)k] : 0;
					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') ||
					      (h >= 'A' && h <= 'F')))
						return fault(p, "a bad \\u escape");
				}
				p->pos += 4;
			} else if (!strchr("\"\\/bfnrt", c) || c == 0) {
				return fault(p, "a bad escape");
			}
		}
		p->pos++;
	}
	return fault(p, "an unterminated string");
}

static int
number(struct parser *p)
{
	size_t start = p->pos;
	int t;

	if (p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		return fault(p, "a bad number");
	while (p->pos < p->len && ((p->s[p->pos] >= '0' && p->s[p->pos] <= '9') ||
			strchr(".eE+-", p->s[p->pos])))
		p->pos++;
	if ((t = new_tok(p, J_NUMBER, start)) < 0)
		return -1;
	p->d->t[t].end = p->pos;
	p->d->t[t].next = p->d->n;
	return t;
}

static int
literal(struct parser *p, const char *word, enum jtype type)
{
	size_t n = strlen(word);
	int t;

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return fault(p, "an unexpected character");
	if ((t = new_tok(p, type, p->pos)) < 0)
		return -1;
	p->pos += n;
	p->d->t[t].end = p->pos;
	p->d->t[t].next = p->d->n;
	return t;
}

static int value(struct parser *p, int depth);

/* an object or an array; its children follow it in the array */
static int
container(struct parser *p, int depth, bool object)
{
	char close = object ? '}' : ']';
	int t;

	if (depth >= DEPTH_MAX)
		return fault(p, "nested too deep");
	if ((t = new_tok(p, object ? J_OBJECT : J_ARRAY, p->pos)) < 0)
		return -1;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		p->d->t[t].end = p->pos;
		p->d->t[t].next = p->d->n;
		return t;
	}
	for (;;) {
		skip_ws(p);
		if (object) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fault(p, "a key must be a string");
			if (string(p) < 0)
				return -1;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return fault(p, "a ':' expected");
			p->pos++;
		}
		if (value(p, depth + 1) < 0)
			return -1;
		p->d->t[t].size++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			p->d->t[t].end = p->pos;
			p->d->t[t].next = p->d->n;
			return t;
		}
		return fault(p, object ? "a ',' or '}' expected" :
			"a ',' or ']' expected");
	}
}

static int
value(struct parser *p, int depth)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return fault(p, "a value expected");
	switch (p->s[p->pos]) {
	case '{':
		return container(p, depth, true);
	case '[':
		return container(p, depth, false);
	case '"':
		return string(p);
	case 't':
		return literal(p, "true", J_TRUE);
	case 'f':
		return literal(p, "false", J_FALSE);
	case 'n':
		return literal(p, "null", J_NULL);
	default:
		return number(p);
	}
}

int
json_parse(struct jdoc *d, const char *text, size_t len, struct jtok *toks,
		int cap, char *why, size_t whylen)
{
	struct parser p = { .s = text, .len = len, .d = d, .why = why,
		.whylen = whylen };

	*d = (struct jdoc){ .text = text, .t = toks, .cap = cap };
	if (value(&p, 0) < 0)
		return -1;
	skip_ws(&p);
	if (p.pos != len)
		return fault(&p, "text after the value");
	return 0;
}

static bool
text_is(const struct jdoc *d, int i, const char *s)
{
	size_t n = d->t[i].end - d->t[i].start;

	return strlen(s) == n && memcmp(d->text + d->t[i].start, s, n) == 0;
}

int
json_get(const struct jdoc *d, int obj, const char *key)
{
	int k;

	if (obj < 0 || obj >= d->n || d->t[obj].type != J_OBJECT)
		return -1;
	k = obj + 1;
	for (int m = 0; m < d->t[obj].size; m++) {
		int v = k + 1;

		if (text_is(d, k, key))
			return v;
		k = d->t[v].next;
	}
	return -1;
}

int
json_item(const struct jdoc *d, int arr, int i)
{
	int k;

	if (arr < 0 || arr >= d->n || d->t[arr].type != J_ARRAY ||
	    i < 0 || i >= d->t[arr].size)
		return -1;
	k = arr + 1;
	while (i-- > 0)
		k = d->t[k].next;
	return k;
}

uint64_t
json_u64(const struct jdoc *d, int i, uint64_t dflt)
{
	uint64_t v = 0;

	if (i < 0 || d->t[i].type != J_NUMBER || d->text[d->t[i].start] == '-')
		return dflt;
	for (size_t k = d->t[i].start; k < d->t[i].end; k++) {
		char c = d->text[k];

		if (c < '0' || c > '9' || v > (UINT64_MAX - (unsigned)(c - '0')) / 10)
			return dflt;
		v = v * 10 + (unsigned)(c - '0');
	}
	return v;
}

int64_t
json_i64(const struct jdoc *d, int i, int64_t dflt)
{
	bool neg;
	uint64_t v = 0;

	if (i < 0 || d->t[i].type != J_NUMBER)
		return dflt;
	neg = d->text[d->t[i].start] == '-';
	for (size_t k = d->t[i].start + neg; k < d->t[i].end; k++) {
		char c = d->text[k];

		if (c < '0' || c > '9' || v > (uint64_t)INT64_MAX / 10)
			return dflt;
		v = v * 10 + (unsigned)(c - '0');
	}
	if (v > (uint64_t)INT64_MAX)
		return dflt;
	return neg ? -(int64_t)v : (int64_t)v;
}

bool
json_bool(const struct jdoc *d, int i, bool dflt)
{
	if (i < 0)
		return dflt;
	return d->t[i].type == J_TRUE ? true : d->t[i].type == J_FALSE ? false : dflt;
}

const char *
json_text(const struct jdoc *d, int i, char *out, size_t outlen)
{
	size_t o = 0;

	if (outlen == 0)
		return out;
	out[0] = '\0';
	if (i < 0 || d->t[i].type != J_STRING)
		return out;
	for (size_t k = d->t[i].start; k < d->t[i].end && o + 1 < outlen; k++) {
		char c = d->text[k];

		if (c == '\\' && k + 1 < d->t[i].end) {
			c = d->text[++k];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				/* the daemon escapes only control bytes this way */
				unsigned v = 0;

				for (int h = 0; h < 4 && k + 1 < d->t[i].end; h++) {
					char x = d->text[++k];
					v = v * 16 + (unsigned)(x <= '9' ? x - '0' :
						(x | 0x20) - 'a' + 10);
				}
				c = v < 0x80 ? (char)v : '?';
				break;
			}
			default: break;	/* " \ / stand for themselves */
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}
