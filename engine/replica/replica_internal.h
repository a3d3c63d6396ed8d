/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_internal.h -- what a replica's files share: the replica and the
 * session it serves.  replica_open.c makes and unmakes its log, endpoints
 * and registration (and takes a new log's promise floor),
 * replica_state.c keeps its state and what a daemon shows of it,
 * replica_pending.c the control connections before their HELLO, and
 * replica.c holds the conversation with the primaries and the loop.
 */
#ifndef REPL_REPLICA_INTERNAL_H
#define REPL_REPLICA_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctl/ctl_chan.h"
#include "ctl/ctl_msg.h"
#include "log/wal.h"
#include "replica/promise_floor.h"
#include "replica/replica.h"

/*
 * The most terms a HELLO's epoch may be above the one followed: a
 * promotion goes one term above the highest it finds (a few more when
 * promotions race), so a replica down through this many failovers in a
 * row is the most that is plausible.  Past it the replica must be made
 * anew (repld --reinit).
 */
#define REPLICA_TERM_JUMP_MAX 1024

_Static_assert(CTL_BACKEND_PMEM == RPMA_EXT_MEM_PMEM &&
	CTL_BACKEND_FILE == RPMA_EXT_MEM_FILE &&
	CTL_BACKEND_CRASH == RPMA_EXT_MEM_CRASH, "HELLO_REPLY's backend numbers");

/* the primary being followed (or fenced for, during a promotion) */
struct session {
	struct ctl_chan *ch;		/* NULL: none */
	struct rpma_conn *conn;		/* its data connection (not when fencing) */
	uint64_t epoch;
	uint32_t primary;		/* its node id */
	uint64_t last_heard;
	uint64_t primary_head;		/* its checkpoint's LSN, as its HELLO said */
};

struct replica {
	const struct replica_cfg *cfg;
	uint64_t heard_at;		/* a followed primary's last frame (0: none) */
	struct rpma_ext_mem *mem;
	struct wal *wal;
	int lock_fd;			/* holds the log's lock (log_lock.h) */
	bool log_created;		/* its file made by this open */
	/* control connections dropped before their HELLO, for each kind of
	   reason (replica_pending.c's drop_kind): when that was last said, and how
	   many were not said since (pending_drop) */
	uint64_t drop_said_ms[4];
	unsigned drops_unsaid[4];
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct ctl_listener *listener;
	struct ctl_tls *tls;		/* NULL: plain TCP */
	/* the log is marked promise pending: its floor is being taken */
	struct promise_floor *floor;	/* NULL: taken (or never needed) */
	struct ctl_tls *floor_tls;	/* its questions' client context */
	uint8_t desc[CTL_DESC_MAX];
	size_t desc_len;
	uint64_t ring_size;
	struct wal_identity id;
	struct session s;
	/* this thread's own; publish_state copies them for readers */
	enum repl_session_state state;
	uint64_t state_since_ms;
	struct replica_counters n;
};

/* replica_state.c: the one writer of r->state (a change not drawn in
 * replica.h aborts a debug build) */
void session_state(struct replica *r, enum repl_session_state to);
/* a fresh copy of what a daemon shows, swapped in under the state's lock */
void publish_state(struct replica *r);

/* replica_pending.c: control connections before their HELLO */
#define PENDING_MAX 8

struct pending {
	struct ctl_chan *ch;
	uint64_t until;			/* its HELLO's deadline */
};

struct pending_set {
	struct pending p[PENDING_MAX];
	int n;
};

/* their pollfds into fds (ps->n of them); wait cut to the nearest deadline */
int pending_poll(const struct pending_set *ps, struct pollfd *fds, int wait);
/* take every connection waiting on the listener */
void pending_accept(struct replica *r, struct pending_set *ps);
/*
 * One whose HELLO is in, out of the set (the caller greets it), or NULL;
 * each past its deadline, or failed, dropped on the way
 */
struct ctl_chan *pending_take_ready(struct replica *r, struct pending_set *ps);
void pending_drop_all(struct replica *r, struct pending_set *ps);

/* replica_open.c */
int open_tls(struct replica *r);
int open_log(struct replica *r);
int open_endpoints(struct replica *r);
void close_all(struct replica *r);
/* register the ring anew: a former primary's key names nothing then */
int new_region(struct replica *r);
int floor_begin(struct replica *r);
void floor_step(struct replica *r);

#endif
