/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.c -- a replica: its ring, its endpoints, and the conversation
 * with one primary at a time.
 *
 * Record bytes arrive by one-sided writes into the registered ring and are
 * made durable by the primary's flush requests (served by the RPMA core's
 * progress thread with the backend's persist).  This file only handles the
 * control channel: it tells the primary where its log stands, answers the
 * catch-up queries, truncates and moves its checkpoint when told, and
 * keeps the commit point that limits its readers.  Its view of the ring is
 * refreshed by scanning: the records validate themselves.
 *
 * A HELLO is welcome at any time, also while a primary is being served: a
 * promotion's new primary fences this replica (fence() has the order) and
 * the old primary's session ends with an ERROR saying so.  A HELLO of an
 * epoch below the one followed is answered STALE and changes nothing.
 *
 * A log made anew has promised nothing: until it has taken its promise
 * floor from other nodes of its configuration (promise_floor.h), it
 * answers PROBEs and refuses every other HELLO, changing nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "ctl/ctl_chan.h"
#include "common/fabric.h"
#include "common/elog.h"
#include "common/fault.h"
#include "log/log_lock.h"
#include "common/membership.h"
#include "common/tsan.h"

#include "replica/replica_internal.h"
#include "replica/promise_floor.h"
#include "log/wal.h"
#include "common/errors.h"


static int
send_error(struct ctl_chan *ch, int code, const char *text)
{
	struct ctl_msg m = { .type = CTL_ERROR };

	m.u.error.code = code;
	snprintf(m.u.error.text, sizeof(m.u.error.text), "%s", text);
	return ctl_chan_send(ch, &m, 1000);
}

/* constant time: how much of a token matched must not leak through timing */
static bool
token_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/*
 * The primary's data connection: it connects right after HELLO_REPLY.
 * Over TLS it must present this session's admission token as its private
 * data; anything else is rejected before it is accepted, and the wait
 * goes on (bounded by the timeout) for the real one.
 */
static int
accept_data(struct replica *r, struct ctl_chan *ch, struct rpma_conn **conn)
{
	uint8_t token[CTL_TOKEN_SIZE];
	bool need_token = ctl_chan_admission_token(ch, token) == 0;
	/* for tests only (replica_cfg.test_refuse_data) */
	bool refuse_all = r->cfg->test_refuse_data != 0;
	uint64_t until = clock_now_ms() + (uint64_t)r->cfg->timeout_ms;
	struct pollfd pfd[2] = {
		{ .events = POLLIN },
		{ .fd = ctl_chan_fd(ch), .events = POLLIN },
	};
	int ret;

	if (REPL_FAULTED() || rpma_ep_get_fd(r->ep, &pfd[0].fd))
		return REPL_E_TRANSPORT;
	/* readable may mean no request (libfabric's wait fd): never block on it */
	{
		int fl = fcntl(pfd[0].fd, F_GETFL);

		if (fl < 0 || fcntl(pfd[0].fd, F_SETFL, fl | O_NONBLOCK) != 0)
			return REPL_E_TRANSPORT;
	}
	for (;;) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn_private_data pdata = { NULL, 0 };
		int left = (int)(until - clock_now_ms());

		/* the primary sends nothing before it connects: input means it left */
		if (left <= 0 || poll(pfd, 2, left) <= 0 || !(pfd[0].revents & POLLIN))
			return REPL_E_TRANSPORT;
		struct rpma_conn_cfg *ccfg = fabric_conn_cfg(r->cfg->provider,
			64, r->cfg->timeout_ms);

		ret = ccfg ? rpma_ep_next_conn_req(r->ep, ccfg, &req) : REPL_E_NOMEM;
		rpma_conn_cfg_delete(&ccfg);
		if (ret == RPMA_E_NO_EVENT) {
			/*
			 * Readable without an event: the provider's progress
			 * (a request still arriving) wakes the fd too, so a
			 * retry at once would spin until it is complete.
			 */
			(void)poll(NULL, 0, 1);
			continue;
		}
		if (ret)
			return ret;
		if (refuse_all) {
			REPL_LOG_WARNING("replica: refused a data connection from the "
				"session with %s (test_refuse_data)",
				ctl_chan_peer(ch));
			rpma_conn_req_delete(&req);
			continue;
		}
		if (need_token && (rpma_conn_req_get_private_data(req, &pdata) ||
		    pdata.len != CTL_TOKEN_SIZE ||
		    !token_equal(pdata.ptr, token, CTL_TOKEN_SIZE))) {
			REPL_LOG_WARNING("replica: refused a data connection without the "
				"admission token of the session with %s (%u bytes of "
				"private data)", ctl_chan_peer(ch), (unsigned)pdata.len);
			rpma_conn_req_delete(&req);
			continue;
		}
		if ((ret = rpma_conn_req_connect(&req, NULL, conn)))
			return ret;
		break;
	}
	if ((ret = fabric_conn_established(*conn, r->cfg->timeout_ms))) {
		rpma_conn_delete(conn);
		return ret;
	}
	return 0;
}

