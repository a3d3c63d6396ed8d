/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_s3.c -- the archive in an S3-compatible object store:
 *
 *   s3://BUCKET/PREFIX/cluster-uuid     the cluster's uuid (target.c)
 *   s3://BUCKET/PREFIX/seg/..., base/...  the segments and bases (names.c)
 *
 * Requests are path-style (ENDPOINT/BUCKET/KEY), so that any S3-compatible
 * server serves them, signed with SigV4 by libcurl (CURLOPT_AWS_SIGV4).
 * One PUT is atomic: the object is stored whole under its key or not at
 * all, so a crash at any point leaves the old object (or none) or the new
 * one -- no temporary names, nothing to clean at open.  Each object still
 * carries its CRC-32C (segment.c), which every read checks.
 *
 * Endpoint, region and credentials come from the environment, under the
 * names the AWS tools use (repld.conf(5) lists them).  The payload's
 * SHA-256 is sent as x-amz-content-sha256, which S3 requires and which
 * libcurl 7.88 signs as the payload hash when it is given (it does not
 * compute one itself).  libcurl 7.88 signs the query string as it is, so
 * listing queries are written in SigV4's canonical form: parameters sorted
 * by name, values percent-encoded.  A request that fails is not retried
 * here: the archiver retries a round, replctl reports.
 */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>

#include "s3_int.h"

/* ---- names to URLs ---- */

static bool
unreserved(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		c == '-' || c == '_' || c == '.' || c == '~';
}

