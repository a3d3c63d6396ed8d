/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.h -- the replica side of replication: a process that owns a ring
 * identical in geometry to its primary's, lets the primary write into it
 * with one-sided RDMA (registered on a persistence backend, so a flush
 * request persists the range), and answers the primary's control messages
 * (hello, catch-up queries, truncate, checkpoint moves, commit point).
 */
#ifndef REPL_REPLICA_H
#define REPL_REPLICA_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "repl.h"
#include "rpma.h"

/*
 * Where the replica stands with the primaries (replica.c's session_state
 * is its one writer, the replica's thread; a change not listed here aborts
 * a debug build):
 *   IDLE -> FLOOR -> IDLE         made anew: its promise floor first
 *   IDLE -> FOLLOWING -> IDLE     a primary's session, with its data
 *   IDLE -> FENCED_FOR -> IDLE    a promotion's fence-only session
 *   IDLE | FLOOR -> STOPPED
 * A HELLO that fences the session served ends it first (IDLE).
 */
/* the states are repl.h's enum repl_session_state */

/* what the replica did since it started (publish_state copies it out) */
struct replica_counters {
	uint64_t state_ms[REPL_SESSION_STATES];	/* time in each (current: to now) */
	uint64_t entered[REPL_SESSION_STATES];	/* times it entered each */
	uint64_t sessions;	/* sessions begun (following or fenced for) */
	uint64_t fences;	/* times a HELLO fenced it (a new registration) */
	uint64_t silent_drops;	/* sessions dropped: the primary fell silent */
	uint64_t queries;	/* catch-up QUERYs answered */
	uint64_t truncates;	/* TRUNCATEs */
	uint64_t head_moves;	/* checkpoint moves (SET_HEAD) */
	uint64_t commits;	/* COMMITs: the commit point and tail hint */
};

const char *replica_session_state_name(enum repl_session_state s);

/* what a daemon shows of a replica is repl.h's struct repl_replica_info */

/*
 * Kept current by replica_run for readers in other threads of the
 * process: initialise it before replica_run starts, destroy it after it
 * returned.
 */
struct replica_state {
	pthread_mutex_t lock;
	struct repl_replica_info snap;	/* under lock */
	/* the primary's last COMMIT said so; under lock, committed signals
	 * a change */
	uint64_t commit_lsn;
	pthread_cond_t committed;
	/* repl_replica_hold_slot: each reader's hold, records after its
	 * hold_lsn stay; the replica holds the lowest (under lock) */
	bool holding[REPL_HOLD_SLOTS];
	uint64_t hold_lsn[REPL_HOLD_SLOTS];
	/* repl_replica_want_base: a reader needs a base (under lock; the
	 * replica's heartbeats say so, nothing keeps it) */
	bool wants_base;
	/* when a followed primary was last heard (clock_now_ms; 0: never),
	 * as the serving thread last published it (under lock) */
	uint64_t heard_at;
	/* the hold_next this replica last sent (an ACK, an answer to a
	 * HEARTBEAT) and in which session: what that primary knows of its
	 * holds (under lock) */
	uint64_t told_hold_next;
	uint64_t told_session;
};

int replica_state_init(struct replica_state *st);
void replica_state_destroy(struct replica_state *st);
/* a copy of the latest state (all zero before replica_run opened its log) */
void replica_state_get(struct replica_state *st, struct repl_replica_info *out);
/* a COMMIT taken in: the commit point */
void replica_state_commit(struct replica_state *st, uint64_t commit_lsn);
/* records after lsn stay in the log from now on (a reader's applied point) */
void replica_state_hold(struct replica_state *st, int slot, uint64_t lsn);
void replica_state_unhold(struct replica_state *st, int slot);
/* true, with *lsn, while records are held */
bool replica_state_held(struct replica_state *st, uint64_t *lsn);
/*
 * hold_next for an answer of session (the first record held, 0: none),
 * noted as what that primary knows from now (hold_told)
 */
