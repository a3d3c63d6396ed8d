/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_chan.h -- the control channel: framed ctl_msg messages over a TCP
 * connection, optionally inside TLS 1.3 with mutual certificate
 * authentication.  Sends are whole frames (blocking, bounded by a
 * timeout); receives accumulate partial frames, so a caller polling the
 * channel's fd together with other fds never blocks on a half-arrived
 * message.  After a message, call ctl_chan_recv() again until it returns
 * CTL_CHAN_AGAIN before polling the fd: bytes already read from the socket
 * (with TLS, also records OpenSSL has decrypted) do not make it readable.
 */
#ifndef REPL_CTL_CHAN_H
#define REPL_CTL_CHAN_H

#include "ctl/ctl_msg.h"

#define CTL_CHAN_AGAIN	1	/* ctl_chan_recv: no whole frame yet */
#define CTL_CHAN_CLOSED	(-1)	/* the peer closed the connection */
#define CTL_CHAN_ERROR	(-2)	/* I/O error, timeout or a malformed frame */

struct ctl_chan;
struct ctl_listener;

/*
 * TLS: an SSL_CTX with our certificate and key, and the CA that must have
 * signed the peer's.  Both sides present a certificate and verify the
 * other's; only TLS 1.3 is spoken.  One context serves any number of
 * listeners and channels, and may be deleted while they live (they hold a
 * reference to it).
 */
struct ctl_tls;

/*
 * Load ca_file (PEM, the CA certificates to trust), cert_file (PEM, our
 * certificate, optionally followed by its chain) and key_file (PEM, its
 * private key), and verify our certificate against ca_file now, as a peer
 * would.  is_server: for ctl_listen(), else for ctl_connect().
 * Returns 0, or a negative errno value (-EINVAL for NULL arguments, -ENOMEM,
 * -EPROTO for a file that cannot be loaded, a key that does not match, or
 * a certificate that does not verify) with *why (unless why is NULL), a
 * thread-local string that is also ctl_last_error(), naming the file and
 * the reason:
 *   "TLS: certificate file C: no certificate or not PEM" (likewise "CA
 *   file A: ...", "key file K: no private key or not PEM"; a missing file:
 *   strerror()), "TLS: key file K does not match certificate C",
 *   "TLS: certificate C is not signed by CA file A",
 *   "TLS: certificate C has expired", "TLS: certificate C is not valid yet".
 * A key file that is encrypted fails: there is no prompt.
 */
int ctl_tls_new(const char *ca_file, const char *cert_file,
		const char *key_file, int is_server, struct ctl_tls **tls_ptr,
		const char **why);

/* ctl_tls_new()'s checks alone: 0, or its error and *why; nothing kept */
int ctl_tls_check(const char *ca_file, const char *cert_file,
		const char *key_file, const char **why);
void ctl_tls_delete(struct ctl_tls **tls_ptr);
/*
 * Another handle on tls's context (a reference, not a copy of it), for a
 * thread that may outlive the owner's handle: each is deleted with
 * ctl_tls_delete().  0, -EINVAL or -ENOMEM.
 */
int ctl_tls_share(struct ctl_tls *tls, struct ctl_tls **copy_ptr);
/*
 * A thread that made TLS connections and is about to end frees what
 * OpenSSL keeps for it (its random generators, its error queue) now,
 * rather than in its exit's destructors: a detached thread that says it
 * is done and then exits can otherwise still hold them when the process
 * ends, which the leak checker reports.
 */
void ctl_tls_thread_end(void);

/*
 * ctl_listen(), ctl_accept() and ctl_connect() return 0 or a negative errno
 * value: -ETIMEDOUT when the timeout passed, -ECONNREFUSED, -EADDRINUSE,
 * -EADDRNOTAVAIL for a name that does not resolve, -EINVAL for bad
 * arguments (or a client context given to ctl_listen(), a server one to
 * ctl_connect()), and so on; with TLS, -EPROTO when the handshake failed
 * (the peer's certificate was refused, the peer refused ours, the peer does
 * not speak TLS 1.3).  Every failure leaves its reason in ctl_last_error().
 * Descriptors are nonblocking and close-on-exec.
 */

/*
 * Listen on addr:port (port "0" picks one; ctl_listener_port() says which).
 * tls: NULL for plain TCP, else a server context: every accepted
 * connection must complete a TLS handshake with a certificate signed by
 * its CA.
 */
int ctl_listen(const char *addr, const char *port, struct ctl_tls *tls,
		struct ctl_listener **l_ptr);
int ctl_listener_fd(const struct ctl_listener *l);
int ctl_listener_port(const struct ctl_listener *l);
/*
 * Accept one connection (blocks up to timeout_ms; -1: forever).  With TLS
 * the server's handshake is done within the same timeout, so a client that
 * connects and stays silent costs at most timeout_ms: -ETIMEDOUT; a failed
 * handshake is -EPROTO.  Either way the connection is closed.
 */
int ctl_accept(struct ctl_listener *l, int timeout_ms, struct ctl_chan **ch_ptr);
/*
 * Accept one connection that is waiting, without waiting for anything:
 * -EAGAIN if none is.  With TLS its handshake is not done yet:
 * ctl_chan_handshake() does it, a step at a time, so that a server can
 * keep many new connections in hand and none holds up the others.
 */
