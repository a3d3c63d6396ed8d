/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_chan.c -- the control channel's framed TCP transport (its messages:
 * ctl_msg.c): 1000 back-to-back messages read with timeout 0 (frames
 * arrive in pieces), a frame written one byte at a time, garbage, a close
 * in the middle of a frame, a refused connection and timeouts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "ctl/ctl_chan.h"
#include "ctl/ctl_msg.h"
#include "ctl_stream.h"
#include "unit.h"

#define NSTREAM 1000
#define IO_TIMEOUT 10000

/* a connected pair over 127.0.0.1 */
static void
pair(struct ctl_chan **a, struct ctl_chan **b)
{
	struct ctl_listener *l = NULL;
	char port[16];

	CU_ASSERT_EQUAL_FATAL(ctl_listen("127.0.0.1", "0", NULL, &l), 0);
	CU_ASSERT_FATAL(ctl_listener_port(l) > 0);
	CU_ASSERT_FATAL(ctl_listener_fd(l) >= 0);
	snprintf(port, sizeof(port), "%d", ctl_listener_port(l));
	CU_ASSERT_EQUAL_FATAL(ctl_connect("127.0.0.1", port, IO_TIMEOUT, NULL,
		a), 0);
	CU_ASSERT_EQUAL_FATAL(ctl_accept(l, IO_TIMEOUT, b), 0);
	ctl_listener_close(&l);
	CU_ASSERT_PTR_NULL(l);
}

static void *
stream_sender(void *arg)
{
	struct ctl_chan *ch = arg;
	struct ctl_msg m;
	intptr_t failed = 0;

	for (int i = 0; i < NSTREAM; i++) {
		stream_msg(i, &m);
		if (ctl_chan_send(ch, &m, IO_TIMEOUT) != 0)
			failed++;
	}
	ctl_chan_close(&ch);
	return (void *)failed;
}

static void
chan_stream(void)
{
	struct ctl_chan *tx = NULL, *rx = NULL;
	struct ctl_msg got, want;
	pthread_t thread;
	void *failed;
	int i = 0, ret;
	char prefix[32];

	pair(&tx, &rx);
	snprintf(prefix, sizeof(prefix), "127.0.0.1:");
	CU_ASSERT_EQUAL(strncmp(ctl_chan_peer(rx), prefix, strlen(prefix)), 0);
	CU_ASSERT(ctl_chan_fd(rx) >= 0);
	CU_ASSERT_STRING_EQUAL(ctl_chan_peer_name(rx), "");	/* no TLS */
	CU_ASSERT_EQUAL_FATAL(pthread_create(&thread, NULL, stream_sender, tx), 0);
	for (;;) {
		ret = ctl_chan_recv(rx, &got, 0);
		if (ret == CTL_CHAN_AGAIN) {
			continue;	/* timeout 0: spins on partial frames */
		}
		if (ret != 0)
			break;
		stream_msg(i, &want);
		if (i >= NSTREAM || memcmp(&got, &want, sizeof(got)) != 0) {
			CU_FAIL("message out of order or altered");
			break;
		}
		i++;
	}
	CU_ASSERT_EQUAL(ret, CTL_CHAN_CLOSED);
	CU_ASSERT_EQUAL(i, NSTREAM);
	/* CLOSED is final */
	CU_ASSERT_EQUAL(ctl_chan_recv(rx, &got, 0), CTL_CHAN_CLOSED);
	CU_ASSERT_EQUAL(pthread_join(thread, &failed), 0);
	CU_ASSERT_PTR_NULL(failed);
	ctl_chan_close(&rx);
	CU_ASSERT_PTR_NULL(rx);
	ctl_chan_close(&rx);	/* harmless twice */
}

static void
raw_send(struct ctl_chan *ch, const void *buf, size_t len)
{
	CU_ASSERT_EQUAL_FATAL(send(ctl_chan_fd(ch), buf, len, MSG_NOSIGNAL),
		(ssize_t)len);
}

/* a receive that must complete from what was already sent */
static int
recv_soon(struct ctl_chan *ch, struct ctl_msg *m)
{
	return ctl_chan_recv(ch, m, IO_TIMEOUT);
}

static void
chan_partial(void)
{
	struct ctl_chan *a = NULL, *b = NULL;
	struct ctl_msg m[3], got;
	uint8_t bytes[3 * CTL_FRAME_MAX];
	size_t total = 0, ends[3];

	pair(&a, &b);
	for (int i = 0; i < 3; i++) {
		stream_msg(i * 3 + 1, &m[i]);	/* HELLO_REPLY, TRUNCATE, ... */
		total += (size_t)ctl_msg_encode(&m[i], bytes + total,
			CTL_FRAME_MAX);
		ends[i] = total;
	}
	/* one byte at a time: nothing until a frame's last byte */
	for (size_t k = 0, next = 0; k < ends[1]; k++) {
		int ret;

		raw_send(a, bytes + k, 1);
		if (k + 1 == ends[next]) {
			CU_ASSERT_EQUAL(recv_soon(b, &got), 0);
			CU_ASSERT_EQUAL(memcmp(&got, &m[next], sizeof(got)), 0);
			next++;
		} else {
			/* the byte may still be in flight: allow for it */
			usleep(200);
			ret = ctl_chan_recv(b, &got, 0);
			CU_ASSERT_EQUAL(ret, CTL_CHAN_AGAIN);
		}
	}
	/* the rest in one write with half of a fourth frame */
	raw_send(a, bytes + ends[1], ends[2] - ends[1]);
	raw_send(a, bytes, ends[0] / 2);
	CU_ASSERT_EQUAL(recv_soon(b, &got), 0);
	CU_ASSERT_EQUAL(memcmp(&got, &m[2], sizeof(got)), 0);
	CU_ASSERT_EQUAL(ctl_chan_recv(b, &got, 50), CTL_CHAN_AGAIN);
	raw_send(a, bytes + ends[0] / 2, ends[0] - ends[0] / 2);
	CU_ASSERT_EQUAL(recv_soon(b, &got), 0);
	CU_ASSERT_EQUAL(memcmp(&got, &m[0], sizeof(got)), 0);

	/* the sender stops mid-frame */
	raw_send(a, bytes, 10);
	ctl_chan_close(&a);
	CU_ASSERT_EQUAL(recv_soon(b, &got), CTL_CHAN_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ctl_chan_why(b), "mid-frame"));
	ctl_chan_close(&b);
}

