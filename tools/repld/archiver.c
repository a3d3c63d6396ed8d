/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archiver.c -- the archiver's thread (archiver.h).
 *
 * A round, while a replica's handle is attached: open the target and the
 * writer if they are not (a failure is retried, growing the pause up to
 * RETRY_MAX_MS); hold the log from the next LSN to archive; wait up to
 * WAIT_MS for the commit point to pass it; add what is committed (at most
 * ROUND_BYTES), each record stamped with the wall clock it was read at;
 * publish when a segment is full (the writer does) or its oldest record
 * has waited archive.publish_ms; then move the hold past what is
 * published.  No allocation per record: the writer copies into its
 * segment buffer.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "archive.h"
#include "archiver.h"
#include "archiver_base.h"
#include "coordinator.h"
#include "log.h"
#include "node.h"

#define WAIT_MS 100			/* a round waits this long for records */
#define PRIMARY_POLL_MS 50		/* on the primary: a look this often */
#define ROUND_PAUSE_MS 10		/* after a round short of a full batch */
/* its hold beside sqlite_copy's (slot 0): the replica holds the lower */
#define ARCHIVER_HOLD_SLOT 1
/*
 * Record bytes added per round: the records are copied out under the
 * log's lock, which the replica's serving thread needs to persist what
 * the primary sends -- a short hold keeps its flushes prompt
 */
#define ROUND_BYTES (256u << 10)
#define RETRY_MIN_MS 100
#define RETRY_MAX_MS 10000

/* what it needs of the file, copied: a reload replaces the node's */
struct archiver_conf {
	struct {
		char *target;
		uint64_t segment_bytes, max_hold;
		int publish_ms, compress;
		bool any;
	} archive;
	uint8_t cluster_uuid[16];
};

struct archiver {
	struct archiver_conf conf_copy;
	const struct archiver_conf *conf;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	/* the source: attached, and whether a round uses it (under lock) */
	struct repl_replica_node *replica;
	bool using;
	struct node *node;		/* its gate, archive.on = "any" */
	bool primary;			/* the last round read the primary's log */
	struct archiver_info info;	/* under lock */

	/* the thread's own */
	struct archive_target *target;
	struct archive_writer *writer;
	uint64_t retry_ms, retry_at;
	uint64_t oldest_unpublished_ms;	/* monotonic; 0: nothing pending */
	uint64_t round_bytes, round_now_ms;
	uint64_t start_lsn;		/* an empty archive's first record */
	uint64_t gap_floor;		/* after a gap: the log's first record
					   then, where the hold begins at least */
	bool may_take;			/* under lock: as a standby, the primary
					   has heard the hold that lets it take
					   the archive over */
};

static uint64_t
mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static uint64_t
wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

const char *
archiver_state_name(enum archiver_state s)
{
	switch (s) {
	case ARCHIVER_ARCHIVING:
		return "archiving";
	case ARCHIVER_FAILING:
		return "failing";
	case ARCHIVER_STANDBY:
		return "standby";
	default:
		return "idle";
	}
}

/* a failure: said once per kind of trouble, retried after a growing pause */
static void
failed(struct archiver *a, const char *why)
{
	bool same;

	pthread_mutex_lock(&a->lock);
	same = strcmp(a->info.last_error, why) == 0;
	a->info.failures++;
	a->info.state = ARCHIVER_FAILING;
	snprintf(a->info.last_error, sizeof(a->info.last_error), "%s", why);
	pthread_mutex_unlock(&a->lock);
	if (!same)
		log_error("archive %s: %s; retrying", a->conf->archive.target, why);
	a->retry_ms = a->retry_ms ? a->retry_ms * 2 : RETRY_MIN_MS;
	if (a->retry_ms > RETRY_MAX_MS)
		a->retry_ms = RETRY_MAX_MS;
	a->retry_at = mono_ms() + a->retry_ms;
	/* what was added and not published is dropped with the writer:
	   the next writer resumes at the archive's end */
	archive_writer_close(&a->writer);
	archive_target_close(&a->target);
	a->oldest_unpublished_ms = 0;
}

