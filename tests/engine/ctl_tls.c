/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_tls.c -- the control channel over TLS 1.3 with mutual certificates.
 *
 * The certificates come from make-test-ca.sh, run into a temporary
 * directory.  1000 messages stream through TLS to a receiver polling with
 * timeout 0; records OpenSSL has decrypted but not handed out are
 * delivered without the fd showing anything; each side learns the other's
 * CN.  Refused: a certificate of another CA (either side), an expired one,
 * none at all, a plain-TCP peer (either side), a silent client (by the
 * accept's timeout).  A relay flipping one bit of the client's records
 * makes the server's receive fail naming TLS, with nothing delivered.
 * Loading errors name the file and the reason, a thread's first one
 * too; a node's own certificate that its CA did not sign, an expired one
 * and one not valid yet do not load.  Peers that go away raise no SIGPIPE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common/clock.h"
#include "ctl/ctl_chan.h"
#include "ctl/ctl_msg.h"
#include "ctl_stream.h"
#include "unit.h"

#define NSTREAM 1000
#define IO_TIMEOUT 10000
#define PATH_SIZE 512

static char ca_dir[PATH_SIZE / 2];

/* ca_dir/NAME.EXT */
static const char *
ca_file(char *buf, const char *name, const char *ext)
{
	snprintf(buf, PATH_SIZE, "%s/%s.%s", ca_dir, name, ext);
	return buf;
}

static void
expect_in(const char *got, const char *want, const char *what)
{
	if (got == NULL || strstr(got, want) == NULL) {
		printf("\n  %s: \"%s\", want \"%s\"\n", what,
			got ? got : "(null)", want);
		CU_FAIL("wrong reason");
	}
}

/* show a reason the test expects, for the log */
static void
show(const char *what, const char *why)
{
	printf("\n    %s: %s", what, why);
}

/*
 * NAME's certificate and key, trusting the test CA -- the intruder trusts
 * its own CA too (both-ca.pem): a context verifies its own certificate
 */
static struct ctl_tls *
tls_as(const char *name, int is_server)
{
	char ca[PATH_SIZE], cert[PATH_SIZE], key[PATH_SIZE];
	struct ctl_tls *tls = NULL;
	const char *why = NULL;
	int ret;

	ret = ctl_tls_new(ca_file(ca, strcmp(name, "intruder") ? "ca" : "both-ca",
		"pem"), ca_file(cert, name, "pem"),
		ca_file(key, name, "key"), is_server, &tls, &why);
	if (ret != 0)
		printf("\n  ctl_tls_new(%s): %s\n", name, why);
	CU_ASSERT_EQUAL_FATAL(ret, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(tls);
	return tls;
}

static struct ctl_listener *
listen_on(struct ctl_tls *tls)
{
	struct ctl_listener *l = NULL;

	CU_ASSERT_EQUAL_FATAL(ctl_listen("127.0.0.1", "0", tls, &l), 0);
	CU_ASSERT_FATAL(ctl_listener_port(l) > 0);
	return l;
}

/* ctl_connect() in a thread: the server's handshake runs meanwhile */
struct connector {
	char port[16];
	struct ctl_tls *tls;
	int timeout_ms;
	pthread_t thread;
	int ret;
	struct ctl_chan *ch;
	char why[256];
};

static void *
connector_run(void *arg)
{
	struct connector *c = arg;

	c->ret = ctl_connect("127.0.0.1", c->port, c->timeout_ms, c->tls,
		&c->ch);
	snprintf(c->why, sizeof(c->why), "%s", c->ret ? ctl_last_error() : "");
	return NULL;
}

static void
connector_start(struct connector *c, int port, struct ctl_tls *tls)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->port, sizeof(c->port), "%d", port);
	c->tls = tls;
	c->timeout_ms = IO_TIMEOUT;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&c->thread, NULL, connector_run,
		c), 0);
}

static void
connector_join(struct connector *c)
{
	CU_ASSERT_EQUAL(pthread_join(c->thread, NULL), 0);
}

/* a TLS pair: *s accepted with srv, *c connected with cli */
static void
tls_pair(struct ctl_tls *srv, struct ctl_tls *cli, struct ctl_chan **s,
		struct ctl_chan **c)
{
	struct ctl_listener *l = listen_on(srv);
	struct connector con;
	int ret;

	connector_start(&con, ctl_listener_port(l), cli);
	ret = ctl_accept(l, IO_TIMEOUT, s);
	if (ret != 0)
		printf("\n  accept: %s\n", ctl_last_error());
	connector_join(&con);
	if (con.ret != 0)
		printf("\n  connect: %s\n", con.why);
	ctl_listener_close(&l);
	CU_ASSERT_EQUAL_FATAL(ret, 0);
	CU_ASSERT_EQUAL_FATAL(con.ret, 0);
	*c = con.ch;
}

/* the receiver of the stream: timeout 0, every call timed */
struct receiver {
	struct ctl_chan *ch;
	int got;
	int bad;
	int ret;
	int64_t max_ms;
};

