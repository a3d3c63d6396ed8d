/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.h -- librepl, the replication engine's API for databases.
 *
 * A database appends its write-ahead-log records here and learns when each
 * is durable.  This version keeps the log on one node (a persistence
 * backend: PMem, a file, or the crash-test memory); replication to peers
 * builds on the same calls.
 *
 * Every call returns 0 or a negative REPL_E_* code (repl_strerror names
 * it).  Appends are thread-safe; an LSN is durable once repl_wait_durable()
 * covering it returned 0, and only then may the database acknowledge it.
 */
#ifndef REPL_H
#define REPL_H 1

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REPL_E_INVAL	(-300001)	/* a bad argument or configuration */
#define REPL_E_NOMEM	(-300002)
#define REPL_E_IO	(-300003)	/* the medium failed (persist, open) */
#define REPL_E_CORRUPT	(-300004)	/* no valid log header, or a kept
					   record fails its checksum */
#define REPL_E_FULL	(-300005)	/* no space before the timeout */
#define REPL_E_TOO_BIG	(-300006)	/* a record larger than the log */
#define REPL_E_NOT_FOUND (-300007)	/* no such LSN (released, or not yet) */
#define REPL_E_TIMEDOUT	(-300008)	/* not on enough replicas in time */
#define REPL_E_FENCED	(-300009)	/* a newer primary took over: this one
					   appends no more */
#define REPL_E_UNKNOWN	(-300010)	/* outcome unknown: fenced while the
					   record was in flight; read it on the
					   new primary (its client id) */
#define REPL_E_NO_QUORUM (-300011)	/* promotion: fewer than n - k + 1
					   nodes reachable (see force) */
#define REPL_E_MEMBERSHIP (-300012)	/* n or k differ from the stored
					   membership (see reconfigure) */
#define REPL_E_LOCKED	(-300013)	/* another process has the log open
					   (it holds the log's lock) */
#define REPL_E_NOT_MEMBER (-300014)	/* promotion: this node's log holds
					   no membership (see bootstrap) */
#define REPL_E_SUPERSEDED (-300015)	/* a restart as the primary: a newer
					   primary took over meanwhile (see
					   refuse_if_superseded) */
#define REPL_E_TRANSPORT (-300016)	/* the network failed: an RDMA or
					   libfabric connection, or no usable
					   device or provider */
#define REPL_E_BLANK	(-300017)	/* a replica: the medium holds no log
					   (every header byte zero), and
					   neither create nor reinit is set */
#define REPL_E_NO_PEERS	(-300018)	/* a replica: its log is made anew (or
					   waits for its promise floor) and
					   its configuration lists no peers */
#define REPL_E_OTHER_CLUSTER (-300019)	/* the log's cluster id is not the
					   configuration's: another
					   cluster's log */

const char *repl_strerror(int err);

enum repl_backend {
	REPL_BACKEND_PMEM = 1,	/* a file on DAX, or device-dax */
	REPL_BACKEND_FILE = 2,	/* memory + a file (fdatasync) */
	REPL_BACKEND_CRASH = 3,	/* tests: memory + an image in /dev/shm */
};

/* a replica: where its control channel listens */
struct repl_replica {
	const char *host;
	const char *port;
};

/* zero-initialise, then set what applies */
struct repl_cfg {
	const char *path;		/* the log's file or device */
	enum repl_backend backend;
	size_t size;			/* bytes; with create, the new log's size */
	int create;			/* format a new, empty log */
	uint8_t cluster_uuid[16];	/* with create: the log's identity;
					   without it, unless all zero, the
					   log's must be the same, else
					   REPL_E_OTHER_CLUSTER */
	uint32_t node_id;
	uint64_t epoch;
	int full_timeout_ms;		/* how long an append waits for space */

	/* replication (n_replicas 0: a single node) */
	const struct repl_replica *replicas;
	int n_replicas;
	int quorum;			/* replicas that must hold a record
					   before it is durable: 0..n */
	const char *provider;		/* libfabric provider; NULL: "tcp" */
	int heartbeat_ms;		/* 0: 100 */
	int down_timeout_ms;		/* a silent replica is down; 0: 2000 */

	/*
	 * Opening with replicas promotes this node (a new epoch): it fences
	 * n - k + 1 nodes (itself counting) and takes the most advanced log
	 * among them, so no acknowledged record is lost.  It waits up to
	 * promote_wait_ms (0: twice down_timeout_ms) for them, then fails
	 * with REPL_E_NO_QUORUM -- unless force_promotion is set: then it goes
	 * on with whom it reached, and records acknowledged before may be lost.
	 */
	int promote_wait_ms;
	int force_promotion;