static int
ensure_open(struct archiver *a)
{
	char why[ARCHIVE_WHY_MAX];
	struct archive_writer_cfg wc = {
		.segment_bytes = a->conf->archive.segment_bytes,
		.zstd_level = a->conf->archive.compress,
	};

	if (a->writer != NULL)
		return 0;
	if (mono_ms() < a->retry_at)
		return -1;
	if (archive_target_open(a->conf->archive.target, a->conf->cluster_uuid,
			&a->target, why, sizeof(why)) != 0 ||
	    archive_writer_open(a->target, &wc, &a->writer, why, sizeof(why)) != 0) {
		failed(a, why);
		return -1;
	}
	return 0;
}

/* the records of a round into the writer */
static int
add_record(void *arg, const struct repl_log_record *r)
{
	struct archiver *a = arg;
	char why[ARCHIVE_WHY_MAX];

	if (archive_writer_add(a->writer, r->lsn, r->epoch, r->client_id,
			a->round_now_ms, r->epoch_start ? ARCHIVE_REC_EPOCH_START : 0,
			r->data, r->len, why, sizeof(why)) != 0) {
		failed(a, why);
		return -1;
	}
	if (a->oldest_unpublished_ms == 0)
		a->oldest_unpublished_ms = mono_ms();
	a->round_bytes += r->len + 64;
	return a->round_bytes >= ROUND_BYTES;
}

/* publish when the oldest pending record waited publish_ms */
static int
publish_due(struct archiver *a, bool force)
{
	char why[ARCHIVE_WHY_MAX];

	if (a->writer == NULL || archive_writer_pending_bytes(a->writer) == 0) {
		a->oldest_unpublished_ms = 0;
		return 0;
	}
	if (!force && mono_ms() - a->oldest_unpublished_ms <
			(uint64_t)a->conf->archive.publish_ms)
		return 0;
	if (archive_writer_flush(a->writer, why, sizeof(why)) != 0) {
		failed(a, why);
		return -1;
	}
	a->oldest_unpublished_ms = 0;
	return 0;
}

/*
 * Hold the log from next on -- unless the log (used bytes) holds more
 * than max_hold: then let go, so that a target down for long costs the
 * archive a gap rather than the cluster a full log.  On a replica (rn)
 * the replica holds; on the primary (rn NULL) its retention reads the
 * hold (archiver_primary_hold).
 */
static bool
hold_from(struct archiver *a, struct repl_replica_node *rn, uint64_t used,
		uint64_t next)
{
	bool drop = used > a->conf->archive.max_hold;

	if (rn != NULL && drop)
		(void)repl_replica_unhold_slot(rn, ARCHIVER_HOLD_SLOT);
	else if (rn != NULL)
		(void)repl_replica_hold_slot(rn, ARCHIVER_HOLD_SLOT, next - 1);
	pthread_mutex_lock(&a->lock);
	a->primary = rn == NULL;
	if (drop && !a->info.hold_dropped)
		log_error("archive %s: the log holds %" PRIu64 " bytes, more than "
			"archive.max_hold (%" PRIu64 "): the archiver no longer holds it, "
			"so records may leave it before they are archived",
			a->conf->archive.target, used, a->conf->archive.max_hold);
	else if (!drop && a->info.hold_dropped)
		log_notice("archive %s: holding the log again from LSN %" PRIu64,
			a->conf->archive.target, next);
	a->info.hold_dropped = drop;
	a->info.holding = !drop;
	a->info.hold_lsn = next - 1;
	pthread_mutex_unlock(&a->lock);
	return !drop;
}

