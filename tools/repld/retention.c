/* SPDX-License-Identifier: BSD-3-Clause */
/* retention.c -- the primary's log reuses what nothing holds (retention.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "archiver.h"
#include "deadline.h"
#include "log.h"
#include "node.h"
#include "retention.h"


#define PASS_MS 20		/* a pass this often: a full log waits at most this */
#define ALARM_HYSTERESIS 5	/* percent below the threshold that clears it */

/* each hold: its name in status, and what the alarm's line says holds the space */
static const struct {
	const char *name, *reason;
} holds[] = {
	[HOLD_NONE] = { "none", "nothing" },
	[HOLD_COMMIT] = { "commit", "records not yet durable on the quorum (a replica "
		"is down or slow: see replctl status)" },
	[HOLD_KEEP] = { "keep", "retention.keep" },
	[HOLD_KEEP_RECORDS] = { "keep_records", "retention.keep_records" },
	[HOLD_KEEP_SECONDS] = { "keep_seconds", "retention.keep_seconds" },
	[HOLD_CHECKPOINTER] = { "checkpointer", "the checkpointer (retention.mode = "
		"\"checkpointer\"): no RELEASE past the oldest records" },
	[HOLD_REPLICA] = { "replica", "a streaming replica that has not flushed "
		"them, or a replica's hold for its readers (its sqlite_copy, or its "
		"archiver: see that replica's status; one that is down within "
		"retention.replica_max_hold)" },
	[HOLD_READER] = { "reader", "a reader (replctl read) that has not read them, "
		"within retention.reader_max_lag" },
	[HOLD_ARCHIVE] = { "archive", "this node's archiver, which has not archived "
		"them yet (archive.on = \"any\"; within archive.max_hold: see the "
		"archive line of replctl status)" },
	[HOLD_UNSEEN] = { "unseen_replica", "a replica not connected since this "
		"node became the primary, whose readers may hold them (its first "
		"connection says; within retention.replica_max_hold: see replctl "
		"status)" },
};

const char *
retention_hold_name(enum retention_hold h)
{
	return (unsigned)h < sizeof(holds) / sizeof(holds[0]) ? holds[h].name : "?";
}

static uint64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * keep_seconds: note the newest LSN now and then.  The samples span the
 * setting with RETENTION_SAMPLES of them, so a record is kept at most one
 * spacing longer than asked (and, after a start, from the start on).
 */
static void
sample(struct retention *r, uint64_t ms, uint64_t last_lsn, int keep_seconds)
{
	uint64_t every = (uint64_t)keep_seconds * 1000 / RETENTION_SAMPLES;

	if (r->n_samples && ms - r->last_sample_ms < (every ? every : 1))
		return;
	if (r->n_samples == RETENTION_SAMPLES) {
		r->first = (r->first + 1) % RETENTION_SAMPLES;
		r->n_samples--;
	}
	r->samples[(r->first + r->n_samples) % RETENTION_SAMPLES].ms = ms;
	r->samples[(r->first + r->n_samples) % RETENTION_SAMPLES].lsn = last_lsn;
	r->n_samples++;
	r->last_sample_ms = ms;
}

/* the newest LSN appended at least age_ms ago (0: none known to be) */
static uint64_t
lsn_older_than(const struct retention *r, uint64_t ms, uint64_t age_ms)
{
	uint64_t lsn = 0;

	for (unsigned i = 0; i < r->n_samples; i++) {
		unsigned k = (r->first + i) % RETENTION_SAMPLES;

		if (r->samples[k].ms + age_ms > ms)
			break;
		lsn = r->samples[k].lsn;
	}
	return lsn;
}

static void
lower(uint64_t *target, enum retention_hold *held, uint64_t bound,
		enum retention_hold why)
{
	if (bound < *target) {
		*target = bound;
		*held = why;
	}
}