static void *
receiver_run(void *arg)
{
	struct receiver *r = arg;
	struct ctl_msg m, want;
	int64_t t0, dt;

	for (;;) {
		t0 = (int64_t)clock_now_ms();
		r->ret = ctl_chan_recv(r->ch, &m, 0);
		dt = (int64_t)clock_now_ms() - t0;
		if (dt > r->max_ms)
			r->max_ms = dt;
		if (r->ret == CTL_CHAN_AGAIN)
			continue;
		if (r->ret != 0)
			break;
		stream_msg(r->got, &want);
		if (r->got >= NSTREAM || memcmp(&m, &want, sizeof(m)) != 0)
			r->bad++;
		r->got++;
	}
	return NULL;
}

static void
tls_stream(void)
{
	struct ctl_tls *srv = tls_as("replica1", 1), *cli = tls_as("primary", 0);
	struct ctl_tls *share = NULL;
	struct ctl_listener *l = listen_on(srv);
	struct ctl_chan *s = NULL, *c = NULL;
	struct receiver r = { 0 };
	struct connector con;
	struct ctl_msg m, got;
	pthread_t thread;
	int failed = 0;

	/* the listener and the channels hold the contexts: delete early */
	ctl_tls_delete(&srv);
	CU_ASSERT_PTR_NULL(srv);
	ctl_tls_delete(&srv);	/* harmless twice */
	/* a shared handle outlives the one it was taken from */
	CU_ASSERT_EQUAL(ctl_tls_share(cli, &share), 0);
	ctl_tls_delete(&cli);
	CU_ASSERT_PTR_NOT_NULL_FATAL(share);
	connector_start(&con, ctl_listener_port(l), share);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), 0);
	connector_join(&con);
	ctl_tls_delete(&share);
	ctl_listener_close(&l);
	CU_ASSERT_EQUAL_FATAL(con.ret, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	c = con.ch;

	/* each side knows who the other is */
	CU_ASSERT_STRING_EQUAL(ctl_chan_peer_name(s), "primary");
	CU_ASSERT_STRING_EQUAL(ctl_chan_peer_name(c), "replica1");
	CU_ASSERT_EQUAL(strncmp(ctl_chan_peer(s), "127.0.0.1:", 10), 0);

	/* the server speaks too */
	stream_msg(1, &m);
	CU_ASSERT_EQUAL(ctl_chan_send(s, &m, IO_TIMEOUT), 0);
	CU_ASSERT_EQUAL(ctl_chan_recv(c, &got, IO_TIMEOUT), 0);
	CU_ASSERT_EQUAL(memcmp(&got, &m, sizeof(m)), 0);

	r.ch = s;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&thread, NULL, receiver_run, &r), 0);
	for (int i = 0; i < NSTREAM; i++) {
		stream_msg(i, &m);
		if (ctl_chan_send(c, &m, IO_TIMEOUT) != 0)
			failed++;
	}
	ctl_chan_close(&c);	/* close_notify */
	CU_ASSERT_EQUAL(pthread_join(thread, NULL), 0);
	CU_ASSERT_EQUAL(failed, 0);
	CU_ASSERT_EQUAL(r.got, NSTREAM);
	CU_ASSERT_EQUAL(r.bad, 0);
	CU_ASSERT_EQUAL(r.ret, CTL_CHAN_CLOSED);
	/* timeout 0 never waits (the bound allows for a loaded machine) */
	CU_ASSERT(r.max_ms < 1000);
	expect_in(ctl_chan_why(s), "closed", "why");
	CU_ASSERT_EQUAL(ctl_chan_recv(s, &got, 0), CTL_CHAN_CLOSED);
	ctl_chan_close(&s);
	CU_ASSERT_PTR_NULL(s);
}

/* a TLS client of our own making: no certificate, or frames in one record */
struct raw_client {
	int port;
	const char *cert;		/* its name, or NULL: none */
	const uint8_t *data;		/* written in one SSL_write() */
	size_t len;
	pthread_t thread;
	int handshake;			/* SSL_connect()'s result */
	int wrote;
	char end[256];			/* how its reading ended */
};

static void
raw_end(struct raw_client *rc, SSL *ssl, int ret)
{
	unsigned long e = ERR_peek_error();
	int err = ssl ? SSL_get_error(ssl, ret) : SSL_ERROR_SSL;

	if (err == SSL_ERROR_ZERO_RETURN)
		snprintf(rc->end, sizeof(rc->end), "close_notify");
	else if (err == SSL_ERROR_SSL && e != 0)
		snprintf(rc->end, sizeof(rc->end), "%s",
			ERR_reason_error_string(e));
	else
		snprintf(rc->end, sizeof(rc->end), "error %d (%s)", err,
			strerror(errno));
	ERR_clear_error();
}