/* records next.. left the log unarchived: the archive goes on after a gap */
static int
skip_gap(struct archiver *a, uint64_t next, uint64_t first)
{
	char why[ARCHIVE_WHY_MAX];
	bool first_gap;

	pthread_mutex_lock(&a->lock);
	first_gap = a->info.gap_at == 0;
	if (first_gap)
		a->info.gap_at = next;
	pthread_mutex_unlock(&a->lock);
	log_error("archive %s: records %" PRIu64 "..%" PRIu64 " left the log before "
		"they were archived: the archive has a gap there, which no restore "
		"crosses", a->conf->archive.target, next, first - 1);
	a->gap_floor = first;	/* a hold before the log's first counts for nothing */
	if (archive_writer_skip_to(a->writer, first, why, sizeof(why)) != 0) {
		failed(a, why);
		return -1;
	}
	return 0;
}

/*
 * The first LSN not yet published, which the hold must keep: records the
 * writer took but has not published are not in the archive (a failed
 * publish drops them)
 */
static uint64_t
keep_from(const struct archiver *a)
{
	uint64_t archived = archive_writer_archived(a->writer);
	uint64_t from = archived ? archived + 1 : a->start_lsn;

	return from > a->gap_floor ? from : a->gap_floor;
}

/* what a round did, for status: the newest LSN published */
static uint64_t
round_done(struct archiver *a, uint64_t commit, uint64_t next, bool held)
{
	uint64_t archived = archive_writer_archived(a->writer);

	pthread_mutex_lock(&a->lock);
	if (archived > a->info.archived_lsn)
		a->info.last_success_ms = wall_ms();
	a->info.state = ARCHIVER_ARCHIVING;
	a->info.last_error[0] = '\0';
	if (archived > a->info.archived_lsn)
		a->info.archived_lsn = archived;
	a->info.commit_lsn = commit;
	a->info.lag_records = commit > a->info.archived_lsn ?
		commit - a->info.archived_lsn : 0;
	a->info.lag_ms = a->oldest_unpublished_ms ? mono_ms() - a->oldest_unpublished_ms : 0;
	if (held && archived >= next)
		a->info.hold_lsn = archived;
	pthread_mutex_unlock(&a->lock);
	a->retry_ms = 0;
	return archived;
}

/* one round on a replica's log; the lock is not held */
static void
round_replica(struct archiver *a, struct repl_replica_node *rn)
{
	struct repl_replica_info ri;
	uint64_t next, archived;
	bool held;

	pthread_mutex_lock(&a->lock);
	a->primary = false;
	pthread_mutex_unlock(&a->lock);
	(void)repl_replica_info(rn, &ri);
	if (ensure_open(a) != 0) {
		/* the target is down: the hold stays, within max_hold */
		struct timespec ts = { 0, RETRY_MIN_MS * 1000000L };

		pthread_mutex_lock(&a->lock);
		next = a->info.holding || a->info.hold_dropped ? a->info.hold_lsn + 1 : 0;
		pthread_mutex_unlock(&a->lock);
		if (next)
			(void)hold_from(a, rn, ri.used_bytes, next);
		nanosleep(&ts, NULL);
		return;
	}
	next = archive_writer_next(a->writer);
	if (next == 0)		/* an empty archive begins with what the log has */
		next = a->start_lsn = ri.first_lsn ? ri.first_lsn : ri.readable_lsn + 1;
	if (ri.first_lsn && next < ri.first_lsn) {
		if (skip_gap(a, next, ri.first_lsn) != 0)
			return;
		next = ri.first_lsn;
	}
	held = hold_from(a, rn, ri.used_bytes, keep_from(a));
	a->round_bytes = 0;
	if (repl_replica_wait(rn, next, WAIT_MS) == 0) {
		a->round_now_ms = wall_ms();
		if (repl_replica_iterate_records(rn, next, add_record, a) < 0 &&
		    a->writer == NULL)
			return;		/* failed() said why */
	}
	if (publish_due(a, false) != 0)
		return;
	(void)repl_replica_info(rn, &ri);
	archived = round_done(a, ri.readable_lsn, next, held);
	archiver_base_round(a->target, archived);	/* sqlite_copy's bases */
	/*
	 * A round that found less than a full batch waits a little before
	 * the next: under load, rounds back to back would take the log's
	 * lock (and the replica's state lock) thousands of times a second
	 * against the thread that persists what the primary sends
	 */
	if (a->round_bytes < ROUND_BYTES) {
		struct timespec ts = { 0, ROUND_PAUSE_MS * 1000000L };

		nanosleep(&ts, NULL);
	}
	/* what is published may leave the log */
	if (held && archived >= next)
		(void)repl_replica_hold_slot(rn, ARCHIVER_HOLD_SLOT, archived);
}