uint64_t replica_state_tell_hold(struct replica_state *st, uint64_t session);
/* a reader here needs a base from the primary's application (or no more) */
void replica_state_want_base(struct replica_state *st, bool want);
bool replica_state_wants_base(struct replica_state *st);
/* until commit_lsn >= lsn (0) or timeout_ms passed (REPL_E_TIMEDOUT) */
int replica_state_wait(struct replica_state *st, uint64_t lsn, int timeout_ms);

struct replica;

/* the committed records of r's log from from on (wal_iterate) */
int replica_iterate(struct replica *r, uint64_t from,
		int (*cb)(void *arg, uint64_t lsn, const void *data, size_t len),
		void *arg);

/* the same, epoch starts included, as records (wal_iterate_records) */
int replica_iterate_records(struct replica *r, uint64_t from,
		repl_record_fn *cb, void *arg);

/* another node of the replica's configuration (replica_cfg.peers) */
struct replica_peer {
	const char *host;
	const char *port;		/* its control port */
};

struct replica_cfg {
	const char *path;		/* its log: file or device */
	enum rpma_ext_mem_backend backend;
	size_t size;			/* with create: the log's size */
	/*
	 * create: make the file if it is missing and format a medium that
	 * is blank (every header byte zero), never one that holds a damaged
	 * log or something else; without it (nor reinit) a blank medium is
	 * refused: REPL_E_BLANK.  reinit: format it whatever it holds (a
	 * replaced disk, a log to be made anew): a new incarnation with no
	 * membership, which counts for nothing until a primary caught it up,
	 * and no promise: it is marked promise pending (WAL_F_PROMISE_PENDING)
	 * until it has taken its floor (peers, below).  create alone (a new
	 * cluster's blank medium) takes no floor.
	 */
	int create;
	int reinit;
	/*
	 * The other nodes of its configuration and its k (quorum).  A log
	 * marked promise pending (by reinit, now or at an earlier start that
	 * ended before the floor was stored) serves no primary until it has
	 * taken its promise floor: it asks every peer with a PROBE HELLO and
	 * takes the highest promise among k + 1 answers (every peer's when
	 * there are no more than k) as its own, durably.  Until then every
	 * HELLO but a PROBE is refused with an ERROR ("not ready").  Without
	 * peers such a log is refused: REPL_E_NO_PEERS (before reinit
	 * formats anything).  Copied when replica_run starts.
	 */
	const struct replica_peer *peers;
	int n_peers;
	int quorum;
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	const char *provider;		/* "verbs", or a libfabric provider ("tcp") */
	const char *addr;		/* where to listen */
	const char *ctl_port;		/* the control channel's port */
	const char *data_port;		/* the RPMA endpoint's port */
	int timeout_ms;			/* a primary silent this long is dropped */
	/* the control channel's TLS (CA, certificate, key); all NULL: plain TCP */
	const char *tls_ca, *tls_cert, *tls_key;
	/*
	 * Set non-zero to stop: from another thread, or from a signal
	 * handler (a lock-free atomic_int is async-signal-safe).
	 */
	atomic_int *stop;
	/* called once the replica listens (both ports), e.g. to signal readiness */
	void (*ready)(void *arg);
	void *ready_arg;
	struct replica_state *state;	/* optional: kept current (see above) */
	/*
	 * For tests only: refuse every data connection, as one without the
	 * session's admission token is (a link failure after a good HELLO).
	 */
	bool test_refuse_data;
};

/*
 * Serve primaries, one at a time, until *cfg->stop is set.  Returns 0 after
 * a stop, or a negative error (with a message logged) if the log or the
 * endpoints cannot be set up.  replica_open + ready + replica_serve +
 * replica_close.
 */
int replica_run(const struct replica_cfg *cfg);

/*
 * The same in steps: replica_open locks and opens the log and listens
 * (cfg must outlive the replica); replica_serve serves until *cfg->stop;
 * replica_close closes it all.
 */
struct replica;
int replica_open(const struct replica_cfg *cfg, struct replica **r);
int replica_serve(struct replica *r);
void replica_close(struct replica **r);

#endif