static void *
raw_client_run(void *arg)
{
	struct raw_client *rc = arg;
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)rc->port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct timeval tv = { .tv_sec = IO_TIMEOUT / 1000 };
	char path[PATH_SIZE], key[PATH_SIZE], buf[256];
	SSL_CTX *ctx = NULL;
	SSL *ssl = NULL;
	sigset_t set;
	int fd, n;

	/* its blocking SSL socket may write to a closed connection */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return NULL;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(rc->end, sizeof(rc->end), "connect: %s",
			strerror(errno));
		goto out;
	}
	ctx = SSL_CTX_new(TLS_client_method());
	if (ctx == NULL ||
	    !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    SSL_CTX_load_verify_file(ctx, ca_file(path, "ca", "pem")) != 1 ||
	    (rc->cert != NULL && (SSL_CTX_use_certificate_chain_file(ctx,
	    ca_file(path, rc->cert, "pem")) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, ca_file(key, rc->cert, "key"),
	    SSL_FILETYPE_PEM) != 1)) || (ssl = SSL_new(ctx)) == NULL ||
	    !SSL_set_fd(ssl, fd)) {
		raw_end(rc, NULL, 0);
		goto out;
	}
	SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL);
	if ((rc->handshake = SSL_connect(ssl)) != 1) {
		raw_end(rc, ssl, rc->handshake);
		goto out;
	}
	if (rc->len > 0)
		rc->wrote = SSL_write(ssl, rc->data, (int)rc->len);
	/* until the server closes or refuses us */
	while ((n = SSL_read(ssl, buf, sizeof(buf))) > 0)
		;
	raw_end(rc, ssl, n);
out:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	close(fd);
	return NULL;
}

static void
raw_client_start(struct raw_client *rc, int port, const char *cert,
		const uint8_t *data, size_t len)
{
	memset(rc, 0, sizeof(*rc));
	rc->port = port;
	rc->cert = cert;
	rc->data = data;
	rc->len = len;
	CU_ASSERT_EQUAL_FATAL(pthread_create(&rc->thread, NULL, raw_client_run,
		rc), 0);
}

/*
 * Five long frames in one record: the first receive reads the socket dry
 * and OpenSSL keeps decrypted bytes the buffer had no room for.  Receives
 * with timeout 0 must find them: the fd shows nothing.
 */
static void
tls_held_bytes(void)
{
	struct ctl_tls *srv = tls_as("replica1", 1);
	struct ctl_listener *l = listen_on(srv);
	struct ctl_chan *s = NULL;
	struct raw_client rc;
	struct ctl_msg m[5], got;
	uint8_t bytes[5 * CTL_FRAME_MAX];
	size_t len = 0;
	struct pollfd pfd = { .events = POLLIN };

	for (int k = 0; k < 5; k++) {
		msg_init(&m[k], CTL_ERROR, (uint32_t)k);
		m[k].u.error.code = -k;
		memset(m[k].u.error.text, 'a' + k, CTL_TEXT_MAX);
		len += (size_t)ctl_msg_encode(&m[k], bytes + len, CTL_FRAME_MAX);
	}
	CU_ASSERT_FATAL(len > CTL_FRAME_MAX);
	raw_client_start(&rc, ctl_listener_port(l), "primary", bytes, len);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), 0);
	ctl_listener_close(&l);
	ctl_tls_delete(&srv);
	if (s != NULL) {
		CU_ASSERT_EQUAL(ctl_chan_recv(s, &got, IO_TIMEOUT), 0);
		CU_ASSERT_EQUAL(memcmp(&got, &m[0], sizeof(got)), 0);
		/* the record is all in: the socket has nothing more */
		pfd.fd = ctl_chan_fd(s);
		CU_ASSERT_EQUAL(poll(&pfd, 1, 0), 0);
		for (int k = 1; k < 5; k++) {
			CU_ASSERT_EQUAL(ctl_chan_recv(s, &got, 0), 0);
			CU_ASSERT_EQUAL(memcmp(&got, &m[k], sizeof(got)), 0);
		}
		CU_ASSERT_EQUAL(ctl_chan_recv(s, &got, 0), CTL_CHAN_AGAIN);
		CU_ASSERT_STRING_EQUAL(ctl_chan_peer_name(s), "primary");
		ctl_chan_close(&s);
	}
	CU_ASSERT_EQUAL(pthread_join(rc.thread, NULL), 0);
	CU_ASSERT_EQUAL(rc.handshake, 1);
	CU_ASSERT_EQUAL(rc.wrote, (int)len);
	/* our close_notify ended its reading */
	CU_ASSERT_STRING_EQUAL(rc.end, "close_notify");
}

/* a client with cli_name's certificate, refused by a server with srv_name's */
static void
refused(const char *srv_name, const char *cli_name, const char *srv_want,
		const char *cli_want)
{
	struct ctl_tls *srv = tls_as(srv_name, 1), *cli = tls_as(cli_name, 0);
	struct ctl_listener *l = listen_on(srv);
	struct ctl_chan *s = NULL;
	struct connector con;
	int ret;

	connector_start(&con, ctl_listener_port(l), cli);
	ret = ctl_accept(l, IO_TIMEOUT, &s);
	CU_ASSERT_EQUAL(ret, -EPROTO);
	CU_ASSERT_PTR_NULL(s);
	expect_in(ctl_last_error(), srv_want, "the server's reason");
	show("server", ctl_last_error());
	connector_join(&con);
	CU_ASSERT_EQUAL(con.ret, -EPROTO);
	CU_ASSERT_PTR_NULL(con.ch);
	expect_in(con.why, cli_want, "the client's reason");
	show("client", con.why);
	ctl_chan_close(&s);
	ctl_chan_close(&con.ch);
	ctl_listener_close(&l);
	ctl_tls_delete(&srv);
	ctl_tls_delete(&cli);
}