static void
chan_garbage(void)
{
	struct ctl_chan *a = NULL, *b = NULL;
	struct ctl_msg got, m;
	uint8_t f[CTL_FRAME_MAX];
	int len;

	pair(&a, &b);
	raw_send(a, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
	CU_ASSERT_EQUAL(recv_soon(b, &got), CTL_CHAN_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ctl_chan_why(b), "magic"));
	/* the stream is lost: ERROR from now on */
	CU_ASSERT_EQUAL(ctl_chan_recv(b, &got, 0), CTL_CHAN_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ctl_chan_why(b), "magic"));
	ctl_chan_close(&a);
	ctl_chan_close(&b);

	/* a good header with a bad body: refused once the body is in */
	pair(&a, &b);
	stream_msg(5, &m);	/* TRUNCATE */
	len = ctl_msg_encode(&m, f, sizeof(f));
	CU_ASSERT_FATAL(len > 0);
	f[16 + 8] |= 4;		/* an unaligned offset */
	raw_send(a, f, (size_t)len);
	CU_ASSERT_EQUAL(recv_soon(b, &got), CTL_CHAN_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ctl_chan_why(b), "multiple of 8"));
	ctl_chan_close(&a);
	ctl_chan_close(&b);
}

static void
chan_timeouts(void)
{
	struct ctl_listener *l = NULL;
	struct ctl_chan *a = NULL, *b = NULL;
	struct ctl_msg m;
	char port[16];
	int64_t t0, dt;
	int ret = 0;
	long sent;

	/* nothing to read: AGAIN after about the timeout */
	pair(&a, &b);
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_chan_recv(b, &m, 200), CTL_CHAN_AGAIN);
	dt = (int64_t)clock_now_ms() - t0;
	CU_ASSERT(dt >= 190 && dt < 2000);
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_chan_recv(b, &m, 0), CTL_CHAN_AGAIN);
	CU_ASSERT((int64_t)clock_now_ms() - t0 < 100);

	/* a peer that never reads: the send times out, never blocks */
	stream_msg(3, &m);
	for (sent = 0; sent < 10000000; sent++)
		if ((ret = ctl_chan_send(a, &m, 20)) != 0)
			break;
	CU_ASSERT_EQUAL(ret, CTL_CHAN_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ctl_chan_why(a), "timed out"));
	ctl_chan_close(&a);
	ctl_chan_close(&b);

	/* an unencodable message is refused, with the decoder's reason */
	pair(&a, &b);
	msg_init(&m, CTL_SET_HEAD, 1);
	CU_ASSERT_EQUAL(ctl_chan_send(a, &m, 100), CTL_CHAN_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(ctl_chan_why(a), "lsn is 0"));
	/* ... which does not spoil the channel */
	stream_msg(2, &m);
	CU_ASSERT_EQUAL(ctl_chan_send(a, &m, 100), 0);
	CU_ASSERT_EQUAL(recv_soon(b, &m), 0);

	/* the peer went away: CLOSED, and no SIGPIPE */
	ctl_chan_close(&b);
	stream_msg(2, &m);
	for (int i = 0; i < 1000; i++) {
		if ((ret = ctl_chan_send(a, &m, 100)) != 0)
			break;
		usleep(1000);
	}
	CU_ASSERT_EQUAL(ret, CTL_CHAN_CLOSED);
	CU_ASSERT_EQUAL(ctl_chan_send(a, &m, 100), CTL_CHAN_CLOSED);
	ctl_chan_close(&a);

	/* no one accepts: -ETIMEDOUT */
	CU_ASSERT_EQUAL_FATAL(ctl_listen("127.0.0.1", "0", NULL, &l), 0);
	t0 = (int64_t)clock_now_ms();
	CU_ASSERT_EQUAL(ctl_accept(l, 100, &a), -ETIMEDOUT);
	CU_ASSERT((int64_t)clock_now_ms() - t0 >= 90);
	CU_ASSERT_PTR_NULL(a);

	/* a closed port: refused */
	snprintf(port, sizeof(port), "%d", ctl_listener_port(l));
	ctl_listener_close(&l);
	ret = ctl_connect("127.0.0.1", port, 1000, NULL, &a);
	CU_ASSERT(ret < 0);
	CU_ASSERT_EQUAL(ret, -ECONNREFUSED);
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT(ctl_listen("127.0.0.1", "no-such-service", NULL, &l) < 0);
	CU_ASSERT_PTR_NULL(l);
}

UNIT_MAIN("ctl_chan",
	UNIT_CASE(chan_stream),
	UNIT_CASE(chan_partial),
	UNIT_CASE(chan_garbage),
	UNIT_CASE(chan_timeouts))
