/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fence_listen.c -- a primary answers on its own control port, so that a
 * promotion elsewhere reaches it and fences it, rather than leaving two
 * nodes that both say they are the primary.
 *
 * A HELLO whose epoch is above this primary's (and that names its node
 * plausibly: the epoch's low 16 bits are the sender's node id, not this
 * node's) fences it: it acknowledges nothing more (the same state a
 * replica's FENCED error puts it in) and answers with an ERROR that says
 * so.  A promotion that counts this node needs it as a replica, which it
 * becomes only through its daemon; so the promotion's next round finds it
 * there, or goes on without it where the rule allows.  A HELLO whose
 * epoch is not above this primary's is answered STALE with its epoch: a
 * promotion then starts again above it, and a restarted old primary that
 * only asked (PROBE) learns a newer primary runs.
 *
 * One connection at a time, each bounded by the down timeout: a silent
 * peer holds the port at most that long.
 */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "primary/primary.h"
#include "ctl/ctl_chan.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fault.h"

#define POLL_MS 100	/* how soon a stop is seen */

static void
answer_hello(struct cluster *c, struct ctl_chan *ch, const struct ctl_msg *m)
{
	const struct ctl_hello *h = &m->u.hello;
	struct ctl_msg out = { .seq = m->seq };
	struct log_pos head, pub;

	if (memcmp(h->cluster_uuid, c->id.cluster_uuid, 16) != 0) {
		out.type = CTL_ERROR;
		out.u.error.code = RPMA_E_INVAL;
		snprintf(out.u.error.text, sizeof(out.u.error.text),
			"another cluster: the cluster UUIDs differ");
		(void)ctl_chan_send(ch, &out, c->cfg.down_timeout_ms);
		return;
	}
	if (h->epoch > c->id.epoch && !(h->flags & CTL_HELLO_F_PROBE) &&
	    (h->epoch & 0xffff) == (h->node_id & 0xffff) &&
	    h->node_id != c->id.node_id) {
		cluster_lock(c);
		if (!atomic_exchange(&c->fenced, true)) {
			snprintf(c->fenced_why, sizeof(c->fenced_why), "the "
				"promotion of node %u to epoch %llu reached it",
				(unsigned)h->node_id, (unsigned long long)h->epoch);
			REPL_LOG_ERROR("this primary is fenced: %s (from %s; this "
				"one's epoch is %llu); it acknowledges nothing more",
				c->fenced_why, ctl_chan_peer(ch),
				(unsigned long long)c->id.epoch);
		}
		pthread_cond_broadcast(&c->cond);
		quorum_wake_all(c);
		cluster_unlock(c);
		for (int i = 0; i < c->n_links; i++)
			link_kick(&c->links[i]);
		out.type = CTL_ERROR;
		out.u.error.code = CTL_CODE_NOT_REPLICA;
		snprintf(out.u.error.text, sizeof(out.u.error.text),
			"the primary of epoch %llu is fenced and steps down; it is "
			"no replica yet", (unsigned long long)c->id.epoch);
		(void)ctl_chan_send(ch, &out, c->cfg.down_timeout_ms);
		return;
	}
	/* not above it: this node leads that epoch or a newer one */
	wal_positions(c->wal, &head, &pub, NULL);
	out.type = CTL_HELLO_REPLY;
	memcpy(out.u.hello_reply.cluster_uuid, c->id.cluster_uuid, 16);
	out.u.hello_reply.node_id = c->id.node_id;
	out.u.hello_reply.flags = CTL_HELLO_F_STALE;
	out.u.hello_reply.epoch = out.u.hello_reply.prior_epoch = c->id.epoch;
	out.u.hello_reply.epoch_inc = c->id.incarnation;	/* it chose it */
	out.u.hello_reply.ring_size = c->ring_size;
	out.u.hello_reply.incarnation = c->id.incarnation;
	out.u.hello_reply.head = head;
	out.u.hello_reply.tail = pub;
	out.u.hello_reply.tail_epoch = wal_tail_epoch(c->wal);
	cluster_lock(c);
	out.u.hello_reply.config_epoch = c->ms.config_epoch;
	out.u.hello_reply.config_crc = membership_crc(&c->ms);
	cluster_unlock(c);
	(void)ctl_chan_send(ch, &out, c->cfg.down_timeout_ms);
}

static void *
fence_listen_main(void *arg)
{
	struct cluster *c = arg;

	(void)pthread_setname_np(pthread_self(), "repl-fence");
	while (!atomic_load(&c->stopping)) {
		struct pollfd p = { .fd = ctl_listener_fd(c->fence_listener),
			.events = POLLIN };
		struct ctl_chan *ch = NULL;
		struct ctl_msg m;

		if (poll(&p, 1, POLL_MS) <= 0)
			continue;
		if (ctl_accept(c->fence_listener, c->cfg.down_timeout_ms, &ch) != 0)
			continue;
		if (ctl_chan_recv(ch, &m, c->cfg.down_timeout_ms) == 0 &&
		    m.type == CTL_HELLO)
			answer_hello(c, ch, &m);
		ctl_chan_close(&ch);
	}
	return NULL;
}

int
fence_listen_start(struct cluster *c)
{
	int ret;

	if (c->cfg.listen_port == NULL)
		return 0;
	if ((ret = ctl_listen(c->cfg.listen_addr ? c->cfg.listen_addr : "0.0.0.0",
			c->cfg.listen_port, c->fence_tls, &c->fence_listener)) != 0) {
		REPL_LOG_ERROR("the primary cannot listen on its control port %s:%s "
			"(%s): a promotion elsewhere could not fence it",
			c->cfg.listen_addr ? c->cfg.listen_addr : "*",
			c->cfg.listen_port, ctl_last_error());
		return ret;
	}
	if (REPL_FAULTED() ||
	    pthread_create(&c->fence_thread, NULL, fence_listen_main, c) != 0) {
		ctl_listener_close(&c->fence_listener);
		return REPL_E_NOMEM;
	}
	c->fence_running = true;
	return 0;
}

void
fence_listen_stop(struct cluster *c)
{
	if (c->fence_running) {
		pthread_join(c->fence_thread, NULL);
		c->fence_running = false;
	}
	ctl_listener_close(&c->fence_listener);
}