static void
alarm_update(struct retention *r, const struct repl_status *st, int alarm_at)
{
	struct retention_info *i = &r->info;

	if (!i->alarm && i->used_percent >= alarm_at) {
		i->alarm = true;
		i->alarms++;
		log_warning("space alarm: the log is %d%% full (%llu of %llu bytes, "
			"retention.alarm_percent %d); what holds it: %s%s%s",
			i->used_percent, (unsigned long long)st->used_bytes,
			(unsigned long long)st->size_bytes, alarm_at,
			holds[i->held_by].reason, i->held_by_replica[0] ?
			"; now replica " : "", i->held_by_replica);
	} else if (i->alarm && i->used_percent < alarm_at - ALARM_HYSTERESIS) {
		i->alarm = false;
		log_notice("space alarm cleared: the log is %d%% full", i->used_percent);
	}
}

/*
 * The readers' positions bound the release (under r->lock); one that needs
 * a record at or below lag_lsn lags more than reader_max_lag: it is lost.
 */
static void
readers_hold(struct retention *r, uint64_t *target, enum retention_hold *held,
		uint64_t lag_lsn)
{
	for (int i = 0; i < RETENTION_READERS_MAX; i++) {
		struct retention_reader *rd = &r->info.readers[i];

		if (!rd->used || rd->lost)
			continue;
		if (rd->next <= lag_lsn) {
			rd->lost = true;
			r->info.readers_lost++;
			log_warning("reader %llu lost: it reads LSN %llu, more than "
				"retention.reader_max_lag (%llu bytes) behind the newest "
				"record; it holds the log no longer and its stream ends",
				(unsigned long long)rd->id, (unsigned long long)rd->next,
				(unsigned long long)r->node->conf.retention.reader_max_lag);
			continue;
		}
		lower(target, held, rd->next - 1, HOLD_READER);
	}
}

/* the i-th replica's address, as the membership names it now */
static void
peer_name(struct node *n, int i, char *buf, size_t len)
{
	pthread_mutex_lock(&n->lock);
	if (i < n->conf.n_peers)
		snprintf(buf, len, "%s:%u", n->conf.peers[i].address,
			n->conf.peers[i].control_port);
	else
		snprintf(buf, len, "%d", i + 1);
	pthread_mutex_unlock(&n->lock);
}

/* the replicas' statuses, once per pass (at most 32: the masks' width) */
static int
read_replicas(struct repl *repl, struct repl_replica_status *rs)
{
	int n = 0;

	while (n < RETENTION_REPLICAS_MAX && repl_replica_status(repl, n, &rs[n]) == 0)
		n++;
	return n;
}

/*
 * Replicas away: one not connected since this node became the primary may
 * hold records for its readers (its first ACK says how far), so nothing is
 * released until each has connected once; one down keeps its last hold
 * (librepl counts it: repl_release(3)).  Both within
 * retention.replica_max_hold: past it, true, and the release goes past
 * them (repl_release_past_down) down to the newest replica_max_hold bytes,
 * each replica said once until it streams again.  Their readers (a
 * sqlite_copy, the archiver) then find the gap and say so.  Without a
 * bound a dead holder would fill the log: every append would fail.
 */
static bool
away_replicas(struct retention *r, struct repl *repl, const struct repl_status *st,
		const struct repl_replica_status *rs, int n, uint64_t *target,
		enum retention_hold *held)
{
	uint64_t bound = r->node->conf.retention.replica_max_hold, k;
	uint32_t away = 0, unseen = 0, news = 0;
	bool past;
	char name[300];

