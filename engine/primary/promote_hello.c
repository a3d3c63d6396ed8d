/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promote_hello.c -- a promotion's HELLOs (promote.c's steps 0 and 2):
 * one built, sent and judged (promote_hello_one), or a round's all at once, a
 * thread each, taken as they end (asking_*), each behind the caller's
 * gate (repl_cfg.promote_gate).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "primary/primary.h"
#include "primary/promote_hello.h"
#include "ctl/ctl_chan.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fault.h"

/*
 * A promotion's HELLO has timeouts of its own.  Connecting (with TLS, the
 * handshake too) takes a live node a few round trips; a node that is down
 * or cut off does not refuse, it is silent, and only the timeout ends the
 * attempt.  So at most 1 s (down_timeout_ms if shorter): the next round
 * tries again 200 ms later, about when the kernel would first have sent
 * the SYN again.  A paused node's kernel still accepts, but its TLS
 * handshake needs the process: with TLS it costs this timeout, not the
 * answer's.  The answer needs the node's fencing, a flush included: it
 * gets as long as the cluster lets any node be silent before it is down,
 * down_timeout_ms.  Rounds ask their nodes at once, so either timeout
 * costs a promotion only when it cannot be decided without that node.
 */
#define HELLO_CONNECT_MS 1000


/*
 * The caller's gate (repl_cfg.promote_gate) closed: it may promote no more
 * (its leader lease ran out), so nothing more is fenced.
 */
bool
promote_gate_closed(const struct cluster *c, const char *before)
{
	if (c->cfg.promote_gate == NULL ||
	    c->cfg.promote_gate(c->cfg.promote_gate_arg) == 0)
		return false;
	REPL_LOG_ERROR("promotion stopped before %s: this node may promote no "
		"more (the right its caller holds, a leader lease, ran out)",
		before);
	return true;
}

void
fenced_close_all(struct fenced *f, int n)
{
	for (int i = 0; i < n; i++)
		ctl_chan_close(&f[i].ch);
}

static int
connect_ms(const struct cluster *c)
{
	return c->cfg.down_timeout_ms < HELLO_CONNECT_MS ?
		c->cfg.down_timeout_ms : HELLO_CONNECT_MS;
}

/* the HELLO with flags at epoch, as replica f gets it next */
static void
hello_msg(struct cluster *c, uint64_t epoch, uint32_t flags, struct fenced *f,
		struct ctl_msg *m)
{
	struct log_pos head;

	wal_positions(c->wal, &head, NULL, NULL);
	*m = (struct ctl_msg){ .type = CTL_HELLO };
	memcpy(m->u.hello.cluster_uuid, c->id.cluster_uuid, 16);
	m->u.hello.node_id = c->id.node_id;
	m->u.hello.flags = flags;
	m->u.hello.epoch = epoch;
	m->u.hello.ring_size = c->ring_size;
	m->u.hello.head = head;
	m->u.hello.incarnation = c->id.incarnation;
	m->u.hello.head_epoch = wal_epoch_before(c->wal, head.lsn);
	m->seq = ++f->seq;
}

/* connect to host:port: 0, or -1 with why */
static int
hello_connect(const char *host, const char *port, const char *src,
		struct ctl_tls *tls, int ms, struct ctl_chan **ch, char *why,
		size_t n)
{
	int ret = ctl_connect_from(host, port, src, ms, tls, ch);

	if (ret)
		snprintf(why, n, "unreachable: %s", ret == -EPROTO ?
			ctl_last_error() : strerror(-ret));
	return ret ? -1 : 0;
}

/* send the HELLO m on ch and wait up to ms for its answer, into m */
static int
hello_exchange(struct ctl_chan *ch, struct ctl_msg *m, int ms, char *why,
		size_t n)
{
	if (REPL_FAULTED() || ctl_chan_send(ch, m, ms) != 0 ||
	    ctl_chan_recv(ch, m, ms) != 0) {
		snprintf(why, n, "no answer: %s", ctl_chan_why(ch));
		return -1;
	}
	return 0;
}

/*
 * Replica i's answer m (on f->ch) to HELLO with flags at epoch: 0 answered
 * (f->ch stays open, f->hr its answer), 1 it follows a higher epoch
 * (f->hr.epoch), -1 refused (f->why).
 */
