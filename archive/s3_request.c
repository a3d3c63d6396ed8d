/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * s3_request.c -- one request to an S3-compatible store (s3_int.h): the
 * body sent from an iovec, the answer kept up to its limit, the deadline,
 * the payload's SHA-256 and libcurl's SigV4 signature.
 */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "s3_int.h"

/* ---- one request ---- */



static size_t
on_read(char *dst, size_t size, size_t nmemb, void *arg)
{
	struct s3_body *b = arg;
	size_t want = size * nmemb, done = 0;

	while (done < want && b->i < b->iovcnt) {
		const struct iovec *v = &b->iov[b->i];
		size_t n = v->iov_len - b->off;

		if (n > want - done)
			n = want - done;
		memcpy(dst + done, (const char *)v->iov_base + b->off, n);
		done += n;
		b->off += n;
		if (b->off == v->iov_len) {
			b->i++;
			b->off = 0;
		}
	}
	return done;
}

static size_t
on_write(char *src, size_t size, size_t nmemb, void *arg)
{
	struct s3_resp *r = arg;
	size_t n = size * nmemb;
	uint64_t limit = r->max;
	long code = 0;

	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		/* an error document: what fits is kept, the rest dropped */
		limit = S3_ERROR_BODY_MAX;
		if (r->len + n > limit)
			n = r->len < limit ? limit - r->len : 0;
		if (n == 0)
			return size * nmemb;
	} else if (r->keep > 0) {
		if (r->len + n >= r->keep) {
			n = r->keep - r->len;
			r->enough = true;
		}
	} else if (r->len + n > limit) {
		r->too_big = true;
		return 0;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		uint8_t *p;

		while (cap < r->len + n)
			cap *= 2;
		p = realloc(r->buf, cap);
		if (p == NULL)
			return 0;
		r->buf = p;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, src, n);
	r->len += n;
	return r->enough ? 0 : size * nmemb;
}

static size_t
on_header(char *line, size_t size, size_t nmemb, void *arg)
{
	struct s3_resp *r = arg;
	size_t n = size * nmemb;
	static const char name[] = "content-range:";

	if (n > sizeof(name) - 1 && strncasecmp(line, name, sizeof(name) - 1) == 0) {
		size_t i = sizeof(name) - 1, k = 0;

		while (i < n && (line[i] == ' ' || line[i] == '\t'))
			i++;
		while (i < n && line[i] != '\r' && line[i] != '\n' &&
				k + 1 < sizeof(r->content_range))
			r->content_range[k++] = line[i++];
		r->content_range[k] = '\0';
	}
	return n;
}

static long
elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)((now.tv_sec - start->tv_sec) * 1000 +
		(now.tv_nsec - start->tv_nsec) / 1000000);
}

/* the whole request within the timeout, and 1 s more for each MiB either
   way (as far as the sizes are known) */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		curl_off_t ulnow)
{
	struct s3_resp *r = arg;
	curl_off_t bytes = dltotal > ultotal ? dltotal : ultotal;

	(void)dlnow;
	(void)ulnow;
	if (elapsed_ms(&r->start) > r->limit_ms + (long)(bytes >> 20) * 1000) {
		r->timed_out = true;
		return 1;
	}
	return 0;
}

