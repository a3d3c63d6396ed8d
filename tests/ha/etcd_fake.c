/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * etcd_fake.c -- the etcd client against a fake etcd on loopback (a thread
 * answering canned HTTP), for what a real one will not do on demand:
 * Unavailable (code 14) moving the call to the next endpoint, a silent
 * endpoint timing out without the request being tried again elsewhere,
 * answers that are not etcd's (not JSON, a text 404, too long, another
 * lease's ID, a txn's responses not one per op), and a watch's stream cut
 * anywhere (one byte at a time), a bad line, a cancellation, a line
 * without end, and a stop while etcd is silent.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "coord/etcd_client.h"
#include "unit.h"

enum mode {
	CANNED,		/* status and body, then close */
	SILENT,		/* read the request, answer nothing until stopped */
	STREAM,		/* 200, then the body, then hold */
	STREAM_BYTES,	/* the same, the body one byte per write */
	HUGE,		/* 200 with more than ETCD_ANSWER_MAX bytes */
};

struct fake {
	int lfd;
	char url[64];
	pthread_t th;
	atomic_bool stop;
	atomic_int requests;
	enum mode mode;
	int status;
	const char *body;
};

static bool
sleep_ms(struct fake *f, int ms)
{
	for (int i = 0; i < ms / 5 && !atomic_load(&f->stop); i++)
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	return !atomic_load(&f->stop);
}

/* reads one request (headers and Content-Length body); false at EOF */
static bool
read_request(struct fake *f, int fd)
{
	char buf[65536];
	size_t len = 0;
	char *end = NULL;

	while (end == NULL) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (atomic_load(&f->stop))
			return false;
		if (poll(&p, 1, 20) <= 0)
			continue;
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	const char *cl = strcasestr(buf, "Content-Length:");
	size_t want = cl != NULL ? strtoul(cl + 15, NULL, 10) : 0;
	size_t have = len - (size_t)(end + 4 - buf);

	while (have < want) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			return false;
		have += (size_t)n;
	}
	return true;
}

static void
write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static void
serve(struct fake *f, int fd)
{
	char head[256];

	if (!read_request(f, fd))
		return;
	atomic_fetch_add(&f->requests, 1);
	switch (f->mode) {
	case CANNED:
		snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
			"Content-Length: %zu\r\nConnection: close\r\n\r\n", f->status,
			strlen(f->body));
		write_all(fd, head, strlen(head));
		write_all(fd, f->body, strlen(f->body));
		return;
	case SILENT:
		while (sleep_ms(f, 50))
			;
		return;
	case STREAM:
	case STREAM_BYTES:
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			"Connection: close\r\n\r\n");
		write_all(fd, head, strlen(head));
		for (const char *p = f->body; *p != '\0' && !atomic_load(&f->stop); p++) {
			write_all(fd, p, f->mode == STREAM_BYTES ? 1 : strlen(p));
			if (f->mode != STREAM_BYTES)
				break;
			/* a pause now and then: curl hands over what it has */
			if ((p - f->body) % 7 == 0)
				sleep_ms(f, 5);
		}
		while (sleep_ms(f, 50))
			;
		return;
	case HUGE: {
		size_t n = ETCD_ANSWER_MAX + 1;
		char *b = malloc(n);

		if (b == NULL)
			return;
		memset(b, 'x', n);
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", n);
		write_all(fd, head, strlen(head));
		write_all(fd, b, n);
		free(b);
		while (sleep_ms(f, 50))
			;
		return;
	}
	}
}

static void *
fake_thread(void *arg)
{
	struct fake *f = arg;

	while (!atomic_load(&f->stop)) {
		struct pollfd p = { .fd = f->lfd, .events = POLLIN };

		if (poll(&p, 1, 20) <= 0)
			continue;
		int fd = accept(f->lfd, NULL, NULL);

		if (fd < 0)
			continue;
		serve(f, fd);
		close(fd);
	}
	return NULL;
}

/* on 127.0.0.1, a port the kernel picks */
static struct fake *
fake_start(enum mode mode, int status, const char *body)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	f->mode = mode;
	f->status = status;
	f->body = body;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(f->lfd >= 0);
	CU_ASSERT_FATAL(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CU_ASSERT_FATAL(listen(f->lfd, 8) == 0);
	CU_ASSERT_FATAL(getsockname(f->lfd, (struct sockaddr *)&a, &alen) == 0);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", ntohs(a.sin_port));
	CU_ASSERT_FATAL(pthread_create(&f->th, NULL, fake_thread, f) == 0);
	return f;
}

