/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * s3_xml.c -- the two XML documents an S3-compatible server answers the
 * S3 target with: a ListObjectsV2 page (ListBucketResult) and an error
 * (Error).
 *
 * Hand-written rather than libxml2: nothing in the tree links an XML
 * library, and these documents need a small subset of XML -- elements,
 * attributes (skipped), text with the five named entities and character
 * references, an XML declaration.  Everything else (comments, CDATA,
 * DOCTYPE, processing instructions, text beside child elements) is
 * refused rather than guessed at: the answers are untrusted bytes, parsed
 * totally, and a server that sends anything else is named in the error.
 * tests/fuzz/fuzz_s3_xml.c runs it on arbitrary bytes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "archive_int.h"

#define XML_DEPTH_MAX	16
#define XML_PATH_MAX	512
#define XML_NAME_MAX	128

enum xml_event { XML_OPEN, XML_LEAF, XML_CLOSE };

/* path: the element's names from the root, '/' between; text: a leaf's,
   decoded and NUL-terminated (no NUL inside); -1 stops the walk */
typedef int xml_fn(void *arg, enum xml_event ev, const char *path, const char *text,
		size_t len, char *why, size_t whylen);

struct xml {
	const char *doc, *p, *end;
	xml_fn *cb;
	void *arg;
	char path[XML_PATH_MAX];
	size_t path_len;
	char *text;		/* a leaf's decoded text */
	size_t text_len, text_cap;
	char *why;
	size_t whylen;
};

static int
xml_fail(struct xml *x, const char *what)
{
	return archive_fail(x->why, x->whylen, "XML: %s at byte %zu", what,
		(size_t)(x->p - x->doc));
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool
is_name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':';
}

static bool
is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static void
skip_space(struct xml *x)
{
	while (x->p < x->end && is_space(*x->p))
		x->p++;
}

static bool
starts(const struct xml *x, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(x->end - x->p) >= n && memcmp(x->p, s, n) == 0;
}

/* a name at x->p: its start and length */
static int
name(struct xml *x, const char **start, size_t *len)
{
	*start = x->p;
	if (x->p >= x->end || !is_name_start(*x->p))
		return -1;
	while (x->p < x->end && is_name_char(*x->p))
		x->p++;
	*len = (size_t)(x->p - *start);
	return *len <= XML_NAME_MAX ? 0 : -1;
}

static int
text_put(struct xml *x, const char *s, size_t n)
{
	if (x->text_len + n + 1 > x->text_cap) {
		size_t cap = x->text_cap ? x->text_cap : 256;
		char *t;

		while (cap < x->text_len + n + 1)
			cap *= 2;
		t = realloc(x->text, cap);
		if (t == NULL)
			return archive_fail(x->why, x->whylen, "XML: out of memory");
		x->text = t;
		x->text_cap = cap;
	}
	memcpy(x->text + x->text_len, s, n);
	x->text_len += n;
	x->text[x->text_len] = '\0';
	return 0;
}

/* a character reference's code point as UTF-8 */
static int
put_code_point(struct xml *x, unsigned long c)
{
	char u[4];
	size_t n;

	if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return -1;
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xC0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xE0 | c >> 12);
		u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		u[2] = (char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | c >> 18);
		u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
		u[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	return text_put(x, u, n) == 0 ? 0 : -2;
}

/* an entity or character reference at x->p ('&'), decoded into the text */
static int
entity(struct xml *x)
{
	static const struct { const char *name; char c; } named[] = {
		{ "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' },
		{ "&quot;", '"' }, { "&apos;", '\'' },
	};
	unsigned long c = 0;
	int base = 10, digits = 0, rc;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		if (starts(x, named[i].name)) {
			x->p += strlen(named[i].name);
			return text_put(x, &named[i].c, 1);
		}
	}
	if (!starts(x, "&#"))
		return xml_fail(x, "an unknown entity");
	x->p += 2;
	if (x->p < x->end && *x->p == 'x') {
		base = 16;
		x->p++;
	}
	for (; x->p < x->end && *x->p != ';'; x->p++) {
		char d = *x->p;
		int v;

		if (d >= '0' && d <= '9')
			v = d - '0';
		else if (base == 16 && d >= 'a' && d <= 'f')
			v = d - 'a' + 10;
		else if (base == 16 && d >= 'A' && d <= 'F')
			v = d - 'A' + 10;
		else
			return xml_fail(x, "a bad character reference");
		if (++digits > 8)
			return xml_fail(x, "a bad character reference");
		c = c * (unsigned long)base + (unsigned long)v;
	}
	if (x->p >= x->end || digits == 0)
		return xml_fail(x, "a bad character reference");
	x->p++;
	rc = put_code_point(x, c);
	if (rc == -1)
		return xml_fail(x, "a character reference to no character");
	return rc;
}