/*
 * One round on the primary's log (archive.on = "any"): what is committed,
 * read inside the node's gate (a change of role waits for it: no wait in
 * there), published outside it.  The hold is retention's to honour
 * (archiver_primary_hold).  false when there was nothing new.
 */
static bool
round_primary(struct archiver *a, struct node *n)
{
	struct repl_status st;
	struct repl *repl;
	uint64_t next, added;
	bool changing, held;

	if (ensure_open(a) != 0) {
		struct timespec ts = { 0, RETRY_MIN_MS * 1000000L };

		nanosleep(&ts, NULL);	/* the hold stays where it was */
		return true;
	}
	if ((repl = node_try_enter(n, &changing)) == NULL) {
		if (!changing) {	/* not the primary (any more) */
			pthread_mutex_lock(&a->lock);
			if (a->primary)
				a->info.holding = false;
			a->primary = false;
			pthread_mutex_unlock(&a->lock);
		}
		return false;
	}
	(void)repl_status(repl, &st);
	next = archive_writer_next(a->writer);
	if (next == 0)
		next = a->start_lsn = st.first_lsn ? st.first_lsn : st.commit_lsn + 1;
	if (st.first_lsn && next < st.first_lsn) {
		if (skip_gap(a, next, st.first_lsn) != 0) {
			node_leave(n);
			return true;
		}
		next = st.first_lsn;
	}
	held = hold_from(a, NULL, st.used_bytes, keep_from(a));
	a->round_bytes = 0;
	added = 0;
	if (st.commit_lsn >= next) {
		a->round_now_ms = wall_ms();
		if (repl_iterate_records(repl, next, add_record, a) < 0 &&
		    a->writer == NULL) {
			node_leave(n);
			return true;
		}
		added = a->round_bytes;
	}
	node_leave(n);
	if (publish_due(a, false) != 0)
		return true;
	(void)round_done(a, st.commit_lsn, next, held);
	return added > 0;
}

/*
 * With a coordinator, the node archives only while it holds the
 * log-archiver key (ha/coord_archiver.c): one node of the cluster at a
 * time.  Without one, the file decides.  Called under a->lock.
 */
static bool
elected(struct archiver *a)
{
	struct coordinator *coord = atomic_load(&a->node->coord);

	return coord == NULL || coordinator_archiver_allowed(coord);
}

/* another node holds the log-archiver key, as the coordinator last read it */
static bool
key_elsewhere(struct archiver *a)
{
	struct coordinator *coord = atomic_load(&a->node->coord);
	int64_t holder = coordinator_archiver_holder(coord);

	return coord != NULL && holder > 0 && (uint64_t)holder != a->node->conf.node_id;
}

/*
 * Not elected (under a->lock).  While another node holds the log-archiver
 * key, hold nothing for it here.  While the key is free (or not known),
 * hold the whole log (as it is now: after a catch-up, from the primary's
 * first record), and may take the key only once the primary this replica
 * follows has heard that hold (hold_told): so the hold on the archive's
 * next record passes from the old archiver to the new one with no moment
 * when the primary counts neither (docs/replication.md, "The archive's
 * hold"; model/archive.pml,
 * the runs archive-take-unheld and archive-take-unconnected).  Past
 * max_hold it holds nothing, and may take the key all the same (a gap
 * then may follow, said by the round that finds it).  On the primary
 * (no replica) archiver_primary_hold holds for it.
 */