	/*
	 * The membership (n_replicas and quorum) is stored in the log with a
	 * configuration epoch; a start whose n or k differ from it fails with
	 * REPL_E_MEMBERSHIP unless reconfigure is set, which makes this
	 * configuration the next one.  Replicas count toward the quorum only
	 * once they hold everything committed under it.
	 */
	int reconfigure;

	/*
	 * The control channel's TLS (mutual: each side presents a certificate
	 * signed by the cluster's CA and checks the other's).  All three NULL:
	 * plain TCP, which anyone on the network can read and forge; it is
	 * logged as a warning.
	 */
	const char *tls_ca;		/* PEM: the cluster's CA certificate */
	const char *tls_cert;		/* PEM: this node's certificate */
	const char *tls_key;		/* PEM: its private key */

	/*
	 * How a flush makes records persistent on the replicas (REPL_FLUSH_*).
	 * AUTO: what the transport does by default (GPSPM).  APM is for
	 * verbs only, and a replica must keep its ring on PMem; GPSPM works on
	 * every transport.  One the transport cannot do: repl_open fails with
	 * REPL_E_INVAL.
	 */
	int flush_method;

	/*
	 * The first start of a cluster (with create, on the node that leads
	 * it first): the new log's membership is this configuration, as
	 * configuration epoch 1.  Refused with REPL_E_NOT_MEMBER if a
	 * replica it reaches holds records, an epoch or a membership: then
	 * the cluster exists already.  Without bootstrap, a log that holds
	 * no membership (a new log, or one made anew on a replaced disk) is
	 * not a member and cannot promote: REPL_E_NOT_MEMBER.
	 */
	int bootstrap;

	/*
	 * A restart of a node that was the primary, rather than a promotion
	 * an operator asked for: if this log last followed another node's
	 * epoch (it served as a replica of a newer primary since it led),
	 * or any replica follows a newer epoch (of another node: a failover
	 * happened while this one was down; asked before every round of
	 * fencing), fail with REPL_E_SUPERSEDED.  Nothing is fenced before
	 * the first answers, and a node only once it answered that it
	 * follows no newer epoch, so a restart does not undo a failover
	 * that a node it reaches took part in.  The caller then serves as a
	 * replica.
	 */
	int refuse_if_superseded;

	/*
	 * Where this node's control channel listens while it is the primary
	 * (its replica's address and control port, usually): a promotion of
	 * another node reaches it there and fences it, so it stops
	 * acknowledging at once and says so (repl_status().fenced) instead
	 * of both nodes calling themselves the primary.  listen_port NULL
	 * (default): it does not listen; listen_addr NULL: every address.
	 * A listen_addr that is one numeric address is also where the
	 * control connections this primary opens (to its replicas, and to
	 * the nodes its promotion fences) leave from, so that its peers see
	 * the address the membership names.
	 */
	const char *listen_addr;
	const char *listen_port;

	/*
	 * Busy polling: how long, in microseconds, a waiter for durability
	 * (and a link's thread) polls the replicas' completions before it
	 * sleeps, trading a core for a wake-up.  0: never (every wait
	 * sleeps at once); REPL_BUSY_POLL_AUTO: adaptive (at most twice the
	 * measured round trip of a flush, at most 100, and not at all while
	 * the round trip is longer or the waiters are as many as the CPUs);
	 * N > 0: up to N.
	 */
	int busy_poll_us;

	/*
	 * A promotion's gate: called before each node is fenced and once
	 * more before the new epoch is taken; when it returns non-zero the
	 * promotion stops there and repl_open fails with REPL_E_SUPERSEDED.
	 * For a caller whose right to promote is a lease (an etcd leader
	 * key): it says whether the lease still holds, so a caller paused
	 * past its lease does not fence the primary that replaced it.
	 * Nodes are fenced at once, so it is called from the threads that
	 * fence them, one call at a time, and never after repl_open()
	 * returned.  NULL: no gate.
	 */
	int (*promote_gate)(void *arg);
	void *promote_gate_arg;
};

#define REPL_BUSY_POLL_AUTO	(-1)
#define REPL_BUSY_POLL_MAX	1000000

#define REPL_FLUSH_AUTO		0	/* the transport's default */
#define REPL_FLUSH_APM		1	/* RDMA READ after the writes: the
					   replica's ring is written straight
					   into PMem (verbs) */
#define REPL_FLUSH_GPSPM	2	/* a request the replica's CPU serves
					   by persisting the range */

struct repl;

int repl_open(const struct repl_cfg *cfg, struct repl **repl_ptr);
int repl_close(struct repl **repl_ptr);