/* attributes up to '>' or "/>", skipped: S3's carry nothing needed */
static int
attributes(struct xml *x)
{
	for (;;) {
		const char *n;
		size_t len;
		char q;

		skip_space(x);
		if (x->p >= x->end)
			return xml_fail(x, "the document ends in a tag");
		if (*x->p == '>' || starts(x, "/>"))
			return 0;
		if (!is_space(x->p[-1]))
			return xml_fail(x, "no space before an attribute");
		if (name(x, &n, &len) != 0)
			return xml_fail(x, "a bad attribute name");
		skip_space(x);
		if (x->p >= x->end || *x->p != '=')
			return xml_fail(x, "an attribute without a value");
		x->p++;
		skip_space(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\''))
			return xml_fail(x, "an attribute value not quoted");
		q = *x->p++;
		while (x->p < x->end && *x->p != q) {
			if (*x->p == '<' || *x->p == '\0')
				return xml_fail(x, "a bad attribute value");
			x->p++;
		}
		if (x->p >= x->end)
			return xml_fail(x, "the document ends in an attribute value");
		x->p++;
	}
}

static int
path_push(struct xml *x, const char *n, size_t len)
{
	size_t need = x->path_len + (x->path_len > 0) + len;

	if (need >= sizeof(x->path))
		return xml_fail(x, "elements nested too deep");
	if (x->path_len > 0)
		x->path[x->path_len++] = '/';
	memcpy(x->path + x->path_len, n, len);
	x->path_len += len;
	x->path[x->path_len] = '\0';
	return 0;
}

static void
path_pop(struct xml *x, size_t len)
{
	x->path_len -= len;
	if (x->path_len > 0)
		x->path_len--;	/* its '/' */
	x->path[x->path_len] = '\0';
}

/* an element at x->p ('<'), with everything in it */
static int
element(struct xml *x, int depth)
{
	const char *n, *cn;
	size_t len, clen;
	bool children = false, text = false;

	if (depth >= XML_DEPTH_MAX)
		return xml_fail(x, "elements nested too deep");
	x->p++;
	if (name(x, &n, &len) != 0)
		return xml_fail(x, "a bad element name");
	if (attributes(x) != 0 || path_push(x, n, len) != 0)
		return -1;
	if (x->cb(x->arg, XML_OPEN, x->path, NULL, 0, x->why, x->whylen) != 0)
		return -1;
	if (starts(x, "/>")) {
		x->p += 2;
		if (x->cb(x->arg, XML_LEAF, x->path, "", 0, x->why, x->whylen) != 0 ||
				x->cb(x->arg, XML_CLOSE, x->path, NULL, 0, x->why, x->whylen) != 0)
			return -1;
		path_pop(x, len);
		return 0;
	}
	x->p++;	/* '>' */
	x->text_len = 0;
	for (;;) {
		if (x->p >= x->end)
			return xml_fail(x, "the document ends inside an element");
		if (starts(x, "</"))
			break;
		if (starts(x, "<!--") || starts(x, "<![CDATA[") || starts(x, "<!") ||
				starts(x, "<?"))
			return xml_fail(x, "a comment, CDATA, DOCTYPE or processing "
				"instruction (not taken)");
		if (*x->p == '<') {
			if (text)
				return xml_fail(x, "text beside child elements");
			children = true;
			if (element(x, depth + 1) != 0)
				return -1;
			x->text_len = 0;
			continue;
		}
		if (*x->p == '&') {
			if (entity(x) != 0)
				return -1;
			text = true;
		} else if (*x->p == '\0') {
			return xml_fail(x, "a bad character in text");
		} else {
			text |= !is_space(*x->p);
			if (text_put(x, x->p, 1) != 0)
				return -1;
			x->p++;
		}
		if (children && text)
			return xml_fail(x, "text beside child elements");
	}
	x->p += 2;
	if (name(x, &cn, &clen) != 0 || clen != len || memcmp(cn, n, len) != 0)
		return xml_fail(x, "a closing tag that does not match");
	skip_space(x);
	if (x->p >= x->end || *x->p != '>')
		return xml_fail(x, "a bad closing tag");
	x->p++;
	if (!children) {
		if (x->text_cap == 0 && text_put(x, "", 0) != 0)
			return -1;
		if (x->cb(x->arg, XML_LEAF, x->path, x->text, x->text_len, x->why,
				x->whylen) != 0)
			return -1;
	}
	if (x->cb(x->arg, XML_CLOSE, x->path, NULL, 0, x->why, x->whylen) != 0)
		return -1;
	path_pop(x, len);
	return 0;
}

