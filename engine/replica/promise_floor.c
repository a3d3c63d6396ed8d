/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promise_floor.c -- a log made anew takes a promise floor from the other
 * nodes of its configuration before it serves a primary (promise_floor.h).
 *
 * Why (docs/replication.md has the whole argument): a log made anew has
 * promised nothing, so without a floor it would take a HELLO of any
 * epoch, also from an old primary that a newer promotion superseded but
 * could not reach.  That promotion fenced N - k nodes; after one of them
 * lost its disk, N - k - 1 still remember its epoch, and k + 1 of the
 * other N - 1 nodes include one of them.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/elog.h"
#include "replica/promise_floor.h"
#include "common/errors.h"

#define FLOOR_LOG_MS 10000	/* a round short of answers: logged this often */
#define FLOOR_STEP_MS 100	/* an answer is waited for in steps this long */

struct floor_peer {
	struct promise_floor *f;
	char host[256];
	char port[16];
	pthread_t thread;
	bool started;
	/* the question's outcome, read once its thread ended */
	bool answered;
	struct ctl_hello_reply hr;
	char why[400];
};

struct promise_floor {
	int n;				/* peers */
	int need;
	int timeout_ms;
	uint32_t node_id;
	uint8_t uuid[16];
	struct ctl_tls *tls;
	struct ctl_msg probe;		/* the same question for each peer */
	struct floor_peer *p;

	bool running;			/* a round's threads were started */
	atomic_int left;		/* of them, not ended yet */
	atomic_bool stop;
	bool done;			/* a round had enough answers */
	int answered;			/* in the last round that ended */
	uint64_t next_ms;		/* when the next round is due */
	int period_ms;
	char reported[600];		/* the last shortfall logged */
	uint64_t reported_ms;
};

int
promise_floor_new(const struct replica_cfg *cfg, const uint8_t uuid[16],
		uint32_t node_id, uint64_t incarnation, uint64_t ring_size,
		const struct log_pos *head, struct ctl_tls *tls,
		struct promise_floor **f_ptr)
{
	struct promise_floor *f;
	struct ctl_hello *h;
	int k = cfg->quorum > 0 ? cfg->quorum : 0;

	if (cfg->n_peers <= 0 || cfg->peers == NULL)
		return REPL_E_INVAL;
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->p = calloc((size_t)cfg->n_peers, sizeof(*f->p))) == NULL) {
		free(f);
		return REPL_E_NOMEM;
	}
	f->n = cfg->n_peers;
	/* k + 1 of them; with no more than k peers, every one */
	f->need = k + 1 < f->n ? k + 1 : f->n;
	f->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 1000;
	f->node_id = node_id;
	memcpy(f->uuid, uuid, sizeof(f->uuid));
	f->tls = tls;
	for (int i = 0; i < f->n; i++) {
		f->p[i].f = f;
		snprintf(f->p[i].host, sizeof(f->p[i].host), "%s",
			cfg->peers[i].host ? cfg->peers[i].host : "");
		snprintf(f->p[i].port, sizeof(f->p[i].port), "%s",
			cfg->peers[i].port ? cfg->peers[i].port : "");
	}
	/* a PROBE: answered with the epoch followed, changing nothing */
	f->probe.type = CTL_HELLO;
	f->probe.seq = 1;
	h = &f->probe.u.hello;
	memcpy(h->cluster_uuid, uuid, sizeof(h->cluster_uuid));
	h->node_id = node_id;
	h->flags = CTL_HELLO_F_PROBE;
	h->epoch = 0;
	h->ring_size = ring_size;
	h->head = *head;
	h->incarnation = incarnation;
	atomic_init(&f->left, 0);
	atomic_init(&f->stop, false);
	f->period_ms = FLOOR_PERIOD_MIN_MS;
	f->next_ms = 0;		/* the first round at once */
	*f_ptr = f;
	return 0;
}

int
promise_floor_needed(const struct promise_floor *f)
{
	return f->need;
}