/* append one record; *lsn gets its log sequence number */
int repl_append(struct repl *repl, const void *buf, size_t len, uint64_t *lsn);
/* the same, gathered from iov, tagged with the database's client_id */
int repl_appendv(struct repl *repl, const struct iovec *iov, int iovcnt,
		uint64_t client_id, uint64_t *lsn);

/*
 * Return once every record up to lsn is durable: persisted in the local
 * log and flushed on `quorum` replicas.  Concurrent callers share one
 * persist and one flush per replica (group commit).  timeout_ms bounds the
 * wait for replicas (< 0: no bound), then REPL_E_TIMEDOUT; the local
 * persist is not interrupted.
 */
int repl_wait_durable(struct repl *repl, uint64_t lsn, int timeout_ms);

/*
 * What a record says of itself: the client id its append gave, the epoch
 * of the primary that wrote it, its length.  After a failover, a client
 * whose append ended with REPL_E_UNKNOWN or REPL_E_TIMEDOUT looks up the
 * LSN (or scans from it) on the new primary: its client id there says
 * whether the record was kept.
 */
struct repl_record_info {
	uint64_t client_id;
	uint64_t epoch;
	size_t len;
};
int repl_record_info(struct repl *repl, uint64_t lsn, struct repl_record_info *info);

/* copy record lsn into buf (up to size bytes); *len is its full length */
int repl_read(struct repl *repl, uint64_t lsn, void *buf, size_t size,
		size_t *len);

/*
 * Call cb for every record from lsn from on, in order, until it returns
 * non-zero (which repl_iterate then returns).  cb must not call librepl.
 * A kept record that fails its checksum ends it with REPL_E_CORRUPT.
 */
typedef int repl_iterate_fn(void *arg, uint64_t lsn, const void *data,
		size_t len);
int repl_iterate(struct repl *repl, uint64_t from, repl_iterate_fn *cb,
		void *arg);

/* the database checkpointed up to lsn: that space may be reused */
int repl_release(struct repl *repl, uint64_t lsn);
/*
 * repl_release, where the holds of replicas that are not streaming (down,
 * or not connected since this handle opened) count for nothing: a bound on
 * what a replica that is away may keep (its readers find the gap).
 */
int repl_release_past_down(struct repl *repl, uint64_t lsn);

/*
 * The newest LSN that repl_release() could take while at least keep_bytes
 * of the newest records stay in the log (their headers and padding
 * counted), for a retention by size: first_lsn - 1 when the log holds
 * less than that.
 */
int repl_lsn_keeping(struct repl *repl, uint64_t keep_bytes, uint64_t *lsn);

/*
 * repl_status.health: what the medium said when the log was opened.  A
 * SUSPECT bit means records the log acknowledged may be damaged or lost on
 * this node (its checksums still guard every record returned).
 */
#define REPL_HEALTH_NOT_CLOSED		(1u << 0) /* last user did not close it */
#define REPL_HEALTH_USC_UNKNOWN		(1u << 1) /* the device has no unsafe-
						     shutdown count */
#define REPL_HEALTH_BADBLOCKS_UNKNOWN	(1u << 2) /* bad blocks not listable */
#define REPL_HEALTH_UNSAFE_SHUTDOWN	(1u << 8) /* power lost while open */
#define REPL_HEALTH_BAD_BLOCKS		(1u << 9) /* bad blocks in the log */
#define REPL_HEALTH_SUSPECT		(0xffu << 8)

struct repl_status {
	uint64_t first_lsn;	/* oldest record kept; 0: none */
	uint64_t last_lsn;	/* newest appended; 0: none */
	uint64_t durable_lsn;	/* newest durable */
	uint64_t used_bytes;
	uint64_t size_bytes;
	uint64_t epoch;
	unsigned health;	/* REPL_HEALTH_* */
	uint64_t commit_lsn;	/* newest durable by the quorum rule */
	int replicas_up;	/* replicas streaming (counting toward quorum) */
	int fenced;		/* a newer primary took over (REPL_E_FENCED) */
	uint64_t config_epoch;	/* of the membership (0: single node) */
	int config_joint;	/* 1 while a change of the membership is in
				   progress: the membership is joint, and a
				   record needs both configurations' quorums */
	int log_full;		/* 1: the last append found the log full
				   (REPL_E_FULL) and nothing was released or
				   appended since: appends are refused */
	uint64_t appends_full;	/* appends refused with REPL_E_FULL, since
				   the log was opened */
	uint64_t persist_ranges;	/* ranges of the log made durable */
	uint64_t persist_barriers;	/* the medium's barriers they took
					   (file: fdatasyncs) */
};

int repl_status(struct repl *repl, struct repl_status *st);