static int
sha256_hex(const struct iovec *iov, int iovcnt, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c != NULL && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1;

	for (int i = 0; ok && i < iovcnt; i++)
		ok = EVP_DigestUpdate(c, iov[i].iov_base, iov[i].iov_len) == 1;
	ok = ok && EVP_DigestFinal_ex(c, md, &mdlen) == 1 && mdlen == 32;
	EVP_MD_CTX_free(c);
	if (!ok)
		return -1;
	for (unsigned i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
	return 0;
}


/*
 * The request made and answered (any status: *status, the body in r):
 * 0; else -1 with why, the transfer's error.  r->buf is the caller's to
 * free either way.
 */
int
s3_request(struct archive_target *t, const struct s3_req *q, struct s3_resp *r,
		long *status, char *why, size_t whylen)
{
	struct s3_target *s = s3_of(t);
	static const struct iovec none = { NULL, 0 };
	struct s3_body body = { q->iov != NULL ? q->iov : &none, q->iov != NULL ? q->iovcnt : 1,
		0, 0 };
	struct curl_slist *hdrs = NULL, *l;
	char hash[65], hdr[128], range[64];
	uint64_t total = 0;
	CURLcode rc;
	int f = 0;

	memset(r, 0, sizeof(*r));
	r->h = s->h;
	r->max = q->max;
	r->keep = q->keep;
	r->limit_ms = s->timeout_ms;
	*status = 0;
	for (int i = 0; i < body.iovcnt; i++)
		total += body.iov[i].iov_len;
	if (sha256_hex(body.iov, body.iovcnt, hash) != 0)
		return archive_fail(why, whylen, "archive %s: %s %s: SHA-256 failed", t->url,
			q->method, q->what);
	snprintf(hdr, sizeof(hdr), "x-amz-content-sha256: %s", hash);
	l = curl_slist_append(hdrs, hdr);
	hdrs = l;
	for (struct curl_slist *tk = s->token_hdr; l != NULL && tk != NULL; tk = tk->next)
		hdrs = l = curl_slist_append(hdrs, tk->data);
	if (l != NULL && q->keep > 0) {
		snprintf(range, sizeof(range), "Range: bytes=0-%zu", q->keep - 1);
		hdrs = l = curl_slist_append(hdrs, range);
	}
	if (l == NULL) {
		curl_slist_free_all(hdrs);
		return archive_fail(why, whylen, "archive %s: out of memory", t->url);
	}
	curl_easy_reset(s->h);
	s->errbuf[0] = '\0';
	f |= curl_easy_setopt(s->h, CURLOPT_URL, q->url);
	f |= curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
	f |= curl_easy_setopt(s->h, CURLOPT_PROTOCOLS_STR, "http,https");
	f |= curl_easy_setopt(s->h, CURLOPT_FOLLOWLOCATION, 0L);
	f |= curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, s->errbuf);
	f |= curl_easy_setopt(s->h, CURLOPT_AWS_SIGV4, s->sigv4);
	f |= curl_easy_setopt(s->h, CURLOPT_USERNAME, s->key_id);
	f |= curl_easy_setopt(s->h, CURLOPT_PASSWORD, s->secret);
	f |= curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, hdrs);
	f |= curl_easy_setopt(s->h, CURLOPT_CONNECTTIMEOUT_MS,
		s->timeout_ms < S3_CONNECT_TIMEOUT_MS ? s->timeout_ms : S3_CONNECT_TIMEOUT_MS);
	f |= curl_easy_setopt(s->h, CURLOPT_NOPROGRESS, 0L);
	f |= curl_easy_setopt(s->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	f |= curl_easy_setopt(s->h, CURLOPT_XFERINFODATA, r);
	f |= curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_write);
	f |= curl_easy_setopt(s->h, CURLOPT_WRITEDATA, r);
	f |= curl_easy_setopt(s->h, CURLOPT_HEADERFUNCTION, on_header);
	f |= curl_easy_setopt(s->h, CURLOPT_HEADERDATA, r);
	if (strcmp(q->method, "PUT") == 0) {
		f |= curl_easy_setopt(s->h, CURLOPT_UPLOAD, 1L);
		f |= curl_easy_setopt(s->h, CURLOPT_READFUNCTION, on_read);
		f |= curl_easy_setopt(s->h, CURLOPT_READDATA, &body);
		f |= curl_easy_setopt(s->h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)total);
	} else if (strcmp(q->method, "DELETE") == 0) {
		f |= curl_easy_setopt(s->h, CURLOPT_CUSTOMREQUEST, "DELETE");
	}
	if (f != 0) {
		curl_slist_free_all(hdrs);
		return archive_fail(why, whylen, "archive %s: libcurl refused an option "
			"(is it 7.85 or later, with AWS SigV4?)", t->url);
	}
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	rc = curl_easy_perform(s->h);
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, status);
	curl_slist_free_all(hdrs);
	if (rc == CURLE_WRITE_ERROR && r->enough)
		return 0;	/* stopped on purpose: the first bytes are here */
	if (rc == CURLE_WRITE_ERROR && r->too_big)
		return archive_fail(why, whylen, "archive %s: %s: more than an object "
			"may have (%" PRIu64 " bytes)", t->url, q->what, q->max);
	if (rc == CURLE_ABORTED_BY_CALLBACK && r->timed_out)
		return archive_fail(why, whylen, "archive %s: %s %s: no answer within "
			"%ld ms (REPL_ARCHIVE_S3_TIMEOUT_MS) from %s", t->url, q->method,
			q->what, s->timeout_ms, s->endpoint);
	if (rc != CURLE_OK)
		return archive_fail(why, whylen, "archive %s: %s %s: %s: %s", t->url,
			q->method, q->what, s->endpoint,
			s->errbuf[0] != '\0' ? s->errbuf : curl_easy_strerror(rc));
	return 0;
}

/* the S3 error of an answer: "HTTP 403: Code: Message" into why */
int
s3_fail_status(struct archive_target *t, const struct s3_req *q, long status,
		const struct s3_resp *r, char *why, size_t whylen)
{
	char code[64], msg[200];

	if (r->len > 0 && s3_error_parse((const char *)r->buf, r->len, code, sizeof(code),
			msg, sizeof(msg)) == 0)
		return archive_fail(why, whylen, "archive %s: %s %s: HTTP %ld: %s%s%s",
			t->url, q->method, q->what, status, code, msg[0] ? ": " : "", msg);
	return archive_fail(why, whylen, "archive %s: %s %s: HTTP %ld (%s)", t->url,
		q->method, q->what, status, r->len > 0 ? "not an S3 error document" :
		"no error document");
}

/* an answer 404 of a missing key (not of a missing bucket) */
bool
no_such_key(long status, const struct s3_resp *r)
{
	char code[64], msg[200];

	if (status != 404)
		return false;
	if (r->len == 0)
		return true;
	return s3_error_parse((const char *)r->buf, r->len, code, sizeof(code), msg,
		sizeof(msg)) == 0 && strcmp(code, "NoSuchKey") == 0;
}