/*
 * A server keeps new connections in hand and drives their handshakes a
 * step at a time (ctl_accept_start, ctl_chan_handshake): a connection
 * that never speaks stays pending while another completes, sends a frame
 * and is read; one with a refused certificate fails alone.
 */
static void
tls_pending(void)
{
	struct ctl_tls *srv = tls_as("replica1", 1), *cli = tls_as("primary", 0);
	struct ctl_tls *bad = tls_as("intruder", 0);
	struct ctl_listener *l = listen_on(srv);
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)ctl_listener_port(l)),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct ctl_chan *ch[3] = { NULL, NULL, NULL };
	struct connector con, refused_con;
	int idle = socket(AF_INET, SOCK_STREAM, 0), got = 0, ret[3] = { 1, 1, 1 };
	struct ctl_msg m = { .type = CTL_HEARTBEAT, .seq = 7 }, in;
	int64_t until = (int64_t)clock_now_ms() + IO_TIMEOUT;

	CU_ASSERT_EQUAL(ctl_accept_start(l, &ch[0]), -EAGAIN);
	CU_ASSERT_FATAL(idle >= 0);
	CU_ASSERT_EQUAL_FATAL(connect(idle, (struct sockaddr *)&sa, sizeof(sa)), 0);
	connector_start(&con, ctl_listener_port(l), cli);
	connector_start(&refused_con, ctl_listener_port(l), bad);
	/* the idle one first, then the two clients, in whichever order */
	while (got < 3 && (int64_t)clock_now_ms() < until) {
		struct pollfd p = { .fd = ctl_listener_fd(l), .events = POLLIN };

		(void)poll(&p, 1, 100);
		if (ctl_accept_start(l, &ch[got]) == 0)
			got++;
	}
	CU_ASSERT_EQUAL_FATAL(got, 3);
	while ((ret[1] == CTL_CHAN_AGAIN || ret[1] == 1 || ret[2] == CTL_CHAN_AGAIN ||
		ret[2] == 1) && (int64_t)clock_now_ms() < until) {
		struct pollfd p[3];

		for (int i = 0; i < 3; i++)
			p[i] = (struct pollfd){ .fd = ctl_chan_fd(ch[i]), .events = POLLIN };
		(void)poll(p, 3, 100);
		for (int i = 0; i < 3; i++)
			if (ret[i] == 1 || ret[i] == CTL_CHAN_AGAIN)
				ret[i] = ctl_chan_handshake(ch[i], 0);
	}
	/* which of the clients came second is not known: sort them */
	if (ret[1] != 0) {
		struct ctl_chan *t = ch[1];
		int r = ret[1];

		ch[1] = ch[2], ret[1] = ret[2];
		ch[2] = t, ret[2] = r;
	}
	CU_ASSERT_EQUAL(ret[0], CTL_CHAN_AGAIN);	/* still nothing from it */
	CU_ASSERT_EQUAL(ret[1], 0);
	CU_ASSERT_EQUAL(ret[2], -EPROTO);
	connector_join(&con);
	connector_join(&refused_con);
	CU_ASSERT_EQUAL_FATAL(con.ret, 0);
	CU_ASSERT_NOT_EQUAL(refused_con.ret, 0);
	CU_ASSERT_STRING_EQUAL(ctl_chan_peer_name(ch[1]), "primary");
	CU_ASSERT_EQUAL(ctl_chan_handshake(ch[1], 0), 0);	/* done stays done */
	CU_ASSERT_EQUAL(ctl_chan_ready(ch[1]), CTL_CHAN_AGAIN);
	CU_ASSERT_EQUAL(ctl_chan_send(con.ch, &m, IO_TIMEOUT), 0);
	ret[1] = CTL_CHAN_AGAIN;
	while (ret[1] == CTL_CHAN_AGAIN && (int64_t)clock_now_ms() < until) {
		struct pollfd p = { .fd = ctl_chan_fd(ch[1]), .events = POLLIN };

		(void)poll(&p, 1, 100);
		ret[1] = ctl_chan_ready(ch[1]);
	}
	CU_ASSERT_EQUAL(ret[1], 0);
	CU_ASSERT_EQUAL(ctl_chan_ready(ch[1]), 0);	/* it only peeks */
	CU_ASSERT_EQUAL(ctl_chan_recv(ch[1], &in, 0), 0);
	CU_ASSERT_EQUAL(in.type, CTL_HEARTBEAT);
	CU_ASSERT_EQUAL(in.seq, 7);
	CU_ASSERT_EQUAL(ctl_chan_ready(ch[1]), CTL_CHAN_AGAIN);
	CU_ASSERT_EQUAL(ctl_chan_handshake(ch[0], 0), CTL_CHAN_AGAIN);
	close(idle);
	for (int i = 0; i < 3; i++)
		ctl_chan_close(&ch[i]);
	ctl_chan_close(&con.ch);
	ctl_chan_close(&refused_con.ch);
	ctl_listener_close(&l);
	ctl_tls_delete(&srv);
	ctl_tls_delete(&cli);
	ctl_tls_delete(&bad);
}