static int
xml_walk(const char *doc, size_t len, xml_fn *cb, void *arg, char *why, size_t whylen)
{
	struct xml x = { .doc = doc, .p = doc, .end = doc + len, .cb = cb, .arg = arg, .why = why,
		.whylen = whylen };
	int rc = -1;

	if (starts(&x, "\xEF\xBB\xBF"))
		x.p += 3;
	skip_space(&x);
	if (starts(&x, "<?xml") && x.p + 5 < x.end && is_space(x.p[5])) {
		x.p += 5;
		while (x.p < x.end && !starts(&x, "?>")) {
			if (*x.p == '<' || *x.p == '\0')
				break;
			x.p++;
		}
		if (!starts(&x, "?>")) {
			xml_fail(&x, "a bad XML declaration");
			goto out;
		}
		x.p += 2;
		skip_space(&x);
	}
	if (x.p >= x.end || *x.p != '<' || starts(&x, "<!") || starts(&x, "<?")) {
		xml_fail(&x, "no root element");
		goto out;
	}
	if (element(&x, 0) != 0)
		goto out;
	skip_space(&x);
	if (x.p != x.end) {
		xml_fail(&x, "more after the root element");
		goto out;
	}
	rc = 0;
out:
	free(x.text);
	return rc;
}

/* ---- ListObjectsV2: a page of keys ---- */

#define LIST_ROOT	"ListBucketResult"
#define KEY_MAX		1024	/* S3's own limit on a key, in bytes */
#define TOKEN_MAX	4096

struct list_walk {
	struct s3_list_page *page;
	size_t cap;
	int keys_in_contents;	/* Key elements in the open Contents */
	int truncated_seen;
};