static void
fake_stop(struct fake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->th, NULL);
	close(f->lfd);
	free(f);
}

static struct etcd_client *
client_of(const char *a, const char *b, int timeout_ms)
{
	const char *eps[] = { a, b };
	struct etcd_client_cfg cfg = {
		.endpoints = eps, .n_endpoints = b != NULL ? 2 : 1,
		.timeout_ms = timeout_ms,
	};
	char err[256];
	struct etcd_client *c = etcd_client_new(&cfg, err, sizeof(err));

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	return c;
}

#define GRANT "{\"header\":{\"revision\":\"1\"},\"ID\":\"77\",\"TTL\":\"4\"}"

static bool
has(const char *s, const char *part)
{
	if (strstr(s, part) != NULL)
		return true;
	printf("\n  \"%s\" not in \"%s\"\n", part, s);
	return false;
}

static void
unavailable_moves_on(void)
{
	struct fake *a = fake_start(CANNED, 503, "{\"error\":\"etcdserver: leader changed\","
		"\"message\":\"etcdserver: leader changed\",\"code\":14}");
	struct fake *b = fake_start(CANNED, 200, GRANT);
	struct etcd_client *c = client_of(a->url, b->url, 1000);
	int64_t id, ttl;

	CU_ASSERT_EQUAL(etcd_lease_grant(c, 4, &id, &ttl), ETCD_OK);
	CU_ASSERT_EQUAL(id, 77);
	CU_ASSERT_EQUAL(ttl, 4);
	CU_ASSERT_EQUAL(atomic_load(&a->requests), 1);
	CU_ASSERT_EQUAL(atomic_load(&b->requests), 1);
	CU_ASSERT_STRING_EQUAL(etcd_client_endpoint(c), b->url);
	etcd_client_free(c);

	/* every endpoint unavailable: unreachable, naming the last */
	c = client_of(a->url, NULL, 1000);
	CU_ASSERT_EQUAL(etcd_lease_grant(c, 4, &id, &ttl), ETCD_E_UNREACHABLE);
	CU_ASSERT(has(etcd_client_error(c), "leader changed"));
	etcd_client_free(c);
	fake_stop(a);
	fake_stop(b);
}

/* sent and unanswered: a timeout, and not asked again elsewhere */
static void
timeout_stays(void)
{
	struct fake *a = fake_start(SILENT, 0, NULL);
	struct fake *b = fake_start(CANNED, 200, GRANT);
	struct etcd_client *c = client_of(a->url, b->url, 300);
	uint64_t t0 = clock_now_ms();
	int64_t id, ttl;

	CU_ASSERT_EQUAL(etcd_lease_grant(c, 4, &id, &ttl), ETCD_E_TIMEOUT);
	CU_ASSERT(clock_now_ms() - t0 < 2000);
	CU_ASSERT_EQUAL(atomic_load(&b->requests), 0);
	CU_ASSERT(has(etcd_client_error(c), "outcome is unknown"));
	etcd_client_free(c);
	fake_stop(a);
	fake_stop(b);
}

/* one call against a canned answer: its code and its error's words */
static void
answer_gives(int status, const char *body, enum etcd_rc want, const char *words)
{
	struct fake *f = fake_start(CANNED, status, body);
	struct etcd_client *c = client_of(f->url, NULL, 1000);
	int64_t ttl;

	CU_ASSERT_EQUAL(etcd_lease_keepalive(c, 77, &ttl, NULL), want);
	CU_ASSERT(has(etcd_client_error(c), words));
	CU_ASSERT(has(etcd_client_error(c), f->url));
	etcd_client_free(c);
	fake_stop(f);
}

static void
bad_answers(void)
{
	answer_gives(200, "hello", ETCD_E_PROTO, "etcd answer: not JSON");
	answer_gives(404, "404 page not found", ETCD_E_PROTO, "(HTTP 404)");
	answer_gives(200, "{\"result\":{\"ID\":\"78\",\"TTL\":\"4\"}}", ETCD_E_PROTO,
		"result.ID: another lease's");
	answer_gives(200, "{\"result\":{\"ID\":\"77\",\"TTL\":\"x\"}}", ETCD_E_PROTO,
		"etcd answer: result.TTL: not an integer string");
	answer_gives(500, "{\"result\":{\"ID\":\"77\",\"TTL\":\"4\"}}", ETCD_E_PROTO,
		"HTTP 500 with an answer that is no error");
	answer_gives(400, "{\"error\":\"bad\",\"message\":\"bad\",\"code\":3}", ETCD_E_SERVER,
		"code 3: bad");
}