static void
tls_refused(void)
{
	struct ctl_tls *srv = tls_as("replica1", 1);
	struct ctl_listener *l;
	struct ctl_chan *s = NULL;
	struct raw_client rc;

	/* signed by another CA: the server refuses; the client learns it */
	refused("replica1", "intruder", "certificate verify failed",
		"TLS handshake with 127.0.0.1:");
	/* expired: no context of ours takes it (tls_files), OpenSSL's does */
	l = listen_on(srv);
	raw_client_start(&rc, ctl_listener_port(l), "expired", NULL, 0);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), -EPROTO);
	CU_ASSERT_PTR_NULL(s);
	expect_in(ctl_last_error(), "certificate has expired", "the server's reason");
	show("server", ctl_last_error());
	CU_ASSERT_EQUAL(pthread_join(rc.thread, NULL), 0);
	expect_in(rc.end, "certificate expired", "the client's end");
	show("client", rc.end);
	ctl_listener_close(&l);
	/* a server signed by another CA: the client refuses */
	refused("intruder", "primary", "TLS handshake with 127.0.0.1:",
		"certificate verify failed");

	/* no certificate at all */
	l = listen_on(srv);
	raw_client_start(&rc, ctl_listener_port(l), NULL, NULL, 0);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), -EPROTO);
	CU_ASSERT_PTR_NULL(s);
	expect_in(ctl_last_error(), "certificate", "the server's reason");
	show("server", ctl_last_error());
	CU_ASSERT_EQUAL(pthread_join(rc.thread, NULL), 0);
	expect_in(rc.end, "certificate required", "the client's end");
	show("client", rc.end);
	ctl_listener_close(&l);
	ctl_tls_delete(&srv);
}

static void
tls_plain_peers(void)
{
	struct ctl_tls *srv = tls_as("replica1", 1), *cli = tls_as("primary", 0);
	struct ctl_listener *l = listen_on(srv);
	struct ctl_chan *s = NULL, *c = NULL;
	struct connector con;
	struct ctl_msg m;
	char port[16];
	int64_t t0, dt;
	int ret;

	snprintf(port, sizeof(port), "%d", ctl_listener_port(l));

	/* a plain-TCP client: its frame is no handshake, nothing delivered */
	CU_ASSERT_EQUAL_FATAL(ctl_connect("127.0.0.1", port, IO_TIMEOUT, NULL,
		&c), 0);
	stream_msg(0, &m);
	CU_ASSERT_EQUAL(ctl_chan_send(c, &m, IO_TIMEOUT), 0);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), -EPROTO);
	CU_ASSERT_PTR_NULL(s);
	expect_in(ctl_last_error(), "TLS handshake with 127.0.0.1:",
		"the server's reason");
	show("server", ctl_last_error());
	/* the client gets an alert it cannot parse, or the end */
	ret = ctl_chan_recv(c, &m, IO_TIMEOUT);
	CU_ASSERT(ret == CTL_CHAN_ERROR || ret == CTL_CHAN_CLOSED);
	show("plain client", ctl_chan_why(c));
	ctl_chan_close(&c);

	/* a silent client costs the accept's timeout, no more */
	CU_ASSERT_EQUAL_FATAL(ctl_connect("127.0.0.1", port, IO_TIMEOUT, NULL,
		&c), 0);
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_accept(l, 300, &s), -ETIMEDOUT);
	dt = (int64_t)clock_now_ms() - t0;
	CU_ASSERT(dt >= 290 && dt < 3000);
	CU_ASSERT_PTR_NULL(s);
	expect_in(ctl_last_error(), "timed out", "the server's reason");
	ctl_chan_close(&c);

	/* and the listener still serves a real client */
	connector_start(&con, ctl_listener_port(l), cli);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), 0);
	connector_join(&con);
	CU_ASSERT_EQUAL(con.ret, 0);
	ctl_chan_close(&con.ch);
	ctl_chan_close(&s);
	ctl_listener_close(&l);

	/* a TLS client of a plain listener: its hello is garbage there */
	CU_ASSERT_EQUAL_FATAL(ctl_listen("127.0.0.1", "0", NULL, &l), 0);
	connector_start(&con, ctl_listener_port(l), cli);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), 0);
	if (s != NULL) {
		CU_ASSERT_EQUAL(ctl_chan_recv(s, &m, IO_TIMEOUT),
			CTL_CHAN_ERROR);
		expect_in(ctl_chan_why(s), "bad frame header", "why");
		ctl_chan_close(&s);
	}
	connector_join(&con);
	CU_ASSERT_EQUAL(con.ret, -EPROTO);
	expect_in(con.why, "TLS handshake with 127.0.0.1:", "the client's reason");
	show("TLS client", con.why);
	ctl_listener_close(&l);
	ctl_tls_delete(&srv);
	ctl_tls_delete(&cli);
}

/* a TCP relay that flips one bit of the client's bytes once armed */
struct relay {
	int lfd;
	int port;
	int to_port;
	long flip_at;			/* of the client's bytes after arming */
	atomic_bool armed;
	atomic_bool flipped;
	pthread_t thread;
};

