/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * retention.h -- the primary's log does not fill: a thread of its own
 * releases (repl_release) what nothing holds any more, and raises a space
 * alarm when the log fills regardless.
 *
 * The release point is the smallest of:
 *   - the commit LSN (what the quorum made durable),
 *   - what retention.keep, keep_records and keep_seconds keep,
 *   - with retention.mode = "checkpointer", the last RELEASE LSN,
 *   - every reader's position (READ), unless the reader lags more than
 *     retention.reader_max_lag bytes behind the log's end: then it is
 *     lost (its stream ends with READER_LOST) and holds nothing,
 *   - nothing at all while a replica has not connected since this node
 *     became the primary (its readers may hold records: its first ACK
 *     says),
 * and librepl lowers it further to what every streaming replica flushed
 * and to every replica's hold, also one down (repl_release(3)).  The
 * holds of replicas away (down, or not seen) keep at most
 * retention.replica_max_hold bytes: past it the release goes past them
 * (repl_release_past_down), each said once, and their readers find a gap.  The thread releases once the log holds an eighth of
 * its size more than retention.keep, so the header is not rewritten (a
 * persist, and a round trip to each replica) on every pass.  It runs only
 * while the node is the primary, through the node's gate (node_try_enter),
 * so a change of state never happens under a release.
 */
#ifndef REPLD_RETENTION_H
#define REPLD_RETENTION_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct node;

#define RETENTION_SAMPLES 1024	/* (time, LSN) pairs for keep_seconds */
#define RETENTION_READERS_MAX 16	/* READ streams at once */
#define RETENTION_WHO_MAX 400		/* a replica named, and its hold */
#define RETENTION_REPLICAS_MAX 32	/* replicas a pass looks at (the width
					   of its masks) */

/* what holds the release point back, for status and the alarm */
enum retention_hold {
	HOLD_NONE = 0,		/* not the primary, or nothing looked at yet */
	HOLD_COMMIT,		/* records past the commit LSN: not durable yet */
	HOLD_KEEP,		/* retention.keep */
	HOLD_KEEP_RECORDS,	/* retention.keep_records */
	HOLD_KEEP_SECONDS,	/* retention.keep_seconds */
	HOLD_CHECKPOINTER,	/* no RELEASE past it yet */
	HOLD_REPLICA,		/* a streaming replica has not flushed them */
	HOLD_READER,		/* a reader has not read them */
	HOLD_ARCHIVE,		/* the archiver, on this primary, has not
				   archived them (archive.on = "any") */
	HOLD_UNSEEN,		/* a replica not connected since this node
				   became the primary may hold them */
};

/* a reader's position: what it has not read yet must stay */
struct retention_reader {
	bool used;
	bool lost;		/* it lagged past reader_max_lag: holds nothing */
	uint64_t id;		/* for status and the log */
	uint64_t next;		/* the next LSN it reads */
	uint64_t since_ms;	/* when it began */
};

struct retention_info {
	bool active;			/* the node is the primary */
	uint64_t release_lsn;		/* the release point of the last pass */
	uint64_t checkpoint_lsn;	/* the last RELEASE (checkpointer mode) */
	uint64_t releases;		/* repl_release calls that moved the start */
	enum retention_hold held_by;
	int used_percent;
	bool alarm;
	uint64_t alarms;		/* times the alarm was raised */
	int last_error;			/* REPL_E_* of the last release, or 0 */
	uint64_t readers_lost;		/* readers that lagged past the limit */
	char held_by_replica[RETENTION_WHO_MAX];	/* held_by "replica": which,
					   and how far ("" when unknown) */
	int unseen_replicas;		/* not connected since this node became
					   the primary (they may hold) */
	uint64_t replica_holds_dropped;	/* releases past an away replica's hold
					   (past retention.replica_max_hold) */
	int n_readers;
	struct retention_reader readers[RETENTION_READERS_MAX];
};

struct retention {
	struct node *node;
	pthread_t thread;

	pthread_mutex_t lock;		/* guards what follows */
	pthread_cond_t cond;
	bool running;
	bool stop;
	bool nudged;			/* a RELEASE came: pass at once */
	bool in_pass;			/* between a pass's look and its release */
	pthread_cond_t pass_done;
	uint64_t next_reader_id;
	struct retention_info info;
	/* keep_seconds: samples[(first + i) % RETENTION_SAMPLES], oldest first */
	struct { uint64_t ms, lsn; } samples[RETENTION_SAMPLES];
	unsigned first, n_samples;
	uint64_t last_sample_ms;
	uint32_t dropped;		/* replicas whose holds were released past,
					   by index, until they stream again */
};

/* at the node's creation (before the admin socket reads it) */
void retention_init(struct retention *r, struct node *n);
/* the thread; 0, or -1 with errno */
int retention_start(struct retention *r);
void retention_stop(struct retention *r);
void retention_fini(struct retention *r);

/*
 * RELEASE lsn from an external checkpointer: records up to lsn may go
 * (mode "checkpointer" only).  0, or -1 with the reason in msg.
 */
int retention_checkpoint(struct retention *r, uint64_t lsn, char *msg,
		size_t msglen);

/*
 * A reader from LSN from on: from then on, no pass releases from on
 * (unless it is lost).  Waits out a pass under way, whose release did not
 * count it.  The slot in *slot; 0, or -1 with the reason in msg.
 */
int retention_reader_open(struct retention *r, uint64_t from, int *slot,
		uint64_t *id, char *msg, size_t msglen);
/* it has read what is before next; false: it was lost meanwhile */
bool retention_reader_advance(struct retention *r, int slot, uint64_t next);
void retention_reader_close(struct retention *r, int slot);

void retention_get(struct retention *r, struct retention_info *out);
const char *retention_hold_name(enum retention_hold h);

#endif
