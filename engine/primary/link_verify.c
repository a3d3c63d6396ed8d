/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_verify.c -- the link thread's side of a verification (verify.c is
 * the caller's): it takes the request the caller left in the link, notes
 * the message that carried it, and hands back the replica's answer.  All
 * under c->lock, which the caller waits on.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "primary/primary.h"

bool
link_verify_take(struct link *l, struct ctl_verify *q)
{
	struct link_verify *v = &l->verify;
	bool take;

	if (atomic_load_explicit(&v->asked, memory_order_relaxed) == v->seen)
		return false;	/* nothing asked since it last looked */
	cluster_lock(l->c);
	v->seen = v->asked;
	take = !v->sent && v->answered < v->asked;
	if (take) {
		*q = v->q;
		v->sent = true;
		v->sent_req = v->asked;
	}
	cluster_unlock(l->c);
	return take;
}

void
link_verify_sent(struct link *l, uint32_t msg_seq)
{
	cluster_lock(l->c);
	l->verify.msg_seq = msg_seq;
	cluster_unlock(l->c);
}

bool
link_verify_waiting(struct link *l)
{
	bool waiting;

	if (atomic_load_explicit(&l->verify.asked, memory_order_relaxed) ==
	    l->verify.seen)
		return false;
	cluster_lock(l->c);
	waiting = !l->verify.sent && l->verify.answered < l->verify.asked;
	cluster_unlock(l->c);
	return waiting;
}

int
link_verify_reply(struct link *l, const struct ctl_msg *m)
{
	struct link_verify *v = &l->verify;
	const struct ctl_verify_reply *r = &m->u.verify_reply;
	int ret = 0;

	cluster_lock(l->c);
	if (!v->sent || m->seq != v->msg_seq) {
		ret = -1;	/* nothing of the kind was asked */
	} else {
		v->sent = false;
		v->seen = 0;	/* one asked meanwhile can go now: look again */
		/* a request the caller gave up on gets no answer */
		if (v->sent_req == v->asked && v->answered < v->asked) {
			if (r->from != v->q.from || r->to != v->q.to ||
			    r->per_range != v->q.per_range) {
				ret = -1;
			} else {
				v->reply = *r;
				v->answered = v->sent_req;
				pthread_cond_broadcast(&l->c->cond);
			}
		}
	}
	cluster_unlock(l->c);
	return ret;
}

void
link_verify_reset(struct link *l)
{
	cluster_lock(l->c);
	l->verify.sent = false;
	l->verify.seen = 0;
	pthread_cond_broadcast(&l->c->cond);
	cluster_unlock(l->c);
}