static void
oversized(void)
{
	struct fake *f = fake_start(HUGE, 0, NULL);
	struct etcd_client *c = client_of(f->url, NULL, 5000);
	int64_t ttl;

	CU_ASSERT_EQUAL(etcd_lease_keepalive(c, 77, &ttl, NULL), ETCD_E_PROTO);
	CU_ASSERT(has(etcd_client_error(c), "longer than 4194304 bytes"));
	etcd_client_free(c);
	fake_stop(f);
}

static void
txn_responses_per_op(void)
{
	struct fake *f = fake_start(CANNED, 200, "{\"succeeded\":true}");
	struct etcd_client *c = client_of(f->url, NULL, 1000);
	struct etcd_op put = { .kind = ETCD_OP_PUT, .key = (const uint8_t *)"k",
		.key_len = 1 };
	struct etcd_txn t = { NULL, 0, &put, 1, NULL, 0 };
	struct etcd_txn_result r;

	CU_ASSERT_EQUAL(etcd_txn(c, &t, &r), ETCD_E_PROTO);
	CU_ASSERT(has(etcd_client_error(c), "not one per op"));
	CU_ASSERT_EQUAL(r.n_responses, 0);
	etcd_client_free(c);
	fake_stop(f);
}

/* --- the watch --------------------------------------------------------------- */

struct got {
	struct etcd_watch *w;
	atomic_int answers, created, puts;
	char key[16];
	enum etcd_rc rc;
	atomic_bool done;
};

static int
on_answer(void *arg, const struct etcd_watch_result *r)
{
	struct got *g = arg;

	atomic_fetch_add(&g->answers, 1);
	if (r->created)
		atomic_fetch_add(&g->created, 1);
	for (size_t i = 0; i < r->n_events; i++) {
		snprintf(g->key, sizeof(g->key), "%s", (char *)r->events[i].kv.key.p);
		atomic_fetch_add(&g->puts, 1);
	}
	return 0;
}

static void *
runner(void *arg)
{
	struct got *g = arg;

	g->rc = etcd_watch_run(g->w);
	atomic_store(&g->done, true);
	return NULL;
}

/* a watch against a fake streaming body; stopped after wait_ms if still running */
static void
watch_on(const char *body, bool one_byte, int wait_ms, struct got *g, char *err,
	size_t err_size)
{
	struct fake *f = fake_start(one_byte ? STREAM_BYTES : STREAM, 200, body);
	struct etcd_client *c = client_of(f->url, NULL, 1000);
	pthread_t th;

	CU_ASSERT_EQUAL_FATAL(etcd_watch_open(c, "/p/", 3, 0, on_answer, g, &g->w), ETCD_OK);
	CU_ASSERT_FATAL(pthread_create(&th, NULL, runner, g) == 0);
	for (int i = 0; i < wait_ms / 10 && !atomic_load(&g->done); i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	uint64_t t0 = clock_now_ms();

	etcd_watch_stop(g->w);
	pthread_join(th, NULL);
	CU_ASSERT(clock_now_ms() - t0 < 500);	/* woken, not polled */
	snprintf(err, err_size, "%s", etcd_watch_error(g->w));
	etcd_watch_close(g->w);
	etcd_client_free(c);
	fake_stop(f);
}

static void
watch_split_lines(void)
{
	const char *body = "{\"result\":{\"header\":{\"revision\":\"3\"},\"created\":true}}\n"
		"\r\n{\"result\":{\"header\":{\"revision\":\"4\"},\"events\":"
		"[{\"kv\":{\"key\":\"L3AvYQ==\"}}]}}\n";
	struct got g = { 0 };
	char err[512];

	watch_on(body, true, 1500, &g, err, sizeof(err));
	CU_ASSERT_EQUAL(g.rc, ETCD_OK);		/* stopped */
	CU_ASSERT_EQUAL(atomic_load(&g.answers), 2);
	CU_ASSERT_EQUAL(atomic_load(&g.created), 1);
	CU_ASSERT_EQUAL(atomic_load(&g.puts), 1);
	CU_ASSERT_STRING_EQUAL(g.key, "/p/a");
}

static void
watch_bad_line(void)
{
	const char *body = "{\"result\":{\"created\":true}}\n"
		"{\"result\":{\"events\":[{\"type\":\"EXPIRE\",\"kv\":{}}]}}\n";
	struct got g = { 0 };
	char err[512];

	watch_on(body, false, 3000, &g, err, sizeof(err));
	CU_ASSERT_EQUAL(g.rc, ETCD_E_PROTO);
	CU_ASSERT_EQUAL(atomic_load(&g.answers), 1);
	CU_ASSERT(has(err, "/v3/watch: etcd answer: result.events[0].type: neither PUT nor DELETE"));
}

static void
watch_canceled(void)
{
	const char *body = "{\"result\":{\"canceled\":true,\"compact_revision\":\"5\","
		"\"cancel_reason\":\"mvcc: required revision has been compacted\"}}\n";
	struct got g = { 0 };
	char err[512];

	watch_on(body, false, 3000, &g, err, sizeof(err));
	CU_ASSERT_EQUAL(g.rc, ETCD_E_CANCELED);
	CU_ASSERT(has(err, "compact_revision 5"));
}

static void
watch_stream_error(void)
{
	const char *body = "{\"error\":{\"grpc_code\":14,\"http_code\":503,"
		"\"message\":\"etcdserver: no leader\"}}\n";
	struct got g = { 0 };
	char err[512];

	watch_on(body, false, 3000, &g, err, sizeof(err));
	CU_ASSERT_EQUAL(g.rc, ETCD_E_SERVER);
	CU_ASSERT(has(err, "code 14: etcdserver: no leader"));
}

static void
watch_endless_line(void)
{
	struct fake *f = fake_start(HUGE, 0, NULL);
	struct etcd_client *c = client_of(f->url, NULL, 1000);
	struct got g = { 0 };

	CU_ASSERT_EQUAL_FATAL(etcd_watch_open(c, "/p/", 3, 0, on_answer, &g, &g.w), ETCD_OK);
	CU_ASSERT_EQUAL(etcd_watch_run(g.w), ETCD_E_PROTO);
	CU_ASSERT(has(etcd_watch_error(g.w), "a line longer than 4194304 bytes"));
	CU_ASSERT_EQUAL(atomic_load(&g.answers), 0);
	etcd_watch_close(g.w);
	etcd_client_free(c);
	fake_stop(f);
}

/* etcd silent after the header: a stop from another thread ends it at once */
static void
watch_stop_silent(void)
{
	struct got g = { 0 };
	char err[512];

	watch_on("", false, 300, &g, err, sizeof(err));
	CU_ASSERT_EQUAL(g.rc, ETCD_OK);
	CU_ASSERT_EQUAL(atomic_load(&g.answers), 0);
}

/* a port bound and not listening: connections to it are refused */
static int
refusing_port(char *url, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&a, &alen) == 0);
	snprintf(url, size, "http://127.0.0.1:%u", ntohs(a.sin_port));
	return fd;
}