	for (int i = 0; i < n; i++) {
		if (rs[i].state == REPL_REPLICA_STREAMING) {
			r->dropped &= ~(1u << i);
			continue;
		}
		if (rs[i].link_state == REPL_LINK_RETIRED)
			continue;
		if (rs[i].catch_ups == 0)
			unseen |= 1u << i;
		if (rs[i].catch_ups == 0 || (rs[i].holds && rs[i].hold_lsn < *target))
			away |= 1u << i;
	}
	past = away != 0 && st->used_bytes > bound &&
		repl_lsn_keeping(repl, bound, &k) == 0;
	if (past) {
		lower(target, held, k, HOLD_REPLICA);
		news = away & ~r->dropped;
		r->dropped |= away;
	} else if (unseen) {
		lower(target, held, st->first_lsn ? st->first_lsn - 1 : st->last_lsn,
			HOLD_UNSEEN);
	}
	pthread_mutex_lock(&r->lock);
	r->info.unseen_replicas = __builtin_popcount(unseen);
	r->info.replica_holds_dropped += (uint64_t)__builtin_popcount(news);
	pthread_mutex_unlock(&r->lock);
	for (int i = 0; i < n; i++) {
		if (!(news & (1u << i)))
			continue;
		peer_name(r->node, i, name, sizeof(name));
		log_warning("retention: the log holds %llu bytes, more than "
			"retention.replica_max_hold (%llu), and replica %s %s: "
			"releasing past what its readers may hold (an archiver, a "
			"sqlite_copy there will find a gap when it is back)",
			(unsigned long long)st->used_bytes, (unsigned long long)bound,
			name, (unseen & (1u << i)) ? "has not connected since this node "
			"became the primary" : "is down and holds records");
	}
	return past;
}

/*
 * The replica that holds the release point back (held_by "replica"), in
 * who: "ADDRESS (its readers hold from LSN N)" or "ADDRESS (flushed to LSN
 * N)", the lowest of them; empty when none does now.
 */
static void
which_replica(struct retention *r, const struct repl_replica_status *rs, int n,
		uint64_t target, char *who, size_t len)
{
	uint64_t low = UINT64_MAX, from = 0;
	int at = -1;
	bool hold = false;
	char name[RETENTION_WHO_MAX - 64];

	for (int i = 0; i < n; i++) {
		if (rs[i].link_state == REPL_LINK_RETIRED)
			continue;
		if (rs[i].holds && rs[i].hold_lsn < target && rs[i].hold_lsn < low) {
			low = rs[i].hold_lsn;
			from = rs[i].hold_from;
			at = i;
			hold = true;
		}
		if (rs[i].state == REPL_REPLICA_STREAMING && rs[i].flushed_lsn < target &&
		    rs[i].flushed_lsn < low) {
			low = rs[i].flushed_lsn;
			at = i;
			hold = false;
		}
	}
	who[0] = '\0';
	if (at < 0)
		return;
	peer_name(r->node, at, name, sizeof(name));
	snprintf(who, len, "%s (%s LSN %llu)", name, hold ? "its readers hold "
		"from" : "flushed to", (unsigned long long)(hold ? from : low));
}