static void *
relay_run(void *arg)
{
	struct relay *r = arg;
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons((uint16_t)r->to_port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct pollfd fds[2] = { { .fd = r->lfd, .events = POLLIN } };
	uint8_t buf[4096];
	long seen = 0;
	ssize_t n;

	if (poll(fds, 1, IO_TIMEOUT) != 1)
		return NULL;
	fds[0].fd = accept(r->lfd, NULL, NULL);
	fds[1].fd = socket(AF_INET, SOCK_STREAM, 0);
	fds[1].events = POLLIN;
	if (fds[0].fd < 0 || fds[1].fd < 0 ||
	    connect(fds[1].fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto out;
	while (poll(fds, 2, IO_TIMEOUT) > 0) {
		for (int k = 0; k < 2; k++) {
			if (fds[k].revents == 0)
				continue;
			if ((n = recv(fds[k].fd, buf, sizeof(buf), 0)) <= 0)
				goto out;
			for (ssize_t i = 0; k == 0 && i < n &&
			    atomic_load(&r->armed); i++, seen++) {
				if (seen == r->flip_at) {
					buf[i] ^= 0x10;
					atomic_store(&r->flipped, true);
				}
			}
			if (send_all(fds[1 - k].fd, buf, (size_t)n) != 0)
				goto out;
		}
	}
out:
	if (fds[0].fd >= 0)
		close(fds[0].fd);
	if (fds[1].fd >= 0)
		close(fds[1].fd);
	return NULL;
}

static void
relay_start(struct relay *r, int to_port, long flip_at)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t len = sizeof(sa);

	memset(r, 0, sizeof(*r));
	r->to_port = to_port;
	r->flip_at = flip_at;
	atomic_init(&r->armed, false);
	atomic_init(&r->flipped, false);
	r->lfd = socket(AF_INET, SOCK_STREAM, 0);
	CU_ASSERT_FATAL(r->lfd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CU_ASSERT_EQUAL_FATAL(listen(r->lfd, 1), 0);
	CU_ASSERT_EQUAL_FATAL(getsockname(r->lfd, (struct sockaddr *)&sa, &len), 0);
	r->port = ntohs(sa.sin_port);
	CU_ASSERT_EQUAL_FATAL(pthread_create(&r->thread, NULL, relay_run, r), 0);
}

static void
tls_bit_flip(void)
{
	struct ctl_tls *srv = tls_as("replica1", 1), *cli = tls_as("primary", 0);
	struct ctl_listener *l = listen_on(srv);
	struct ctl_chan *s = NULL, *c;
	struct connector con;
	struct relay r;
	struct ctl_msg m, got;
	int ret, delivered = 0;

	/* byte 20 of a record: past its 5-byte header, in the ciphertext */
	relay_start(&r, ctl_listener_port(l), 20);
	connector_start(&con, r.port, cli);
	CU_ASSERT_EQUAL(ctl_accept(l, IO_TIMEOUT, &s), 0);
	connector_join(&con);
	CU_ASSERT_EQUAL_FATAL(con.ret, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	c = con.ch;

	/* through the relay untouched */
	for (int i = 0; i < 3; i++) {
		stream_msg(i, &m);
		CU_ASSERT_EQUAL(ctl_chan_send(c, &m, IO_TIMEOUT), 0);
		CU_ASSERT_EQUAL(ctl_chan_recv(s, &got, IO_TIMEOUT), 0);
		CU_ASSERT_EQUAL(memcmp(&got, &m, sizeof(m)), 0);
	}
	/* both handshakes are over: every byte from now on is data */
	atomic_store(&r.armed, true);
	for (int i = 3; i < 8; i++) {
		stream_msg(i, &m);
		CU_ASSERT_EQUAL(ctl_chan_send(c, &m, IO_TIMEOUT), 0);
	}
	while ((ret = ctl_chan_recv(s, &got, IO_TIMEOUT)) == 0)
		delivered++;
	CU_ASSERT(atomic_load(&r.flipped));
	CU_ASSERT_EQUAL(delivered, 0);
	CU_ASSERT_EQUAL(ret, CTL_CHAN_ERROR);
	expect_in(ctl_chan_why(s), "TLS: ", "why");
	show("server", ctl_chan_why(s));
	/* final */
	CU_ASSERT_EQUAL(ctl_chan_recv(s, &got, 0), CTL_CHAN_ERROR);
	ctl_chan_close(&s);
	/* the client hears of it: the server's alert, or the end */
	ret = ctl_chan_recv(c, &got, IO_TIMEOUT);
	CU_ASSERT(ret == CTL_CHAN_ERROR || ret == CTL_CHAN_CLOSED);
	show("client", ctl_chan_why(c));
	ctl_chan_close(&c);
	CU_ASSERT_EQUAL(pthread_join(r.thread, NULL), 0);
	close(r.lfd);
	ctl_listener_close(&l);
	ctl_tls_delete(&srv);
	ctl_tls_delete(&cli);
}

static void
tls_ends_and_timeouts(void)
{
	struct ctl_tls *srv = tls_as("replica2", 1), *cli = tls_as("primary", 0);
	struct ctl_chan *s = NULL, *c = NULL;
	struct ctl_msg m;
	int64_t t0, dt;
	long sent;
	int ret = 0;

	/* nothing to read: AGAIN after about the timeout, at once with 0 */
	tls_pair(srv, cli, &s, &c);
	CU_ASSERT_STRING_EQUAL(ctl_chan_peer_name(c), "replica2");
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_chan_recv(s, &m, 200), CTL_CHAN_AGAIN);
	dt = (int64_t)clock_now_ms() - t0;
	CU_ASSERT(dt >= 190 && dt < 2000);
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_chan_recv(s, &m, 0), CTL_CHAN_AGAIN);
	CU_ASSERT((int64_t)clock_now_ms() - t0 < 100);

	/* the end of the connection without close_notify: CLOSED; and the
	 * client's close then writes to a shut socket without SIGPIPE */
	CU_ASSERT_EQUAL(shutdown(ctl_chan_fd(c), SHUT_WR), 0);
	CU_ASSERT_EQUAL(ctl_chan_recv(s, &m, IO_TIMEOUT), CTL_CHAN_CLOSED);
	expect_in(ctl_chan_why(s), "without close_notify", "why");
	ctl_chan_close(&c);
	ctl_chan_close(&s);

	/* the server closes: the client reads CLOSED, its sends end CLOSED */
	tls_pair(srv, cli, &s, &c);
	ctl_chan_close(&s);
	CU_ASSERT_EQUAL(ctl_chan_recv(c, &m, IO_TIMEOUT), CTL_CHAN_CLOSED);
	stream_msg(2, &m);
	for (int i = 0; i < 1000; i++) {
		if ((ret = ctl_chan_send(c, &m, 100)) != 0)
			break;
		usleep(1000);
	}
	CU_ASSERT_EQUAL(ret, CTL_CHAN_CLOSED);
	CU_ASSERT_EQUAL(ctl_chan_send(c, &m, 100), CTL_CHAN_CLOSED);
	ctl_chan_close(&c);

	/* a peer that never reads: the send times out, and that is final */
	tls_pair(srv, cli, &s, &c);
	stream_msg(3, &m);
	for (sent = 0; sent < 10000000; sent++)
		if ((ret = ctl_chan_send(c, &m, 20)) != 0)
			break;
	CU_ASSERT_EQUAL(ret, CTL_CHAN_ERROR);
	expect_in(ctl_chan_why(c), "timed out", "why");
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_chan_send(c, &m, 1000), CTL_CHAN_ERROR);
	CU_ASSERT((int64_t)clock_now_ms() - t0 < 500);
	/* an unencodable message is refused before TLS sees it */
	ctl_chan_close(&c);
	ctl_chan_close(&s);
	tls_pair(srv, cli, &s, &c);
	msg_init(&m, CTL_SET_HEAD, 1);
	CU_ASSERT_EQUAL(ctl_chan_send(c, &m, 100), CTL_CHAN_ERROR);
	expect_in(ctl_chan_why(c), "lsn is 0", "why");
	stream_msg(2, &m);
	CU_ASSERT_EQUAL(ctl_chan_send(c, &m, 100), 0);
	CU_ASSERT_EQUAL(ctl_chan_recv(s, &m, IO_TIMEOUT), 0);
	ctl_chan_close(&c);
	ctl_chan_close(&s);
	ctl_tls_delete(&srv);
	ctl_tls_delete(&cli);
}

static const char *
format(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, 3 * PATH_SIZE, fmt, ap);
	va_end(ap);
	return buf;
}