enum repl_replica_state {
	REPL_REPLICA_DOWN = 0,		/* not connected; retrying */
	REPL_REPLICA_CATCHING_UP = 1,	/* connected, finding where to resume */
	REPL_REPLICA_STREAMING = 2,	/* counts toward the quorum */
};

/*
 * The link's own state (repl_replica_status.link_state); state above is
 * its coarse view: CONNECTING, DRAINING, FENCED and RETIRED show there as
 * REPL_REPLICA_DOWN.
 */
enum repl_link_state {
	REPL_LINK_DOWN = 0,		/* not connected; waits to retry */
	REPL_LINK_CONNECTING = 1,	/* its control port and HELLO */
	REPL_LINK_CATCHING_UP = 2,	/* finding where it resumes */
	REPL_LINK_STREAMING = 3,	/* counts toward the quorum */
	REPL_LINK_DRAINING = 4,		/* leaving its connection (it failed,
					   or a clean stop) */
	REPL_LINK_FENCED = 5,		/* this primary is deposed: it ended */
	REPL_LINK_RETIRED = 6,		/* removed from the membership: it
					   ended */
	REPL_LINK_STATES = 7
};

struct repl_replica_status {
	enum repl_replica_state state;
	uint64_t flushed_lsn;	/* newest LSN flushed on it */
	uint64_t lag_records;	/* appended here, not yet flushed there */
	uint64_t reconnects;
	int member;		/* it caught up under the current membership:
				   it counts toward the quorum */
	char why[160];		/* why it last went down: "not connected yet"
				   at first, "" while it streams */
	uint64_t lag_bytes;	/* bytes of the ring appended here, not yet
				   flushed there */
	uint64_t lag_ms;	/* how long the oldest record not yet flushed
				   there has waited (0: lag_records is 0) */
	char transport[16];	/* "verbs" or the libfabric provider ("tcp");
				   "" before the first connection */
	char flush_method[8];	/* what its connection flushes with: "apm" or
				   "gpspm"; "" before the first connection */
	char backend[8];	/* its persistence backend: "pmem", "file",
				   "crash"; "" before it said */
	uint64_t config_epoch;	/* of the membership it holds, as far as
				   this primary knows (0: none, or not
				   connected yet) */
	/* what its link did since this primary started */
	enum repl_link_state link_state;
	uint64_t state_ms[REPL_LINK_STATES];	/* ms spent in each state (the
						   current one up to now) */
	uint64_t state_entries[REPL_LINK_STATES];	/* times it entered each */
	uint64_t batches;	/* write+flush batches posted */
	uint64_t flushes;	/* of them, completed (flushed there) */
	uint64_t spins;		/* times it polled its completions before
				   sleeping */
	uint64_t sleeps;	/* times it slept waiting for work */
	uint64_t catch_ups;	/* connections caught up (that streamed) */
	uint64_t full_resyncs;	/* of them, full resyncs: nothing in common,
				   the replica started anew at the checkpoint */
	int holds;		/* a reader there holds records (its last
				   ACK or heartbeat said so): repl_release
				   goes no further than hold_lsn, also
				   while it is down */
	uint64_t hold_lsn;	/* 0 when it holds nothing */
	uint64_t hold_from;	/* the first record its reader holds, as
				   its last ACK or heartbeat said (0:
				   none): how far behind the reader is */
	int wants_base;		/* 1 when its last heartbeat said a reader
				   there needs a base
				   (repl_replica_want_base); 0 when the
				   link is not streaming */
	/*
	 * A catch-up in progress: the ring bytes the replica lacked when its
	 * connection caught up (from where it resumed to what this primary
	 * had published then), the bytes of them it received, and the time
	 * left at the recent rate (UINT64_MAX: not known yet).  All 0 when
	 * none is in progress: catchup_total_bytes > 0 says one is.
	 */
	uint64_t catchup_total_bytes;
	uint64_t catchup_done_bytes;
	uint64_t catchup_eta_ms;
};

/* replica i (0 .. n_replicas - 1) as this primary sees it */
int repl_replica_status(struct repl *repl, int i, struct repl_replica_status *st);
/*
 * A link state's name, as status, metrics and the log spell it ("down",
 * "connecting", "catching_up", "streaming", "draining", "fenced",
 * "retired"; "unknown" for any other value).
 */
const char *repl_link_state_name(enum repl_link_state s);

/*
 * Compare the records from..to (LSNs, inclusive) on this primary and on
 * replica i, by checksums of ranges of REPL_VERIFY_RANGE records that each
 * side computes over its own copy (LSN, epoch, client id, length and
 * payload of every record).  from..to is clamped to what this primary
 * keeps, its commit LSN and what replica i has flushed.  Returns 0 when
 * compared (res->mismatches may be > 0); REPL_E_TIMEDOUT (res->why says
 * why) when the replica is not streaming, goes down or does not answer.
 */