static int
hello_judge(struct cluster *c, int i, uint64_t epoch, uint32_t flags,
		const struct ctl_msg *m, struct fenced *f)
{
	const struct cluster_peer *rep = &c->peers[i];

	if (m->type == CTL_ERROR) {
		snprintf(f->why, sizeof(f->why), "refused: %s", m->u.error.text);
		goto fail;
	}
	if (m->type != CTL_HELLO_REPLY) {
		snprintf(f->why, sizeof(f->why), "answered %s",
			ctl_msg_type_name(m->type));
		goto fail;
	}
	f->hr = m->u.hello_reply;
	if (memcmp(f->hr.cluster_uuid, c->id.cluster_uuid, 16) != 0 ||
	    f->hr.ring_size != c->ring_size) {
		snprintf(f->why, sizeof(f->why), "another cluster or ring size");
		goto fail;
	}
	if (f->hr.flags & CTL_HELLO_F_STALE) {
		ctl_chan_close(&f->ch);
		return 1;
	}
	/* answered, but from an older copy of its log: it does not count */
	f->older = cluster_floor_check(c, rep->host, rep->port, &f->hr, f->why,
		sizeof(f->why)) != 0;
	if (!f->older && !(flags & CTL_HELLO_F_PROBE))
		cluster_floor_promised(c, &f->hr, epoch);
	return 0;
fail:
	ctl_chan_close(&f->ch);
	return -1;
}

/*
 * HELLO with flags to replica i, from this thread: 0 answered (f->ch
 * stays open, f->hr its answer), 1 it follows a higher epoch (f->hr.epoch),
 * -1 unreachable or refused (f->why).
 */
int
promote_hello_one(struct cluster *c, int i, uint64_t epoch, uint32_t flags,
		struct fenced *f)
{
	const struct cluster_peer *rep = &c->peers[i];
	struct ctl_msg m;

	f->why[0] = '\0';
	f->older = false;
	if (hello_connect(rep->host, rep->port, c->cfg.listen_addr, c->tls,
			connect_ms(c), &f->ch, f->why, sizeof(f->why)))
		return -1;
	hello_msg(c, epoch, flags, f, &m);
	if (hello_exchange(f->ch, &m, c->cfg.down_timeout_ms, f->why,
			sizeof(f->why))) {
		ctl_chan_close(&f->ch);
		return -1;
	}
	return hello_judge(c, i, epoch, flags, &m, f);
}

/*
 * Asking: a round's HELLOs, all at once, a thread each (a few dozen peers
 * at most).  The round takes the answers as they come (asking_next) and
 * may end before every thread does, once its outcome is decided
 * (asking_end).  A thread left over then finishes on its own: its
 * connection, if it has one, is shut down at once, a connect in progress
 * ends by its timeout; it closes what it opened and touches nothing of
 * the promotion.  So everything a thread uses is in its asking (copies,
 * and a reference to the TLS context), and the cluster (for the gate)
 * only under the lock while the round is not over; the last one out
 * frees the asking.  The answers are judged by the promotion's thread.
 */
enum { ASK_ANSWERED, ASK_FAILED, ASK_GATE };


struct ask {
	struct asking *a;
	int i;			/* the peer */
	char host[MEMBER_HOST_MAX + 1], port[8];
	struct ctl_msg m;	/* the HELLO, then its answer */
	struct ctl_chan *ch;	/* under a->lock: open, not taken */
	int ret;		/* ASK_* */
	bool ended;
	char why[256];
	struct ask *next;	/* in a->ended */
};

struct asking {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* an ask ended */
	int refs;		/* the round's and each running thread's */
	bool over;		/* the round ended: nothing more counts */
	bool gate_shut;		/* the caller's gate closed: nothing is sent */
	int pending;		/* asks not taken yet */
	struct ask *ended, **tail;	/* in the order they ended */
	const struct cluster *c;	/* for the gate; only while !over */
	bool gated;
	char *src;
	struct ctl_tls *tls;
	int connect_ms, answer_ms;
	int n;
	struct ask asks[];
};

