/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_release.h -- a replvfs primary's checkpoints turned into releases of
 * its log.  When SQLite restarts its WAL, every frame of the old one has
 * been copied into the database file (a new WAL header's salts end the
 * old frames), so the file holds every transaction up to the last one
 * committed before: rv_db.c offers that LSN here.  A thread of its own,
 * off the commit path, then
 *
 *   1. waits until the offered record is durable (a pipelined commit may
 *      still be on its way; rv_db.c also keeps the database file from
 *      taking a transaction before it is durable),
 *   2. syncs the database file and marks it a base at that LSN (rv_base.h),
 *   3. releases the log up to the record before it (repl_release): that
 *      record stays, so the log always holds the newest transaction id;
 *      the engine goes no further than what every replica whose reader
 *      holds records allows (repl_replica_hold), and nothing is released
 *      while a replica has not yet been seen by this primary (it may hold
 *      records: docs/sqlite.md, "Checkpoints and the log").
 *
 * Offers that come faster than it works are merged: the newest wins.
 */
#ifndef REPLSQLITE_RV_RELEASE_H
#define REPLSQLITE_RV_RELEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"
#include "rv_image.h"

struct rv_release;

/*
 * For the database at path and its log; a wait for durability lasts up to
 * timeout_ms.  NULL with why on failure.
 */
struct rv_release *rv_release_start(struct repl *repl, const char *path,
		const uint8_t db_uuid[16], int timeout_ms, char *why, size_t whylen);
/* every transaction up to lsn is in the database file (not yet synced) */
void rv_release_offer(struct rv_release *r, uint64_t lsn);
/* what it did: the last base marked, the last release (0: none yet) */
void rv_release_get(struct rv_release *r, uint64_t *base_lsn,
		uint64_t *released_lsn);
/*
 * The space alarm: on once the log passed 80% full (said in SQLite's log
 * with what keeps it), off again below 70%; alarms counts the times.
 */
void rv_release_space(struct rv_release *r, bool *alarm, uint64_t *alarms);
/*
 * What keeps the log from being released, into SQLite's error log (code):
 * its range and last base, then each replica that holds records for its
 * copy or has not been seen since the database opened, a line each.
 */
void rv_release_log_holds(struct rv_release *r, int code);
/* a replica's copy's image waits for room in the log (rv_image.h) */
bool rv_release_wants_room(struct rv_release *r);
/* the images written for replicas' copies (rv_image.h) */
void rv_release_image(struct rv_release *r, struct rv_image_status *st);
/*
 * A membership change closes the log and opens it again: pause waits
 * until the thread no longer uses the log (a wait for durability it is in
 * ends first) and keeps it off; resume gives it the log opened again.
 * What was offered meanwhile is handled then.  The caller holds off
 * rv_release_log_holds in between (rv_db.c: under the database's lock).
 */
void rv_release_pause(struct rv_release *r);
void rv_release_resume(struct rv_release *r, struct repl *repl);
void rv_release_stop(struct rv_release **r);

#endif
