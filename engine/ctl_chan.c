/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_chan.c -- the control channel over TCP: framed ctl_msg messages,
 * optionally inside TLS 1.3 (OpenSSL 3) with mutual authentication.
 *
 * Every descriptor is nonblocking, so a timeout is a poll() and a receive
 * with timeout 0 reads only what has arrived.  Received bytes accumulate in
 * the channel's buffer until a whole frame is there; bytes of the next
 * frame stay for the next call.  A header is checked as soon as it is
 * complete, so garbage is refused without waiting for a body.
 *
 * With TLS the same loops call SSL_read() / SSL_write() and, when OpenSSL
 * wants the socket readable or writable, poll for that until the deadline.
 * SSL_read() comes first: OpenSSL may hold decrypted bytes the fd no longer
 * shows.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "clock.h"
#include "ctl_chan.h"

#define LISTEN_BACKLOG 16
#define WHY_SIZE 128
#define LAST_ERROR_SIZE 256
#define CN_SIZE 65		/* a CN has at most 64 characters */

struct ctl_tls {
	SSL_CTX *ctx;
	int is_server;
};

struct ctl_listener {
	int fd;
	int port;
	SSL_CTX *ctx;			/* NULL: plain TCP; a reference */
};

struct ctl_chan {
	int fd;
	SSL *ssl;			/* NULL: plain TCP */
	bool tls_failed;		/* a fatal TLS error: no close_notify */
	/* the receiver's state */
	int rx_final;			/* 0, or CLOSED / ERROR for good */
	size_t have;			/* bytes in rx */
	uint8_t rx[CTL_FRAME_MAX];
	char rx_why[WHY_SIZE];
	/* the sender's state */
	int tx_final;			/* 0, or CLOSED / ERROR for good */
	char tx_why[WHY_SIZE];
	_Atomic(const char *) why;	/* the last failure's, either side */
	char peer[INET6_ADDRSTRLEN + 8];
	char peer_name[CN_SIZE];	/* the certificate's CN; "" plain */
};

static _Thread_local char last_error[LAST_ERROR_SIZE];

static void set_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void
set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

const char *
ctl_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

/*
 * OpenSSL's reason for the failure of the last call, from this thread's
 * error queue, which is left empty.  The oldest entry is the cause (later
 * ones say which layers it went through).
 */
static const char *
ssl_reason(char *buf, size_t size)
{
	unsigned long e = ERR_peek_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	if (e != 0 && ERR_SYSTEM_ERROR(e))	/* fopen()'s errno, say */
		snprintf(buf, size, "%s", strerror(ERR_GET_REASON(e)));
	else if (r != NULL)
		snprintf(buf, size, "%s", r);
	else if (e != 0)
		snprintf(buf, size, "OpenSSL error %#lx", e);
	else
		snprintf(buf, size, "unknown OpenSSL error");
	ERR_clear_error();
	return buf;
}

/* getaddrinfo's errors as errno values */
static int
gai_errno(int gai)
{
	switch (gai) {
	case EAI_SYSTEM:
		return errno ? -errno : -EIO;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_BADFLAGS:
		return -EINVAL;
	default:
		/* EAI_NONAME, EAI_SERVICE, EAI_FAMILY, ... */
		return -EADDRNOTAVAIL;
	}
}

/* deadline of a timeout (-1: none) and what remains of it */
static int64_t
deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : (int64_t)clock_now_ms() + timeout_ms;
}

static int
remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - (int64_t)clock_now_ms();
	return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

