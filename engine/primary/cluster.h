/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster.h -- the primary's side of replication: one link per replica,
 * each a thread that catches its replica up and then streams the local
 * ring's new bytes to it (rpma_write + rpma_flush, pipelined), and the
 * quorum rule that turns the links' flushed positions into "durable".
 */
#ifndef REPL_CLUSTER_H
#define REPL_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "log/wal.h"

struct cluster;
struct membership;

struct cluster_replica {
	const char *host;
	const char *ctl_port;
};

struct cluster_cfg {
	const char *provider;		/* libfabric provider, e.g. "tcp" */
	const struct cluster_replica *replicas;
	int n_replicas;
	int quorum;			/* replicas that must hold a record */
	int heartbeat_ms;
	int down_timeout_ms;		/* a replica silent this long is down */
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	/* the control channel's TLS (CA, certificate, key); all NULL: plain TCP */
	const char *tls_ca, *tls_cert, *tls_key;
	/* promotion (promote.c): how long to wait for n - k + 1 nodes, and
	 * whether to go on with fewer (acknowledged records may be lost) */
	int promote_wait_ms;
	bool force;
	/*
	 * The configuration is not the membership stored in the log: change
	 * to it (S -> J -> F, membership.h).
	 */
	bool reconfigure;
	/*
	 * The first start of a cluster: the log holds no membership, and
	 * neither may any replica it reaches (no records, no epoch, no
	 * membership); the configuration's becomes configuration epoch 1.
	 * Without it a log that holds no membership cannot promote.
	 */
	bool bootstrap;
	/*
	 * A restart of a node that was the primary, not a promotion asked
	 * for: if its log last followed another node's epoch, or a replica
	 * follows a newer primary's epoch (asked before every round of
	 * fencing), refuse (REPL_E_SUPERSEDED) before fencing that round.
	 */
	bool refuse_if_superseded;
	/*
	 * Where this primary's own control channel listens (fence_listen.c):
	 * a promotion elsewhere reaches it there and fences it.  NULL port:
	 * it does not listen.
	 */
	const char *listen_addr, *listen_port;
	/* REPL_FLUSH_*: how a flush persists on the replicas */
	int flush_method;
	/* repl_cfg.busy_poll_us: 0 never, < 0 adaptive, else at most that */
	int busy_poll_us;
	/* repl_cfg.promote_gate: non-zero stops a promotion before it fences */
	int (*promote_gate)(void *arg);
	void *promote_gate_arg;
};

/*
 * Become the primary: a promotion (promote.c) with a new epoch, then the
 * links start connecting; the log must stay open meanwhile.  With a
 * change of the membership it waits up to promote_wait_ms for the change
 * to commit, and returns either way (cluster_config_joint() tells).
 * REPL_E_NO_QUORUM: fewer than N - k nodes could be fenced.
 */
/*
 * The configuration is not the stored membership and no change was
 * asked, or the change cannot be made (membership.h)
 */
/* the log holds no membership and this is no bootstrap (or one refused) */
/*
 * refuse_if_superseded, and this log followed another node's epoch, or a
 * replica follows a newer primary
 */
int cluster_start(const struct cluster_cfg *cfg, struct rpma_ext_mem *mem,
		struct wal *wal, struct cluster **c_ptr);
void cluster_stop(struct cluster **c_ptr);

/*
 * Return once every record up to lsn is persistent locally and flushed on
 * `quorum` replicas: 0, or REPL_E_TIMEDOUT after timeout_ms (< 0: forever),
 * or REPL_E_UNKNOWN when this primary was fenced first (the record may or
 * may not be kept: the new primary knows).
 */
int cluster_wait_durable(struct cluster *c, uint64_t lsn, int timeout_ms);

/*
 * The database released records up to lsn: move every streaming
 * replica's checkpoint (it must not point at space about to be
 * overwritten), then the local one.  Records not yet on every streaming
 * replica are kept.  A link catching up meanwhile waits for the release
 * (release_lock) and then sets its replica's checkpoint to the new one.
 */
int cluster_release(struct cluster *c, uint64_t lsn, bool past_down);