/* s percent-encoded as SigV4 wants (keep_slash: a path's '/' stays) */
static int
encode(char *out, size_t outlen, const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (unreserved((char)c) || (keep_slash && c == '/')) {
			if (o + 1 >= outlen)
				return -1;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= outlen)
				return -1;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* ENDPOINT/BUCKET/PREFIXname */
static int
object_url(struct s3_target *s, const char *name, char *out, size_t outlen)
{
	char key[1024], enc[3200];
	int n;

	n = snprintf(key, sizeof(key), "%s%s", s->prefix, name);
	if (n < 0 || (size_t)n >= sizeof(key) || encode(enc, sizeof(enc), key, true) != 0)
		return -1;
	n = snprintf(out, outlen, "%s/%s/%s", s->endpoint, s->bucket, enc);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* ---- the target's functions ---- */

static int
s3_put(struct archive_target *t, const char *name, const struct iovec *iov, int iovcnt,
		char *why, size_t whylen)
{
	char url[4096];
	struct s3_req q = { .method = "PUT", .what = name, .url = url, .iov = iov,
		.iovcnt = iovcnt };
	struct s3_resp r;
	long status;
	int rc;

	if (object_url(s3_of(t), name, url, sizeof(url)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: key too long", t->url, name);
	rc = s3_request(t, &q, &r, &status, why, whylen);
	if (rc == 0 && (status < 200 || status > 299))
		rc = s3_fail_status(t, &q, status, &r, why, whylen);
	free(r.buf);
	return rc;
}

static int
s3_get(struct archive_target *t, const char *name, uint64_t max, void **buf, size_t *len,
		char *why, size_t whylen)
{
	char url[4096];
	struct s3_req q = { .method = "GET", .what = name, .url = url, .max = max };
	struct s3_resp r;
	long status;

	*buf = NULL;
	*len = 0;
	if (object_url(s3_of(t), name, url, sizeof(url)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: key too long", t->url, name);
	if (s3_request(t, &q, &r, &status, why, whylen) != 0) {
		free(r.buf);
		return -1;
	}
	if (status != 200) {
		int rc = no_such_key(status, &r) ? 1 :
			s3_fail_status(t, &q, status, &r, why, whylen);

		free(r.buf);
		return rc;
	}
	*buf = r.buf != NULL ? r.buf : malloc(1);
	*len = r.len;
	if (*buf == NULL)
		return archive_fail(why, whylen, "archive %s: out of memory", t->url);
	return 0;
}

/* "bytes 0-LAST/SIZE": the size, totally */
static int
content_range_size(const char *v, size_t got, uint64_t *size)
{
	uint64_t first, last;
	char *end;

	if (strncmp(v, "bytes ", 6) != 0 || v[6] < '0' || v[6] > '9')
		return -1;
	errno = 0;
	first = strtoull(v + 6, &end, 10);
	if (errno != 0 || first != 0 || *end != '-' || end[1] < '0' || end[1] > '9')
		return -1;
	last = strtoull(end + 1, &end, 10);
	if (errno != 0 || *end != '/' || end[1] < '0' || end[1] > '9')
		return -1;
	*size = strtoull(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || last + 1 != got || *size < got)
		return -1;
	return 0;
}

/* the first len bytes, by a ranged GET (S3's HEAD has no body) */
static int
s3_head(struct archive_target *t, const char *name, void *buf, size_t len, size_t *got,
		uint64_t *size, char *why, size_t whylen)
{
	char url[4096];
	struct s3_req q = { .method = "GET", .what = name, .url = url,
		.max = ARCHIVE_BODY_MAX, .keep = len };
	struct s3_resp r;
	long status;
	int rc = 0;

	if (len == 0 || object_url(s3_of(t), name, url, sizeof(url)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: key too long", t->url, name);
	if (s3_request(t, &q, &r, &status, why, whylen) != 0) {
		free(r.buf);
		return -1;
	}
	if (status == 206) {
		if (content_range_size(r.content_range, r.len, size) != 0)
			rc = archive_fail(why, whylen, "archive %s: GET %s: a Content-Range "
				"\"%.60s\" that does not match the %zu bytes given", t->url,
				name, r.content_range, r.len);
	} else if (status == 200) {
		/* a server that ignores Range: the whole object's length */
		curl_off_t cl = -1;

		curl_easy_getinfo(s3_of(t)->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
		if (cl < (curl_off_t)r.len)
			rc = archive_fail(why, whylen, "archive %s: GET %s: no Content-Length",
				t->url, name);
		else
			*size = (uint64_t)cl;
	} else if (status == 416) {
		*size = 0;	/* the range starts past the end: an empty object */
		r.len = 0;
	} else {
		rc = s3_fail_status(t, &q, status, &r, why, whylen);
	}
	if (rc == 0) {
		if (r.len > 0)
			memcpy(buf, r.buf, r.len);
		*got = r.len;
	}
	free(r.buf);
	return rc;
}

static int
s3_del(struct archive_target *t, const char *name, char *why, size_t whylen)
{
	char url[4096];
	struct s3_req q = { .method = "DELETE", .what = name, .url = url };
	struct s3_resp r;
	long status;
	int rc;

	if (object_url(s3_of(t), name, url, sizeof(url)) != 0)
		return archive_fail(why, whylen, "archive %s: %s: key too long", t->url, name);
	rc = s3_request(t, &q, &r, &status, why, whylen);
	if (rc == 0 && status != 204 && status != 200 && !no_such_key(status, &r))
		rc = s3_fail_status(t, &q, status, &r, why, whylen);
	free(r.buf);
	return rc;
}

static int
names_add(char ***v, size_t *len, size_t *cap, const char *name)
{
	if (*len == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (nv == NULL)
			return -1;
		*v = nv;
		*cap = c;
	}
	if (((*v)[*len] = strdup(name)) == NULL)
		return -1;
	(*len)++;
	return 0;
}

/* every key under PREFIX+sub, as names (the prefix taken off) */
static int
list_under(struct archive_target *t, const char *sub, char ***v, size_t *len, size_t *cap,
		char *why, size_t whylen)
{
	struct s3_target *s = s3_of(t);
	char want[600], enc_prefix[1800], *token = NULL, url[8192], what[700];
	char *last = NULL;	/* the greatest key so far */
	struct s3_req q = { .method = "GET", .what = what, .url = url,
		.max = S3_LIST_BODY_MAX };
	int rc = -1;

	snprintf(want, sizeof(want), "%s%s", s->prefix, sub);
	snprintf(what, sizeof(what), "listing of %s", want);
	if (encode(enc_prefix, sizeof(enc_prefix), want, false) != 0)
		return archive_fail(why, whylen, "archive %s: prefix too long", t->url);
	for (unsigned page = 0;; page++) {
		struct s3_list_page pg;
		struct s3_resp r;
		char enc_token[3 * 4096 + 1] = "", perr[ARCHIVE_WHY_MAX];
		long status;
		int n;

		if (page >= S3_LIST_PAGES_MAX) {
			archive_fail(why, whylen, "archive %s: %s: more than %d pages",
				t->url, what, S3_LIST_PAGES_MAX);
			goto out;
		}
		if (token != NULL && encode(enc_token, sizeof(enc_token), token, false) != 0) {
			archive_fail(why, whylen, "archive %s: %s: continuation token too "
				"long", t->url, what);
			goto out;
		}
		/* parameters by name: the canonical query SigV4 signs */
		n = snprintf(url, sizeof(url), "%s/%s?%s%s%slist-type=2&max-keys=%u&prefix=%s",
			s->endpoint, s->bucket, token ? "continuation-token=" : "", enc_token,
			token ? "&" : "", s->page_keys, enc_prefix);
		if (n < 0 || (size_t)n >= sizeof(url)) {
			archive_fail(why, whylen, "archive %s: %s: URL too long", t->url, what);
			goto out;
		}
		if (s3_request(t, &q, &r, &status, why, whylen) != 0) {
			free(r.buf);
			goto out;
		}
		if (status != 200) {
			s3_fail_status(t, &q, status, &r, why, whylen);
			free(r.buf);
			goto out;
		}
		if (s3_list_parse((const char *)r.buf, r.len, &pg, perr, sizeof(perr)) != 0) {
			archive_fail(why, whylen, "archive %s: %s: the answer is no listing: "
				"%s", t->url, what, perr);
			free(r.buf);
			goto out;
		}
		free(r.buf);
		for (size_t i = 0; i < pg.n; i++) {
			if (strncmp(pg.keys[i], want, strlen(want)) != 0) {
				archive_fail(why, whylen, "archive %s: %s: a key outside the "
					"prefix asked for", t->url, what);
				s3_list_page_free(&pg);
				goto out;
			}
			/* S3 lists keys in ascending order: one not past the last
			   is a server that lost its place (and could loop) */
			if (last != NULL && strcmp(pg.keys[i], last) <= 0) {
				archive_fail(why, whylen, "archive %s: %s: keys out of "
					"order (the server repeats or loses its place)",
					t->url, what);
				s3_list_page_free(&pg);
				goto out;
			}
			free(last);
			if ((last = strdup(pg.keys[i])) == NULL ||
					names_add(v, len, cap, pg.keys[i] + strlen(s->prefix)) != 0) {
				archive_fail(why, whylen, "archive %s: out of memory", t->url);
				s3_list_page_free(&pg);
				goto out;
			}
		}
		if (!pg.truncated) {
			s3_list_page_free(&pg);
			break;
		}
		if (token != NULL && strcmp(token, pg.next_token) == 0) {
			archive_fail(why, whylen, "archive %s: %s: the same continuation "
				"token twice", t->url, what);
			s3_list_page_free(&pg);
			goto out;
		}
		free(token);
		token = pg.next_token;
		pg.next_token = NULL;
		s3_list_page_free(&pg);
	}
	rc = 0;
out:
	free(token);
	free(last);
	return rc;
}

static int
s3_list(struct archive_target *t, char ***names, size_t *n, char *why, size_t whylen)
{
	char **v = NULL;
	size_t len = 0, cap = 0;

	if (list_under(t, "seg/", &v, &len, &cap, why, whylen) != 0 ||
			list_under(t, "base/", &v, &len, &cap, why, whylen) != 0) {
		for (size_t i = 0; i < len; i++)
			free(v[i]);
		free(v);
		return -1;
	}
	*names = v;
	*n = len;
	return 0;
}

static void
s3_close(struct archive_target *t)
{
	struct s3_target *s = s3_of(t);

	if (s == NULL)
		return;
	if (s->h != NULL)
		curl_easy_cleanup(s->h);
	curl_slist_free_all(s->token_hdr);
	free(s->key_id);
	free(s->secret);
	free(s);
	t->impl = NULL;
	curl_global_cleanup();
}

static const struct archive_target_ops s3_ops = {
	.put = s3_put,
	.get = s3_get,
	.head = s3_head,
	.list = s3_list,
	.del = s3_del,
	.close = s3_close,
};

/* ---- opening ---- */

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/* S3's bucket names: 3..63 of a-z 0-9 . -, a letter or digit at each end */
static bool
bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = b[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && ((i == 0 || i == n - 1) || (c != '.' && c != '-')))
			return false;
	}
	return true;
}

/* a prefix of segments of unreserved characters, none empty, "." or ".." */
static bool
prefix_ok(const char *p)
{
	const char *seg = p;

	for (;; p++) {
		if (*p == '/' || *p == '\0') {
			size_t n = (size_t)(p - seg);

			if (n == 0 || (n == 1 && seg[0] == '.') ||
					(n == 2 && seg[0] == '.' && seg[1] == '.'))
				return false;
			if (*p == '\0')
				return true;
			seg = p + 1;
		} else if (!unreserved(*p)) {
			return false;
		}
	}
}

/* AWS_ENDPOINT_URL: http(s)://host[:port], a '/' at the end at most */
static int
endpoint_take(struct archive_target *t, struct s3_target *s, const char *region,
		char *why, size_t whylen)
{
	const char *v = env("AWS_ENDPOINT_URL");
	size_t n;

	if (v == NULL) {
		snprintf(s->endpoint, sizeof(s->endpoint), "https://s3.%s.amazonaws.com",
			region);
		return 0;
	}
	n = strlen(v);
	while (n > 0 && v[n - 1] == '/')
		n--;
	if ((strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) ||
			n >= sizeof(s->endpoint) || n <= (size_t)(v[4] == 's' ? 8 : 7))
		return archive_fail(why, whylen, "archive %s: AWS_ENDPOINT_URL \"%.100s\" is "
			"not http://HOST[:PORT] or https://HOST[:PORT]", t->url, v);
	for (size_t i = v[4] == 's' ? 8 : 7; i < n; i++)
		if (v[i] == '/' || v[i] == '?' || v[i] == '#' || v[i] == '@' ||
				(unsigned char)v[i] <= ' ')
			return archive_fail(why, whylen, "archive %s: AWS_ENDPOINT_URL "
				"\"%.100s\" has a path, query or user: only "
				"http(s)://HOST[:PORT] (requests are path-style)", t->url, v);
	memcpy(s->endpoint, v, n);
	s->endpoint[n] = '\0';
	return 0;
}

/* REPL_ARCHIVE_S3_TIMEOUT_MS: milliseconds, 100..3600000 */
static int
timeout_take(struct archive_target *t, struct s3_target *s, char *why, size_t whylen)
{
	const char *v = env("REPL_ARCHIVE_S3_TIMEOUT_MS");
	char *end;
	long ms;

	s->timeout_ms = S3_TIMEOUT_MS_DEFAULT;
	if (v == NULL)
		return 0;
	errno = 0;
	ms = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || v[0] < '0' || v[0] > '9' ||
			ms < S3_TIMEOUT_MS_MIN || ms > S3_TIMEOUT_MS_MAX)
		return archive_fail(why, whylen, "archive %s: REPL_ARCHIVE_S3_TIMEOUT_MS "
			"\"%.40s\" is not milliseconds in %d..%d", t->url, v,
			S3_TIMEOUT_MS_MIN, S3_TIMEOUT_MS_MAX);
	s->timeout_ms = ms;
	return 0;
}

int
archive_s3_open(struct archive_target *t, const char *url, char *why, size_t whylen)
{
	struct s3_target *s;
	const char *b = url + 5, *slash, *region, *token;
	size_t blen, plen;

	if (strncmp(url, "s3://", 5) != 0)
		return archive_fail(why, whylen, "archive %s: not an s3:// URL", t->url);
	slash = strchr(b, '/');
	blen = slash != NULL ? (size_t)(slash - b) : strlen(b);
	if (!bucket_ok(b, blen))
		return archive_fail(why, whylen, "archive %s: not s3://BUCKET/PREFIX with a "
			"bucket name of 3..63 lowercase letters, digits, '.' and '-'", t->url);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return archive_fail(why, whylen, "archive %s: out of memory", t->url);
	memcpy(s->bucket, b, blen);
	s->page_keys = S3_PAGE_KEYS_DEFAULT;
	if (slash != NULL) {
		const char *p = slash;

		while (*p == '/')
			p++;
		plen = strlen(p);
		while (plen > 0 && p[plen - 1] == '/')
			plen--;
		if (plen + 2 > sizeof(s->prefix) - 64) {
			archive_fail(why, whylen, "archive %s: prefix too long", t->url);
			goto fail;
		}
		memcpy(s->prefix, p, plen);
		s->prefix[plen] = '\0';
		if (plen > 0 && !prefix_ok(s->prefix)) {
			archive_fail(why, whylen, "archive %s: the prefix may hold only letters, "
				"digits and - _ . ~ in parts between single '/', none \".\" or "
				"\"..\"", t->url);
			goto fail;
		}
		if (plen > 0)
			strcat(s->prefix, "/");
	}
	region = env("AWS_REGION");
	if (region == NULL)
		region = env("AWS_DEFAULT_REGION");
	if (region == NULL)
		region = "us-east-1";
	for (const char *c = region; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-') ||
				c - region >= 40) {
			archive_fail(why, whylen, "archive %s: region \"%.40s\" is not one "
				"(lowercase letters, digits and '-')", t->url, region);
			goto fail;
		}
	snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", region);
	if (endpoint_take(t, s, region, why, whylen) != 0 ||
			timeout_take(t, s, why, whylen) != 0)
		goto fail;
	if (env("AWS_ACCESS_KEY_ID") == NULL || env("AWS_SECRET_ACCESS_KEY") == NULL) {
		archive_fail(why, whylen, "archive %s: no credentials: AWS_ACCESS_KEY_ID "
			"and AWS_SECRET_ACCESS_KEY must be set", t->url);
		goto fail;
	}
	s->key_id = strdup(env("AWS_ACCESS_KEY_ID"));
	s->secret = strdup(env("AWS_SECRET_ACCESS_KEY"));
	if (s->key_id == NULL || s->secret == NULL) {
		archive_fail(why, whylen, "archive %s: out of memory", t->url);
		goto fail;
	}
	if ((token = env("AWS_SESSION_TOKEN")) != NULL) {
		char *h;

		if (strpbrk(token, "\r\n") != NULL || asprintf(&h, "x-amz-security-token: %s",
				token) < 0) {
			archive_fail(why, whylen, "archive %s: AWS_SESSION_TOKEN: not one line, "
				"or out of memory", t->url);
			goto fail;
		}
		s->token_hdr = curl_slist_append(NULL, h);
		free(h);
		if (s->token_hdr == NULL) {
			archive_fail(why, whylen, "archive %s: out of memory", t->url);
			goto fail;
		}
	}
	/* thread-safe since libcurl 7.84 (configure wants 7.85); counted, so
	   each close's cleanup balances an open's init */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		archive_fail(why, whylen, "archive %s: curl_global_init failed", t->url);
		goto fail;
	}
	s->h = curl_easy_init();
	t->impl = s;
	t->ops = &s3_ops;
	if (s->h == NULL) {
		s3_close(t);
		t->ops = NULL;
		return archive_fail(why, whylen, "archive %s: curl_easy_init failed", t->url);
	}
	return 0;
fail:
	curl_slist_free_all(s->token_hdr);
	free(s->key_id);
	free(s->secret);
	free(s);
	return -1;
}

void
archive_s3_set_page_keys(struct archive_target *t, unsigned n)
{
	if (t->ops == &s3_ops && n >= 1 && n <= 1000)
		s3_of(t)->page_keys = n;
}
