/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_stream.c -- the plain TCP stream under the control channel, and what
 * every stream and the framing share: deadlines, waiting on the socket,
 * the receiver's final results, the thread's last error.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/clock.h"
#include "ctl/ctl_stream.h"

static _Thread_local char last_error[LAST_ERROR_SIZE];

void
ctl_set_error(const char *fmt, ...)
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

int64_t
ctl_deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : (int64_t)clock_now_ms() + timeout_ms;
}

/* what remains of a deadline, as poll() takes it */
static int
remaining(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - (int64_t)clock_now_ms();
	return left <= 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left;
}

int
ctl_wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int ret;

	do {
		ret = poll(&pfd, 1, remaining(deadline));
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

int
ctl_rx_fail(struct ctl_chan *ch, int ret, const char *what, const char *detail)
{
	snprintf(ch->rx_why, sizeof(ch->rx_why), "%s%s", what, detail);
	ch->rx_final = ret;
	atomic_store(&ch->why, ch->rx_why);
	return ret;
}

int
ctl_rx_closed(struct ctl_chan *ch, const char *detail)
{
	if (ch->have > 0)
		return ctl_rx_fail(ch, CTL_CHAN_ERROR,
			"connection closed mid-frame", "");
	return ctl_rx_fail(ch, CTL_CHAN_CLOSED, "", detail);
}

/* ------------------------------------------------------------------ */
/* plain TCP                                                          */

static int
tcp_send(struct ctl_chan *ch, const uint8_t *buf, int len, int64_t deadline)
{
	bool timed_out = false;
	size_t off = 0;
	ssize_t n;
	int ret;

	while (off < (size_t)len) {
		n = send(ch->fd, buf + off, (size_t)len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if ((ret = ctl_wait_fd(ch->fd, POLLOUT, deadline)) > 0)
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

static int
tcp_fill(struct ctl_chan *ch, int64_t deadline)
{
	ssize_t n;
	int ret;

	for (;;) {
		n = recv(ch->fd, ch->rx + ch->have, sizeof(ch->rx) - ch->have, 0);
		if (n > 0) {
			ch->have += (size_t)n;
			return 0;
		}
		if (n == 0 || errno == ECONNRESET)
			return ctl_rx_closed(ch, n == 0 ?
				"the peer closed the connection" :
				"the peer reset the connection");
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return ctl_rx_fail(ch, CTL_CHAN_ERROR, "recv: ",
				strerror(errno));
		if ((ret = ctl_wait_fd(ch->fd, POLLIN, deadline)) < 0)
			return ctl_rx_fail(ch, CTL_CHAN_ERROR, "poll: ",
				strerror(-ret));
		if (ret == 0)
			return CTL_CHAN_AGAIN;
	}
}

static void
tcp_close(struct ctl_chan *ch)
{
	(void)ch;	/* nothing of its own: the fd is the channel's */
}

const struct ctl_stream_ops ctl_tcp_stream = {
	.name = "tcp",
	.send = tcp_send,
	.fill = tcp_fill,
	.close = tcp_close,
};
