/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_chan.c -- the control channel over TCP: framed ctl_msg messages,
 * optionally inside TLS 1.3 (OpenSSL 3) with mutual authentication, whose
 * layer is ctl_tls.c.
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
#include <arpa/inet.h>
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

#include "common/clock.h"
#include "common/fault.h"
#include "ctl/ctl_chan.h"

#include "ctl/ctl_stream.h"

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
	ch->ops->close(ch);
	close(ch->fd);
	free(ch);
}

static int
chan_new(int fd, const struct sockaddr *sa, socklen_t salen, SSL_CTX *ctx,
		bool handshake, int64_t deadline, struct ctl_chan **ch_ptr)
{
	struct ctl_chan *ch;
	int one = 1, ret;

	/* small messages that are waited for: no Nagle delay */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
		ret = -errno;
		ctl_set_error("TCP_NODELAY: %s", strerror(-ret));
		close(fd);
		return ret;
	}
	if (REPL_FAULTED() || (ch = calloc(1, sizeof(*ch))) == NULL) {
		ctl_set_error("%s", strerror(ENOMEM));
		close(fd);
		return -ENOMEM;
	}
	ch->fd = fd;
	ch->ops = &ctl_tcp_stream;
	atomic_init(&ch->why, "no error");
	name_peer(sa, salen, ch->peer, sizeof(ch->peer));
	if (ctx != NULL &&
	    (ret = ctl_tls_start(ch, ctx, handshake, deadline)) != 0) {
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
		ctl_set_error("listen: %s", port == NULL || l_ptr == NULL ?
			"a NULL argument" : "a client TLS context");
		return -EINVAL;
	}
	REPL_FAULT(-ENOMEM, ctl_set_error("listen on %s:%s: %s", addr ? addr :
		"*", port, gai_strerror(EAI_MEMORY)));
	if ((ret = getaddrinfo(addr, port, &hints, &res)) != 0) {
		ctl_set_error("listen on %s:%s: %s", addr ? addr : "*", port,
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
	if (REPL_FAULTED() || (l = malloc(sizeof(*l))) == NULL) {
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
	ctl_set_error("listen on %s:%s: %s", addr ? addr : "*", port,
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

/* accept(), waiting up to the deadline; the handshake only with handshake */
static int
accept_one(struct ctl_listener *l, bool handshake, int64_t deadline,
		struct ctl_chan **ch_ptr)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd, ret;

	if (l == NULL || ch_ptr == NULL) {
		ctl_set_error("accept: a NULL argument");
		return -EINVAL;
	}
	for (;;) {
		REPL_FAULT(-EMFILE, ctl_set_error("accept: %s", strerror(EMFILE)));
		sslen = sizeof(ss);
		fd = accept4(l->fd, (struct sockaddr *)&ss, &sslen,
			SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0)
			return chan_new(fd, (struct sockaddr *)&ss, sslen,
				l->ctx, handshake, deadline, ch_ptr);
		/* a connection that went away before accept(): wait again */
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED && errno != EPROTO) {
			ret = -errno;
			ctl_set_error("accept: %s", strerror(-ret));
			return ret;
		}
		if ((ret = ctl_wait_fd(l->fd, POLLIN, deadline)) <= 0) {
			ret = ret == 0 ? -ETIMEDOUT : ret;
			ctl_set_error("accept: %s", ret == -ETIMEDOUT ?
				"no connection within the timeout" :
				strerror(-ret));
			return ret;
		}
	}
}

int
ctl_accept(struct ctl_listener *l, int timeout_ms, struct ctl_chan **ch_ptr)
{
	return accept_one(l, true, ctl_deadline_of(timeout_ms), ch_ptr);
}

int
ctl_accept_start(struct ctl_listener *l, struct ctl_chan **ch_ptr)
{
	int ret = accept_one(l, false, ctl_deadline_of(0), ch_ptr);

	return ret == -ETIMEDOUT ? -EAGAIN : ret;
}

int
ctl_chan_handshake(struct ctl_chan *ch, int timeout_ms)
{
	int ret;

	if (ch->ssl == NULL || SSL_is_init_finished(ch->ssl))
		return 0;
	if (ch->tls_failed)
		return -EPROTO;
	/* a timeout leaves OpenSSL's state as it was: the next call goes on */
	if ((ret = ctl_tls_handshake(ch, ctl_deadline_of(timeout_ms))) == -ETIMEDOUT)
		return CTL_CHAN_AGAIN;
	if (ret == -EPROTO)
		drain(ch->fd);
	return ret;
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

/*
 * The address a connection to family leaves from: src when it is one
 * numeric address of that family and no wildcard; false otherwise.
 */
static bool
source_of(const char *src, int family, struct sockaddr_storage *ss,
		socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	if (src == NULL)
		return false;
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET && inet_pton(AF_INET, src, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		*len = sizeof(*in);
		return in->sin_addr.s_addr != htonl(INADDR_ANY);
	}
	if (family == AF_INET6 && inet_pton(AF_INET6, src, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		*len = sizeof(*in6);
		return !IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr);
	}
	return false;
}

/* one address: 0 and *fd_out connected, or -errno */
static int
connect_one(const struct addrinfo *ai, const char *src, int64_t deadline,
		int *fd_out)
{
	struct sockaddr_storage from;
	socklen_t fromlen = 0;
	int fd, ret, err = 0, one = 1;
	socklen_t errlen = sizeof(err);

	REPL_FAULT(-EMFILE, {});
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (source_of(src, ai->ai_family, &from, &fromlen)) {
#ifdef IP_BIND_ADDRESS_NO_PORT
		/* the port is picked at connect(), per destination: a node
		 * that connects often does not run out of ports */
		(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			sizeof(one));
#else
		(void)one;
#endif
		if (bind(fd, (struct sockaddr *)&from, fromlen) != 0) {
			ret = -errno;
			goto fail;
		}
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EINPROGRESS && errno != EINTR) {
			ret = -errno;
			goto fail;
		}
		if ((ret = ctl_wait_fd(fd, POLLOUT, deadline)) <= 0) {
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
	return ctl_connect_from(host, port, NULL, timeout_ms, tls, ch_ptr);
}

int
ctl_connect_from(const char *host, const char *port, const char *src,
		int timeout_ms, struct ctl_tls *tls, struct ctl_chan **ch_ptr)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	int64_t deadline = ctl_deadline_of(timeout_ms);
	struct addrinfo *res, *ai;
	int fd = -1, ret;

	if (host == NULL || port == NULL || ch_ptr == NULL ||
	    (tls != NULL && tls->is_server)) {
		ctl_set_error("connect: %s", tls != NULL && tls->is_server ?
			"a server TLS context" : "a NULL argument");
		return -EINVAL;
	}
	REPL_FAULT(-ENOMEM, ctl_set_error("connect to %s:%s: %s", host, port,
		gai_strerror(EAI_MEMORY)));
	if ((ret = getaddrinfo(host, port, &hints, &res)) != 0) {
		ctl_set_error("connect to %s:%s: %s", host, port,
			gai_strerror(ret));
		return gai_errno(ret);
	}
	ret = -EADDRNOTAVAIL;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if ((ret = connect_one(ai, src, deadline, &fd)) == 0) {
			/* its own failures (the handshake's) say why */
			ret = chan_new(fd, ai->ai_addr, ai->ai_addrlen,
				tls ? tls->ctx : NULL, true, deadline, ch_ptr);
			goto out;
		}
		if (ret == -ETIMEDOUT)
			break;	/* the time is spent for every address */
	}
	if (src != NULL && ret == -EADDRNOTAVAIL)
		ctl_set_error("connect to %s:%s from %s: %s", host, port, src,
			strerror(-ret));
	else
		ctl_set_error("connect to %s:%s: %s", host, port, strerror(-ret));
out:
	freeaddrinfo(res);
	return ret;
}

int
ctl_chan_send(struct ctl_chan *ch, const struct ctl_msg *m, int timeout_ms)
{
	int64_t deadline = ctl_deadline_of(timeout_ms);
	uint8_t buf[CTL_FRAME_MAX];
	const char *why;
	int len;

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
	return ch->ops->send(ch, buf, len, deadline);
}

/* a whole frame into m, or with m NULL only into the buffer (peek) */
static int
chan_rx(struct ctl_chan *ch, struct ctl_msg *m, int timeout_ms)
{
	int64_t deadline = ctl_deadline_of(timeout_ms);
	const char *why;
	int flen, ret;

	if (ch->rx_final) {
		atomic_store(&ch->why, ch->rx_why);
		return ch->rx_final;
	}
	for (;;) {
		if (ch->have >= CTL_HDR_SIZE) {
			if ((flen = ctl_msg_frame_len(ch->rx, &why)) < 0)
				return ctl_rx_fail(ch, CTL_CHAN_ERROR,
					"bad frame header: ", why);
			if (ch->have >= (size_t)flen) {
				if (m == NULL)
					return 0;
				if (ctl_msg_decode(ch->rx, (size_t)flen, m,
						&why) != 0)
					return ctl_rx_fail(ch, CTL_CHAN_ERROR,
						"bad message: ", why);
				ch->have -= (size_t)flen;
				memmove(ch->rx, ch->rx + flen, ch->have);
				return 0;
			}
		}
		/* have < one frame <= CTL_FRAME_MAX: there is room */
		if ((ret = ch->ops->fill(ch, deadline)) != 0)
			return ret;
	}
}

int
ctl_chan_recv(struct ctl_chan *ch, struct ctl_msg *m, int timeout_ms)
{
	if (m == NULL) {
		snprintf(ch->rx_why, sizeof(ch->rx_why), "recv: no message to fill");
		atomic_store(&ch->why, ch->rx_why);
		return CTL_CHAN_ERROR;
	}
	return chan_rx(ch, m, timeout_ms);
}

int
ctl_chan_ready(struct ctl_chan *ch)
{
	return chan_rx(ch, NULL, 0);
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
