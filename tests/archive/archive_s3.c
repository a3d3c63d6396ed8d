/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archive_s3.c -- what only the S3 target has, against a local
 * S3-compatible server (tests/archive/archive_s3.sh starts one and sets
 * ARCHIVE_TEST_TARGET=s3://BUCKET/PREFIX and the AWS variables):
 * listings across many pages; a prefix given with or without '/' at its
 * end, and none; errors that name the target, the HTTP status and S3's
 * error code -- an unknown access key, no credentials, no such bucket;
 * a server down (refused at once) or not answering (given up within
 * REPL_ARCHIVE_S3_TIMEOUT_MS); URLs and settings that are not ones,
 * refused before any request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include "archive_test.h"

static char bucket[64];

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* an archive of records 1..400 in segments of 4K: over 100 objects */
static void
pages(void)
{
	struct archive_writer_cfg cfg = { .segment_bytes = 4096 };
	struct archive_target *t;
	struct archive_writer *w;
	struct archive_listing whole, paged;
	struct seen s = { 0 };
	char why[ARCHIVE_WHY_MAX];

	OK(archive_target_open(tgt("pages/"), uuid_a, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	OK(add_range(w, 1, 400, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	archive_writer_close(&w);
	OK(archive_list(t, &whole, why, sizeof(why)));
	CHECK(whole.n_segments > 100 && whole.contiguous_to == 400 && whole.gap_at == 0);
	/* 7 keys a page: the listing crosses continuation tokens */
	archive_s3_set_page_keys(t, 7);
	OK(archive_list(t, &paged, why, sizeof(why)));
	CHECK(paged.n_segments == whole.n_segments && paged.contiguous_to == 400);
	for (size_t i = 0; i < paged.n_segments && i < whole.n_segments; i++)
		CHECK(strcmp(paged.obj[i].name, whole.obj[i].name) == 0);
	OK(archive_read(t, 0, 0, check_record, &s, why, sizeof(why)));
	CHECK(s.count == 400 && s.bad == 0);
	archive_listing_free(&whole);
	archive_listing_free(&paged);
	archive_target_close(&t);

	/* the same prefix without its '/' and with two: the same archive */
	OK(archive_target_open(tgt("pages"), NULL, &t, why, sizeof(why)));
	if (t != NULL) {
		CHECK(memcmp(archive_target_uuid(t), uuid_a, 16) == 0);
		archive_target_close(&t);
	}
	OK(archive_target_open(tgt("pages//"), uuid_a, &t, why, sizeof(why)));
	archive_target_close(&t);
}

/* s3://BUCKET alone: the archive at the bucket's root */
static void
no_prefix(void)
{
	const char *b = getenv("ARCHIVE_TEST_EMPTY_BUCKET");
	struct archive_target *t;
	struct archive_writer *w;
	struct archive_writer_cfg cfg = { .segment_bytes = 16384 };
	struct archive_listing l;
	char why[ARCHIVE_WHY_MAX], url[128];

	if (b == NULL)
		return;
	snprintf(url, sizeof(url), "s3://%s", b);
	OK(archive_target_open(url, uuid_b, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_writer_open(t, &cfg, &w, why, sizeof(why)));
	OK(add_range(w, 1, 50, why, sizeof(why)));
	OK(archive_writer_flush(w, why, sizeof(why)));
	archive_writer_close(&w);
	archive_target_close(&t);
	snprintf(url, sizeof(url), "s3://%s/", b);
	OK(archive_target_open(url, uuid_b, &t, why, sizeof(why)));
	if (t == NULL)
		return;
	OK(archive_list(t, &l, why, sizeof(why)));
	CHECK(l.contiguous_to == 50 && l.n_segments > 1);
	archive_listing_free(&l);
	archive_target_close(&t);
}

/* archive_target_open(url) fails, why naming the target and holding each
   of want (NULL-terminated) */
static void
refused(const char *url, const char *const *want)
{
	struct archive_target *t = SENTINEL;
	char why[ARCHIVE_WHY_MAX] = "";
	int rc = archive_target_open(url, uuid_a, &t, why, sizeof(why));
	bool named = strstr(why, url) != NULL;

	CHECK(rc == -1 && t == NULL && named);
	for (const char *const *w = want; *w != NULL; w++) {
		CHECK(strstr(why, *w) != NULL);
		if (strstr(why, *w) == NULL)
			fprintf(stderr, "  %s: \"%s\" is not in: %s\n", url, *w, why);
	}
	if (rc == 0 && t != NULL && t != SENTINEL)
		archive_target_close(&t);
}

#define REFUSED(url, ...) refused(url, (const char *const[]){ __VA_ARGS__, NULL })

static void
errors(void)
{
	char url[128], saved_key[256], saved_ep[256];

	snprintf(saved_key, sizeof(saved_key), "%s", getenv("AWS_ACCESS_KEY_ID"));
	snprintf(saved_ep, sizeof(saved_ep), "%s", getenv("AWS_ENDPOINT_URL"));

	/* the server's answers: its status and error code */
	setenv("AWS_ACCESS_KEY_ID", "NOSUCHKEY", 1);
	REFUSED(tgt("creds"), "GET cluster-uuid: HTTP 403: InvalidAccessKeyId");
	unsetenv("AWS_ACCESS_KEY_ID");
	REFUSED(tgt("creds"), "no credentials: AWS_ACCESS_KEY_ID and "
		"AWS_SECRET_ACCESS_KEY must be set");
	setenv("AWS_ACCESS_KEY_ID", saved_key, 1);
	REFUSED("s3://no-such-bucket-here/x", "HTTP 404: NoSuchBucket");

	/* URLs and settings: refused before any request */
	snprintf(url, sizeof(url), "s3://%s/a//b", bucket);
	REFUSED(url, "the prefix may hold only");
	snprintf(url, sizeof(url), "s3://%s/a/../b", bucket);
	REFUSED(url, "the prefix may hold only");
	snprintf(url, sizeof(url), "s3://%s/a b", bucket);
	REFUSED(url, "the prefix may hold only");
	REFUSED("s3://Upper/x", "bucket name");
	REFUSED("s3://ab/x", "bucket name");
	REFUSED("s3://-abc/x", "bucket name");
	setenv("REPL_ARCHIVE_S3_TIMEOUT_MS", "12x", 1);
	REFUSED(tgt("env"), "REPL_ARCHIVE_S3_TIMEOUT_MS \"12x\" is not milliseconds");
	setenv("REPL_ARCHIVE_S3_TIMEOUT_MS", "50", 1);
	REFUSED(tgt("env"), "REPL_ARCHIVE_S3_TIMEOUT_MS \"50\"");
	unsetenv("REPL_ARCHIVE_S3_TIMEOUT_MS");
	setenv("AWS_ENDPOINT_URL", "ftp://127.0.0.1:1", 1);
	REFUSED(tgt("env"), "AWS_ENDPOINT_URL \"ftp://127.0.0.1:1\" is not");
	setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1/path", 1);
	REFUSED(tgt("env"), "has a path");
	setenv("AWS_ENDPOINT_URL", saved_ep, 1);
	setenv("AWS_REGION", "Bad_Region", 1);
	REFUSED(tgt("env"), "region \"Bad_Region\" is not one");
	unsetenv("AWS_REGION");
	setenv("AWS_SESSION_TOKEN", "two\nlines", 1);
	REFUSED(tgt("env"), "AWS_SESSION_TOKEN");
	unsetenv("AWS_SESSION_TOKEN");
}

/* a loopback port: nothing listening (listen 0), or one that takes
   connections and never answers (listen 1); its socket in *fd */
static int
loopback_port(bool listening, int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
			getsockname(*fd, (struct sockaddr *)&a, &len) != 0 ||
			(listening && listen(*fd, 8) != 0))
		return -1;
	if (!listening) {
		close(*fd);
		*fd = -1;
	}
	return ntohs(a.sin_port);
}

static void
server_down(void)
{
	char saved_ep[256], ep[64];
	long t0, took;
	int fd, port;

	snprintf(saved_ep, sizeof(saved_ep), "%s", getenv("AWS_ENDPOINT_URL"));
	/* nobody listening: refused at once */
	port = loopback_port(false, &fd);
	CHECK(port > 0);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
	setenv("AWS_ENDPOINT_URL", ep, 1);
	t0 = now_ms();
	REFUSED(tgt("down"), "GET cluster-uuid: ", ep, "Couldn't connect");
	took = now_ms() - t0;
	CHECK(took < 5000);

	/* connected, never answered: given up after the timeout, not long
	   past it (the check runs about once a second) */
	port = loopback_port(true, &fd);
	CHECK(port > 0);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
	setenv("AWS_ENDPOINT_URL", ep, 1);
	setenv("REPL_ARCHIVE_S3_TIMEOUT_MS", "1500", 1);
	t0 = now_ms();
	REFUSED(tgt("down"), "GET cluster-uuid: no answer within 1500 ms "
		"(REPL_ARCHIVE_S3_TIMEOUT_MS)", ep);
	took = now_ms() - t0;
	CHECK(took >= 1500 && took < 4000);
	if (took < 1500 || took >= 4000)
		fprintf(stderr, "  the request took %ld ms\n", took);
	if (fd >= 0)
		close(fd);
	unsetenv("REPL_ARCHIVE_S3_TIMEOUT_MS");
	setenv("AWS_ENDPOINT_URL", saved_ep, 1);
}

int
main(void)
{
	const char *target = getenv("ARCHIVE_TEST_TARGET");
	const char *slash;

	if (target == NULL || strncmp(target, "s3://", 5) != 0 || getenv("AWS_ENDPOINT_URL") == NULL ||
			getenv("AWS_ACCESS_KEY_ID") == NULL) {
		printf("SKIP: archive_s3: no S3 server (ARCHIVE_TEST_TARGET=s3://..., "
			"AWS_ENDPOINT_URL and the credentials unset): run through "
			"tests/archive/archive_s3.sh\n");
		return 77;
	}
	slash = strchr(target + 5, '/');
	snprintf(bucket, sizeof(bucket), "%.*s",
		(int)(slash ? slash - (target + 5) : (long)strlen(target + 5)), target + 5);
	scratch_make("archive_s3");
	pages();
	no_prefix();
	errors();
	server_down();
	if (failures > 0) {
		printf("archive_s3: %d failures\n", failures);
		return 1;
	}
	printf("archive_s3: ok\n");
	return 0;
}
