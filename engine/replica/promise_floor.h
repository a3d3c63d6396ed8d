/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promise_floor.h -- the promise floor of a replica whose log was made
 * anew (docs/replication.md, "Identity and bootstrap"): before it serves
 * a primary it asks the other nodes of its configuration, each with a
 * PROBE HELLO (which changes nothing anywhere), for the epoch they
 * promised, and takes the highest among k + 1 answers (every other node's
 * when there are no more than k) as its own.
 *
 * The questions run in threads of their own, a round at a time, so the
 * replica keeps answering while it waits (the PROBEs of other nodes
 * included: two nodes made anew at once ask each other); a round that
 * falls short is repeated after a period that grows to
 * FLOOR_PERIOD_MAX_MS.  Each question is bounded by the timeout (the
 * connection and TLS handshake, then the answer, which is waited for in
 * short steps that notice a stop), so promise_floor_delete returns within
 * about the timeout.
 */
#ifndef REPL_PROMISE_FLOOR_H
#define REPL_PROMISE_FLOOR_H

#include <stdint.h>

#include "ctl/ctl_chan.h"
#include "replica/replica.h"

#define FLOOR_PERIOD_MIN_MS 200
#define FLOOR_PERIOD_MAX_MS 2000

struct promise_floor;

/*
 * For the log of identity id (its cluster, node id and incarnation) with
 * the ring of ring_size bytes and checkpoint head: the peers and k of cfg
 * (copied), its timeout; tls a client context or NULL (plain TCP), owned
 * by the caller and kept until promise_floor_delete.  0, or REPL_E_INVAL
 * (no peers), REPL_E_NOMEM.
 */
int promise_floor_new(const struct replica_cfg *cfg, const uint8_t uuid[16],
		uint32_t node_id, uint64_t incarnation, uint64_t ring_size,
		const struct log_pos *head, struct ctl_tls *tls,
		struct promise_floor **f_ptr);

/* answers needed: k + 1, or every peer when there are no more */
int promise_floor_needed(const struct promise_floor *f);
/* the peers asked */
int promise_floor_peers(const struct promise_floor *f);
/* answers (distinct other nodes) in the last round that ended */
int promise_floor_answered(const struct promise_floor *f);

/*
 * The replica's loop calls it while the floor is not taken: it starts a
 * round when one is due and ends one whose questions all ended.  1 once a
 * round had enough answers: *epoch and *epoch_inc are the highest promise
 * among them (0 and 0 if none promised anything), and a sentence naming
 * the answers is in why; 0 otherwise (a round short of answers is logged,
 * naming who did not answer and why, when that changed or every
 * FLOOR_LOG_MS).  A round that had enough is not repeated.
 */
int promise_floor_step(struct promise_floor *f, uint64_t *epoch,
		uint64_t *epoch_inc, char *why, size_t whylen);

/* ask again at once (the floor could not be stored) */
void promise_floor_retry(struct promise_floor *f);

/* stop: a round in progress is ended (its questions give up) and freed */
void promise_floor_delete(struct promise_floor **f_ptr);

#endif