/* the first failure of a thread: its reason, not "no error" */
static void *
first_failure_run(void *arg)
{
	char ca[PATH_SIZE], cert[PATH_SIZE], key[PATH_SIZE];
	struct ctl_tls *tls = NULL;
	const char **why = arg;
	int ret;

	ret = ctl_tls_new(ca_file(ca, "ca", "pem"), ca_file(cert, "primary", "pem"),
		ca_file(key, "replica1", "key"), 1, &tls, why);
	*why = ret == -EPROTO && *why != NULL ? strdup(*why) : NULL;
	ctl_tls_delete(&tls);
	return NULL;
}

static void
tls_first_failure(void)
{
	char key[PATH_SIZE], cert[PATH_SIZE], want[3 * PATH_SIZE];
	const char *why = NULL;
	pthread_t t;

	CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, first_failure_run, &why), 0);
	CU_ASSERT_EQUAL(pthread_join(t, NULL), 0);
	format(want, "TLS: key file %s does not match certificate %s",
		ca_file(key, "replica1", "key"), ca_file(cert, "primary", "pem"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	expect_in(why, want, "why");
	show("ctl_tls_new", why);
	free((void *)why);
}

/* ctl_tls_new() must fail, its reason containing want */
static void
bad_files(const char *ca, const char *cert, const char *key, const char *want)
{
	struct ctl_tls *tls = NULL;
	const char *why = NULL;

	CU_ASSERT_EQUAL(ctl_tls_new(ca, cert, key, 0, &tls, &why), -EPROTO);
	CU_ASSERT_PTR_NULL(tls);
	expect_in(why, want, "why");
	CU_ASSERT_STRING_EQUAL(ctl_last_error(), why);
	show("ctl_tls_new", why);
}

static void
tls_files(void)
{
	char ca[PATH_SIZE], cert[PATH_SIZE], key[PATH_SIZE], other[PATH_SIZE];
	char cnf[PATH_SIZE], missing[PATH_SIZE], icert[PATH_SIZE], ikey[PATH_SIZE];
	char buf[3 * PATH_SIZE];
	struct ctl_tls *srv = tls_as("replica1", 1), *cli = tls_as("primary", 0);
	struct ctl_listener *l = NULL;
	struct ctl_chan *c = NULL;
	struct ctl_tls *tls = NULL;
	const char *why = NULL;

	ca_file(ca, "ca", "pem");
	ca_file(cert, "primary", "pem");
	ca_file(key, "primary", "key");
	ca_file(other, "replica1", "key");
	ca_file(cnf, "ca", "cnf");
	ca_file(missing, "missing", "pem");
	bad_files(missing, cert, key, missing);
	expect_in(ctl_last_error(), "No such file", "why");
	bad_files(ca, missing, key, missing);
	bad_files(ca, cert, missing, missing);
	/* no certificate or key in it: the file and the reason, exactly */
	bad_files(cnf, cert, key, format(buf, "TLS: CA file %s: no certificate "
		"or not PEM", cnf));
	bad_files(ca, cnf, key, format(buf, "TLS: certificate file %s: no "
		"certificate or not PEM", cnf));
	bad_files(ca, cert, cnf, format(buf, "TLS: key file %s: no private key "
		"or not PEM", cnf));
	bad_files(ca, cert, other, format(buf, "TLS: key file %s does not match "
		"certificate %s", other, cert));
	/* our own certificate, checked as a peer would check it */
	ca_file(icert, "intruder", "pem");
	ca_file(ikey, "intruder", "key");
	bad_files(ca, icert, ikey, format(buf, "TLS: certificate %s is not signed "
		"by CA file %s", icert, ca));
	ca_file(icert, "expired", "pem");
	ca_file(ikey, "expired", "key");
	bad_files(ca, icert, ikey, format(buf, "TLS: certificate %s has expired",
		icert));
	ca_file(icert, "future", "pem");
	ca_file(ikey, "future", "key");
	bad_files(ca, icert, ikey, format(buf, "TLS: certificate %s is not valid "
		"yet", icert));
	/* a CA that is not the cluster's: the node's own is not signed by it */
	ca_file(icert, "other-ca", "pem");
	bad_files(icert, cert, key, format(buf, "TLS: certificate %s is not signed "
		"by CA file %s", cert, icert));
	/* the checks alone */
	CU_ASSERT_EQUAL(ctl_tls_check(ca, cert, key, &why), 0);
	CU_ASSERT_PTR_NULL(why);
	CU_ASSERT_EQUAL(ctl_tls_check(ca, cert, other, &why), -EPROTO);
	expect_in(why, "does not match certificate", "why");
	CU_ASSERT_EQUAL(ctl_tls_new(NULL, cert, key, 0, &tls, &why), -EINVAL);
	CU_ASSERT_PTR_NULL(tls);
	CU_ASSERT_EQUAL(ctl_tls_new(ca, cert, key, 0, NULL, &why), -EINVAL);

	/* a context for the other side */
	CU_ASSERT_EQUAL(ctl_listen("127.0.0.1", "0", cli, &l), -EINVAL);
	CU_ASSERT_PTR_NULL(l);
	CU_ASSERT_EQUAL(ctl_connect("127.0.0.1", "1", 100, srv, &c), -EINVAL);
	CU_ASSERT_PTR_NULL(c);
	ctl_tls_delete(&srv);
	ctl_tls_delete(&cli);
	ctl_tls_delete(NULL);
}

int
main(void)
{
	static CU_TestInfo cases[] = {
		UNIT_CASE(tls_stream),
		UNIT_CASE(tls_held_bytes),
		UNIT_CASE(tls_refused),
		UNIT_CASE(tls_pending),
		UNIT_CASE(tls_plain_peers),
		UNIT_CASE(tls_bit_flip),
		UNIT_CASE(tls_ends_and_timeouts),
		UNIT_CASE(tls_files),
		UNIT_CASE(tls_first_failure),
		CU_TEST_INFO_NULL,
	};
	const char *tmp = getenv("TMPDIR");
	char cmd[3 * PATH_SIZE];
	int ret;

	snprintf(ca_dir, sizeof(ca_dir), "%s/ctl_tls.XXXXXX",
		tmp != NULL && *tmp ? tmp : "/tmp");
	if (mkdtemp(ca_dir) == NULL) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(cmd, sizeof(cmd), "sh '%s' '%s'", MAKE_TEST_CA, ca_dir);
	ret = system(cmd);
	if (ret == 0)
		ret = unit_run("ctl_tls", cases);
	else if (WIFEXITED(ret) && WEXITSTATUS(ret) == 77)
		ret = 77;
	else
		ret = 99;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ca_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", ca_dir);
	if (ret == 77)
		UNIT_SKIP("no openssl command to make the test certificates");
	if (ret == 99)
		fprintf(stderr, "%s failed\n", MAKE_TEST_CA);
	return ret;
}
