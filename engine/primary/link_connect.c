/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_connect.c -- a link's (re)connection: the control channel's
 * messages and replies, HELLO, the catch-up that finds where the replica
 * resumes (link.c's header says how) and the data connection's opening.
 * The link's thread calls link_connect() until it is up, then streams
 * (link.c).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "primary/primary.h"
#include "ctl/ctl_chan.h"
#include "common/fabric.h"
#include "common/clock.h"
#include "common/elog.h"

int
link_send(struct link *l, struct ctl_msg *m)
{
	m->seq = ++l->msg_seq;
	if (ctl_chan_send(l->ch, m, l->c->cfg.down_timeout_ms) != 0) {
		link_fail(l, "control channel: %s", ctl_chan_why(l->ch));
		return -1;
	}
	l->last_send_ms = clock_now_ms();
	return 0;
}

/* wait for a reply of type `want`, answering heartbeats meanwhile */
int
link_recv_reply(struct link *l, enum ctl_type want, struct ctl_msg *m)
{
	uint64_t until = clock_now_ms() + (uint64_t)l->c->cfg.down_timeout_ms;

	for (;;) {
		int left = (int)(until - clock_now_ms());
		int ret = ctl_chan_recv(l->ch, m, left > 0 ? left : 0);

		if (ret == 0) {
			l->last_recv_ms = clock_now_ms();
			if (m->type == want)
				return 0;
			if (m->type == CTL_HEARTBEAT)
				continue;
			/* a verification's answer may come before this one */
			if (m->type == CTL_VERIFY_REPLY && link_verify_reply(l, m) == 0)
				continue;
			if (m->type == CTL_ERROR && m->u.error.code == CTL_CODE_FENCED)
				link_fenced(l, m->u.error.text);
			else if (m->type == CTL_ERROR)
				link_fail(l, "the replica refused: %s", m->u.error.text);
			else
				link_fail(l, "the replica sent %s, not %s",
					ctl_msg_type_name(m->type), ctl_msg_type_name(want));
			return -1;
		}
		if (ret == CTL_CHAN_AGAIN && left > 0)
			continue;
		link_fail(l, "no %s from the replica: %s", ctl_msg_type_name(want),
			ret == CTL_CHAN_AGAIN ? "timed out" : ctl_chan_why(l->ch));
		return -1;
	}
}

int
link_shape_replica(struct link *l, enum ctl_type type, const struct log_pos *p,
		struct ctl_ack *ack)
{
	struct ctl_msg m = { .type = type };

	m.u.cut.pos = *p;
	m.u.cut.epoch = wal_epoch_before(l->c->wal, p->lsn);
	if (link_send(l, &m) || link_recv_reply(l, CTL_ACK, &m))
		return -1;
	*ack = m.u.ack;
	if (ack->status != 0) {
		link_fail(l, "the replica could not %s (error %d)",
			type == CTL_TRUNCATE ? "truncate" : "move its checkpoint",
			ack->status);
		return -1;
	}
	return 0;
}

/*
 * Find where the replica resumes and make its log end there (under
 * release_lock: the local checkpoint does not move meanwhile).
 */
static int
catch_up(struct link *l, const struct ctl_hello_reply *hr)
{
	struct cluster *c = l->c;
	struct log_pos head, pub, start;
	struct ctl_ack ack;
	uint64_t lo, hi, r_first = hr->head.lsn, r_last = hr->tail.lsn - 1;
	uint64_t down_since;
	bool found;
	char why[160];

	wal_positions(c->wal, &head, &pub, NULL);
	lo = (r_first > head.lsn ? r_first : head.lsn) - 1;
	hi = r_last < pub.lsn - 1 ? r_last : pub.lsn - 1;
	if (chain_agreement(l->ch, &l->msg_seq, c->cfg.down_timeout_ms, c->wal,
			lo, hi, &found, &lo, why, sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	if (!found) {
		/* nothing in common that we still hold: a full resync */
		start = head;
		link_count(&l->n.full_resyncs, 1);
		REPL_LOG_NOTICE("replica %s:%s: full resync from LSN %llu", l->host,
			l->ctl_port, (unsigned long long)head.lsn);
	} else {
		if (wal_pos_after(c->wal, lo, &start)) {
			link_fail(l, "lost LSN %llu during catch-up", (unsigned long long)lo);
			return -1;
		}
		if (r_last > lo)
			REPL_LOG_NOTICE("replica %s:%s: dropping its LSNs %llu..%llu "
				"(never committed)", l->host, l->ctl_port,
				(unsigned long long)lo + 1, (unsigned long long)r_last);
	}
	if (link_shape_replica(l, CTL_TRUNCATE, &start, &ack))
		return -1;
	if (ack.head.lsn < head.lsn && link_shape_replica(l, CTL_SET_HEAD, &head, &ack))
		return -1;
	if (ack.head.lsn < head.lsn) {
		/* what it holds is released here: our appends would overwrite it */
		link_fail(l, "the replica holds LSN %llu, which this primary released",
			(unsigned long long)ack.head.lsn);
		return -1;
	}
	link_io_lock(l);
	l->sent = start;
	/* what it lacks now is this catch-up's: counted as it is received */
	atomic_store_explicit(&l->delivered, 0, memory_order_relaxed);
	atomic_store_explicit(&l->count_writes, !pos_equal(&start, &pub),
		memory_order_relaxed);
	l->next_seq = l->oldest_seq = 0;
	l->unsent_since_ms = 0;
	link_note_waiting(l);
	l->io_ready = true;
	link_io_unlock(l);
	cluster_lock(c);
	l->hold_next = ack.hold_next;
	l->holds = ack.hold_next != 0;
	l->wants_base = false;	/* until this connection's heartbeats say */
	l->replica_head = ack.head.lsn;
	l->flushed_lsn = start.lsn;
	l->flushed_pos = start;
	link_progress_begin(l, &start, &pub, clock_now_ms());
	link_set_state(l, REPL_LINK_STREAMING);
	l->why[0] = '\0';
	down_since = l->down_since_ms;
	l->down_since_ms = 0;
	cluster_quorum_update(c);
	pthread_cond_broadcast(&c->cond);
	cluster_unlock(c);
	link_count(&l->n.catch_ups, 1);
	if (down_since != 0)
		REPL_LOG_NOTICE("replica %s:%s is up after %llu s down, resuming at LSN "
			"%llu (%llu to send)", l->host, l->ctl_port,
			(unsigned long long)((clock_now_ms() - down_since) / 1000),
			(unsigned long long)start.lsn,
			(unsigned long long)(pub.lsn - start.lsn));
	else
		REPL_LOG_NOTICE("replica %s:%s is up, resuming at LSN %llu (%llu to send)",
			l->host, l->ctl_port, (unsigned long long)start.lsn,
			(unsigned long long)(pub.lsn - start.lsn));
	return 0;
}

/* what status reports of the connection just opened */
static void
note_connection(struct link *l, const struct ctl_hello_reply *hr)
{
	enum rpma_ext_flush_method fm = RPMA_EXT_FLUSH_NONE;

	(void)rpma_ext_conn_get_flush_method(l->conn, RPMA_FLUSH_TYPE_PERSISTENT, &fm);
	cluster_lock(l->c);
	snprintf(l->transport, sizeof(l->transport), "%s", l->c->cfg.provider);
	snprintf(l->flush_method, sizeof(l->flush_method), "%s",
		fabric_flush_method_name(fm));
	snprintf(l->backend, sizeof(l->backend), "%s",
		fabric_backend_name(hr->backend));
	cluster_unlock(l->c);
}

int
link_connect(struct link *l)
{
	struct cluster *c = l->c;
	struct ctl_msg m = { .type = CTL_HELLO };
	struct ctl_hello_reply hr;
	struct log_pos head;
	char why[160];
	int ret;

	cluster_lock(c);
	link_set_state(l, REPL_LINK_CONNECTING);
	cluster_unlock(c);
	/* from where this primary listens: the address its peers know it by */
	ret = ctl_connect_from(l->host, l->ctl_port, c->cfg.listen_addr,
		c->cfg.down_timeout_ms, c->tls, &l->ch);
	if (ret) {
		link_fail(l, "cannot reach its control port: %s", ret == -EPROTO ?
			ctl_last_error() : strerror(-ret));
		return -1;
	}
	l->last_recv_ms = clock_now_ms();
	wal_positions(c->wal, &head, NULL, NULL);
	memcpy(m.u.hello.cluster_uuid, c->id.cluster_uuid, 16);
	m.u.hello.node_id = c->id.node_id;
	m.u.hello.epoch = c->id.epoch;
	m.u.hello.ring_size = c->ring_size;
	m.u.hello.head = head;
	m.u.hello.incarnation = c->id.incarnation;
	m.u.hello.head_epoch = wal_epoch_before(c->wal, head.lsn);
	if (link_send(l, &m) || link_recv_reply(l, CTL_HELLO_REPLY, &m))
		return -1;
	hr = m.u.hello_reply;
	if (hr.flags & CTL_HELLO_F_STALE) {
		snprintf(why, sizeof(why), "it follows epoch %llu, above this "
			"primary's %llu", (unsigned long long)hr.epoch,
			(unsigned long long)c->id.epoch);
		link_fenced(l, why);
		return -1;
	}
	/* it answers: from here on it is catching up, not down */
	cluster_lock(c);
	link_set_state(l, REPL_LINK_CATCHING_UP);
	l->node_id = hr.node_id;
	l->incarnation = hr.incarnation;
	/* it keeps what it stored, unless its log was made anew */
	if (hr.config_epoch < l->held)
		l->held = hr.config_epoch;
	l->acked = false;
	cluster_ms_place(c, l);
	cluster_unlock(c);
	/* an older copy of its log (a peer floor says): nothing goes to it */
	if (cluster_floor_check(c, l->host, l->ctl_port, &hr, why, sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	cluster_floor_promised(c, &hr, c->id.epoch);
	if (link_data_open(c, l->host, l->ch, &hr, &l->conn, &l->dst, why,
			sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	if (c->cfg.flush_method == REPL_FLUSH_APM &&
	    hr.backend != CTL_BACKEND_PMEM) {
		/* a READ after the writes reaches its memory, not its medium */
		link_fail(l, "APM is configured, but the replica keeps its ring in "
			"memory its CPU must persist (backend %u, not pmem)",
			(unsigned)hr.backend);
		return -1;
	}
	if (fabric_flush_apply(l->conn, c->cfg.flush_method, why, sizeof(why))) {
		link_fail(l, "%s", why);
		return -1;
	}
	note_connection(l, &hr);
	/*
	 * Its fd is not taken: the link waits with rpma_ext_cq_poll, so a
	 * completion writes the CQ's eventfd only while somebody sleeps.
	 */
	rpma_conn_get_cq(l->conn, &l->cq);
	rank_lock(&c->release_lock, LOCK_RANK_RELEASE);
	ret = catch_up(l, &hr);
	rank_unlock(&c->release_lock, LOCK_RANK_RELEASE);
	return ret;
}

