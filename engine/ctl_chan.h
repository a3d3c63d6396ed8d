/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_chan.h -- the control channel: framed ctl_msg messages over a TCP
 * connection.  Sends are whole frames (blocking, bounded by a timeout);
 * receives accumulate partial frames, so a caller polling the channel's
 * fd together with other fds never blocks on a half-arrived message.
 */
#ifndef REPL_CTL_CHAN_H
#define REPL_CTL_CHAN_H

#include "ctl_msg.h"

#define CTL_CHAN_AGAIN	1	/* ctl_chan_recv: no whole frame yet */
#define CTL_CHAN_CLOSED	(-1)	/* the peer closed the connection */
#define CTL_CHAN_ERROR	(-2)	/* I/O error, timeout or a malformed frame */

struct ctl_chan;
struct ctl_listener;

/*
 * ctl_listen(), ctl_accept() and ctl_connect() return 0 or a negative errno
 * value: -ETIMEDOUT when the timeout passed, -ECONNREFUSED, -EADDRINUSE,
 * -EADDRNOTAVAIL for a name that does not resolve, -EINVAL for bad
 * arguments, and so on.  Descriptors are nonblocking and close-on-exec.
 */

/* listen on addr:port (port "0" picks one; ctl_listener_port() says which) */
int ctl_listen(const char *addr, const char *port, struct ctl_listener **l_ptr);
int ctl_listener_fd(const struct ctl_listener *l);
int ctl_listener_port(const struct ctl_listener *l);
/* accept one connection (blocks up to timeout_ms; -1: forever) */
int ctl_accept(struct ctl_listener *l, int timeout_ms, struct ctl_chan **ch_ptr);
void ctl_listener_close(struct ctl_listener **l_ptr);

/* connect to host:port within timeout_ms */
int ctl_connect(const char *host, const char *port, int timeout_ms,
		struct ctl_chan **ch_ptr);

/*
 * Send one message (whole frame) within timeout_ms (-1: forever).  Returns
 * 0, CTL_CHAN_CLOSED if the peer is gone, or CTL_CHAN_ERROR (m cannot be
 * encoded, the timeout passed, an I/O error).  Only an unencodable m or a
 * timeout before the first byte went out leaves the channel usable for
 * sending; after any other failure later sends fail the same way.  Never
 * raises SIGPIPE.
 */
int ctl_chan_send(struct ctl_chan *ch, const struct ctl_msg *m, int timeout_ms);

/*
 * Receive one message, waiting up to timeout_ms (0: only what has arrived;
 * -1: forever).  Returns 0 with *m filled, CTL_CHAN_AGAIN if no whole frame
 * arrived in time, CTL_CHAN_CLOSED, or CTL_CHAN_ERROR (ctl_chan_why() says
 * why).  CLOSED and ERROR are final: later calls return them again.  One
 * thread may send while another receives; two senders (or two receivers)
 * must not overlap.
 */
int ctl_chan_recv(struct ctl_chan *ch, struct ctl_msg *m, int timeout_ms);

int ctl_chan_fd(const struct ctl_chan *ch);
/* the peer's address as "host:port", for messages */
const char *ctl_chan_peer(const struct ctl_chan *ch);
/* why the last call failed (a static or per-channel string) */
const char *ctl_chan_why(const struct ctl_chan *ch);
void ctl_chan_close(struct ctl_chan **ch_ptr);

#endif