/* wait for events on fd until the deadline: 1 ready, 0 timed out, -errno */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	do {
		ret = poll(&pfd, 1, remaining(deadline));
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static void
name_peer(const struct sockaddr *sa, socklen_t salen, char *out, size_t size)
{
	char host[INET6_ADDRSTRLEN], serv[8];

	if (getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
		snprintf(out, size, "?");
		return;
	}
	snprintf(out, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		host, serv);
}

/*
 * The socket under SSL: a BIO of our own rather than OpenSSL's socket BIO,
 * whose write() raises SIGPIPE when the peer is gone.  A library must not
 * change the process's signal dispositions, and blocking SIGPIPE around
 * every SSL call costs syscalls and races with other threads' signals;
 * send(MSG_NOSIGNAL) is what the plain channel uses too.  The BIO's data is
 * the fd; it does not own it.
 */
static BIO_METHOD *sock_method;
static pthread_once_t sock_method_once = PTHREAD_ONCE_INIT;

static int
sock_bio_fd(BIO *b)
{
	return (int)(intptr_t)BIO_get_data(b);
}

static int
sock_bio_write(BIO *b, const char *buf, int len)
{
	ssize_t n;

	BIO_clear_retry_flags(b);
	do {
		n = send(sock_bio_fd(b), buf, (size_t)len, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		BIO_set_retry_write(b);
	return (int)n;
}

static int
sock_bio_read(BIO *b, char *buf, int len)
{
	ssize_t n;

	BIO_clear_retry_flags(b);
	do {
		n = recv(sock_bio_fd(b), buf, (size_t)len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		BIO_set_retry_read(b);
	else if (n == 0)	/* for BIO_eof(): an EOF is no error */
		BIO_set_flags(b, BIO_FLAGS_IN_EOF);
	return (int)n;
}

static long
sock_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;	/* send() keeps nothing back */
	case BIO_CTRL_EOF:
		return BIO_test_flags(b, BIO_FLAGS_IN_EOF) != 0;
	case BIO_C_GET_FD:
		if (ptr != NULL)
			*(int *)ptr = sock_bio_fd(b);
		return sock_bio_fd(b);
	default:
		return 0;
	}
}

static void
sock_method_init(void)
{
	int type = BIO_get_new_index();
	BIO_METHOD *m;

	if (type < 0)
		return;
	m = BIO_meth_new(type | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR,
		"ctl_chan socket");
	if (m == NULL)
		return;
	if (!BIO_meth_set_write(m, sock_bio_write) ||
	    !BIO_meth_set_read(m, sock_bio_read) ||
	    !BIO_meth_set_ctrl(m, sock_bio_ctrl)) {
		BIO_meth_free(m);
		return;
	}
	sock_method = m;	/* for the process's life */
}

static int
no_password(char *buf, int size, int rwflag, void *arg)
{
	(void)buf, (void)size, (void)rwflag, (void)arg;
	return 0;	/* never prompt on a terminal: an encrypted key fails */
}

int
ctl_tls_new(const char *ca_file, const char *cert_file, const char *key_file,
		int is_server, struct ctl_tls **tls_ptr, const char **why)
{
	struct ctl_tls *tls;
	SSL_CTX *ctx;
	char reason[WHY_SIZE];
	const char *unused;
	int ret = -EPROTO;

	if (why == NULL)
		why = &unused;
	*why = last_error;
	if (ca_file == NULL || cert_file == NULL || key_file == NULL ||
	    tls_ptr == NULL) {
		set_error("TLS: a NULL argument");
		return -EINVAL;
	}
	ERR_clear_error();
	ctx = SSL_CTX_new(is_server ? TLS_server_method() :
		TLS_client_method());
	if (ctx == NULL) {
		set_error("TLS: no context: %s", ssl_reason(reason,
			sizeof(reason)));
		return -ENOMEM;
	}
	SSL_CTX_set_default_passwd_cb(ctx, no_password);
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		set_error("TLS: cannot require TLS 1.3: %s",
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_load_verify_file(ctx, ca_file) != 1) {
		set_error("TLS: CA file %s: %s", ca_file,
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		set_error("TLS: certificate file %s: %s", cert_file,
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		set_error("TLS: key file %s: %s", key_file,
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		set_error("TLS: key file %s does not match %s: %s", key_file,
			cert_file, ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (is_server ?
		SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
	/* every connection is a full handshake that checks the peer */
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	/*
	 * In TLS 1.3 a client's handshake ends before the server has checked
	 * the client's certificate; the server's session ticket, sent once it
	 * has, is what ctl_connect() waits for (see tls_handshake()).
	 */
	if (is_server && !SSL_CTX_set_num_tickets(ctx, 1)) {
		set_error("TLS: cannot set tickets: %s",
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if ((tls = malloc(sizeof(*tls))) == NULL) {
		set_error("TLS: %s", strerror(ENOMEM));
		ret = -ENOMEM;
		goto fail;
	}
	tls->ctx = ctx;
	tls->is_server = is_server != 0;
	*tls_ptr = tls;
	*why = NULL;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return ret;
}

void
ctl_tls_delete(struct ctl_tls **tls_ptr)
{
	if (tls_ptr == NULL || *tls_ptr == NULL)
		return;
	/* listeners and channels hold references of their own */
	SSL_CTX_free((*tls_ptr)->ctx);
	free(*tls_ptr);
	*tls_ptr = NULL;
}

/* why an SSL call that returned ret failed (err: SSL_get_error()) */
static const char *
tls_why(int err, int saved_errno, char *buf, size_t size)
{
	switch (err) {
	case SSL_ERROR_ZERO_RETURN:
		return "the peer closed the connection";
	case SSL_ERROR_SYSCALL:
		if (saved_errno != 0)
			return strerror(saved_errno);
		ERR_clear_error();
		return "the connection ended";
	default:
		return ssl_reason(buf, size);
	}
}

/* the peer certificate's CN, printable ASCII only: it goes into logs */
static void
name_cert(SSL *ssl, char *out, size_t size)
{
	X509 *cert = SSL_get0_peer_certificate(ssl);
	int len = -1;

	if (cert != NULL)
		len = X509_NAME_get_text_by_NID(X509_get_subject_name(cert),
			NID_commonName, out, (int)size);
	if (len < 0) {
		snprintf(out, size, "?");
		return;
	}
	for (char *p = out; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

/*
 * The handshake on a new channel within the deadline: 0, -ETIMEDOUT or
 * -EPROTO, the reason in last_error.  A client also waits for the server's
 * verdict on its certificate: in TLS 1.3 it has finished once it sent its
 * Finished, before the server checked anything.  The server then sends a
 * session ticket, or an alert if it refuses us.  Application data could
 * come instead of a ticket: it is kept for ctl_chan_recv().
 */
static int
tls_handshake(struct ctl_chan *ch, int64_t deadline)
{
	bool server = SSL_is_server(ch->ssl), done = false;
	char reason[WHY_SIZE];
	int ret, err, saved;

	for (;;) {
		ERR_clear_error();
		errno = 0;
		if ((ret = SSL_do_handshake(ch->ssl)) == 1) {
			done = true;
			if (server || SSL_SESSION_has_ticket(
					SSL_get0_session(ch->ssl)))
				break;
			ret = SSL_read(ch->ssl, ch->rx + ch->have,
				(int)(sizeof(ch->rx) - ch->have));
			if (ret > 0) {
				ch->have += (size_t)ret;
				break;
			}
			/* the ticket came alone: no data, WANT_READ */
			if (SSL_SESSION_has_ticket(SSL_get0_session(ch->ssl)))
				break;
		}
		saved = errno;
		err = SSL_get_error(ch->ssl, ret);
		if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
			ret = wait_fd(ch->fd, err == SSL_ERROR_WANT_READ ?
				POLLIN : POLLOUT, deadline);
			if (ret > 0)
				continue;
			if (ret == 0) {
				set_error("TLS handshake with %s timed out",
					ch->peer);
				return -ETIMEDOUT;
			}
			set_error("TLS handshake with %s: poll: %s", ch->peer,
				strerror(-ret));
			return ret;
		}
		ch->tls_failed = true;
		tls_why(err, saved, reason, sizeof(reason));
		if (SSL_get_verify_result(ch->ssl) != X509_V_OK)
			set_error("TLS handshake with %s failed: %s (%s)",
				ch->peer, reason, X509_verify_cert_error_string(
				SSL_get_verify_result(ch->ssl)));
		else if (done)
			set_error("TLS handshake with %s failed: refused by "
				"the server after our certificate was sent: %s",
				ch->peer, reason);
		else
			set_error("TLS handshake with %s failed: %s", ch->peer,
				reason);
		return -EPROTO;
	}
	name_cert(ch->ssl, ch->peer_name, sizeof(ch->peer_name));
	return 0;
}

/* an SSL on the channel's socket, then the handshake */
static int
tls_start(struct ctl_chan *ch, SSL_CTX *ctx, int64_t deadline)
{
	char reason[WHY_SIZE];
	BIO *bio;

	pthread_once(&sock_method_once, sock_method_init);
	ERR_clear_error();
	if (sock_method == NULL || (ch->ssl = SSL_new(ctx)) == NULL ||
	    (bio = BIO_new(sock_method)) == NULL) {
		set_error("TLS with %s: cannot set up: %s", ch->peer,
			ssl_reason(reason, sizeof(reason)));
		return -ENOMEM;
	}
	BIO_set_data(bio, (void *)(intptr_t)ch->fd);
	BIO_set_init(bio, 1);
	SSL_set_bio(ch->ssl, bio, bio);	/* one reference, both ways */
	if (SSL_is_server(ch->ssl))
		SSL_set_accept_state(ch->ssl);
	else
		SSL_set_connect_state(ch->ssl);
	return tls_handshake(ch, deadline);
}

/* a refused peer's records still unread: read them (what has come, a
 * bounded amount) so that close() sends a FIN after our alert, not a reset
 * that could destroy the alert before the peer reads it */
static void
drain(int fd)
{
	char buf[1024];

	for (int i = 0; i < 64; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			break;
}

static void
chan_free(struct ctl_chan *ch)
{
	if (ch->ssl != NULL) {
		/* close_notify, best effort: never after a fatal error
		 * (OpenSSL forbids it), never waiting */
		if (!ch->tls_failed && SSL_is_init_finished(ch->ssl)) {
			ERR_clear_error();
			SSL_shutdown(ch->ssl);
			ERR_clear_error();
		}
		SSL_free(ch->ssl);
	}
	close(ch->fd);
	free(ch);
}

static int
chan_new(int fd, const struct sockaddr *sa, socklen_t salen, SSL_CTX *ctx,
		int64_t deadline, struct ctl_chan **ch_ptr)
{
	struct ctl_chan *ch;
	int one = 1, ret;

	/* small messages that are waited for: no Nagle delay */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
		ret = -errno;
		set_error("TCP_NODELAY: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	if ((ch = calloc(1, sizeof(*ch))) == NULL) {
		set_error("%s", strerror(ENOMEM));
		close(fd);
		return -ENOMEM;
	}
	ch->fd = fd;
	atomic_init(&ch->why, "no error");
	name_peer(sa, salen, ch->peer, sizeof(ch->peer));
	if (ctx != NULL && (ret = tls_start(ch, ctx, deadline)) != 0) {
		if (ret == -EPROTO)
			drain(fd);
		chan_free(ch);
		return ret;
	}
	*ch_ptr = ch;
	return 0;
}

int
ctl_listen(const char *addr, const char *port, struct ctl_tls *tls,
		struct ctl_listener **l_ptr)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE,
	};
	struct addrinfo *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	struct ctl_listener *l;
	int fd = -1, ret, one = 1;

	if (port == NULL || l_ptr == NULL || (tls != NULL && !tls->is_server)) {
		set_error("listen: %s", port == NULL || l_ptr == NULL ?
			"a NULL argument" : "a client TLS context");
		return -EINVAL;
	}
	if ((ret = getaddrinfo(addr, port, &hints, &res)) != 0) {
		set_error("listen on %s:%s: %s", addr ? addr : "*", port,
			gai_strerror(ret));
		return gai_errno(ret);
	}
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		/* a restarted node rebinds while old connections linger */
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				sizeof(one)) == 0 &&
		    bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, LISTEN_BACKLOG) == 0)
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		goto fail;
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
		ret = -errno;
		close(fd);
		goto fail;
	}
	if ((l = malloc(sizeof(*l))) == NULL) {
		close(fd);
		ret = -ENOMEM;
		goto fail;
	}
	l->fd = fd;
	l->ctx = NULL;
	if (tls != NULL && SSL_CTX_up_ref(tls->ctx))
		l->ctx = tls->ctx;
	else if (tls != NULL) {
		free(l);
		close(fd);
		ret = -ENOMEM;
		goto fail;
	}
	l->port = ntohs(ss.ss_family == AF_INET6 ?
		((struct sockaddr_in6 *)&ss)->sin6_port :
		((struct sockaddr_in *)&ss)->sin_port);
	*l_ptr = l;
	return 0;
fail:
	set_error("listen on %s:%s: %s", addr ? addr : "*", port,
		strerror(-ret));
	return ret;
}

int
ctl_listener_fd(const struct ctl_listener *l)
{
	return l->fd;
}

int
ctl_listener_port(const struct ctl_listener *l)
{
	return l->port;
}

int
ctl_accept(struct ctl_listener *l, int timeout_ms, struct ctl_chan **ch_ptr)
{
	int64_t deadline = deadline_of(timeout_ms);
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd, ret;

	if (l == NULL || ch_ptr == NULL) {
		set_error("accept: a NULL argument");
		return -EINVAL;
	}
	for (;;) {
		sslen = sizeof(ss);
		fd = accept4(l->fd, (struct sockaddr *)&ss, &sslen,
			SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			return chan_new(fd, (struct sockaddr *)&ss, sslen,
				l->ctx, deadline, ch_ptr);
		/* a connection that went away before accept(): wait again */
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED && errno != EPROTO) {
			ret = -errno;
			set_error("accept: %s", strerror(-ret));
			return ret;
		}
		if ((ret = wait_fd(l->fd, POLLIN, deadline)) <= 0) {
			ret = ret == 0 ? -ETIMEDOUT : ret;
			set_error("accept: %s", ret == -ETIMEDOUT ?
				"no connection within the timeout" :
				strerror(-ret));
			return ret;
		}
	}
}

void
ctl_listener_close(struct ctl_listener **l_ptr)
{
	if (l_ptr == NULL || *l_ptr == NULL)
		return;
	close((*l_ptr)->fd);
	SSL_CTX_free((*l_ptr)->ctx);
	free(*l_ptr);
	*l_ptr = NULL;
}

/* one address: 0 and *fd_out connected, or -errno */
static int
connect_one(const struct addrinfo *ai, int64_t deadline, int *fd_out)
{
	int fd, ret, err = 0;
	socklen_t errlen = sizeof(err);

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EINPROGRESS && errno != EINTR) {
			ret = -errno;
			goto fail;
		}
		if ((ret = wait_fd(fd, POLLOUT, deadline)) <= 0) {
			ret = ret == 0 ? -ETIMEDOUT : ret;
			goto fail;
		}
		/* writable means the attempt ended; SO_ERROR says how */
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) != 0) {
			ret = -errno;
			goto fail;
		}
		if (err != 0) {
			ret = -err;
			goto fail;
		}
	}
	*fd_out = fd;
	return 0;
fail:
	close(fd);
	return ret;
}

int
ctl_connect(const char *host, const char *port, int timeout_ms,
		struct ctl_tls *tls, struct ctl_chan **ch_ptr)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	int64_t deadline = deadline_of(timeout_ms);
	struct addrinfo *res, *ai;
	int fd = -1, ret;

	if (host == NULL || port == NULL || ch_ptr == NULL ||
	    (tls != NULL && tls->is_server)) {
		set_error("connect: %s", tls != NULL && tls->is_server ?
			"a server TLS context" : "a NULL argument");
		return -EINVAL;
	}
	if ((ret = getaddrinfo(host, port, &hints, &res)) != 0) {
		set_error("connect to %s:%s: %s", host, port,
			gai_strerror(ret));
		return gai_errno(ret);
	}
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((ret = connect_one(ai, deadline, &fd)) == 0) {
			/* its own failures (the handshake's) say why */
			ret = chan_new(fd, ai->ai_addr, ai->ai_addrlen,
				tls ? tls->ctx : NULL, deadline, ch_ptr);
			goto out;
		}
		if (ret == -ETIMEDOUT)
			break;	/* the time is spent for every address */
	}
	set_error("connect to %s:%s: %s", host, port, strerror(-ret));
out:
	freeaddrinfo(res);
	return ret;
}

/*
 * One whole frame through SSL_write(), which a WANT_* must repeat with the
 * same bytes: every failure, a timeout too, is final.
 */
static int
tls_send(struct ctl_chan *ch, const uint8_t *buf, int len, int64_t deadline)
{
	char reason[WHY_SIZE];
	int n, err, saved, ret;

	for (;;) {
		ERR_clear_error();
		errno = 0;
		/* no partial writes (SSL_MODE_ENABLE_PARTIAL_WRITE is off) */
		if ((n = SSL_write(ch->ssl, buf, len)) > 0)
			return 0;
		saved = errno;
		err = SSL_get_error(ch->ssl, n);
		if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
			ret = wait_fd(ch->fd, err == SSL_ERROR_WANT_WRITE ?
				POLLOUT : POLLIN, deadline);
			if (ret > 0)
				continue;
			snprintf(ch->tx_why, sizeof(ch->tx_why), "send: %s",
				ret == 0 ? "timed out" : strerror(-ret));
			ret = CTL_CHAN_ERROR;
		} else if (err == SSL_ERROR_ZERO_RETURN ||
		    (err == SSL_ERROR_SYSCALL && (saved == EPIPE ||
		    saved == ECONNRESET || saved == 0))) {
			ch->tls_failed = err == SSL_ERROR_SYSCALL;
			ERR_clear_error();
			snprintf(ch->tx_why, sizeof(ch->tx_why),
				"send: the peer closed the connection");
			ret = CTL_CHAN_CLOSED;
		} else {
			ch->tls_failed = true;
			snprintf(ch->tx_why, sizeof(ch->tx_why), "send: %s%s",
				err == SSL_ERROR_SSL ? "TLS: " : "",
				tls_why(err, saved, reason, sizeof(reason)));
			ret = CTL_CHAN_ERROR;
		}
		ch->tx_final = ret;
		atomic_store(&ch->why, ch->tx_why);
		return ret;
	}
}