/* the first endpoint refuses: the watch runs on the second */
static void
watch_moves_on(void)
{
	struct fake *f = fake_start(STREAM, 200, "{\"result\":{\"created\":true}}\n"
		"{\"result\":{\"canceled\":true}}\n");
	char closed[64];
	int fd = refusing_port(closed, sizeof(closed));
	struct etcd_client *c = client_of(closed, f->url, 1000);
	struct got g = { 0 };

	CU_ASSERT_EQUAL_FATAL(etcd_watch_open(c, "/p/", 3, 7, on_answer, &g, &g.w), ETCD_OK);
	CU_ASSERT_EQUAL(etcd_watch_run(g.w), ETCD_E_CANCELED);
	CU_ASSERT_EQUAL(atomic_load(&g.created), 1);
	CU_ASSERT(has(etcd_watch_error(g.w), f->url));
	CU_ASSERT_EQUAL(etcd_watch_run(g.w), ETCD_E_INVAL);	/* once */
	etcd_watch_close(g.w);
	etcd_client_free(c);

	/* the refusing one alone: unreachable */
	c = client_of(closed, NULL, 1000);
	CU_ASSERT_EQUAL_FATAL(etcd_watch_open(c, "/p/", 3, 0, on_answer, &g, &g.w), ETCD_OK);
	CU_ASSERT_EQUAL(etcd_watch_run(g.w), ETCD_E_UNREACHABLE);
	CU_ASSERT(has(etcd_watch_error(g.w), closed));
	etcd_watch_close(g.w);
	etcd_client_free(c);
	close(fd);
	fake_stop(f);
}

UNIT_MAIN("etcd_fake",
	UNIT_CASE(unavailable_moves_on), UNIT_CASE(timeout_stays),
	UNIT_CASE(bad_answers), UNIT_CASE(oversized), UNIT_CASE(txn_responses_per_op),
	UNIT_CASE(watch_split_lines), UNIT_CASE(watch_bad_line),
	UNIT_CASE(watch_canceled), UNIT_CASE(watch_stream_error),
	UNIT_CASE(watch_endless_line), UNIT_CASE(watch_stop_silent),
	UNIT_CASE(watch_moves_on))