static void
standby(struct archiver *a, struct repl_replica_node *rn)
{
	struct repl_replica_info ri;
	uint64_t first;

	a->info.state = ARCHIVER_STANDBY;
	a->primary = false;
	if (rn == NULL) {	/* archiver_primary_hold holds on the primary */
		a->info.holding = false;
		return;
	}
	if (key_elsewhere(a)) {
		(void)repl_replica_unhold_slot(rn, ARCHIVER_HOLD_SLOT);
		a->info.holding = false;
		a->may_take = false;
		return;
	}
	if (repl_replica_info(rn, &ri) != 0 ||
	    ri.used_bytes > a->conf->archive.max_hold) {
		(void)repl_replica_unhold_slot(rn, ARCHIVER_HOLD_SLOT);
		a->info.holding = false;
		a->may_take = true;	/* a gap may follow, said when found */
		return;
	}
	first = ri.first_lsn ? ri.first_lsn : ri.last_lsn + 1;
	(void)repl_replica_hold_slot(rn, ARCHIVER_HOLD_SLOT, first - 1);
	a->info.holding = true;
	a->info.hold_lsn = first - 1;
	/* told, and not before the log's first record (it would count for
	 * nothing): an attach hold told before a catch-up that truncated */
	a->may_take = ri.hold_told != 0 && ri.hold_told <= first &&
		ri.hold_told >= ri.first_lsn;
}

static void *
archiver_main(void *arg)
{
	struct archiver *a = arg;

	(void)pthread_setname_np(pthread_self(), "repld-archive");
	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		struct repl_replica_node *rn = a->replica;
		struct timespec until;
		bool el = elected(a);

		if (!el) {
			standby(a, rn);
		} else if (rn != NULL) {
			a->using = true;
			pthread_mutex_unlock(&a->lock);
			round_replica(a, rn);
			pthread_mutex_lock(&a->lock);
			a->using = false;
			pthread_cond_broadcast(&a->cond);
			continue;
		} else if (a->conf->archive.any) {
			bool more;

			pthread_mutex_unlock(&a->lock);
			more = round_primary(a, a->node);
			pthread_mutex_lock(&a->lock);
			if (more)
				continue;
		}
		/* nothing to read now: not the primary (or nothing new), no replica */
		if (el && (!a->primary || !a->conf->archive.any)) {
			a->info.state = ARCHIVER_IDLE;
			a->primary = false;
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += (long)PRIMARY_POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&a->cond, &a->lock, &until);
	}
	pthread_mutex_unlock(&a->lock);
	/* a stop publishes what it has, if the target takes it */
	(void)publish_due(a, true);
	archive_writer_close(&a->writer);
	archive_target_close(&a->target);
	return NULL;
}

int
archiver_start(struct node *n, struct archiver **ap)
{
	const struct repld_conf *conf = &n->conf;
	struct archiver *a;
	pthread_condattr_t ca;

	*ap = NULL;
	if (conf->archive.target == NULL)
		return 0;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -1;
	if ((a->conf_copy.archive.target = strdup(conf->archive.target)) == NULL) {
		free(a);
		return -1;
	}
	a->conf_copy.archive.segment_bytes = conf->archive.segment_bytes;
	a->conf_copy.archive.max_hold = conf->archive.max_hold;
	a->conf_copy.archive.publish_ms = conf->archive.publish_ms;
	a->conf_copy.archive.compress = conf->archive.compress;
	a->conf_copy.archive.any = conf->archive.any;
	a->node = n;
	memcpy(a->conf_copy.cluster_uuid, conf->cluster_uuid, 16);
	a->conf = &a->conf_copy;
	pthread_mutex_init(&a->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&a->thread, NULL, archiver_main, a) != 0) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		free(a->conf_copy.archive.target);
		free(a);
		return -1;
	}
	log_notice("archive %s: archiving the committed records while this node is "
		"%s", conf->archive.target, conf->archive.any ? "a replica or the primary" :
		"a replica");
	*ap = a;
	return 0;
}