int
ctl_chan_send(struct ctl_chan *ch, const struct ctl_msg *m, int timeout_ms)
{
	int64_t deadline = deadline_of(timeout_ms);
	uint8_t buf[CTL_FRAME_MAX];
	const char *why;
	size_t off = 0;
	bool timed_out = false;
	ssize_t n;
	int len, ret;

	if (ch->tx_final) {
		atomic_store(&ch->why, ch->tx_why);
		return ch->tx_final;
	}
	if ((len = ctl_msg_encode(m, buf, sizeof(buf))) < 0) {
		if (ctl_msg_check(m, &why) == 0)
			why = "cannot be encoded";
		snprintf(ch->tx_why, sizeof(ch->tx_why), "send: %s", why);
		atomic_store(&ch->why, ch->tx_why);
		return CTL_CHAN_ERROR;
	}
	if (ch->ssl != NULL)
		return tls_send(ch, buf, len, deadline);
	while (off < (size_t)len) {
		n = send(ch->fd, buf + off, (size_t)len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((ret = wait_fd(ch->fd, POLLOUT, deadline)) > 0)
				continue;
			timed_out = ret == 0;
			snprintf(ch->tx_why, sizeof(ch->tx_why), "send: %s",
				ret == 0 ? "timed out" : strerror(-ret));
			ret = CTL_CHAN_ERROR;
		} else if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
			snprintf(ch->tx_why, sizeof(ch->tx_why),
				"send: the peer closed the connection");
			ret = CTL_CHAN_CLOSED;
		} else {
			snprintf(ch->tx_why, sizeof(ch->tx_why), "send: %s",
				n < 0 ? strerror(errno) : "no progress");
			ret = CTL_CHAN_ERROR;
		}
		/*
		 * Only a timeout before the first byte leaves the stream in
		 * step; after anything else no send can succeed.
		 */
		if (!(timed_out && off == 0))
			ch->tx_final = ret;
		atomic_store(&ch->why, ch->tx_why);
		return ret;
	}
	return 0;
}