/*
 * The asks still running in this process, whichever round they were of:
 * a cluster going away waits for them (cluster_asks_drain), so that none
 * outlives the process's teardown holding what it shares (the TLS
 * context): a leftover ask ends within its connect timeout, or at once
 * once its connection was shut down.
 */
static pthread_mutex_t asks_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t asks_done;
static pthread_once_t asks_once = PTHREAD_ONCE_INIT;

/* a condition variable whose timed waits run on CLOCK_MONOTONIC (clock.h) */
static void
cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
}

static void
asks_init(void)
{
	cond_init_monotonic(&asks_done);
}
static int asks_running;

static void
asks_add(int d)
{
	(void)pthread_once(&asks_once, asks_init);
	pthread_mutex_lock(&asks_lock);
	asks_running += d;
	if (asks_running == 0)
		pthread_cond_broadcast(&asks_done);
	pthread_mutex_unlock(&asks_lock);
}

void
cluster_asks_drain(int timeout_ms)
{
	struct timespec until = clock_deadline(timeout_ms);

	(void)pthread_once(&asks_once, asks_init);
	pthread_mutex_lock(&asks_lock);
	while (asks_running > 0 &&
	       pthread_cond_timedwait(&asks_done, &asks_lock, &until) == 0)
		;
	pthread_mutex_unlock(&asks_lock);
}

/* drop a reference, with a->lock held (and released) */
static void
asking_unref(struct asking *a)
{
	bool last = --a->refs == 0;

	pthread_mutex_unlock(&a->lock);
	if (!last)
		return;
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	ctl_tls_delete(&a->tls);
	free(a->src);
	free(a);
}

/*
 * k ended with ret (a->lock held): to the queue, with its channel if it
 * answered; returns what the caller is left to close.
 */
static struct ctl_chan *
ask_ended(struct ask *k, int ret, struct ctl_chan *ch)
{
	struct asking *a = k->a;

	k->ret = ret;
	k->ended = true;
	k->ch = NULL;
	if (a->over)
		return ch;		/* nobody takes it */
	*a->tail = k;
	a->tail = &k->next;
	pthread_cond_signal(&a->cond);
	if (ret != ASK_ANSWERED)
		return ch;
	k->ch = ch;
	return NULL;
}

static void *
ask_run(void *arg)
{
	struct ask *k = arg;
	struct asking *a = k->a;
	struct ctl_chan *ch = NULL;
	int ret;

	ret = hello_connect(k->host, k->port, a->src, a->tls, a->connect_ms,
		&ch, k->why, sizeof(k->why)) ? ASK_FAILED : ASK_ANSWERED;
	pthread_mutex_lock(&a->lock);
	if (ret == ASK_ANSWERED && !a->over) {
		k->ch = ch;	/* asking_end() may shut it down from now on */
		/* the gate, immediately before the node is fenced */
		if (a->gate_shut || (a->gated && promote_gate_closed(a->c,
				"fencing a node"))) {
			a->gate_shut = true;
			ret = ASK_GATE;
		}
	}
	if (a->over)
		ret = ASK_FAILED;
	pthread_mutex_unlock(&a->lock);
	if (ret == ASK_ANSWERED && hello_exchange(ch, &k->m, a->answer_ms,
			k->why, sizeof(k->why)))
		ret = ASK_FAILED;
	pthread_mutex_lock(&a->lock);
	ch = ask_ended(k, ret, ch);
	asking_unref(a);
	ctl_chan_close(&ch);
	/* nothing of this thread's may be left once the drain sees it done */
	ctl_tls_thread_end();
	asks_add(-1);
	return NULL;
}

/*
 * Ask the replicas f[i].ask says with HELLO (flags, epoch); gated: the
 * caller's gate is asked before each is sent.  NULL: out of memory.
 */