#define REPL_VERIFY_RANGE 256		/* records per compared range */
#define REPL_VERIFY_SHOW 8

struct repl_verify_range {
	uint64_t from, to;
};

struct repl_verify_result {
	uint64_t from, to;		/* what was compared */
	uint64_t ranges;		/* ranges compared */
	uint64_t mismatches;		/* ranges that differ */
	struct repl_verify_range bad[REPL_VERIFY_SHOW];	/* the first that differ */
	char why[160];			/* set when it could not compare */
};

int repl_verify(struct repl *repl, int i, uint64_t from, uint64_t to,
		struct repl_verify_result *res);

/* ---- serving as a replica ---------------------------------------- */

/*
 * A replica keeps a copy of a primary's log: the primary writes records
 * into its ring with one-sided RDMA (or the libfabric provider's
 * emulation) and asks it to persist them; the replica answers the
 * primary's control channel.  One primary is served at a time; a newer
 * one (a promotion) fences the one being served.
 *
 * repl_replica_open() locks and opens the log and listens on both ports;
 * repl_replica_run() serves until repl_replica_stop(); then
 * repl_replica_close().  The peers of cfg are another node's addresses,
 * as struct repl_replica gives them (host and control port).
 */
struct repl_replica_cfg {
	const char *path;		/* its log: a file or a device */
	enum repl_backend backend;
	size_t size;			/* bytes: the size of a log it makes */
	/*
	 * create: make the file if it is missing and format a medium that is
	 * blank (every header byte zero), never one that holds something;
	 * without it (nor reinit) a blank medium is REPL_E_BLANK.  reinit:
	 * format the log anew whatever it holds (a replaced disk): it holds
	 * no membership and has promised nothing, so it serves no primary
	 * before it took its promise floor from peers (below).
	 */
	int create;
	int reinit;
	/*
	 * The other nodes of its configuration and its quorum k: a log made
	 * anew asks them for the highest promise among k + 1 answers before
	 * it serves a primary.  Without peers such a log is REPL_E_NO_PEERS.
	 */
	const struct repl_replica *peers;
	int n_peers;
	int quorum;
	uint8_t cluster_uuid[16];	/* the cluster's; the log must match */
	uint32_t node_id;		/* of a log it makes */
	const char *provider;		/* "verbs", or a libfabric provider;
					   NULL: "tcp" */
	const char *addr;		/* where it listens (both ports) */
	const char *ctl_port;		/* the control channel's port */
	const char *data_port;		/* the RDMA endpoint's port */
	int timeout_ms;			/* a primary silent this long is
					   dropped; 0: 2000 */
	/* the control channel's TLS, as in repl_cfg; all NULL: plain TCP */
	const char *tls_ca, *tls_cert, *tls_key;
	/*
	 * For tests only: refuse every data connection (as one without the
	 * session's admission token is), so a primary sees a link failure
	 * after a good HELLO.
	 */
	int test_refuse_data;
};

/* what a replica is doing: one consistent copy (repl_replica_info) */
/*
 * Where a replica stands with the primaries:
 *   IDLE -> FLOOR -> IDLE         a log made anew takes its promise floor
 *   IDLE -> FOLLOWING -> IDLE     a primary's session, with its data
 *   IDLE -> FENCED_FOR -> IDLE    a promotion's fence-only session
 *   IDLE | FLOOR -> STOPPED       repl_replica_stop
 */
enum repl_session_state {
	REPL_SESSION_IDLE = 0,		/* serves no primary: waits for a HELLO */
	REPL_SESSION_FLOOR = 1,		/* taking its promise floor */
	REPL_SESSION_FOLLOWING = 2,	/* a primary's session and data
					   connection */
	REPL_SESSION_FENCED_FOR = 3,	/* a promotion fenced it: no data */
	REPL_SESSION_STOPPED = 4,
	REPL_SESSION_STATES = 5
};

