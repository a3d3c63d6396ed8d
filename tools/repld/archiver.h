/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * archiver.h -- repld's archiver (repld.conf(5), archive): it ships every
 * committed record to the archive (archive/archive.h), in segments, while
 * the node is a replica -- the primary's path of an append is untouched --
 * and with archive.on = "any" also while it is the primary, so that the
 * archive goes on across a failover of the archiving node.
 *
 * It holds the log as a reader does: on a replica with repl_replica_hold,
 * which the primary honours, on the primary through its retention
 * (HOLD_ARCHIVE), so that no record leaves the log before it is in the
 * archive -- bounded by archive.max_hold: past it the archiver
 * lets go and says so, and the archive gets a gap rather than the cluster
 * a full log.  A record is archived once the segment holding it is
 * published (written whole, then renamed into place).
 *
 * One thread, started with the daemon; the node attaches a replica's
 * handle while it serves as one and detaches it before closing it.
 * One node of a cluster archives at a time: with a coordinator, the one
 * that holds the log-archiver key (ha/coord_archiver.c; the others are on
 * standby); without one, the node whose file has the group.
 */
#ifndef REPLD_ARCHIVER_H
#define REPLD_ARCHIVER_H

#include <stdbool.h>
#include <stdint.h>

#include "repl.h"
#include "repld_conf.h"

struct archiver;

/* what the archiver is doing */
enum archiver_state {
	ARCHIVER_IDLE = 0,	/* the node is not in the role that archives */
	ARCHIVER_ARCHIVING,	/* following the log */
	ARCHIVER_FAILING,	/* the target refuses or fails: it retries */
	ARCHIVER_STANDBY,	/* with a coordinator: another node holds the
				   log-archiver key and archives */
};

struct archiver_info {
	enum archiver_state state;
	uint64_t archived_lsn;		/* the newest LSN published (0: none) */
	uint64_t commit_lsn;		/* the log's commit point as last seen */
	uint64_t lag_records;		/* committed, not yet published */
	uint64_t lag_ms;		/* how long the oldest of them has waited
					   (0: none) */
	uint64_t last_success_ms;	/* wall clock of the last publish (0: none) */
	uint64_t failures;		/* failed attempts since the start */
	bool holding;			/* it holds the log */
	uint64_t hold_lsn;		/* records after it stay in the log */
	bool hold_dropped;		/* it let go past archive.max_hold */
	uint64_t gap_at;		/* the first LSN it could not archive,
					   released before it read it (0: none) */
	char last_error[256];		/* the last failure ("" none) */
};

struct node;

/* *ap NULL when n's file has no archive group; 0, or -1 (errno) */
int archiver_start(struct node *n, struct archiver **ap);
/* its thread ends (what it holds unpublished it publishes if it can);
 * archiver_get still answers */
void archiver_stop(struct archiver *a);
void archiver_free(struct archiver **ap);

/* the node serves as a replica with this handle / no more (it waits for
 * the archiver to let go of it) */
void archiver_attach_replica(struct archiver *a, struct repl_replica_node *replica);
void archiver_detach(struct archiver *a);

void archiver_get(struct archiver *a, struct archiver_info *out);
/*
 * On the primary (archive.on = "any"): whether it holds the log, and
 * after which LSN (retention keeps the records after it)
 */
bool archiver_primary_hold(struct archiver *a, uint64_t used_bytes, uint64_t *lsn);
/*
 * Whether this replica may take the archive over (the log-archiver key):
 * only once the primary has heard its whole-log hold (false until its
 * replica is attached and a standby round has seen that)
 */
bool archiver_may_take(struct archiver *a);
/* archive.target, as the file gave it; archive.on */
const char *archiver_target(const struct archiver *a);
const char *archiver_on(const struct archiver *a);
const char *archiver_state_name(enum archiver_state s);

#endif
