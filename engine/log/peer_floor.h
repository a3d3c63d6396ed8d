/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_floor.h -- what this node saw each peer's log hold, kept in its own
 * log: the peer floors.
 *
 * A promise (a log's epoch) and a membership (its configuration epoch)
 * never go down on a live log: a replica refuses an older epoch and an
 * older membership, and a log made anew is another incarnation that
 * starts again from nothing.  A log put back from an older copy (a
 * snapshot or a backup restored under a running cluster) keeps its
 * incarnation, so it looks like itself, but its promise, its membership
 * and its records go back with it.  So this node remembers, for each peer
 * node id, the incarnation of that peer's log, the highest epoch the peer
 * was seen to promise to this node (a fence answer or a HELLO_REPLY that
 * accepted this node's epoch) and the highest configuration epoch it
 * acknowledged storing (the ACK of a MEMBERSHIP).  An answer of the same
 * incarnation whose prior_epoch is below that promise, or whose
 * configuration epoch is below that membership, comes from an older copy
 * of that log: the peer is marked OLDER_COPY and counts for nothing until
 * its log is made anew (a new incarnation replaces the entry).
 * docs/replication.md ("What stays unprotected") says what this cannot
 * see.
 *
 * Encoding (little-endian, PEER_FLOORS_SIZE bytes):
 *
 *   off size field
 *     0    8 magic         "RPLFLOR" 0x01
 *     8    8 gen           generation: 1, 2, ... (0 is never stored)
 *    16    4 count         entries that follow, 0..24
 *    20    4 reserved      0
 *    24  32n entries       node_id u32 (any; no node id twice), flags
 *                          u32 (bit 0 OLDER_COPY), incarnation u64 (not
 *                          0), promise u64 (0: none seen), config u64
 *                          (0: none acknowledged)
 *   792    4 reserved      0
 *   796    4 crc           CRC-32C of bytes 0..795
 *
 * Entries past count are all zero.  In the log it sits in both 4 KiB
 * header copies at offset PEER_FLOORS_OFF; the valid copy with the larger
 * generation wins, and a store overwrites the other one with the next
 * generation, so a torn store leaves the previous table.  An entry is
 * written only when a value rises, a new incarnation replaces it, or the
 * peer is found to be an older copy: rare events (a promotion, a first
 * connection in a new epoch, a membership change), never on the append
 * path.  A table that is full gives up the entry with the lowest promise
 * (then the lowest configuration epoch) for a new node id.
 */
#ifndef REPL_PEER_FLOOR_H
#define REPL_PEER_FLOOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpma.h"

#define PEER_FLOORS_MAX 24
#define PEER_FLOORS_SIZE 800
#define PEER_FLOORS_OFF 2048		/* in each header copy */

#define PEER_FLOOR_F_OLDER_COPY (1u << 0)	/* found an older copy */

struct peer_floor {
	uint32_t node_id;
	uint32_t flags;			/* PEER_FLOOR_F_* */
	uint64_t incarnation;		/* of its log (never 0) */
	uint64_t promise;		/* the highest epoch it promised us */
	uint64_t config;		/* the highest config epoch it stored */
};

struct peer_floors {
	uint64_t gen;			/* 0: none stored yet */
	uint32_t count;
	struct peer_floor e[PEER_FLOORS_MAX];
};

/* 0 if t may be encoded (what the decoder accepts), else -1 with *why */
int peer_floors_check(const struct peer_floors *t, const char **why);
/* 0, or -1 with *why if peer_floors_check refuses it */
int peer_floors_encode(const struct peer_floors *t, uint8_t *buf,
		const char **why);
/* total over any bytes: 0, or -1 with *why (and *t empty) */
int peer_floors_decode(const uint8_t *buf, size_t len, struct peer_floors *t,
		const char **why);

/* the log's stored table (gen 0, no entries: none) */
int peer_floors_load(struct rpma_ext_mem *mem, struct peer_floors *t);
/*
 * Store t durably over the older copy with the next generation (t->gen
 * becomes it); REPL_E_INVAL if t is not valid.
 */
int peer_floors_store(struct rpma_ext_mem *mem, struct peer_floors *t);

/* the entry of node_id, or NULL */
const struct peer_floor *peer_floor_find(const struct peer_floors *t,
		uint32_t node_id);
/*
 * An answer of node_id's log `incarnation` that says it followed
 * prior_epoch before this answer and holds configuration epoch config:
 * the entry that shows it to be an older copy of that log (one marked
 * OLDER_COPY, or one whose promise is above prior_epoch or whose config
 * is above config), or NULL.  Another incarnation is another log: NULL.
 */
const struct peer_floor *peer_floor_older(const struct peer_floors *t,
		uint32_t node_id, uint64_t incarnation, uint64_t prior_epoch,
		uint64_t config);
/*
 * node_id's log `incarnation` promised epoch `promise` to this node and
 * stored configuration epoch `config` (either 0: not this time): raise
 * its entry (a new incarnation replaces it; an OLDER_COPY entry is not
 * raised).  True if the table changed (it must be stored).
 */
bool peer_floor_raise(struct peer_floors *t, uint32_t node_id,
		uint64_t incarnation, uint64_t promise, uint64_t config);
/* mark node_id's entry of `incarnation` OLDER_COPY: true if newly marked */
bool peer_floor_mark_older(struct peer_floors *t, uint32_t node_id,
		uint64_t incarnation);

#endif