/* a final result of the receiver, with its reason */
static int
rx_fail(struct ctl_chan *ch, int ret, const char *what, const char *detail)
{
	snprintf(ch->rx_why, sizeof(ch->rx_why), "%s%s", what, detail);
	ch->rx_final = ret;
	atomic_store(&ch->why, ch->rx_why);
	return ret;
}

/* the end of the stream: CLOSED between frames, ERROR within one */
static int
rx_closed(struct ctl_chan *ch, const char *detail)
{
	if (ch->have > 0)
		return rx_fail(ch, CTL_CHAN_ERROR,
			"connection closed mid-frame", "");
	return rx_fail(ch, CTL_CHAN_CLOSED, "", detail);
}

/*
 * More bytes through SSL_read(): 0 when some came, CTL_CHAN_AGAIN when the
 * deadline passed first, or a final result.  SSL_read() is tried before
 * any poll(): decrypted bytes OpenSSL holds do not show on the fd.
 */
static int
tls_fill(struct ctl_chan *ch, int64_t deadline)
{
	char reason[WHY_SIZE];
	int n, err, saved, ret;

	for (;;) {
		ERR_clear_error();
		errno = 0;
		n = SSL_read(ch->ssl, ch->rx + ch->have,
			(int)(sizeof(ch->rx) - ch->have));
		if (n > 0) {
			ch->have += (size_t)n;
			return 0;
		}
		saved = errno;
		switch ((err = SSL_get_error(ch->ssl, n))) {
		case SSL_ERROR_WANT_READ:
		case SSL_ERROR_WANT_WRITE:	/* e.g. answering a KeyUpdate */
			ret = wait_fd(ch->fd, err == SSL_ERROR_WANT_READ ?
				POLLIN : POLLOUT, deadline);
			if (ret < 0)
				return rx_fail(ch, CTL_CHAN_ERROR, "poll: ",
					strerror(-ret));
			if (ret == 0)
				return CTL_CHAN_AGAIN;
			continue;
		case SSL_ERROR_ZERO_RETURN:	/* close_notify */
			return rx_closed(ch, "the peer closed the connection");
		case SSL_ERROR_SYSCALL:
			ch->tls_failed = true;
			ERR_clear_error();
			if (saved == 0)
				return rx_closed(ch, "the peer closed the "
					"connection without close_notify");
			if (saved == ECONNRESET)
				return rx_closed(ch, "the peer reset the "
					"connection");
			return rx_fail(ch, CTL_CHAN_ERROR, "recv: ",
				strerror(saved));
		default:
			ch->tls_failed = true;
			/* a peer that died between frames, as over TCP */
			if (ERR_GET_REASON(ERR_peek_error()) ==
			    SSL_R_UNEXPECTED_EOF_WHILE_READING) {
				ERR_clear_error();
				return rx_closed(ch, "the peer closed the "
					"connection without close_notify");
			}
			return rx_fail(ch, CTL_CHAN_ERROR, "TLS: ",
				tls_why(err, saved, reason, sizeof(reason)));
		}
	}
}