/* a replica follows a newer primary: this one must not append any more */
bool cluster_fenced(struct cluster *c);

/* the newest LSN durable by the configuration's rule (0: none) */
uint64_t cluster_durable_lsn(struct cluster *c);

/*
 * A link's state: link.c's link_set_state is its one writer (the link's
 * thread, under c->lock); a change not drawn here aborts a debug build
 * (DRAINING to itself: a second failure's reason):
 *
 *   DOWN -> CONNECTING -> CATCHING_UP -> STREAMING
 *   CONNECTING | CATCHING_UP | STREAMING -> DRAINING -> DOWN
 *   DOWN -> FENCED | RETIRED   (the link's thread ends)
 *
 * Only STREAMING counts toward the quorum.  DRAINING: the connection is
 * being left (it failed, also in an appender's hands, or the cluster
 * stops); no batch is posted any more, and on a clean stop the batches in
 * flight complete first.  A link of a stopping cluster ends DOWN.
 */
/* the link states are repl.h's enum repl_link_state */

/* what a link did since the start (cluster_link_status) */
struct cluster_link_counters {
	uint64_t state_ms[REPL_LINK_STATES];	/* time in each (the current: up to now) */
	uint64_t entered[REPL_LINK_STATES];	/* times it entered each */
	uint64_t batches;		/* write+flush batches posted */
	uint64_t flushes;		/* batches whose flush completed */
	uint64_t spins;			/* polls of the CQ before sleeping */
	uint64_t sleeps;		/* waits for work */
	uint64_t catch_ups;		/* connections that reached STREAMING */
	uint64_t full_resyncs;		/* of them, from the checkpoint anew */
};

struct cluster_link_status {
	enum repl_link_state state;
	uint64_t flushed_lsn;	/* newest LSN flushed on it (0: none) */
	uint64_t lag_records;	/* published on the primary, not yet flushed */
	uint64_t reconnects;
	bool member;		/* caught up: holds the membership, counts */
	uint64_t config_epoch;	/* of the membership it holds (0: none or
				   not known yet) */
	char why[160];		/* the last reason it went down */
	uint64_t lag_bytes;	/* ring bytes published, not yet flushed */
	uint64_t lag_ms;	/* how long the oldest of them has waited */
	char transport[16];	/* of the last connection ("" before one) */
	char flush_method[8];
	char backend[8];	/* the replica's persistence backend */
	bool holds;		/* its reader holds records: release stops at */
	uint64_t hold_lsn;	/* (its checkpoint - 1) */
	uint64_t hold_from;	/* the first record its reader holds */
	bool wants_base;	/* streaming, and its last heartbeat said a
				   reader there needs a base */
	struct cluster_link_counters n;
	/* a catch-up in progress (link_progress_get): else all 0 */
	uint64_t catchup_total_bytes;
	uint64_t catchup_done_bytes;
	uint64_t catchup_eta_ms;	/* UINT64_MAX: not known yet */
};

int cluster_link_status(struct cluster *c, int i, struct cluster_link_status *st);
/* the membership's configuration epoch */
uint64_t cluster_config_epoch(struct cluster *c);
/* is it joint (a change in progress, not yet committed)? */
bool cluster_config_joint(struct cluster *c);
/* a copy of the membership it stores now */
void cluster_membership(struct cluster *c, struct membership *out);
int cluster_links_up(struct cluster *c);

/*
 * Compare the records from..to (clamped to what this primary keeps, its
 * commit point and what replica i has flushed) with replica i's copy, by
 * checksums of ranges of REPL_VERIFY_RANGE records computed on each
 * side.  0 when compared (res->mismatches may be > 0); REPL_E_INVAL;
 * REPL_E_TIMEDOUT when the replica is not streaming, goes down or does not
 * answer in time; REPL_E_FENCED; res->why says why.
 */

struct cluster_verify_result {
	uint64_t from, to;	/* what was compared */
	uint64_t ranges;
	uint64_t mismatches;
	struct { uint64_t from, to; } bad[REPL_VERIFY_SHOW];
	char why[160];
};

int cluster_verify(struct cluster *c, int i, uint64_t from, uint64_t to,
		struct cluster_verify_result *res);

#endif
