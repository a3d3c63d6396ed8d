/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_tls.c -- the control channel's TLS layer (OpenSSL 3, TLS 1.3 only,
 * mutual authentication): contexts, the socket BIO, the bounded handshake,
 * whole frames through SSL_write() and bytes through SSL_read(), and the
 * admission token exported from a session.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "common/fault.h"
#include "ctl/ctl_stream.h"

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

/*
 * OpenSSL's reason for a file that did not load: a file that holds no PEM
 * block of the kind asked for (garbage, DER, another kind of PEM) says
 * "no start line", "no certificate or crl found" or, for a key, that its
 * decoders found nothing they support: none names the file's problem to
 * an operator.
 */
static const char *
file_reason(const char *what, char *buf, size_t size)
{
	unsigned long e = ERR_peek_error();

	if (e != 0 && !ERR_SYSTEM_ERROR(e) &&
	    ((ERR_GET_LIB(e) == ERR_LIB_PEM &&
	      ERR_GET_REASON(e) == PEM_R_NO_START_LINE) ||
	     (ERR_GET_LIB(e) == ERR_LIB_X509 &&
	      ERR_GET_REASON(e) == X509_R_NO_CERTIFICATE_OR_CRL_FOUND) ||
	     ERR_GET_REASON(e) == ERR_R_UNSUPPORTED)) {
		ERR_clear_error();
		snprintf(buf, size, "no %s or not PEM", what);
		return buf;
	}
	return ssl_reason(buf, size);
}

/*
 * Our own certificate as a peer will check it: against the CA file, with
 * the chain that followed it in the certificate file, at the present
 * time.  A certificate of another CA, an expired one or one not valid yet
 * would load, and fail every handshake later with a message on the peer.
 */
static int
verify_own(SSL_CTX *ctx, const char *ca_file, const char *cert_file)
{
	X509 *cert = SSL_CTX_get0_certificate(ctx);
	STACK_OF(X509) *chain = NULL;
	X509_STORE_CTX *vctx;
	int ok, err;

	if (cert == NULL) {
		ctl_set_error("TLS: certificate file %s: no certificate or not PEM",
			cert_file);
		return -1;
	}
	(void)SSL_CTX_get0_chain_certs(ctx, &chain);
	if ((vctx = X509_STORE_CTX_new()) == NULL ||
	    X509_STORE_CTX_init(vctx, SSL_CTX_get_cert_store(ctx), cert,
			chain) != 1) {
		X509_STORE_CTX_free(vctx);
		ERR_clear_error();
		ctl_set_error("TLS: cannot verify certificate %s: %s", cert_file,
			strerror(ENOMEM));
		return -1;
	}
	ok = X509_verify_cert(vctx) == 1;
	err = X509_STORE_CTX_get_error(vctx);
	X509_STORE_CTX_free(vctx);
	ERR_clear_error();
	if (ok)
		return 0;
	switch (err) {
	case X509_V_ERR_CERT_HAS_EXPIRED:
		ctl_set_error("TLS: certificate %s has expired", cert_file);
		break;
	case X509_V_ERR_CERT_NOT_YET_VALID:
		ctl_set_error("TLS: certificate %s is not valid yet", cert_file);
		break;
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
	case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
	case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
	case X509_V_ERR_CERT_SIGNATURE_FAILURE:
	case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
	case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
		ctl_set_error("TLS: certificate %s is not signed by CA file %s",
			cert_file, ca_file);
		break;
	default:
		ctl_set_error("TLS: certificate %s does not verify against CA "
			"file %s: %s", cert_file, ca_file,
			X509_verify_cert_error_string(err));
		break;
	}
	return -1;
}

