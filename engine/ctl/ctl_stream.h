/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_stream.h -- the byte stream under the control channel's framing.
 *
 * A channel (ctl_chan.c: framing, listen, accept, connect) moves its bytes
 * through a stream picked when it is made: plain TCP (ctl_stream.c) or TLS
 * over it (ctl_tls.c).  Each is an ops table, so the framing never asks
 * which one it has.  Both report through the channel's rx/tx state below.
 */
#ifndef REPL_CTL_STREAM_H
#define REPL_CTL_STREAM_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "ctl/ctl_chan.h"

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

struct ctl_chan;

struct ctl_stream_ops {
	const char *name;		/* "tcp", "tls" */
	/* all of buf before the deadline: 0, or CLOSED / ERROR (final,
	 * except a timeout before the first byte) with ch->tx_why */
	int (*send)(struct ctl_chan *ch, const uint8_t *buf, int len,
			int64_t deadline);
	/* more bytes into ch->rx: 0 when some came, CTL_CHAN_AGAIN when the
	 * deadline passed first, or a final result (ctl_rx_fail) */
	int (*fill)(struct ctl_chan *ch, int64_t deadline);
	/* end the stream's own state (a TLS close_notify); the fd is the
	 * channel's */
	void (*close)(struct ctl_chan *ch);
};

extern const struct ctl_stream_ops ctl_tcp_stream;
extern const struct ctl_stream_ops ctl_tls_stream;

struct ctl_chan {
	int fd;
	const struct ctl_stream_ops *ops;
	SSL *ssl;			/* the TLS stream's; NULL over TCP */
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

/* ctl_stream.c: what both streams and the framing share */
/* this thread's reason for the last failure of a call without a channel */
void ctl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the deadline of a timeout in ms (-1: none), on clock_now_ms() */
int64_t ctl_deadline_of(int timeout_ms);
/* wait for events on fd until the deadline: 1 ready, 0 timed out, -errno */
int ctl_wait_fd(int fd, short events, int64_t deadline);
/* a final result of the receiver, with its reason */
int ctl_rx_fail(struct ctl_chan *ch, int ret, const char *what, const char *detail);
/* the end of the stream: CLOSED between frames, ERROR within one */
int ctl_rx_closed(struct ctl_chan *ch, const char *detail);

/* ctl_tls.c: the TLS stream over ch->fd (ch->ops becomes ctl_tls_stream) */
int ctl_tls_start(struct ctl_chan *ch, SSL_CTX *ctx, bool handshake,
		int64_t deadline);
/* the handshake, or more of it: 0, -ETIMEDOUT (resumable) or -EPROTO */
int ctl_tls_handshake(struct ctl_chan *ch, int64_t deadline);

#endif
