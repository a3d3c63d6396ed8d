/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_image.h -- a replvfs primary writes its database file into its log,
 * page by page (image_record.h), when a replica's copy asks for it (the
 * replica's heartbeats say so: repl_replica_want_base); the copy is made
 * anew from it (rv_remake.h).  Run by the release thread (rv_release.c),
 * a step at a time, off the commit path.
 *
 *   1. An image begins at the database's base B (its marker): its first
 *      record says B, the page size and the file's pages.  From then on
 *      the log is released no further than B (the pin) until every
 *      replica that asked holds the records after B (its hold, seen in
 *      its heartbeats), or has gone, or PIN_MAX_MS passed: the copy needs
 *      them, and takes its hold only once it saw the first record.
 *   2. The pages follow, a record of up to a sixteenth of the log (1 MiB
 *      at most) at a time, only while the log is less than half full:
 *      commits keep their room.  They are read from the file as it is,
 *      without a lock; a page a checkpoint writes meanwhile is one a
 *      transaction after B rewrites (rv_remake.h).  An idle database
 *      makes no base, so nothing would be released: a waiting image has
 *      the next commit checkpoint (rv_image_waits_room), and with
 *      no transaction after the file's base, the file is a base at the
 *      log's last record too, and is marked so (rv_release.c) to make
 *      room.  Each record carries the newest transaction id as its
 *      client id, so that a release past the last transaction keeps it
 *      (rv_db_txid_after).
 *   3. The last record says so; an image asked for meanwhile by another
 *      replica begins after it.
 */
#ifndef REPLSQLITE_RV_IMAGE_H
#define REPLSQLITE_RV_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"

struct rv_image;

struct rv_image_status {
	uint64_t images;		/* images written whole since the open */
	bool active;			/* one is being written */
	uint64_t first_lsn;		/* ... its first record */
	uint64_t pin_lsn;		/* releases go no further (0: none) */
};

/* for the database file at path, read through db_fd; NULL: no memory */
struct rv_image *rv_image_new(const char *path, const uint8_t db_uuid[16],
		int db_fd);
/*
 * Looks at the replicas, begins an image if one asks, writes the next
 * records of the one under way, ends the pin once it is no longer needed.
 * true: call again soon (an image is under way or pinned).  *offer: an
 * LSN the file is a base at, to be marked and released up to (0: none),
 * when the image waits for room in the log of an idle database.
 */
bool rv_image_step(struct rv_image *im, struct repl *repl, uint64_t *offer);
/*
 * The image waits for room in the log: the database's next commit
 * checkpoints (rv_db_checkpoint_due), so that the one after restarts the
 * WAL and makes a base that lets the log be released.
 */
bool rv_image_waits_room(struct rv_image *im);
/* no release may pass this LSN (0: none) */
uint64_t rv_image_pin(struct rv_image *im);
/* the log is closed (a membership change): an image under way is dropped */
void rv_image_abandon(struct rv_image *im);
void rv_image_get(struct rv_image *im, struct rv_image_status *st);
void rv_image_free(struct rv_image **im);

#endif