struct repl_replica_info {
	uint64_t epoch;			/* the epoch it follows (its log's) */
	uint64_t config_epoch;		/* of its stored membership (0: none) */
	int config_joint;		/* a change of the membership in
					   progress */
	int following;			/* a primary's session is up */
	uint32_t primary_id;		/* that primary's node id (0: none) */
	char primary_addr[64];		/* its control address "host:port" */
	uint64_t first_lsn;		/* oldest record kept (0: none) */
	uint64_t last_lsn;		/* newest in its ring (0: none) */
	uint64_t durable_lsn;		/* newest persisted */
	uint64_t used_bytes;
	uint64_t size_bytes;
	char backend[8];		/* "pmem", "file", "crash" */
	int floor_pending;		/* made anew, no promise floor yet */
	int floor_needed;		/* answers it needs (0: not pending) */
	int floor_answered;		/* answers in its last round */
	enum repl_session_state session;	/* where it stands now */
	uint64_t state_ms[REPL_SESSION_STATES];	/* ms in each state (the
						   current one: up to now) */
	uint64_t state_entries[REPL_SESSION_STATES];	/* times it entered
							   each */
	uint64_t sessions;		/* sessions begun (following or fenced
					   for) */
	uint64_t fences;		/* times a HELLO fenced it */
	uint64_t silent_drops;		/* sessions dropped: the primary fell
					   silent */
	uint64_t queries;		/* catch-up QUERYs answered */
	uint64_t truncates;		/* TRUNCATEs done */
	uint64_t head_moves;		/* checkpoint moves (SET_HEAD) */
	uint64_t commits;		/* COMMITs: commit point and tail hint */
	uint64_t persist_ranges;	/* ranges of its log made durable
					   (flushes served, adjacent ones of a
					   batch once) */
	uint64_t persist_barriers;	/* the medium's barriers they took
					   (file: fdatasyncs) */
	uint64_t commit_lsn;		/* the primary's commit point, as its
					   last COMMIT said (0: none since
					   open) */
	uint64_t readable_lsn;		/* the newest record readers can take:
					   committed and in this log */
	int holding;			/* a reader holds records
					   (repl_replica_hold) */
	uint64_t hold_lsn;		/* records after it stay in this log */
	uint64_t primary_silent_ms;	/* ms since it last heard from a
					   primary it followed (UINT64_MAX:
					   none since open); a failover
					   coordinator's evidence that the
					   primary is gone */
	int config_removed;		/* its stored membership leaves it
					   out: a joint one names it in the
					   old configuration only (a change
					   removes it), or one names it not
					   at all */
	uint64_t hold_told;		/* the first record held, as this
					   replica last told the primary it
					   follows (an ACK, an answer to a
					   heartbeat) in this session: what
					   that primary counts; 0 none told,
					   or no session */
};

struct repl_replica_node;

int repl_replica_open(const struct repl_replica_cfg *cfg,
		struct repl_replica_node **node_ptr);
/* serve primaries until repl_replica_stop(); 0 after a stop */
int repl_replica_run(struct repl_replica_node *node);
/* from any thread, or a signal handler (async-signal-safe) */
int repl_replica_stop(struct repl_replica_node *node);
int repl_replica_info(struct repl_replica_node *node,
		struct repl_replica_info *info);
int repl_replica_close(struct repl_replica_node **node_ptr);

/*
 * Readers of a replica's log, from any thread while it is open: they see
 * only committed records (up to readable_lsn), in LSN order, as
 * repl_iterate does on a primary.  cb runs under the log's lock, which
 * the serving thread takes too: copy what it needs and return.
 * repl_replica_wait returns 0 once the commit point reaches lsn,
 * REPL_E_TIMEDOUT after timeout_ms; a replica catching up may not hold
 * the record yet (repl_replica_iterate then ends before it: look again
 * later).
 */
int repl_replica_iterate(struct repl_replica_node *node, uint64_t from,
		repl_iterate_fn *cb, void *arg);
int repl_replica_wait(struct repl_replica_node *node, uint64_t lsn,
		int timeout_ms);
/*
 * A reader that keeps a copy of what the records say (a database) and
 * needs those after lsn until it has them durably: from this call on,
 * this replica's checkpoint moves no further than lsn + 1, and a primary
 * releases no further than this replica's checkpoint (it learns of the
 * hold at its next connection, and while streaming from the replica's
 * answer to its next heartbeat; call it before repl_replica_run, so that
 * the first connection's catch-up keeps the records already).  A later
 * call moves the hold (forward as the reader applies);
 * repl_replica_unhold ends it (a reader that gave up: its ACKs and
 * heartbeats then say it holds nothing, and releases pass it), as
 * repl_replica_close does.  docs/replication.md, "Held records".
 */
int repl_replica_hold(struct repl_replica_node *node, uint64_t lsn);
int repl_replica_unhold(struct repl_replica_node *node);
/*
 * The same for one of several readers of this replica (repld's
 * sqlite_copy and its archiver, say): each holds in a slot of its own
 * (0..REPL_HOLD_SLOTS - 1; repl_replica_hold is slot 0), and the replica
 * holds the lowest of the holds set, so no reader's records go because
 * another reader moved on.  REPL_E_INVAL for a slot out of range.
 */