struct asking *
asking_start(struct cluster *c, struct fenced *f, int n, uint64_t epoch,
		uint32_t flags, bool gated)
{
	struct asking *a;
	pthread_attr_t attr;
	bool attr_ok;

	if (REPL_FAULTED() ||
	    (a = calloc(1, sizeof(*a) + (size_t)n * sizeof(a->asks[0]))) == NULL)
		return NULL;
	a->refs = 1;
	a->n = n;
	a->tail = &a->ended;
	a->c = c;
	a->gated = gated;
	a->connect_ms = connect_ms(c);
	a->answer_ms = c->cfg.down_timeout_ms;
	if ((c->cfg.listen_addr != NULL &&
	     (a->src = strdup(c->cfg.listen_addr)) == NULL) ||
	    (c->tls != NULL && ctl_tls_share(c->tls, &a->tls) != 0)) {
		free(a->src);
		free(a);
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	cond_init_monotonic(&a->cond);
	attr_ok = pthread_attr_init(&attr) == 0 &&
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
	for (int i = 0; i < n; i++) {
		struct ask *k = &a->asks[i];
		pthread_t t;
		int err = EAGAIN;

		if (!f[i].ask)
			continue;
		ctl_chan_close(&f[i].ch);
		f[i].older = false;
		snprintf(f[i].why, sizeof(f[i].why), "not answered yet when the "
			"round was decided");
		k->a = a;
		k->i = i;
		snprintf(k->host, sizeof(k->host), "%s", c->peers[i].host);
		snprintf(k->port, sizeof(k->port), "%s", c->peers[i].port);
		hello_msg(c, epoch, flags, &f[i], &k->m);
		pthread_mutex_lock(&a->lock);
		a->pending++;
		a->refs++;
		pthread_mutex_unlock(&a->lock);
		asks_add(1);
		if (attr_ok && !REPL_FAULTED() &&
		    (err = pthread_create(&t, &attr, ask_run, k)) == 0)
			continue;
		asks_add(-1);
		snprintf(k->why, sizeof(k->why), "cannot start a thread to ask "
			"it: %s", strerror(err));
		pthread_mutex_lock(&a->lock);
		a->refs--;
		(void)ask_ended(k, ASK_FAILED, NULL);
		pthread_mutex_unlock(&a->lock);
	}
	if (attr_ok)
		pthread_attr_destroy(&attr);
	return a;
}

/*
 * The next ask that ended, waiting for one if wait (and one is still
 * running): its replica in *i and what promote_promote_hello_one() would have said, with
 * f[*i] as it leaves it; HELLO_GATE if the caller's gate closed before it
 * was sent; HELLO_NONE if there is none.
 */
int
asking_next(struct asking *a, struct cluster *c, struct fenced *f,
		uint64_t epoch, uint32_t flags, int wait_ms, int *i)
{
	struct timespec until;
	struct ask *k;

	if (wait_ms > 0)
		until = clock_deadline(wait_ms);
	pthread_mutex_lock(&a->lock);
	while (wait_ms != 0 && a->ended == NULL && a->pending > 0)
		if (wait_ms < 0)
			pthread_cond_wait(&a->cond, &a->lock);
		else if (pthread_cond_timedwait(&a->cond, &a->lock, &until) != 0)
			break;
	if ((k = a->ended) != NULL) {
		if ((a->ended = k->next) == NULL)
			a->tail = &a->ended;
		a->pending--;
		f[k->i].ch = k->ch;
		k->ch = NULL;
	}
	pthread_mutex_unlock(&a->lock);
	if (k == NULL)
		return HELLO_NONE;
	*i = k->i;
	snprintf(f[k->i].why, sizeof(f[k->i].why), "%s", k->why);
	if (k->ret == ASK_GATE)
		return HELLO_GATE;
	if (k->ret != ASK_ANSWERED)
		return -1;
	return hello_judge(c, k->i, epoch, flags, &k->m, &f[k->i]);
}

/*
 * The round is over: answers not taken are closed, the threads still
 * asking are left to finish (their connections shut down, so that they
 * do soon) and the gate is asked no more.
 */
void
asking_end(struct asking **ap)
{
	struct asking *a = *ap;

	if (a == NULL)
		return;
	*ap = NULL;
	pthread_mutex_lock(&a->lock);
	a->over = true;
	for (struct ask *k = a->ended; k != NULL; k = k->next)
		ctl_chan_close(&k->ch);
	a->ended = NULL;
	a->tail = &a->ended;
	for (int i = 0; i < a->n; i++)
		if (!a->asks[i].ended && a->asks[i].ch != NULL)
			(void)shutdown(ctl_chan_fd(a->asks[i].ch), SHUT_RDWR);
	asking_unref(a);
}