int
ctl_chan_recv(struct ctl_chan *ch, struct ctl_msg *m, int timeout_ms)
{
	int64_t deadline = deadline_of(timeout_ms);
	const char *why;
	ssize_t n;
	int flen, ret;

	if (ch->rx_final) {
		atomic_store(&ch->why, ch->rx_why);
		return ch->rx_final;
	}
	for (;;) {
		if (ch->have >= CTL_HDR_SIZE) {
			if ((flen = ctl_msg_frame_len(ch->rx, &why)) < 0)
				return rx_fail(ch, CTL_CHAN_ERROR,
					"bad frame header: ", why);
			if (ch->have >= (size_t)flen) {
				if (ctl_msg_decode(ch->rx, (size_t)flen, m,
						&why) != 0)
					return rx_fail(ch, CTL_CHAN_ERROR,
						"bad message: ", why);
				ch->have -= (size_t)flen;
				memmove(ch->rx, ch->rx + flen, ch->have);
				return 0;
			}
		}
		/* have < one frame <= CTL_FRAME_MAX: there is room */
		if (ch->ssl != NULL) {
			if ((ret = tls_fill(ch, deadline)) != 0)
				return ret;
			continue;
		}
		n = recv(ch->fd, ch->rx + ch->have, sizeof(ch->rx) - ch->have, 0);
		if (n > 0) {
			ch->have += (size_t)n;
			continue;
		}
		if (n == 0 || errno == ECONNRESET)
			return rx_closed(ch, n == 0 ?
				"the peer closed the connection" :
				"the peer reset the connection");
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return rx_fail(ch, CTL_CHAN_ERROR, "recv: ",
				strerror(errno));
		if ((ret = wait_fd(ch->fd, POLLIN, deadline)) < 0)
			return rx_fail(ch, CTL_CHAN_ERROR, "poll: ",
				strerror(-ret));
		if (ret == 0)
			return CTL_CHAN_AGAIN;
	}
}

int
ctl_chan_fd(const struct ctl_chan *ch)
{
	return ch->fd;
}

const char *
ctl_chan_peer(const struct ctl_chan *ch)
{
	return ch->peer;
}

const char *
ctl_chan_peer_name(const struct ctl_chan *ch)
{
	return ch->peer_name;
}

const char *
ctl_chan_why(const struct ctl_chan *ch)
{
	return atomic_load(&ch->why);
}

void
ctl_chan_close(struct ctl_chan **ch_ptr)
{
	if (ch_ptr == NULL || *ch_ptr == NULL)
		return;
	chan_free(*ch_ptr);
	*ch_ptr = NULL;
}

int
ctl_chan_admission_token(const struct ctl_chan *ch, uint8_t token[CTL_TOKEN_SIZE])
{
	static const char label[] = "EXPORTER-rpma-repl data admission";

	if (ch == NULL || token == NULL || ch->ssl == NULL)
		return -EINVAL;
	/* RFC 8446 7.5: a secret both ends of this TLS session share, nobody else */
	if (SSL_export_keying_material(ch->ssl, token, CTL_TOKEN_SIZE, label,
			sizeof(label) - 1, NULL, 0, 0) != 1)
		return -EPROTO;
	return 0;
}