#define REPL_HOLD_SLOTS 4
int repl_replica_hold_slot(struct repl_replica_node *node, int slot, uint64_t lsn);
int repl_replica_unhold_slot(struct repl_replica_node *node, int slot);
/*
 * A reader here needs a base (want non-zero), or no more (0): the
 * replica's answers to the primary's heartbeats say so, and the primary's
 * repl_replica_status shows it (wants_base) for its application to act
 * on.  Process memory only: nothing keeps it across repl_replica_close.
 */
int repl_replica_want_base(struct repl_replica_node *node, int want);

/* ---- reading a log offline --------------------------------------- */

/*
 * A log read with pread only, as its file holds it: nothing is mapped
 * writable, nothing is written and the log's lock is not taken, so it can
 * be read while stopped -- or while a process has it open, then as a
 * snapshot that may trail what that process writes.  Total: a short
 * file, garbage or a damaged record only ends what it reports.
 */
#define REPL_MEMBERS_MAX	12
#define REPL_MEMBER_HOST_MAX	47

#define REPL_MEMBER_NEW		(1u << 0)	/* of the (new) configuration */
#define REPL_MEMBER_OLD		(1u << 1)	/* of the old one (joint only) */

struct repl_member {
	uint32_t node_id;		/* 0: not known yet */
	char host[REPL_MEMBER_HOST_MAX + 1];	/* "": no control address */
	uint16_t port;			/* its control port; 0: none */
	uint64_t incarnation;		/* of its log; 0: not known */
	unsigned flags;			/* REPL_MEMBER_* */
};

#define REPL_MEMBERSHIP_JOINT		(1u << 0) /* a change in progress */
#define REPL_MEMBERSHIP_FROM_JOINT	(1u << 1) /* it ended a change */

struct repl_membership {
	uint64_t config_epoch;		/* 0: none stored (all else zero) */
	int version;			/* its format: 2, or 1 (no node ids:
					   the writer's k of count replicas) */
	uint32_t k;			/* replicas that must hold a record */
	uint32_t k_old;			/* the same of the old configuration */
	unsigned flags;			/* REPL_MEMBERSHIP_* */
	uint32_t n_new, n_old;		/* nodes flagged NEW, OLD */
	uint32_t count;			/* entries of nodes */
	struct repl_member nodes[REPL_MEMBERS_MAX];
};

/*
 * A primary's stored membership now (it changes with a membership change:
 * the joint one, then the final one).  A log opened without replicas has
 * none (config_epoch 0).
 */
int repl_membership(struct repl *repl, struct repl_membership *out);

struct repl_log_header {
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	uint64_t epoch;			/* the epoch it follows */
	uint64_t ring_size;		/* bytes of the ring */
	uint64_t file_size;
	int header_copy;		/* the copy read: 0 (A) or 1 (B) */
	uint64_t seq;			/* its header updates */
	uint64_t incarnation;		/* made anew: another one */
	uint64_t checkpoint_lsn;	/* the oldest record kept */
	uint64_t checkpoint_off;	/* ... its offset in the ring */
	uint32_t checkpoint_lap;
	uint64_t checkpoint_epoch;
	int clean;			/* its last user closed it */
	int promise_pending;		/* made anew, no promise floor yet */
	struct repl_membership membership;	/* the stored one */
	int restored;			/* written by a restore
					   (repl_restore_open) and not taken
					   by a bootstrap yet */
};

struct repl_log_record {
	uint64_t lsn;
	uint64_t epoch;			/* of the primary that wrote it */
	uint64_t client_id;
	size_t len;
	const void *data;		/* len bytes, valid in the callback */
	uint64_t off;			/* in the ring */
	uint32_t lap;
	int epoch_start;		/* a new primary's first record, not
					   the database's */
};

/* where and why a walk ended */
struct repl_log_end {
	uint64_t lsn;			/* the slot that holds no valid record */
	uint64_t off;
	uint32_t lap;
	int damaged;			/* it claims this LSN and lap but fails */
	int stopped;			/* the callback stopped the walk */
	char why[160];
};

struct repl_log_summary {
	uint64_t first_lsn;		/* 0: no record */
	uint64_t last_lsn;
	uint64_t records;		/* epoch starts counting */
	uint64_t tail_epoch;		/* of the last record */
	uint64_t used_bytes;
	uint64_t size_bytes;
	struct repl_log_end end;
};

struct repl_reader;

/* why (optional): a sentence naming path when it fails */
int repl_reader_open(const char *path, struct repl_reader **reader_ptr,
		char *why, size_t whylen);
