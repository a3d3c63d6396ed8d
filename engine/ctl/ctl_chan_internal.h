/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_chan_internal.h -- what the control channel's socket framing
 * (ctl_chan.c) and its TLS layer (ctl_tls.c) share.
 */
#ifndef REPL_CTL_CHAN_INTERNAL_H
#define REPL_CTL_CHAN_INTERNAL_H

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

/* ctl_chan.c */
void ctl_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *ctl_ssl_reason(char *buf, size_t size);
int ctl_wait_fd(int fd, short events, int64_t deadline);
int ctl_rx_fail(struct ctl_chan *ch, int ret, const char *what, const char *detail);
int ctl_rx_closed(struct ctl_chan *ch, const char *detail);

/* ctl_tls.c */
int ctl_tls_start(struct ctl_chan *ch, SSL_CTX *ctx, bool handshake,
		int64_t deadline);
/* the handshake, or more of it: 0, -ETIMEDOUT (resumable) or -EPROTO */
int ctl_tls_handshake(struct ctl_chan *ch, int64_t deadline);
int ctl_tls_send(struct ctl_chan *ch, const uint8_t *buf, int len, int64_t deadline);
int ctl_tls_fill(struct ctl_chan *ch, int64_t deadline);

#endif