/* a key or token: not empty, bounded, no control character */
static bool
plain_text(const char *s, size_t len, size_t max)
{
	if (len == 0 || len > max)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static int
list_event(void *arg, enum xml_event ev, const char *path, const char *text, size_t len,
		char *why, size_t whylen)
{
	struct list_walk *w = arg;
	struct s3_list_page *pg = w->page;

	if (strncmp(path, LIST_ROOT, strlen(LIST_ROOT)) != 0 ||
			(path[strlen(LIST_ROOT)] != '\0' && path[strlen(LIST_ROOT)] != '/'))
		return archive_fail(why, whylen, "not a ListBucketResult (the root is %.40s)",
			path);
	if (strcmp(path, LIST_ROOT "/Contents") == 0) {
		if (ev == XML_OPEN)
			w->keys_in_contents = 0;
		else if (ev == XML_CLOSE && w->keys_in_contents != 1)
			return archive_fail(why, whylen, "a Contents element with %d Key "
				"elements, not one", w->keys_in_contents);
		else if (ev == XML_LEAF)
			return archive_fail(why, whylen, "a Contents element with no Key");
		return 0;
	}
	if (ev != XML_LEAF)
		return 0;
	if (strcmp(path, LIST_ROOT "/Contents/Key") == 0) {
		if (!plain_text(text, len, KEY_MAX))
			return archive_fail(why, whylen, "a Key empty, longer than %d bytes "
				"or with a control character", KEY_MAX);
		if (pg->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 64;
			char **k = realloc(pg->keys, cap * sizeof(*k));

			if (k == NULL)
				return archive_fail(why, whylen, "out of memory");
			pg->keys = k;
			w->cap = cap;
		}
		pg->keys[pg->n] = strdup(text);
		if (pg->keys[pg->n] == NULL)
			return archive_fail(why, whylen, "out of memory");
		pg->n++;
		w->keys_in_contents++;
	} else if (strcmp(path, LIST_ROOT "/IsTruncated") == 0) {
		if (w->truncated_seen++ > 0)
			return archive_fail(why, whylen, "IsTruncated twice");
		if (strcmp(text, "true") == 0)
			pg->truncated = true;
		else if (strcmp(text, "false") == 0)
			pg->truncated = false;
		else
			return archive_fail(why, whylen, "IsTruncated neither true nor false");
	} else if (strcmp(path, LIST_ROOT "/NextContinuationToken") == 0) {
		if (pg->next_token != NULL)
			return archive_fail(why, whylen, "NextContinuationToken twice");
		if (!plain_text(text, len, TOKEN_MAX))
			return archive_fail(why, whylen, "a NextContinuationToken empty, "
				"longer than %d bytes or with a control character", TOKEN_MAX);
		pg->next_token = strdup(text);
		if (pg->next_token == NULL)
			return archive_fail(why, whylen, "out of memory");
	}
	/* the rest (Name, Prefix, KeyCount, a Contents' Size, ETag ...) is not
	   needed: a key's bytes are read from the object itself */
	return 0;
}

void
s3_list_page_free(struct s3_list_page *pg)
{
	for (size_t i = 0; i < pg->n; i++)
		free(pg->keys[i]);
	free(pg->keys);
	free(pg->next_token);
	memset(pg, 0, sizeof(*pg));
}

int
s3_list_parse(const char *doc, size_t len, struct s3_list_page *pg, char *why,
		size_t whylen)
{
	struct list_walk w = { .page = pg };

	memset(pg, 0, sizeof(*pg));
	if (xml_walk(doc, len, list_event, &w, why, whylen) != 0)
		goto fail;
	if (w.truncated_seen == 0) {
		archive_fail(why, whylen, "a ListBucketResult without IsTruncated");
		goto fail;
	}
	if (pg->truncated && pg->next_token == NULL) {
		archive_fail(why, whylen, "a ListBucketResult truncated, without a "
			"NextContinuationToken");
		goto fail;
	}
	if (!pg->truncated && pg->next_token != NULL) {
		free(pg->next_token);	/* nothing follows: no use for it */
		pg->next_token = NULL;
	}
	return 0;
fail:
	s3_list_page_free(pg);
	return -1;
}

/* ---- an error document ---- */

struct error_walk {
	char *code, *message;
	size_t code_len, message_len;
};

/* text made printable: control characters and quotes become '?' */
static void
copy_printable(char *out, size_t outlen, const char *s, size_t len)
{
	size_t n = len < outlen - 1 ? len : outlen - 1;

	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[n] = '\0';
}

static int
error_event(void *arg, enum xml_event ev, const char *path, const char *text, size_t len,
		char *why, size_t whylen)
{
	struct error_walk *w = arg;

	if (strncmp(path, "Error", 5) != 0 || (path[5] != '\0' && path[5] != '/'))
		return archive_fail(why, whylen, "not an Error (the root is %.40s)", path);
	if (ev != XML_LEAF)
		return 0;
	if (strcmp(path, "Error/Code") == 0) {
		if (w->code[0] != '\0' || len == 0)
			return archive_fail(why, whylen, "Code twice, or empty");
		copy_printable(w->code, w->code_len, text, len);
	} else if (strcmp(path, "Error/Message") == 0) {
		copy_printable(w->message, w->message_len, text, len);
	}
	return 0;
}

int
s3_error_parse(const char *doc, size_t len, char *code, size_t code_len, char *message,
		size_t message_len)
{
	struct error_walk w = { code, message, code_len, message_len };
	char why[128];

	code[0] = message[0] = '\0';
	if (xml_walk(doc, len, error_event, &w, why, sizeof(why)) != 0 || code[0] == '\0') {
		code[0] = message[0] = '\0';
		return -1;
	}
	return 0;
}