static void
drop_conn(struct rpma_conn **conn)
{
	fabric_conn_drop(conn, 200);
}

/*
 * Before a session's HELLO_REPLY, which is what its primary waits for to
 * open the data connection: every data connection request already queued
 * is a former attempt's (its primary gave up on it, and its endpoint is
 * gone), and is rejected.  A replica stopped for a while (SIGSTOP, a
 * paused VM) finds one queued per attempt the primary made meanwhile;
 * over plain TCP nothing else tells them from the current one (over TLS
 * the session's admission token does), and each accepted in its place
 * would leave the current one to time out, and the next, forever.
 */
static void
drop_stale_conn_reqs(struct replica *r)
{
	struct rpma_conn_req *req;
	unsigned dropped = 0;
	int fd, fl, ret;

	if (rpma_ep_get_fd(r->ep, &fd) || (fl = fcntl(fd, F_GETFL)) < 0 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return;
	for (;;) {
		struct rpma_conn_cfg *ccfg = fabric_conn_cfg(r->cfg->provider, 64,
			r->cfg->timeout_ms);

		req = NULL;
		ret = ccfg ? rpma_ep_next_conn_req(r->ep, ccfg, &req) : REPL_E_NOMEM;
		rpma_conn_cfg_delete(&ccfg);
		if (ret != 0)
			break;
		rpma_conn_req_delete(&req);
		dropped++;
	}
	if (dropped)
		REPL_LOG_NOTICE("replica: dropped %u data connection requests of former "
			"attempts before a new session", dropped);
}

/*
 * A SET_HEAD while a reader holds records (repl_replica_hold): the
 * checkpoint moves at most to the first record held, and the ACK says
 * where it went; the primary releases no further (docs/replication.md,
 * "Held records").  A primary whose own checkpoint had passed that point
 * before this session began released those records everywhere: holding
 * them here would keep bytes its appends overwrite, so the move is made
 * and the reader finds the records gone.
 */
static void
hold_head(struct replica *r, struct log_pos *p)
{
	struct log_pos at;
	uint64_t held;

	if (r->cfg->state == NULL || !replica_state_held(r->cfg->state, &held) ||
	    p->lsn <= held + 1)
		return;
	if (r->s.primary_head > held + 1) {
		REPL_LOG_WARNING("replica: the primary released records up to LSN "
			"%llu, past the %llu held here: they are gone",
			(unsigned long long)r->s.primary_head - 1,
			(unsigned long long)held);
		return;
	}
	wal_refresh(r->wal);
	wal_positions(r->wal, &at, NULL, NULL);
	if (held + 1 <= at.lsn || wal_pos_after(r->wal, held, &at) == 0)
		*p = at;	/* no move, or to the first record held */
}

/*
 * What an ACK (or an answer to a HEARTBEAT) says of the records a reader
 * holds here (0: none); noted as told to this session's primary
 */
static uint64_t
hold_next(struct replica *r)
{
	return r->cfg->state != NULL ?
		replica_state_tell_hold(r->cfg->state, r->n.sessions) : 0;
}

static int
answer(struct replica *r, struct ctl_chan *ch, const struct ctl_msg *m)
{
	struct ctl_msg out = { .seq = m->seq };
	struct log_pos p, head, tail;
	int ret;

	switch (m->type) {
	case CTL_QUERY:
		out.type = CTL_QUERY_REPLY;
		out.u.query_reply.lsn = m->u.query.lsn;
		wal_refresh(r->wal);
		if (wal_pos_after(r->wal, m->u.query.lsn, &p) == 0) {
			out.u.query_reply.found = 1;
			out.u.query_reply.after = p;
		}
		return ctl_chan_send(ch, &out, r->cfg->timeout_ms);
	case CTL_TRUNCATE:
	case CTL_SET_HEAD:
		p = m->u.cut.pos;
		if (m->type == CTL_SET_HEAD) {
			/* a checkpoint never goes back: one already past stays */
			wal_positions(r->wal, &head, NULL, NULL);
			if (p.lsn < head.lsn)
				p = head;
			hold_head(r, &p);
		}
		ret = m->type == CTL_TRUNCATE ?
			wal_truncate(r->wal, &p, m->u.cut.epoch) :
			wal_set_head(r->wal, &p);
		wal_positions(r->wal, &head, &tail, NULL);
		out.type = CTL_ACK;
		out.u.ack.status = ret;
		out.u.ack.head = head;
		out.u.ack.tail = tail;
		out.u.ack.hold_next = hold_next(r);
		if (ret)
			REPL_LOG_WARNING("replica: %s to LSN %llu refused (%d)",
				ctl_msg_type_name(m->type),
				(unsigned long long)p.lsn, ret);
		return ctl_chan_send(ch, &out, r->cfg->timeout_ms);
	case CTL_COMMIT:
		/* take in what was written, then let readers up to the commit */
		wal_refresh(r->wal);
		p = m->u.commit.flushed;
		wal_note_persisted(r->wal, &p);
		wal_set_read_limit(r->wal, m->u.commit.commit_lsn);
		if (r->cfg->state != NULL)
			replica_state_commit(r->cfg->state, m->u.commit.commit_lsn);
		return 0;
	case CTL_MEMBERSHIP: {
		struct membership cur;

		/*
		 * It caught up under this membership: keep it for promotions,
		 * durably, before the ACK says so.  An older one than it holds
		 * is refused: the sender missed a change.
		 */
		membership_load(r->mem, &cur);
		ret = 0;
		if (m->u.membership.config_epoch < cur.config_epoch) {
			REPL_LOG_WARNING("replica: refused configuration epoch %llu "
				"from %s: it holds %llu", (unsigned long long)
				m->u.membership.config_epoch, ctl_chan_peer(ch),
				(unsigned long long)cur.config_epoch);
			ret = REPL_E_INVAL;
		} else if ((ret = membership_store(r->mem, &m->u.membership))) {
			REPL_LOG_ERROR("replica: cannot store the membership (%d)", ret);
		}
		wal_positions(r->wal, &head, &tail, NULL);
		out.type = CTL_ACK;
		out.u.ack.status = ret;
		out.u.ack.head = head;
		out.u.ack.tail = tail;
		out.u.ack.hold_next = hold_next(r);
		return ctl_chan_send(ch, &out, r->cfg->timeout_ms);
	}
	case CTL_VERIFY: {
		struct ctl_verify_reply *v = &out.u.verify_reply;
		const struct ctl_verify *q = &m->u.verify;

		/* the decoder bounds the ranges: at most 64 per message */
		out.type = CTL_VERIFY_REPLY;
		v->from = q->from;
		v->to = q->to;
		v->per_range = q->per_range;
		v->n = (uint32_t)ctl_verify_ranges(q->from, q->to, q->per_range);
		wal_refresh(r->wal);
		for (uint32_t i = 0; i < v->n; i++) {
			uint64_t lo = q->from + (uint64_t)i * q->per_range;
			uint64_t hi = q->to - lo < q->per_range ? q->to :
				lo + q->per_range - 1;

			if (wal_range_crc(r->wal, lo, hi, &v->crc[i]) != 0) {
				v->crc[i] = 0;
				v->flags[i] = CTL_VERIFY_F_MISSING;
			}
		}
		return ctl_chan_send(ch, &out, r->cfg->timeout_ms);
	}
	case CTL_HEARTBEAT:
		/* what its readers need now: a hold is seen between releases */
		out.type = CTL_HEARTBEAT;
		out.u.heartbeat.time_ns = m->u.heartbeat.time_ns;
		out.u.heartbeat.hold_next = hold_next(r);
		if (r->cfg->state != NULL &&
		    replica_state_wants_base(r->cfg->state))
			out.u.heartbeat.flags = CTL_HEARTBEAT_F_WANTS_BASE;
		return ctl_chan_send(ch, &out, r->cfg->timeout_ms);
	case CTL_ERROR:
		REPL_LOG_WARNING("replica: the primary at %s reports: %s",
			ctl_chan_peer(ch), m->u.error.text);
		return -1;
	default:
		REPL_LOG_WARNING("replica: unexpected %s from %s",
			ctl_msg_type_name(m->type), ctl_chan_peer(ch));
		return -1;
	}
}

/* ------------------------------------------------------------------ */
/* sessions and fencing                                               */

/* the session ends: its data connection first, so no write outlives it */
static void
end_session(struct replica *r, const char *why_fenced)
{
	struct session *s = &r->s;

	if (s->ch && why_fenced) {
		struct ctl_msg m = { .type = CTL_ERROR };

		m.u.error.code = CTL_CODE_FENCED;
		snprintf(m.u.error.text, sizeof(m.u.error.text), "%s", why_fenced);
		(void)ctl_chan_send(s->ch, &m, 200);
	}
	if (s->ch)
		session_state(r, REPL_SESSION_IDLE);
	drop_conn(&s->conn);
	ctl_chan_close(&s->ch);
	*s = (struct session){ 0 };
	/*
	 * What it wrote is in the ring, flushed or not: take it in and make
	 * it durable, so that the log this replica reports is on its medium.
	 */
	if (wal_refresh_persist(r->wal))
		REPL_LOG_ERROR("replica: cannot persist its ring");
}

/*
 * Accept epoch (>= the one followed so far) from primary node `from`: the
 * order matters.  First no flush of an older epoch is acknowledged any
 * more (atomically with any being served: from here on nothing the old
 * primary writes can become durable by its word); then its data
 * connection goes (its QP to the error state: writes in flight die); the
 * ring gets a new registration and the old one is dropped (its key names
 * nothing: a write with it fails at the NIC); the new epoch is made
 * durable; the ring is rescanned (a write cut in half leaves a torn tail
 * that the scan stops at).  Only then is the new primary answered.
 */
static int
fence(struct replica *r, uint64_t epoch, uint32_t from, uint64_t from_inc)
{
	char why[CTL_TEXT_MAX + 1];
	int ret;

	snprintf(why, sizeof(why), "fenced: this replica now follows epoch %llu "
		"of node %u", (unsigned long long)epoch, (unsigned)from);
	if (r->s.ch)
		REPL_LOG_NOTICE("replica: %s; dropping the session with %s (epoch "
			"%llu)", why, ctl_chan_peer(r->s.ch),
			(unsigned long long)r->s.epoch);
	REPL_FAULT(REPL_E_TRANSPORT, {});
	if ((ret = err_transport(rpma_ext_peer_fence(r->peer, epoch))))
		return ret;
	r->n.fences++;
	end_session(r, r->s.ch && r->s.epoch < epoch ? why : NULL);
	if ((ret = new_region(r)))
		return ret;
	if ((epoch > r->id.epoch || r->id.epoch_inc == 0) &&
	    (ret = wal_set_epoch(r->wal, epoch, from_inc)))
		return ret;
	wal_identity(r->wal, &r->id, &r->ring_size);
	return wal_refresh_persist(r->wal);
}

/*
 * A HELLO this replica must not take, whatever its epoch's order: why
 * (0 if none).  An epoch names the node that chose it in its low 16 bits;
 * an epoch this replica promised is its chooser's alone, not another
 * incarnation's of the same node (a log made anew on a replaced disk
 * starts from epoch 0 and would pick its old epoch again); and a term
 * far above the one followed is not a promotion's (each goes one above
 * what it finds) but a forged or broken peer's, which would use up the
 * epochs.  A replica that never followed one takes any.
 */
static int
hello_implausible(const struct replica *r, const struct ctl_hello *h,
		char *why, size_t n)
{
	uint64_t term = h->epoch >> 16, followed = r->id.epoch >> 16;

	if (h->node_id == r->id.node_id)
		snprintf(why, n, "it claims this replica's own node id %u",
			(unsigned)h->node_id);
	else if (h->epoch == 0 || (h->epoch & 0xffff) != (h->node_id & 0xffff))
		snprintf(why, n, "its epoch %llu is not one node %u chose (the "
			"low 16 bits name the node)", (unsigned long long)h->epoch,
			(unsigned)h->node_id);
	else if (h->epoch == r->id.epoch && r->id.epoch_inc != 0 &&
		 h->incarnation != r->id.epoch_inc)
		snprintf(why, n, "epoch %llu was promised to another incarnation "
			"of node %u (%016llx, not %016llx): its log was made anew",
			(unsigned long long)h->epoch, (unsigned)h->node_id,
			(unsigned long long)r->id.epoch_inc,
			(unsigned long long)h->incarnation);
	else if (r->id.epoch != 0 && term > followed + REPLICA_TERM_JUMP_MAX)
		snprintf(why, n, "its epoch %llu is %llu terms above the %llu this "
			"replica follows (at most %d): implausible",
			(unsigned long long)h->epoch,
			(unsigned long long)(term - followed),
			(unsigned long long)r->id.epoch, REPLICA_TERM_JUMP_MAX);
	else
		return 0;
	return -1;
}

/* which membership this replica's log holds: its epoch and its crc */
static void
reply_membership(struct replica *r, struct ctl_hello_reply *hr)
{
	struct membership cur;

	if (membership_load(r->mem, &cur) != 0)
		cur.config_epoch = 0;
	hr->config_epoch = cur.config_epoch;
	hr->config_crc = membership_crc(&cur);
}

/* a new control connection: its HELLO, and the session it may start */
static void
greet(struct replica *r, struct ctl_chan *ch)
{
	const struct replica_cfg *cfg = r->cfg;
	struct ctl_msg m, out = { .type = CTL_HELLO_REPLY };
	struct ctl_hello_reply *hr = &out.u.hello_reply;
	struct rpma_conn *conn = NULL;
	struct log_pos head, tail;
	struct wal_status st;
	bool fence_only;
	int ret;

	if (ctl_chan_recv(ch, &m, cfg->timeout_ms) != 0 || m.type != CTL_HELLO) {
		REPL_LOG_WARNING("replica: no HELLO from %s: %s", ctl_chan_peer(ch),
			ctl_chan_why(ch));
		goto close;
	}
	{
		/*
		 * A primary that gave up waiting (this replica was stopped) left
		 * its HELLO behind and closed: do not answer the dead.
		 */
		struct ctl_msg extra;

		if (ctl_chan_recv(ch, &extra, 0) != CTL_CHAN_AGAIN)
			goto close;
	}
	if (memcmp(m.u.hello.cluster_uuid, r->id.cluster_uuid, 16) != 0) {
		send_error(ch, RPMA_E_INVAL, "another cluster: the cluster UUIDs differ");
		goto close;
	}
	if (m.u.hello.ring_size != r->ring_size) {
		send_error(ch, RPMA_E_INVAL, "the rings differ in size");
		goto close;
	}
	fence_only = (m.u.hello.flags & CTL_HELLO_F_FENCE_ONLY) != 0;
	memcpy(hr->cluster_uuid, r->id.cluster_uuid, 16);
	hr->node_id = r->id.node_id;
	hr->ring_size = r->ring_size;
	hr->incarnation = r->id.incarnation;
	out.seq = m.seq;
	if (m.u.hello.flags & CTL_HELLO_F_PROBE) {
		/* a restarted primary asks what this replica follows: tell */
		wal_positions(r->wal, &head, &tail, NULL);
		hr->flags = m.u.hello.epoch < r->id.epoch ? CTL_HELLO_F_STALE : 0;
		if (r->floor)	/* its 0 is no promise another floor may use */
			hr->flags |= CTL_HELLO_F_PENDING;
		hr->epoch = hr->prior_epoch = r->id.epoch;
		hr->epoch_inc = r->id.epoch_inc;
		hr->head = head;
		hr->tail = tail;
		hr->tail_epoch = wal_tail_epoch(r->wal);
		reply_membership(r, hr);
		(void)ctl_chan_send(ch, &out, cfg->timeout_ms);
		goto close;
	}
	if (r->floor) {
		/* it promised nothing yet: nothing may fence it or make it serve */
		char why[CTL_TEXT_MAX + 1];

		snprintf(why, sizeof(why), "not ready: taking its promise floor "
			"from %d other nodes (%d answered)",
			promise_floor_needed(r->floor),
			promise_floor_answered(r->floor));
		REPL_LOG_INFO("replica: refused node %u at %s (epoch %llu): %s",
			(unsigned)m.u.hello.node_id, ctl_chan_peer(ch),
			(unsigned long long)m.u.hello.epoch, why);
		send_error(ch, RPMA_E_AGAIN, why);
		goto close;
	}
	{
		char why[CTL_TEXT_MAX + 1];

		if (hello_implausible(r, &m.u.hello, why, sizeof(why))) {
			REPL_LOG_WARNING("replica: refused node %u at %s: %s",
				(unsigned)m.u.hello.node_id, ctl_chan_peer(ch), why);
			send_error(ch, RPMA_E_INVAL, why);
			goto close;
		}
	}
	if (m.u.hello.epoch < r->id.epoch) {
		/* a primary from before the one this replica follows: fenced */
		REPL_LOG_NOTICE("replica: refused node %u at %s: its epoch %llu is "
			"below %llu", (unsigned)m.u.hello.node_id, ctl_chan_peer(ch),
			(unsigned long long)m.u.hello.epoch,
			(unsigned long long)r->id.epoch);
		wal_positions(r->wal, &head, &tail, NULL);
		hr->flags = CTL_HELLO_F_STALE;
		hr->epoch = hr->prior_epoch = r->id.epoch;
		hr->epoch_inc = r->id.epoch_inc;
		hr->head = head;
		hr->tail = tail;
		reply_membership(r, hr);
		(void)ctl_chan_send(ch, &out, cfg->timeout_ms);
		goto close;
	}
	hr->prior_epoch = r->id.epoch;
	if ((ret = fence(r, m.u.hello.epoch, m.u.hello.node_id,
			m.u.hello.incarnation))) {
		send_error(ch, RPMA_E_PROVIDER, "cannot fence the former primary");
		goto close;
	}
	wal_positions(r->wal, &head, &tail, NULL);
	wal_status(r->wal, &st);
	hr->flags = (st.health & REPL_HEALTH_SUSPECT) ? CTL_HELLO_F_SUSPECT : 0;
	hr->epoch = r->id.epoch;
	hr->head = head;
	hr->tail = tail;
	hr->tail_epoch = wal_tail_epoch(r->wal);
	hr->head_epoch = wal_epoch_before(r->wal, head.lsn);
	hr->epoch_inc = r->id.epoch_inc;
	reply_membership(r, hr);
	hr->data_port = (uint16_t)atoi(cfg->data_port);
	{
		enum rpma_ext_mem_backend b;

		/* the same numbers: CTL_BACKEND_* are the core's backends */
		if (rpma_ext_mem_get_backend(r->mem, &b) == 0 &&
		    (int)b >= CTL_BACKEND_PMEM && (int)b <= CTL_BACKEND_MAX)
			hr->backend = (uint8_t)b;
	}
	hr->desc_len = (uint16_t)r->desc_len;
	memcpy(hr->desc, r->desc, r->desc_len);
	if (!fence_only)
		drop_stale_conn_reqs(r);
	if (REPL_FAULTED() || ctl_chan_send(ch, &out, cfg->timeout_ms) != 0)
		goto close;
	if (!fence_only && (ret = accept_data(r, ch, &conn))) {
		REPL_LOG_WARNING("replica: the primary at %s did not open its data "
			"connection (%d)", ctl_chan_peer(ch), ret);
		goto close;
	}
	REPL_LOG_NOTICE("replica: %s the primary at %s%s%s, epoch %llu, "
		"log %llu..%llu", fence_only ? "fenced for" : "following",
		ctl_chan_peer(ch), r->tls ? " as " : "", ctl_chan_peer_name(ch),
		(unsigned long long)m.u.hello.epoch,
		(unsigned long long)head.lsn, (unsigned long long)tail.lsn - 1);
	r->s = (struct session){ .ch = ch, .conn = conn, .epoch = m.u.hello.epoch,
		.primary = m.u.hello.node_id, .last_heard = clock_now_ms(),
		.primary_head = m.u.hello.head.lsn };
	session_state(r, fence_only ? REPL_SESSION_FENCED_FOR : REPL_SESSION_FOLLOWING);
	if (!fence_only)
		r->heard_at = r->s.last_heard;
	r->n.sessions++;
	return;
close:
	ctl_chan_close(&ch);
}

/*
 * The session's messages.  The control channel is the primary's
 * heartbeat: its silence or its close ends the session (the data
 * connection's events are not pollable on every provider).
 */
static void
serve(struct replica *r)
{
	struct session *s = &r->s;
	struct ctl_msg m;
	int ret;

	while ((ret = ctl_chan_recv(s->ch, &m, 0)) == 0) {
		s->last_heard = clock_now_ms();
		/* only a primary it follows: one fencing it is no primary yet */
		if (s->conn != NULL)
			r->heard_at = s->last_heard;
		r->n.queries += m.type == CTL_QUERY;
		r->n.truncates += m.type == CTL_TRUNCATE;
		r->n.head_moves += m.type == CTL_SET_HEAD;
		r->n.commits += m.type == CTL_COMMIT;
		if (answer(r, s->ch, &m) != 0) {
			end_session(r, NULL);
			return;
		}
	}
	if (ret != CTL_CHAN_AGAIN) {
		if (ret != CTL_CHAN_CLOSED)
			REPL_LOG_WARNING("replica: control channel from %s: %s",
				ctl_chan_peer(s->ch), ctl_chan_why(s->ch));
		end_session(r, NULL);
		return;
	}
	if (clock_now_ms() - s->last_heard > (uint64_t)r->cfg->timeout_ms) {
		REPL_LOG_WARNING("replica: the primary at %s is silent: dropped",
			ctl_chan_peer(s->ch));
		r->n.silent_drops++;
		end_session(r, NULL);
	}
}

int
replica_serve(struct replica *r)
{
	const struct replica_cfg *cfg = r->cfg;
	struct pending_set pend = { .n = 0 };

	while (!*cfg->stop) {
		struct pollfd p[2 + PENDING_MAX] = {
			{ .fd = ctl_listener_fd(r->listener), .events = POLLIN },
			{ .fd = r->s.ch ? ctl_chan_fd(r->s.ch) : -1, .events = POLLIN },
		};
		int wait = pending_poll(&pend, &p[2], 100);

		/* wait here (checking stop) */
		(void)poll(p, (nfds_t)(2 + pend.n), wait);
		if (r->floor)
			floor_step(r);
		if (r->s.ch)
			serve(r);
		publish_state(r);
		/* a new primary may come while one is served: it may fence it */
		if (p[0].revents & POLLIN)
			pending_accept(r, &pend);
		for (struct ctl_chan *ch; (ch = pending_take_ready(r, &pend)) != NULL;) {
			greet(r, ch);
			publish_state(r);
		}
	}
	pending_drop_all(r, &pend);
	end_session(r, NULL);
	session_state(r, REPL_SESSION_STOPPED);
	publish_state(r);
	return 0;
}

void
replica_close(struct replica **rp)
{
	if (*rp == NULL)
		return;
	if ((*rp)->s.ch)	/* closed without replica_serve's own end */
		end_session(*rp, NULL);
	close_all(*rp);
	free(*rp);
	*rp = NULL;
}

int
replica_run(const struct replica_cfg *cfg)
{
	struct replica *r = NULL;
	int ret;

	if ((ret = replica_open(cfg, &r)))
		return ret;
	if (cfg->ready)
		cfg->ready(cfg->ready_arg);
	ret = replica_serve(r);
	replica_close(&r);
	return ret;
}

int
replica_iterate(struct replica *r, uint64_t from,
		int (*cb)(void *arg, uint64_t lsn, const void *data, size_t len),
		void *arg)
{
	/*
	 * The wal takes its own lock: the serving thread may run meanwhile.
	 * Records can arrive after the last COMMIT (a catch-up that ends
	 * once the commit point stopped moving): take in what was written
	 * first, or they stay out of sight until the next COMMIT.
	 */
	int ret;

	(void)wal_refresh(r->wal);
	/*
	 * The records are the ring's bytes, which the transport writes
	 * (common/tsan.h), read here and by cb (repld's sqlite_copy copies
	 * them out): watched, every byte costs a race report's work, and a
	 * copy's catch-up took minutes.
	 */
	RING_READS_BEGIN();
	ret = wal_iterate(r->wal, from, cb, arg);
	RING_READS_END();
	return ret;
}

int
replica_iterate_records(struct replica *r, uint64_t from, repl_record_fn *cb,
		void *arg)
{
	int ret;

	/* as replica_iterate: what arrived after the last COMMIT first */
	(void)wal_refresh(r->wal);
	RING_READS_BEGIN();
	ret = wal_iterate_records(r->wal, from, UINT64_MAX, cb, arg);
	RING_READS_END();
	return ret;
}
