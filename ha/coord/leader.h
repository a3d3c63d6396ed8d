/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * leader.h -- the leader key under a lease: who may TRY to promote.
 *
 * Keys under a prefix ("/rpma-repl/<cluster-uuid>/"):
 *   PREFIX "leader"  the holder's value (opaque JSON from the caller), put
 *                    with the holder's lease, so it goes when the lease does;
 *   PREFIX "epochs"  the highest epoch ever taken, decimal text, no lease.
 *
 * A holder's lease is valid until valid_until = t0 + TTL - margin, t0 the
 * monotonic time its last answered grant or keepalive was sent, margin =
 * max(100 ms, 5% of the TTL) for the two clocks' rates.  etcd starts the
 * TTL at its receipt (after t0) and only ever extends a lease (on its own
 * leader change), so no other node can hold the key before valid_until,
 * unless etcd's clock runs faster than ours by more than the margin.
 *
 * The lease decides only who may try to promote; the safety of what was
 * acknowledged rests on fencing, never on it (docs/design.md, "The leader
 * lease").
 *
 * States: IDLE (no lease held) --campaign won--> HELD --keepalive answers
 * no TTL, or an update finds the key not ours--> LOST; resign from HELD or
 * LOST --> IDLE; a campaign from LOST (or IDLE) may win again.
 *
 * Threads: a coord_leader, like its etcd client, is used by one thread at
 * a time (no lock inside).  Two nodes, or two threads, each have their own.
 */
#ifndef REPL_COORD_LEADER_H
#define REPL_COORD_LEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"

enum coord_leader_state {
	COORD_LEADER_IDLE = 0,
	COORD_LEADER_HELD,
	COORD_LEADER_LOST,
};

const char *coord_leader_state_name(enum coord_leader_state s);

struct coord_leader_cfg {
	const struct etcd_client_cfg *etcd;
	const char *prefix;	/* e.g. "/rpma-repl/<cluster-uuid>/" */
	int64_t ttl_s;		/* >= 1; etcd may raise it to its minimum */
	uint64_t node_id;	/* named in errors */
};

struct coord_leader;

/* NULL on failure, why in err (err_size bytes) */
struct coord_leader *coord_leader_new(const struct coord_leader_cfg *cfg,
	char *err, size_t err_size);
/* does not resign: a lease still held runs out by itself */
void coord_leader_free(struct coord_leader *l);
/* the last call's failure ("" after ETCD_OK) */
const char *coord_leader_error(const struct coord_leader *l);

enum coord_leader_state coord_leader_state(const struct coord_leader *l);
/* the lease held (0 in IDLE), the TTL etcd granted it, valid_until (ns) */
int64_t coord_leader_lease(const struct coord_leader *l);
int64_t coord_leader_ttl(const struct coord_leader *l);
uint64_t coord_leader_valid_until(const struct coord_leader *l);

/* the leader key as etcd has it */
struct coord_holder {
	bool present;
	char *value;		/* malloc'd, NUL-terminated; NULL if !present */
	size_t value_len;
	int64_t lease, mod_revision;
};

void coord_holder_free(struct coord_holder *h);

enum coord_campaign_outcome {
	COORD_CAMPAIGN_ERROR = 0,	/* the call's enum etcd_rc says why */
	COORD_CAMPAIGN_WON,
	COORD_CAMPAIGN_HELD,		/* another lease holds the key: holder */
};

struct coord_campaign {
	enum coord_campaign_outcome outcome;
	struct coord_holder holder;	/* HELD: who; free with coord_holder_free */
};

/*
 * Grants a fresh lease, then one txn: leader CREATE == 0 ? put value with
 * the lease : range leader.  A lease etcd no longer has (code 5) is
 * granted again, once.  On loss, or when the txn's outcome is unknown, the
 * fresh lease is revoked, so it neither lingers nor keeps a key it may
 * have put.  ETCD_E_INVAL when HELD already.
 */
enum etcd_rc coord_leader_campaign(struct coord_leader *l, const char *value,
	struct coord_campaign *out);
/*
 * As coord_leader_campaign, with a lease the caller granted earlier (its
 * TTL granted_ttl, its grant sent at sent_ns): used as is when etcd still
 * has it, replaced once by a fresh one when not.  The lease becomes this
 * coord_leader's either way (revoked on loss).
 */
enum etcd_rc coord_leader_campaign_lease(struct coord_leader *l,
	const char *value, int64_t lease, int64_t granted_ttl, uint64_t sent_ns,
	struct coord_campaign *out);

/*
 * One keepalive of the held lease.  ETCD_OK: still HELD, valid_until
 * moved on.  ETCD_E_LEASE_NOT_FOUND: the lease expired (an answer without
 * TTL), the state is LOST.  Any other failure (etcd not answering) leaves
 * valid_until as it was, to run out by itself.  ETCD_E_INVAL unless HELD.
 */
enum etcd_rc coord_leader_renew(struct coord_leader *l);

/* HELD and now_ns (CLOCK_MONOTONIC) before valid_until */
bool coord_leader_valid(const struct coord_leader *l, uint64_t now_ns);

/*
 * txn leader LEASE == mine ? put value with the same lease.  *ours false
 * (and the state LOST) when the key is not ours any more.
 */
enum etcd_rc coord_leader_update(struct coord_leader *l, const char *value,
	bool *ours);

/*
 * Revokes the lease (etcd deletes the key at once) and goes IDLE, even
 * when the revoke fails: then the key lingers until the lease runs out.
 */
enum etcd_rc coord_leader_resign(struct coord_leader *l);

/* range leader; *holder filled on ETCD_OK (coord_holder_free) */
enum etcd_rc coord_leader_get(struct coord_leader *l, struct coord_holder *holder);

/*
 * Takes the next epoch from the epochs counter: max(stored + 1, min_epoch)
 * (absent = 0), written by compare-and-swap on its mod_revision (VERSION
 * == 0 when absent) and retried on a lost race a bounded number of times
 * (then ETCD_E_CONTENDED).  No two callers ever get the same epoch.  Any
 * state.
 */
enum etcd_rc coord_epoch_take(struct coord_leader *l, uint64_t min_epoch,
	uint64_t *epoch);
/*
 * Raises the epochs counter to epoch when it holds less (a promotion that
 * chose its epoch by its own rule records it); *stored the counter after.
 * Compare-and-swap as coord_epoch_take.
 */
enum etcd_rc coord_epoch_raise(struct coord_leader *l, uint64_t epoch,
	uint64_t *stored);

/* the client this coordinator uses (same thread rule): other keys' calls */
struct etcd_client *coord_leader_client(struct coord_leader *l);

#endif