int
promise_floor_peers(const struct promise_floor *f)
{
	return f->n;
}

int
promise_floor_answered(const struct promise_floor *f)
{
	return f->answered;
}

/* one peer's question: its answer in fp->hr, or why not */
static void *
ask(void *arg)
{
	struct floor_peer *fp = arg;
	struct promise_floor *f = fp->f;
	struct ctl_chan *ch = NULL;
	struct ctl_msg m = f->probe;
	uint64_t until;
	int ret;

	(void)pthread_setname_np(pthread_self(), "repl-floor-ask");
	ret = ctl_connect(fp->host, fp->port, f->timeout_ms, f->tls, &ch);
	if (ret) {
		snprintf(fp->why, sizeof(fp->why), "unreachable: %s",
			ret == -EPROTO ? ctl_last_error() : strerror(-ret));
		goto out;
	}
	if (ctl_chan_send(ch, &m, f->timeout_ms) != 0) {
		snprintf(fp->why, sizeof(fp->why), "no answer: %s", ctl_chan_why(ch));
		goto out;
	}
	until = clock_now_ms() + (uint64_t)f->timeout_ms;
	while ((ret = ctl_chan_recv(ch, &m, FLOOR_STEP_MS)) == CTL_CHAN_AGAIN) {
		if (atomic_load(&f->stop)) {
			snprintf(fp->why, sizeof(fp->why), "stopped before it answered");
			goto out;
		}
		if (clock_now_ms() >= until) {
			snprintf(fp->why, sizeof(fp->why), "no answer within %d ms",
				f->timeout_ms);
			goto out;
		}
	}
	if (ret != 0)
		snprintf(fp->why, sizeof(fp->why), "no answer: %s", ctl_chan_why(ch));
	else if (m.type == CTL_ERROR)
		snprintf(fp->why, sizeof(fp->why), "refused: %s", m.u.error.text);
	else if (m.type != CTL_HELLO_REPLY)
		snprintf(fp->why, sizeof(fp->why), "answered %s",
			ctl_msg_type_name(m.type));
	else if (memcmp(m.u.hello_reply.cluster_uuid, f->uuid, sizeof(f->uuid)))
		snprintf(fp->why, sizeof(fp->why), "of another cluster");
	else {
		fp->hr = m.u.hello_reply;
		fp->answered = true;
	}
out:
	ctl_chan_close(&ch);
	atomic_fetch_sub(&f->left, 1);
	return NULL;
}

static void
round_start(struct promise_floor *f)
{
	atomic_store(&f->left, f->n);
	for (int i = 0; i < f->n; i++) {
		struct floor_peer *fp = &f->p[i];

		fp->answered = false;
		fp->why[0] = '\0';
		fp->started = pthread_create(&fp->thread, NULL, ask, fp) == 0;
		if (!fp->started) {
			snprintf(fp->why, sizeof(fp->why), "not asked: no thread");
			atomic_fetch_sub(&f->left, 1);
		}
	}
	f->running = true;
}

static void
round_join(struct promise_floor *f)
{
	for (int i = 0; i < f->n; i++)
		if (f->p[i].started) {
			pthread_join(f->p[i].thread, NULL);
			f->p[i].started = false;
		}
	f->running = false;
}

/* append to a sentence, cut where it is full */
static void __attribute__((format(printf, 4, 5)))
add(char *s, size_t len, const char *sep, const char *fmt, ...)
{
	size_t at = strlen(s);
	va_list ap;

	if (at + 1 >= len)
		return;
	if (at > 0) {
		snprintf(s + at, len - at, "%s", sep);
		at = strlen(s);
	}
	va_start(ap, fmt);
	vsnprintf(s + at, len - at, fmt, ap);
	va_end(ap);
}

/*
 * The round's answers: distinct nodes other than this one (a node under
 * two names counts once; an answer as this very node, a configuration
 * that lists this node as its own peer, not at all).  1 with the highest
 * promise if there are enough.
 */