/* one look at the log, and a release when it is due (holds the gate) */
static void
pass(struct retention *r, struct repl *repl)
{
	const struct repld_conf *conf = &r->node->conf;
	struct repl_status st;
	enum retention_hold held = HOLD_COMMIT;
	uint64_t target, k, keep, lag_lsn = 0, ms = now_ms();
	int n_readers, n_reps;
	struct repl_replica_status rs[RETENTION_REPLICAS_MAX];
	char who[RETENTION_WHO_MAX];
	bool due, past_away;
	int ret = 0;

	if (repl_status(repl, &st) != 0)
		return;
	pthread_mutex_lock(&r->lock);
	r->in_pass = true;
	n_readers = r->info.n_readers;
	sample(r, ms, st.last_lsn, conf->retention.keep_seconds);
	target = st.commit_lsn;
	if (conf->retention.keep_seconds)
		lower(&target, &held, lsn_older_than(r, ms,
			(uint64_t)conf->retention.keep_seconds * 1000), HOLD_KEEP_SECONDS);
	if (conf->retention.mode == REPLD_RETENTION_CHECKPOINTER)
		lower(&target, &held, r->info.checkpoint_lsn, HOLD_CHECKPOINTER);
	r->nudged = false;
	pthread_mutex_unlock(&r->lock);
	if (conf->retention.keep_records)
		lower(&target, &held, st.last_lsn > conf->retention.keep_records ?
			st.last_lsn - conf->retention.keep_records : 0, HOLD_KEEP_RECORDS);
	/* a log made with another size than the file's log.size: within it */
	keep = conf->retention.keep < st.size_bytes / 4 * 3 ?
		conf->retention.keep : st.size_bytes / 4 * 3;
	/* the log's lock only when keep could bound anything */
	if (keep && st.used_bytes <= keep)
		lower(&target, &held, st.first_lsn ? st.first_lsn - 1 : st.last_lsn,
			HOLD_KEEP);
	else if (keep && repl_lsn_keeping(repl, keep, &k) == 0)
		lower(&target, &held, k, HOLD_KEEP);
	/* what a reader may hold at most: the newest reader_max_lag bytes */
	if (n_readers && st.used_bytes > conf->retention.reader_max_lag &&
	    repl_lsn_keeping(repl, conf->retention.reader_max_lag, &k) == 0)
		lag_lsn = k;
	pthread_mutex_lock(&r->lock);
	readers_hold(r, &target, &held, lag_lsn);
	pthread_mutex_unlock(&r->lock);
	/* the archiver, archiving this primary's log: what it has not archived */
	{
		struct archiver *a = atomic_load(&r->node->archiver);
		uint64_t hold;

		if (a != NULL && archiver_primary_hold(a, st.used_bytes, &hold))
			lower(&target, &held, hold, HOLD_ARCHIVE);
	}
	n_reps = read_replicas(repl, rs);
	past_away = away_replicas(r, repl, &st, rs, n_reps, &target, &held);

	/* due: an eighth of the log beyond what is kept is in use */
	due = st.used_bytes > keep + st.size_bytes / 8 &&
		st.first_lsn && target >= st.first_lsn;
	if (due) {
		ret = past_away ? repl_release_past_down(repl, target) :
			repl_release(repl, target);
		if (ret == 0 && repl_status(repl, &st) == 0 && st.first_lsn &&
		    st.first_lsn <= target)
			held = HOLD_REPLICA;	/* librepl kept them back */
	}

	if (held == HOLD_REPLICA)
		which_replica(r, rs, n_reps, target, who, sizeof(who));
	else
		who[0] = '\0';

	pthread_mutex_lock(&r->lock);
	r->info.active = true;
	r->info.release_lsn = target;
	r->info.held_by = held;
	snprintf(r->info.held_by_replica, sizeof(r->info.held_by_replica), "%s", who);
	r->info.used_percent = st.size_bytes ?
		(int)(st.used_bytes * 100 / st.size_bytes) : 0;
	if (due) {
		r->info.last_error = ret;
		if (ret == 0)
			r->info.releases++;
	}
	alarm_update(r, &st, conf->retention.alarm_percent);
	r->in_pass = false;
	pthread_cond_broadcast(&r->pass_done);
	pthread_mutex_unlock(&r->lock);
	if (due && ret != 0)
		log_error("retention: releasing up to LSN %llu failed: %s",
			(unsigned long long)target, repl_strerror(ret));
}