void
archiver_stop(struct archiver *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	if (a->stop) {
		pthread_mutex_unlock(&a->lock);
		return;
	}
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_mutex_lock(&a->lock);
	a->info.state = ARCHIVER_IDLE;
	pthread_mutex_unlock(&a->lock);
}

void
archiver_free(struct archiver **ap)
{
	struct archiver *a = *ap;

	if (a == NULL)
		return;
	archiver_stop(a);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a->conf_copy.archive.target);
	free(a);
	*ap = NULL;
}

void
archiver_attach_replica(struct archiver *a, struct repl_replica_node *replica)
{
	struct repl_replica_info ri;

	if (a == NULL)
		return;
	/*
	 * Hold the whole log before the replica serves: its first ACK tells
	 * the primary what it holds, and a release before the thread's first
	 * round (which learns where the archive ends) could otherwise pass
	 * records the archive lacks.  The round narrows it, or lets go.
	 */
	if (repl_replica_info(replica, &ri) == 0)
		(void)repl_replica_hold_slot(replica, ARCHIVER_HOLD_SLOT, ri.first_lsn ? ri.first_lsn - 1 : 0);
	pthread_mutex_lock(&a->lock);
	a->replica = replica;
	a->may_take = false;	/* until its standby round hears it told */
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

void
archiver_detach(struct archiver *a)
{
	if (a == NULL)
		return;
	pthread_mutex_lock(&a->lock);
	a->replica = NULL;
	while (a->using)
		pthread_cond_wait(&a->cond, &a->lock);
	a->info.state = ARCHIVER_IDLE;
	a->info.holding = false;
	a->may_take = false;
	pthread_mutex_unlock(&a->lock);
}

/*
 * archive.on = "replica" on the primary, with a coordinator: the key is
 * still this node's (it gives it up at its next tick), free, or not known.
 * Until a replica has taken it (which it does only once this primary has
 * heard its whole-log hold), this primary holds its own log, so that the
 * archive passes to that replica with no release in between.
 */
static bool
handing_over(struct archiver *a)
{
	return atomic_load(&a->node->coord) != NULL && !key_elsewhere(a);
}

bool
archiver_primary_hold(struct archiver *a, uint64_t used_bytes, uint64_t *lsn)
{
	bool holds;

	pthread_mutex_lock(&a->lock);
	holds = a->primary && a->info.holding;
	*lsn = a->info.hold_lsn;
	/*
	 * Elected on the primary but no round as the primary yet (just
	 * promoted, the key just taken, the target down since): the whole
	 * log, within max_hold, until the round learns where the archive
	 * ends (model/archive.pml, archive-promoted-unheld)
	 */
	if (!a->primary && a->replica == NULL &&
	    used_bytes <= a->conf->archive.max_hold &&
	    (a->conf->archive.any ? elected(a) : handing_over(a))) {
		*lsn = 0;
		holds = true;
	}
	pthread_mutex_unlock(&a->lock);
	return holds;
}

bool
archiver_may_take(struct archiver *a)
{
	bool may;

	pthread_mutex_lock(&a->lock);
	may = a->may_take;
	pthread_mutex_unlock(&a->lock);
	return may;
}

const char *
archiver_target(const struct archiver *a)
{
	return a->conf->archive.target;
}

const char *
archiver_on(const struct archiver *a)
{
	return a->conf->archive.any ? "any" : "replica";
}

void
archiver_get(struct archiver *a, struct archiver_info *out)
{
	pthread_mutex_lock(&a->lock);
	*out = a->info;
	pthread_mutex_unlock(&a->lock);
}