static int
tls_new(const char *ca_file, const char *cert_file, const char *key_file,
		int is_server, struct ctl_tls **tls_ptr)
{
	struct ctl_tls *tls;
	SSL_CTX *ctx;
	char reason[WHY_SIZE];
	int ret = -EPROTO;

	if (ca_file == NULL || cert_file == NULL || key_file == NULL ||
	    tls_ptr == NULL) {
		ctl_set_error("TLS: a NULL argument");
		return -EINVAL;
	}
	ERR_clear_error();
	REPL_FAULT(-ENOMEM, ctl_set_error("TLS: no context: %s", strerror(ENOMEM)));
	ctx = SSL_CTX_new(is_server ? TLS_server_method() :
		TLS_client_method());
	if (ctx == NULL) {
		ctl_set_error("TLS: no context: %s", ssl_reason(reason,
			sizeof(reason)));
		return -ENOMEM;
	}
	SSL_CTX_set_default_passwd_cb(ctx, no_password);
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)) {
		ctl_set_error("TLS: cannot require TLS 1.3: %s",
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_load_verify_file(ctx, ca_file) != 1) {
		ctl_set_error("TLS: CA file %s: %s", ca_file,
			file_reason("certificate", reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		ctl_set_error("TLS: certificate file %s: %s", cert_file,
			file_reason("certificate", reason, sizeof(reason)));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		/* a key that is not the certificate's fails here already */
		unsigned long e = ERR_peek_error();

		if (e != 0 && ERR_GET_LIB(e) == ERR_LIB_X509 &&
		    (ERR_GET_REASON(e) == X509_R_KEY_TYPE_MISMATCH ||
		     ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH)) {
			ERR_clear_error();
			ctl_set_error("TLS: key file %s does not match certificate "
				"%s", key_file, cert_file);
		} else {
			ctl_set_error("TLS: key file %s: %s", key_file,
				file_reason("private key", reason, sizeof(reason)));
		}
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ERR_clear_error();
		ctl_set_error("TLS: key file %s does not match certificate %s",
			key_file, cert_file);
		goto fail;
	}
	if (verify_own(ctx, ca_file, cert_file) != 0)
		goto fail;
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
		ctl_set_error("TLS: cannot set tickets: %s",
			ssl_reason(reason, sizeof(reason)));
		goto fail;
	}
	if (REPL_FAULTED() || (tls = malloc(sizeof(*tls))) == NULL) {
		ctl_set_error("TLS: %s", strerror(ENOMEM));
		ret = -ENOMEM;
		goto fail;
	}
	tls->ctx = ctx;
	tls->is_server = is_server != 0;
	*tls_ptr = tls;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return ret;
}

int
ctl_tls_new(const char *ca_file, const char *cert_file, const char *key_file,
		int is_server, struct ctl_tls **tls_ptr, const char **why)
{
	int ret = tls_new(ca_file, cert_file, key_file, is_server, tls_ptr);

	/* taken after the failure: before it, it may be "no error" */
	if (why != NULL)
		*why = ret ? ctl_last_error() : NULL;
	return ret;
}

int
ctl_tls_check(const char *ca_file, const char *cert_file, const char *key_file,
		const char **why)
{
	struct ctl_tls *tls = NULL;
	int ret = ctl_tls_new(ca_file, cert_file, key_file, 0, &tls, why);

	ctl_tls_delete(&tls);
	return ret;
}

int
ctl_tls_share(struct ctl_tls *tls, struct ctl_tls **copy_ptr)
{
	struct ctl_tls *copy;

	if (tls == NULL || copy_ptr == NULL) {
		ctl_set_error("TLS: a NULL argument");
		return -EINVAL;
	}
	if (REPL_FAULTED() || (copy = malloc(sizeof(*copy))) == NULL) {
		ctl_set_error("TLS: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if (!SSL_CTX_up_ref(tls->ctx)) {
		free(copy);
		ctl_set_error("TLS: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	*copy = *tls;
	*copy_ptr = copy;
	return 0;
}

void
ctl_tls_thread_end(void)
{
	OPENSSL_thread_stop();
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
 * -EPROTO, the reason in ctl_last_error().  A client also waits for the server's
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
			ret = ctl_wait_fd(ch->fd, err == SSL_ERROR_WANT_READ ?
				POLLIN : POLLOUT, deadline);
			if (ret > 0)
				continue;
			if (ret == 0) {
				ctl_set_error("TLS handshake with %s timed out",
					ch->peer);
				return -ETIMEDOUT;
			}
			ctl_set_error("TLS handshake with %s: poll: %s", ch->peer,
				strerror(-ret));
			return ret;
		}
		ch->tls_failed = true;
		{
			/* a constant string, or what it wrote into reason */
			const char *why = tls_why(err, saved, reason, sizeof(reason));

			if (why != reason)
				snprintf(reason, sizeof(reason), "%s", why);
		}
		if (SSL_get_verify_result(ch->ssl) != X509_V_OK)
			ctl_set_error("TLS handshake with %s failed: %s (%s)",
				ch->peer, reason, X509_verify_cert_error_string(
				SSL_get_verify_result(ch->ssl)));
		else if (done)
			ctl_set_error("TLS handshake with %s failed: refused by "
				"the server after our certificate was sent: %s",
				ch->peer, reason);
		else
			ctl_set_error("TLS handshake with %s failed: %s", ch->peer,
				reason);
		return -EPROTO;
	}
	name_cert(ch->ssl, ch->peer_name, sizeof(ch->peer_name));
	return 0;
}

int
ctl_tls_handshake(struct ctl_chan *ch, int64_t deadline)
{
	return tls_handshake(ch, deadline);
}

/* an SSL on the channel's socket, then (with handshake) the handshake */
int
ctl_tls_start(struct ctl_chan *ch, SSL_CTX *ctx, bool handshake,
		int64_t deadline)
{
	char reason[WHY_SIZE];
	BIO *bio;

	pthread_once(&sock_method_once, sock_method_init);
	ERR_clear_error();
	/* the stream is TLS from here on: its close frees what was made */
	ch->ops = &ctl_tls_stream;
	if (REPL_FAULTED() ||
	    sock_method == NULL || (ch->ssl = SSL_new(ctx)) == NULL ||
	    (bio = BIO_new(sock_method)) == NULL) {
		ctl_set_error("TLS with %s: cannot set up: %s", ch->peer,
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
	return handshake ? tls_handshake(ch, deadline) : 0;
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
			ret = ctl_wait_fd(ch->fd, err == SSL_ERROR_WANT_WRITE ?
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
			ret = ctl_wait_fd(ch->fd, err == SSL_ERROR_WANT_READ ?
				POLLIN : POLLOUT, deadline);
			if (ret < 0)
				return ctl_rx_fail(ch, CTL_CHAN_ERROR, "poll: ",
					strerror(-ret));
			if (ret == 0)
				return CTL_CHAN_AGAIN;
			continue;
		case SSL_ERROR_ZERO_RETURN:	/* close_notify */
			return ctl_rx_closed(ch, "the peer closed the connection");
		case SSL_ERROR_SYSCALL:
			ch->tls_failed = true;
			ERR_clear_error();
			if (saved == 0)
				return ctl_rx_closed(ch, "the peer closed the "
					"connection without close_notify");
			if (saved == ECONNRESET)
				return ctl_rx_closed(ch, "the peer reset the "
					"connection");
			return ctl_rx_fail(ch, CTL_CHAN_ERROR, "recv: ",
				strerror(saved));
		default:
			ch->tls_failed = true;
			/* a peer that died between frames, as over TCP */
			if (ERR_GET_REASON(ERR_peek_error()) ==
			    SSL_R_UNEXPECTED_EOF_WHILE_READING) {
				ERR_clear_error();
				return ctl_rx_closed(ch, "the peer closed the "
					"connection without close_notify");
			}
			return ctl_rx_fail(ch, CTL_CHAN_ERROR, "TLS: ",
				tls_why(err, saved, reason, sizeof(reason)));
		}
	}
}

/* close_notify, best effort: never after a fatal error (OpenSSL forbids
 * it), never waiting */
static void
tls_close(struct ctl_chan *ch)
{
	if (ch->ssl == NULL)
		return;
	if (!ch->tls_failed && SSL_is_init_finished(ch->ssl)) {
		ERR_clear_error();
		SSL_shutdown(ch->ssl);
		ERR_clear_error();
	}
	SSL_free(ch->ssl);
	ch->ssl = NULL;
}

const struct ctl_stream_ops ctl_tls_stream = {
	.name = "tls",
	.send = tls_send,
	.fill = tls_fill,
	.close = tls_close,
};

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