static int
round_end(struct promise_floor *f, uint64_t *epoch, uint64_t *epoch_inc,
		char *why, size_t whylen)
{
	char missing[sizeof(f->reported)] = "";
	int best = -1, answered = 0;
	uint64_t now = clock_now_ms();

	round_join(f);
	for (int i = 0; i < f->n; i++) {
		struct floor_peer *fp = &f->p[i];

		if (!fp->answered)
			continue;
		if (fp->hr.flags & CTL_HELLO_F_PENDING) {
			/* made anew too: it remembers no promise to pass on */
			fp->answered = false;
			snprintf(fp->why, sizeof(fp->why), "node %u is taking its "
				"own promise floor (its log was made anew too)",
				(unsigned)fp->hr.node_id);
			continue;
		}
		if (fp->hr.node_id == f->node_id) {
			fp->answered = false;
			snprintf(fp->why, sizeof(fp->why), "it answers as this node "
				"(%u): the configuration lists this node as its own "
				"peer", (unsigned)f->node_id);
			continue;
		}
		for (int j = 0; j < i; j++)
			if (f->p[j].answered && f->p[j].hr.node_id == fp->hr.node_id) {
				fp->answered = false;
				snprintf(fp->why, sizeof(fp->why), "node %u answered "
					"already, at %s:%s: one node under two names "
					"counts once", (unsigned)fp->hr.node_id,
					f->p[j].host, f->p[j].port);
				break;
			}
		if (!fp->answered)
			continue;
		answered++;
		if (best < 0 || fp->hr.epoch > f->p[best].hr.epoch)
			best = i;
	}
	f->answered = answered;
	if (answered >= f->need) {
		f->done = true;
		*epoch = best >= 0 ? f->p[best].hr.epoch : 0;
		*epoch_inc = best >= 0 ? f->p[best].hr.epoch_inc : 0;
		why[0] = '\0';
		for (int i = 0; i < f->n; i++)
			if (f->p[i].answered)
				add(why, whylen, ", ", "%s:%s node %u epoch %llu",
					f->p[i].host, f->p[i].port,
					(unsigned)f->p[i].hr.node_id,
					(unsigned long long)f->p[i].hr.epoch);
		return 1;
	}
	for (int i = 0; i < f->n; i++)
		if (!f->p[i].answered)
			add(missing, sizeof(missing), "; ", "%s:%s (%s)", f->p[i].host,
				f->p[i].port, f->p[i].why);
	if (strcmp(missing, f->reported) != 0 ||
	    now - f->reported_ms >= FLOOR_LOG_MS) {
		REPL_LOG_NOTICE("replica: waiting for its promise floor: %d of the "
			"%d answers it needs from the %d other nodes of its "
			"configuration; not answered: %s; asking again", answered,
			f->need, f->n, missing);
		snprintf(f->reported, sizeof(f->reported), "%s", missing);
		f->reported_ms = now;
	}
	f->next_ms = now + (uint64_t)f->period_ms;
	f->period_ms = f->period_ms * 2 > FLOOR_PERIOD_MAX_MS ?
		FLOOR_PERIOD_MAX_MS : f->period_ms * 2;
	return 0;
}

int
promise_floor_step(struct promise_floor *f, uint64_t *epoch,
		uint64_t *epoch_inc, char *why, size_t whylen)
{
	if (f->done)
		return 0;
	if (f->running)
		return atomic_load(&f->left) == 0 ?
			round_end(f, epoch, epoch_inc, why, whylen) : 0;
	if (clock_now_ms() >= f->next_ms)
		round_start(f);
	return 0;
}

void
promise_floor_retry(struct promise_floor *f)
{
	f->done = false;
	f->next_ms = clock_now_ms() + (uint64_t)f->period_ms;
}

void
promise_floor_delete(struct promise_floor **f_ptr)
{
	struct promise_floor *f = *f_ptr;

	if (f == NULL)
		return;
	atomic_store(&f->stop, true);
	if (f->running)
		round_join(f);
	free(f->p);
	free(f);
	*f_ptr = NULL;
}