static void *
retention_main(void *arg)
{
	struct retention *r = arg;
	struct timespec until;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		struct repl *repl;
		bool changing;

		until = deadline_after_ms(CLOCK_REALTIME, PASS_MS);
		while (!r->stop && !r->nudged &&
		       pthread_cond_timedwait(&r->cond, &r->lock, &until) != ETIMEDOUT)
			;
		if (r->stop)
			break;
		pthread_mutex_unlock(&r->lock);
		/* the primary's handle, if it is one and nothing is changing */
		if ((repl = node_try_enter(r->node, &changing)) != NULL) {
			pass(r, repl);
			node_leave(r->node);
		} else if (!changing) {
			pthread_mutex_lock(&r->lock);
			r->info.active = false;
			r->info.held_by = HOLD_NONE;
			r->info.alarm = false;
			/* a later term samples anew, and hears its checkpointer anew */
			r->n_samples = 0;
			r->info.checkpoint_lsn = 0;
			pthread_mutex_unlock(&r->lock);
		}
		pthread_mutex_lock(&r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

void
retention_init(struct retention *r, struct node *n)
{
	memset(r, 0, sizeof(*r));
	r->node = n;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	pthread_cond_init(&r->pass_done, NULL);
}

int
retention_start(struct retention *r)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	r->stop = false;
	ret = pthread_create(&r->thread, NULL, retention_main, r);
	r->running = ret == 0;
	pthread_mutex_unlock(&r->lock);
	errno = ret;
	return ret ? -1 : 0;
}

void
retention_stop(struct retention *r)
{
	pthread_mutex_lock(&r->lock);
	if (!r->running) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_mutex_lock(&r->lock);
	r->running = false;
	r->info.active = false;
	pthread_mutex_unlock(&r->lock);
}

void
retention_fini(struct retention *r)
{
	pthread_cond_destroy(&r->pass_done);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
}

int
retention_checkpoint(struct retention *r, uint64_t lsn, char *msg, size_t msglen)
{
	if (r->node->conf.retention.mode != REPLD_RETENTION_CHECKPOINTER) {
		snprintf(msg, msglen, "RELEASE: retention.mode is \"auto\" on this "
			"node: it releases by itself; a checkpointer's RELEASE needs "
			"retention.mode = \"checkpointer\"");
		return -1;
	}
	pthread_mutex_lock(&r->lock);
	if (!r->running || !r->info.active) {
		pthread_mutex_unlock(&r->lock);
		snprintf(msg, msglen, "RELEASE: the node is not serving as the "
			"primary yet");
		return -1;
	}
	if (lsn > r->info.checkpoint_lsn)
		r->info.checkpoint_lsn = lsn;
	r->nudged = true;
	snprintf(msg, msglen, "records up to LSN %llu may be released",
		(unsigned long long)r->info.checkpoint_lsn);
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int
retention_reader_open(struct retention *r, uint64_t from, int *slot,
		uint64_t *id, char *msg, size_t msglen)
{
	int i;

	pthread_mutex_lock(&r->lock);
	/* a pass that looked before this reader came must not release for it */
	while (r->in_pass)
		pthread_cond_wait(&r->pass_done, &r->lock);
	if (!r->running || !r->info.active) {
		pthread_mutex_unlock(&r->lock);
		snprintf(msg, msglen, "READ: the node is not serving as the primary "
			"yet");
		return -1;
	}
	for (i = 0; i < RETENTION_READERS_MAX && r->info.readers[i].used; i++)
		;
	if (i == RETENTION_READERS_MAX) {
		pthread_mutex_unlock(&r->lock);
		snprintf(msg, msglen, "READ: %d readers are reading already: retry "
			"later", RETENTION_READERS_MAX);
		return -1;
	}
	r->info.readers[i] = (struct retention_reader){ .used = true,
		.id = ++r->next_reader_id, .next = from ? from : 1,
		.since_ms = now_ms() };
	r->info.n_readers++;
	*slot = i;
	*id = r->info.readers[i].id;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

bool
retention_reader_advance(struct retention *r, int slot, uint64_t next)
{
	struct retention_reader *rd = &r->info.readers[slot];
	bool lost;

	pthread_mutex_lock(&r->lock);
	if (!rd->lost && next > rd->next)
		rd->next = next;
	lost = rd->lost;
	pthread_mutex_unlock(&r->lock);
	return !lost;
}

void
retention_reader_close(struct retention *r, int slot)
{
	pthread_mutex_lock(&r->lock);
	r->info.readers[slot].used = false;
	r->info.n_readers--;
	pthread_mutex_unlock(&r->lock);
}

void
retention_get(struct retention *r, struct retention_info *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->info;
	pthread_mutex_unlock(&r->lock);
}