int repl_reader_close(struct repl_reader **reader_ptr);
int repl_reader_header(struct repl_reader *reader, struct repl_log_header *hdr);
/*
 * Call cb for every record from the checkpoint on, by recovery's rule,
 * until it returns non-zero (which repl_reader_walk then returns); end
 * (optional) says where and why the walk ended.
 */
typedef int repl_reader_fn(void *arg, const struct repl_log_record *rec);
int repl_reader_walk(struct repl_reader *reader, repl_reader_fn *cb,
		void *arg, struct repl_log_end *end);
int repl_reader_summary(struct repl_reader *reader, struct repl_log_summary *sum);

/* ---- archiving and restoring ------------------------------------- */

/*
 * An archiver's view of a running node's log: every committed record from
 * lsn from on, in LSN order and without holes, epoch starts included
 * (epoch_start set, len 0), with what each says of itself.  On a primary
 * up to its commit point (repl_status().commit_lsn when the call began);
 * on a replica up to readable_lsn.  cb runs under the log's lock, as
 * repl_iterate's and repl_replica_iterate's do, and stops the iteration
 * by returning non-zero (which is returned).
 */
typedef int repl_record_fn(void *arg, const struct repl_log_record *rec);
int repl_iterate_records(struct repl *repl, uint64_t from, repl_record_fn *cb,
		void *arg);
int repl_replica_iterate_records(struct repl_replica_node *node, uint64_t from,
		repl_record_fn *cb, void *arg);

/*
 * A log written offline from records (an archive's), to start a new
 * cluster from: its primary's repl_open with bootstrap takes it.  The
 * records keep their LSNs, epochs, client ids and payloads; when they do
 * not all fit, the oldest are let go and the log keeps the newest.
 */
struct repl_restore_cfg {
	const char *path;		/* the file to make: it must not exist */
	uint64_t size;			/* its size in bytes, as a log's */
	const uint8_t *cluster_uuid;	/* 16 bytes: the new cluster's */
	uint32_t node_id;		/* of the node that bootstraps with it */
};

struct repl_restore;

int repl_restore_open(const struct repl_restore_cfg *cfg,
		struct repl_restore **restore_ptr);
/* the next record: contiguous LSNs, epochs never going down */
int repl_restore_add(struct repl_restore *restore,
		const struct repl_log_record *rec);
/* write the header and make the log durable; *restore_ptr becomes NULL */
int repl_restore_finish(struct repl_restore **restore_ptr);
/* give up: the file is removed; *restore_ptr becomes NULL */
void repl_restore_abort(struct repl_restore **restore_ptr);

/* who holds the lock of the log at path, for a REPL_E_LOCKED's message */
int repl_lock_holder(const char *path, char *buf, size_t len);

/* 1 if an RDMA device serves the local address addr (verbs), else 0 */
int repl_rdma_available(const char *addr);

/*
 * The checks repl_open and repl_replica_open make of their tls_ca,
 * tls_cert and tls_key before they touch the log: each file loads (PEM),
 * the key is the certificate's, and the certificate verifies against the
 * CA file now (signed by it, not expired, valid already).  0, or
 * REPL_E_INVAL with a sentence naming the file and the reason in why (up
 * to why_len bytes, NUL-terminated), e.g. "TLS: key file K does not match
 * certificate C"; REPL_E_NOMEM.
 */
int repl_tls_check(const char *ca, const char *cert, const char *key,
		char *why, size_t why_len);

/* ---- messages ---------------------------------------------------- */

enum repl_log_level {
	REPL_LOG_LEVEL_DISABLED = -1,	/* a threshold: nothing */
	REPL_LOG_LEVEL_FATAL = 0,
	REPL_LOG_LEVEL_ERROR = 1,
	REPL_LOG_LEVEL_WARNING = 2,
	REPL_LOG_LEVEL_NOTICE = 3,
	REPL_LOG_LEVEL_INFO = 4,
	REPL_LOG_LEVEL_DEBUG = 5,
};

enum repl_log_threshold {
	REPL_LOG_THRESHOLD = 0,		/* what reaches the log function
					   (default: WARNING) */
	REPL_LOG_THRESHOLD_STDERR = 1,	/* what the default function also
					   prints on stderr (default: none) */
};

/*
 * A message of librepl (and of the RDMA core inside it): one line without
 * a trailing newline; file, line and func name where it was raised.
 */
typedef void repl_log_fn(void *arg, enum repl_log_level level,
		const char *file, int line, const char *func, const char *message);
/* fn NULL: the default function (syslog, and stderr by the threshold) */
int repl_log_set_function(repl_log_fn *fn, void *arg);
int repl_log_set_threshold(enum repl_log_threshold threshold,
		enum repl_log_level level);

#ifdef __cplusplus
}
#endif

#endif /* REPL_H */
