/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_pending.c -- a replica's new control connections, waiting for
 * their first frame (with TLS, first for their handshake), all polled
 * together: a HELLO is served as soon as it is in, so a connection that
 * stays silent holds up nobody -- a promotion's fence in particular.
 * Each gets the timeout; when PENDING_MAX are waiting, the oldest is
 * dropped for a new one.  The drops are said at most once every
 * DROP_SAY_MS for each kind of reason, with a count of the rest.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "common/clock.h"
#include "common/elog.h"
#include "ctl/ctl_chan.h"
#include "replica/replica_internal.h"

/* how often a dropped control connection is said, for each kind of
   reason (a primary that comes back may have queued a dial a second
   while it could not reach this one) */
#define DROP_SAY_MS 10000

/* why a connection is dropped before its HELLO: said apart from each other */
enum drop_kind { DROP_EVICTED, DROP_NO_HELLO, DROP_HANDSHAKE, DROP_OTHER,
	DROP_KINDS };

_Static_assert(DROP_KINDS == sizeof(((struct replica *)0)->drops_unsaid) /
	sizeof(unsigned), "a counter for each kind of drop");

static void
pending_drop(struct replica *r, struct pending_set *ps, int i,
		enum drop_kind kind, const char *why)
{
	struct pending *p = ps->p;
	uint64_t now = clock_now_ms();

	if (why && (r->drop_said_ms[kind] == 0 || now - r->drop_said_ms[kind] >= DROP_SAY_MS)) {
		if (r->drops_unsaid[kind])
			REPL_LOG_WARNING("replica: dropped the control connection from "
				"%s: %s (and %u more so since the last such line)",
				ctl_chan_peer(p[i].ch), why, r->drops_unsaid[kind]);
		else
			REPL_LOG_WARNING("replica: dropped the control connection from "
				"%s: %s", ctl_chan_peer(p[i].ch), why);
		r->drop_said_ms[kind] = now;
		r->drops_unsaid[kind] = 0;
	} else if (why) {
		r->drops_unsaid[kind]++;
	}
	ctl_chan_close(&p[i].ch);
	memmove(&p[i], &p[i + 1], sizeof(p[0]) * (size_t)(ps->n - i - 1));
	ps->n--;
}

int
pending_poll(const struct pending_set *ps, struct pollfd *fds, int wait)
{
	uint64_t now = clock_now_ms();

	for (int i = 0; i < ps->n; i++) {
		fds[i] = (struct pollfd){ .fd = ctl_chan_fd(ps->p[i].ch),
			.events = POLLIN };
		if (ps->p[i].until <= now)
			wait = 0;
		else if (ps->p[i].until - now < (uint64_t)wait)
			wait = (int)(ps->p[i].until - now);
	}
	return wait;
}

void
pending_accept(struct replica *r, struct pending_set *ps)
{
	struct ctl_chan *ch;
	int ret;

	while ((ret = ctl_accept_start(r->listener, &ch)) != -EAGAIN) {
		if (ret) {
			REPL_LOG_WARNING("replica: refused a control connection: %s",
				ctl_last_error());
			return;
		}
		if (ps->n == PENDING_MAX)
			pending_drop(r, ps, 0, DROP_EVICTED, "no HELLO yet, and a newer "
				"connection needs its place");
		ps->p[ps->n++] = (struct pending){ ch,
			clock_now_ms() + (uint64_t)r->cfg->timeout_ms };
	}
}

struct ctl_chan *
pending_take_ready(struct replica *r, struct pending_set *ps)
{
	for (int i = 0; i < ps->n;) {
		struct ctl_chan *ch = ps->p[i].ch;
		int ret = ctl_chan_handshake(ch, 0);

		if (ret == 0)
			ret = ctl_chan_ready(ch);
		if (ret == 0) {
			/* out of the list: the caller owns it from here */
			memmove(&ps->p[i], &ps->p[i + 1],
				sizeof(ps->p[0]) * (size_t)(ps->n - i - 1));
			ps->n--;
			return ch;
		}
		if (ret == CTL_CHAN_AGAIN && clock_now_ms() < ps->p[i].until) {
			i++;
			continue;
		}
		if (ret == CTL_CHAN_AGAIN)
			pending_drop(r, ps, i, DROP_NO_HELLO, "no HELLO within the timeout");
		else if (ret == CTL_CHAN_CLOSED)
			pending_drop(r, ps, i, DROP_OTHER, NULL);	/* gone before a word */
		else if (ret < 0 && ret != CTL_CHAN_ERROR)
			/* a failed TLS handshake, for one: say who and why */
			pending_drop(r, ps, i, DROP_HANDSHAKE, ctl_last_error());
		else
			pending_drop(r, ps, i, DROP_OTHER, ctl_chan_why(ch));
	}
	return NULL;
}

void
pending_drop_all(struct replica *r, struct pending_set *ps)
{
	while (ps->n > 0)
		pending_drop(r, ps, 0, DROP_OTHER, NULL);
}
