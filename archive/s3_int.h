/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * s3_int.h -- what the S3 target's files share: the target's state
 * (target_s3.c opens it and implements the target's functions) and one
 * signed request to the store (s3_request.c).
 */
#ifndef ARCHIVE_S3_INT_H
#define ARCHIVE_S3_INT_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <time.h>

#include "archive_int.h"

#define S3_TIMEOUT_MS_DEFAULT	30000
#define S3_TIMEOUT_MS_MIN	100
#define S3_TIMEOUT_MS_MAX	3600000
#define S3_CONNECT_TIMEOUT_MS	10000
#define S3_PAGE_KEYS_DEFAULT	1000
#define S3_ERROR_BODY_MAX	16384	/* an error document kept, at most */
#define S3_LIST_BODY_MAX	(16u << 20)	/* one listing page */
#define S3_LIST_PAGES_MAX	100000

struct s3_target {
	CURL *h;
	char endpoint[256];	/* scheme://host[:port], no '/' after */
	char bucket[64];
	char prefix[512];	/* "" or "a/b/": each key starts with it */
	char sigv4[96];		/* "aws:amz:REGION:s3" */
	char *key_id, *secret;
	struct curl_slist *token_hdr;	/* x-amz-security-token, or NULL */
	long timeout_ms;
	unsigned page_keys;
	char errbuf[CURL_ERROR_SIZE];
};

static inline struct s3_target *
s3_of(struct archive_target *t)
{
	return t->impl;
}


struct s3_body {			/* what is sent */
	const struct iovec *iov;
	int iovcnt, i;
	size_t off;
};

struct s3_resp {			/* what comes back */
	CURL *h;
	uint8_t *buf;
	size_t len, cap;
	uint64_t max;			/* a 2xx body: more is an error */
	size_t keep;			/* a ranged read: stop after this much */
	bool too_big, enough;
	char content_range[128];
	struct timespec start;
	long limit_ms;
	bool timed_out;
};

struct s3_req {
	const char *method;		/* GET, PUT or DELETE */
	const char *what;		/* the object's name, for errors */
	const char *url;
	const struct iovec *iov;	/* PUT's body */
	int iovcnt;
	uint64_t max;			/* GET: the most a 2xx body may hold */
	size_t keep;			/* GET: only the first keep bytes */
};

/*
 * The request made and answered (any status: *status, the body in r):
 * 0; else -1 with why, the transfer's error.  r->buf is the caller's to
 * free either way.
 */
int s3_request(struct archive_target *t, const struct s3_req *q, struct s3_resp *r,
		long *status, char *why, size_t whylen);
/* the S3 error of an answer, "HTTP 403: Code: Message", into why: -1 */
int s3_fail_status(struct archive_target *t, const struct s3_req *q, long status,
		const struct s3_resp *r, char *why, size_t whylen);
/* a 404 whose error is NoSuchKey (not a missing bucket) */
bool no_such_key(long status, const struct s3_resp *r);

#endif