int ctl_accept_start(struct ctl_listener *l, struct ctl_chan **ch_ptr);
/*
 * More of a pending server handshake, waiting up to timeout_ms (0: only
 * what has arrived): 0 once it is done (at once for plain TCP and for
 * channels from ctl_accept() or ctl_connect()), CTL_CHAN_AGAIN if it needs
 * more from the peer, -EPROTO when it failed (ctl_last_error() says why;
 * close the channel).
 */
int ctl_chan_handshake(struct ctl_chan *ch, int timeout_ms);
void ctl_listener_close(struct ctl_listener **l_ptr);

/*
 * Connect to host:port within timeout_ms.  tls: NULL for plain TCP, else a
 * client context; the handshake is done within the same timeout and
 * succeeds only once the server has accepted our certificate (in TLS 1.3
 * the client learns that from the session ticket a server sends after its
 * handshake, which ctl_listen()'s servers do).  The server's certificate
 * is checked against the CA, not against host: ctl_chan_peer_name() says
 * whose it is.
 */
int ctl_connect(const char *host, const char *port, int timeout_ms,
		struct ctl_tls *tls, struct ctl_chan **ch_ptr);
/*
 * ctl_connect() from the local address src: where src is one numeric
 * address (not a wildcard, not a name) of the destination's family, the
 * connection leaves from it (any port), so that a peer, a firewall or a
 * relay sees the address this node listens on rather than whichever the
 * route picks; otherwise (NULL, "0.0.0.0", "::", a name, another family)
 * as ctl_connect().  A src that is no local address fails: -EADDRNOTAVAIL.
 */
int ctl_connect_from(const char *host, const char *port, const char *src,
		int timeout_ms, struct ctl_tls *tls, struct ctl_chan **ch_ptr);

/* why the calling thread's last failed ctl_tls_new(), ctl_listen(),
 * ctl_accept() or ctl_connect() failed (a thread-local string), e.g.
 * "TLS handshake with 127.0.0.1:4000 failed: certificate verify failed" */
const char *ctl_last_error(void);

/*
 * Send one message (whole frame) within timeout_ms (-1: forever).  Returns
 * 0, CTL_CHAN_CLOSED if the peer is gone, or CTL_CHAN_ERROR (m cannot be
 * encoded, the timeout passed, an I/O error).  Only an unencodable m or a
 * timeout before the first byte went out leaves the channel usable for
 * sending; after any other failure later sends fail the same way.  With
 * TLS a timeout is final too (OpenSSL keeps the part of the record it has
 * not written).  Never raises SIGPIPE.
 */
int ctl_chan_send(struct ctl_chan *ch, const struct ctl_msg *m, int timeout_ms);

/*
 * Receive one message, waiting up to timeout_ms (0: only what has arrived;
 * -1: forever).  Returns 0 with *m filled, CTL_CHAN_AGAIN if no whole frame
 * arrived in time, CTL_CHAN_CLOSED, or CTL_CHAN_ERROR (ctl_chan_why() says
 * why).  CLOSED and ERROR are final: later calls return them again.  With
 * plain TCP one thread may send while another receives; two senders (or
 * two receivers) must not overlap.  With TLS only one thread at a time may
 * use the channel (an OpenSSL connection is not safe for concurrent reads
 * and writes).  With TLS, a close_notify, or the end of the connection
 * between frames, is CLOSED; an alert or a corrupted record is ERROR with a
 * reason starting with "TLS: ".
 */
int ctl_chan_recv(struct ctl_chan *ch, struct ctl_msg *m, int timeout_ms);

/*
 * Read what has arrived, never waiting, and say whether a whole frame is
 * in: 0 (the next ctl_chan_recv() returns it at once), CTL_CHAN_AGAIN, or
 * a final CLOSED / ERROR as ctl_chan_recv() would give (a bad header is
 * refused at once; the body is checked by the ctl_chan_recv()).
 */
int ctl_chan_ready(struct ctl_chan *ch);

int ctl_chan_fd(const struct ctl_chan *ch);
/* the peer's address as "host:port", for messages */
const char *ctl_chan_peer(const struct ctl_chan *ch);
/* with TLS, the common name (CN) of the peer's verified certificate, for
 * messages and for the caller to check who it is; "" with plain TCP */
const char *ctl_chan_peer_name(const struct ctl_chan *ch);
/* why the last call failed (a static or per-channel string) */
const char *ctl_chan_why(const struct ctl_chan *ch);
/* close (with TLS, after a close_notify sent if it can go at once) */
void ctl_chan_close(struct ctl_chan **ch_ptr);

/*
 * The data-path admission token of a TLS channel: CTL_TOKEN_SIZE bytes
 * exported from the TLS session (RFC 8446 section 7.5), the same on both
 * ends and known to nobody else.  The primary presents it as the private
 * data of its RPMA connection; the replica accepts a data connection only
 * with the token of the channel it is serving, once.  -EINVAL on plain TCP.
 */
#define CTL_TOKEN_SIZE 16
int ctl_chan_admission_token(const struct ctl_chan *ch,
		uint8_t token[CTL_TOKEN_SIZE]);

#endif
