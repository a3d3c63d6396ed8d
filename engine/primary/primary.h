/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * primary.h -- what the quorum (cluster.c) and the links
 * (link.c) share: the link and cluster objects and a few small helpers.
 */
#ifndef REPL_CLUSTER_INTERNAL_H
#define REPL_CLUSTER_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/lock_rank.h"
#include "primary/cluster.h"
#include "ctl/ctl_msg.h"
#include "common/membership.h"
#include "log/peer_floor.h"

struct ctl_chan;
struct ctl_listener;
struct ctl_tls;

#define LINK_DEPTH 8			/* batches in flight per replica, at most */
#ifndef LINK_FLIGHT
#define LINK_FLIGHT 1			/* ... the ones that are posted */
#endif
#define LINK_WRITE_MAX (4u << 20)	/* the largest single rpma_write */
/*
 * The most one rpma_flush covers: a flush request carries its length in
 * 32 bits (the core refuses more), so a longer range is flushed in pieces.
 */
#define LINK_FLUSH_MAX ((uint64_t)UINT32_MAX)
#define COMMIT_EVERY_MS 2		/* commit point to replicas, at most */
#define POLL_AUTO_CAP_US 100		/* busy polling's bound when adaptive */

struct batch {
	uint64_t seq;
	struct log_pos end;
	uint64_t seen_ms;	/* when its first bytes were found unsent */
	uint64_t posted_ns;	/* when it was posted: its round trip */
	uint64_t bytes;		/* ring bytes it covers */
	uint64_t written;	/* of them, in writes whose completion came
				   (a catch-up's counted writes) */
	bool done;
};

/*
 * A verification's request to the link's replica (verify.c), under c->lock:
 * the caller asks (asked++), the link thread sends it (sent, for request
 * sent_req) and hands back the replica's answer (answered = sent_req).
 */
struct link_verify {
	/*
	 * Under c->lock; asked is also an atomic, and seen (the link
	 * thread's own: asked as it last looked under the lock) lets the
	 * link see that nothing new was asked without taking c->lock.
	 */
	_Atomic uint64_t asked;
	uint64_t answered, sent_req, seen;
	struct ctl_verify q;
	bool sent;
	uint32_t msg_seq;
	struct ctl_verify_reply reply;
};

struct link {
	struct cluster *c;
	int idx;
	const char *host;
	const char *ctl_port;
	pthread_t thread;
	int kick_fd;
	atomic_bool sleeping;

	/* shared, under c->lock */
	enum repl_link_state state;	/* link_set_state (link.c) writes it */
	uint64_t state_since_ms;	/* when it entered it */
	uint64_t flushed_lsn;		/* next LSN not yet flushed on it */
	struct log_pos flushed_pos;	/* the same as a position: its tail hint */
	uint64_t reconnects;
	/*
	 * Who answers there (its HELLO_REPLY; 0 before).  held: the
	 * configuration epoch of the last membership this primary gave it
	 * and it acknowledged (stored), 0 before; acked: it did so on the
	 * current connection (each connection gives it once: a membership of
	 * the same epoch from another primary is replaced).  in_new, in_old:
	 * its place in c->ms (cluster_ms_place).  member: acked, in a
	 * configuration of c->ms, and held is one the current rule accepts:
	 * only then does it count toward the quorum.  retired: in no
	 * configuration once a change committed (a node the change removed):
	 * its thread ends.
	 */
	uint32_t node_id;
	uint64_t incarnation;
	uint64_t held;
	bool acked;
	bool in_new, in_old;
	bool member;
	bool retired;
	char why[160];
	/*
	 * Its being down, as the log says it: since when (0: up), when it was
	 * last said, and the failures not said since (link_fail)
	 */
	uint64_t down_since_ms, down_said_ms;
	unsigned down_unsaid;
	struct log_pos head_req;	/* a checkpoint move asked by release */
	/*
	 * As its last ACK or heartbeat said: the first LSN a reader there
	 * holds (0: none; holds: not 0); as its last ACK said: the replica's
	 * checkpoint.  Release moves no replica's checkpoint past a hold, and
	 * releases no further than a holder's checkpoint, also while it is
	 * down (docs/replication.md, "Held records").  wants_base: its last
	 * heartbeat said a reader there needs a base (the application's
	 * business; false until one says so).  Under c->lock.
	 */
	bool holds;
	uint64_t hold_next;
	uint64_t replica_head;
	bool wants_base;
	/*
	 * Written under c->lock (head_done_seq by the link thread only);
	 * head_req_seq and force_down are atomics so that the link thread
	 * looks at them each round without taking c->lock, which the
	 * appenders contend for.
	 */
	_Atomic uint64_t head_req_seq;
	uint64_t head_done_seq;
	int head_status;
	atomic_bool force_down;
	/* the last connection's: "" before the first */
	char transport[16];		/* "verbs" or the libfabric provider */
	char flush_method[8];		/* "apm", "gpspm" */
	char backend[8];		/* the replica's: "pmem", "file", "crash" */
	/*
	 * Since when its oldest unflushed bytes wait (0: none known): the
	 * time the link found them unsent, kept per batch; no clock per record.
	 */
	_Atomic uint64_t waiting_since_ms;
	/* when it last stopped streaming (under c->lock): its lag's age then */
	uint64_t left_ms;
	/*
	 * The connection's catch-up, under c->lock: the ring bytes from where
	 * the replica resumed to what was published then (catchup_total; 0:
	 * none, or it is over), the position that ends it, when it began and
	 * its recent rate (bytes/s, 0 until sampled; link_catchup.c).
	 */
	uint64_t catchup_total;
	struct log_pos catchup_target;
	uint64_t catchup_began_ms;
	uint64_t catchup_rate;
	uint64_t catchup_sample_ms, catchup_sample_done;
	struct link_verify verify;

	/*
	 * The data path (link_io.c) is under io_lock: the link thread and an
	 * appender waiting for durability both post and reap, so a lone
	 * client needs no hand-off to another thread.  io_ready says the
	 * connection is up (set after catch-up, cleared before teardown);
	 * conn, dst and cq are the link thread's, written only while io_ready
	 * is false and used by the others only while it is true.  Everything
	 * else here is read and written under io_lock only, by the link
	 * thread too.
	 */
	pthread_mutex_t io_lock;
	bool io_ready;
	struct log_pos sent;
	uint64_t unsent_since_ms;	/* published bytes after sent seen (0: none) */
	struct batch inflight[LINK_DEPTH];
	uint64_t next_seq, oldest_seq;
	/* a flush's round trip, smoothed (1/8 per batch); 0: none yet.
	 * Written under io_lock, read by anyone deciding to poll */
	_Atomic uint64_t rtt_ns;
	/* the quick end of the round trips: down at once, up by 1/64 of the
	 * gap; when a leader's first look is worth its system call */
	_Atomic uint64_t rtt_lo_ns;
	/* the bytes of the last batch posted: a large one is still being
	 * sent, and on ofi only a look at the completions sends the rest */
	_Atomic uint64_t batch_bytes;
	/*
	 * Ring bytes of this connection the replica received: batches whose
	 * flush completed, and during a catch-up (count_writes) the writes of
	 * a large batch as each completes, so that one batch of a whole ring
	 * shows its progress.  Written under io_lock; read by status.
	 */
	_Atomic uint64_t delivered;
	atomic_bool count_writes;
	char io_why[160];		/* why the data path closed */
	/*
	 * Leaders asleep on cq (link_lead_step): the link's thread deletes
	 * the connection only once none is, after io_ready went false.
	 */
	atomic_int cq_sleepers;

	/*
	 * What it did, for status: relaxed atomics, so a reader on another
	 * thread needs no lock.  Each has one writer at a time: batches and
	 * flushes whoever holds io_lock, the states' link_set_state under
	 * c->lock, the rest the link thread.
	 */
	struct {
		_Atomic uint64_t state_ms[REPL_LINK_STATES], entered[REPL_LINK_STATES];
		_Atomic uint64_t batches, flushes, spins, sleeps;
		_Atomic uint64_t catch_ups, full_resyncs;
	} n;

	/* the link thread's own */
	struct ctl_chan *ch;
	struct rpma_conn *conn;
	struct rpma_mr_remote *dst;
	struct rpma_cq *cq;
	uint64_t last_send_ms, last_recv_ms, last_commit_ms, commit_sent;
	uint64_t last_hb_ms;		/* the last HEARTBEAT sent */
	uint64_t last_report_ms;	/* progress of a long catch-up */
	uint32_t msg_seq;
};

/* a peer of the promotion and of a link: where, and who answered there */
struct cluster_peer {
	char host[MEMBER_HOST_MAX + 1];
	char port[8];
	uint16_t port_num;
	bool reached;		/* the promotion fenced it: node_id is its */
	uint32_t node_id;
	uint64_t incarnation;
};

#define CLUSTER_PEERS_MAX (2 * MEMBERSHIP_NODES_MAX)

/* what a start does with the membership once promoted (cluster_ms.c) */
enum {
	CLUSTER_PLAN_KEEP,	/* the configuration says the stored one */
	CLUSTER_PLAN_BOOTSTRAP,	/* the first: the configuration's, epoch 1 */
	CLUSTER_PLAN_UPGRADE,	/* a version 1 one, the same: as version 2 */
	CLUSTER_PLAN_CHANGE,	/* S -> J(S, T) -> F(T) */
	CLUSTER_PLAN_FINISH,	/* the stored one is J: commit it */
};

/*
 * An appender asleep until its LSN is durable (quorum.c): on its own
 * stack, in c->durable_q (ascending LSN, under c->lock).  The one who moves
 * the commit point past lsn unlinks it and posts wake: one wake-up per
 * waiter whose record became durable, none for the others.
 */
struct durable_waiter {
	uint64_t lsn;
	sem_t wake;
	bool queued;
	bool lead;		/* woken to lead (durable_wait.c) */
	struct durable_waiter *next;
};

struct cluster {
	struct cluster_cfg cfg;
	struct rpma_ext_mem *mem;
	struct wal *wal;
	uint64_t ring_size;
	struct wal_identity id;
	struct rpma_peer *peer;
	struct rpma_mr_local *src;
	struct ctl_tls *tls;		/* the control channel's; NULL: plain */

	pthread_mutex_t lock;
	pthread_cond_t cond;		/* durable moved, or a link changed */
	uint64_t durable_lsn;		/* next LSN not yet durable by the rule */
	/*
	 * This epoch's first record (promote.c).  The commit point moves only
	 * past it: a record of an older epoch is committed only under a
	 * durable record of this one, and a replica is a member only once it
	 * holds it.
	 */
	uint64_t epoch_start_lsn;
	_Atomic uint64_t durable_atomic;
	struct durable_waiter *durable_q;	/* asleep for durability */
	unsigned waiters;		/* asleep on cond (not durable_q) */
	atomic_bool stopping;
	pthread_mutex_t release_lock;	/* release vs. a link's catch-up */
	/* busy polling (cluster_poll_budget_ns): the bound, 0 never */
	uint64_t poll_cap_ns;
	bool poll_auto;			/* adaptive, within poll_cap_ns */
	bool poll_is_syscall;		/* a look at a CQ enters the kernel */
	unsigned ncpu;			/* online CPUs, at the start */
	_Atomic unsigned n_waiting;	/* appenders in cluster_wait_durable */
	atomic_bool spinning;		/* a waiter leads: polls the links */
	/*
	 * Under c->lock: false once a leader found nothing to poll (a link
	 * down or catching up), until the next appender posts: followers
	 * then sleep instead of taking the lead in turn (durable_wait.c).
	 */
	bool lead_wanted;
	int lead_fd;			/* wakes a leader asleep (eventfd) */
	pthread_mutex_t verify_lock;	/* one verification at a time */

	/*
	 * One link per peer: the configuration's replicas first (index i is
	 * cfg.replicas[i]), then the nodes of the stored membership the
	 * configuration does not name (a change's removed nodes: the
	 * promotion fences them and J goes to them too).
	 */
	struct link *links;
	int n_links;
	struct cluster_peer peers[CLUSTER_PEERS_MAX];
	/* cfg's strings, copied: the caller's may go once start returns */
	struct cluster_replica *replicas;
	char (*names)[2][MEMBER_HOST_MAX + 1];	/* host, port */
	char provider[32];
	/*
	 * The membership this primary runs under (under c->lock): what the
	 * log holds, S, J or F; a joint one becomes final once committed
	 * (cluster_ms_advance).
	 */
	struct membership ms;
	/* ms.config_epoch, for a link's look without c->lock */
	_Atomic uint64_t ms_epoch;
	struct membership stored;	/* what the log held before the start */
	/* cluster_ms.c: the promotion's rule and what follows it */
	struct membership under;	/* counted under (stored, or the first) */
	struct membership conf_ms;	/* the configuration's, final */
	int plan;			/* CLUSTER_PLAN_* */
	uint16_t self_flags;		/* this node's place in ms (MEMBER_F_*) */

	/* fence_listen.c: this primary's control port, for promotions elsewhere */
	struct ctl_listener *fence_listener;
	struct ctl_tls *fence_tls;	/* its server side; NULL: plain */
	pthread_t fence_thread;
	bool fence_running;
	char listen_names[2][MEMBER_HOST_MAX + 1];	/* addr, port */

	/*
	 * What this node saw each peer's log hold (peer_floor.h), as its log
	 * keeps it: loaded at the start, stored when a value rises (under
	 * floor_lock: the links and the promotion note answers).
	 */
	pthread_mutex_t floor_lock;
	struct peer_floors floors;

	/* a replica follows a newer primary: durable_lsn never moves again */
	atomic_bool fenced;
	char fenced_why[160];		/* under lock */
};


/*
 * The locks, outermost first (common/lock_rank.h checks it in debug
 * builds): c->verify_lock > c->release_lock > l->io_lock > c->lock >
 * c->floor_lock > wal->lock.  So catch-up (under release_lock) shapes the
 * data path and then reports under c->lock; a completion reaped under
 * io_lock reports under c->lock; the quorum reads the log's positions
 * under c->lock.
 */
static inline void
cluster_lock(struct cluster *c)
{
	rank_lock(&c->lock, LOCK_RANK_CLUSTER);
}

static inline void
cluster_unlock(struct cluster *c)
{
	rank_unlock(&c->lock, LOCK_RANK_CLUSTER);
}

static inline void
link_io_lock(struct link *l)
{
	rank_lock(&l->io_lock, LOCK_RANK_IO);
}

/* 0 if taken */
static inline int
link_io_trylock(struct link *l)
{
	return rank_trylock(&l->io_lock, LOCK_RANK_IO);
}

static inline void
link_io_unlock(struct link *l)
{
	rank_unlock(&l->io_lock, LOCK_RANK_IO);
}

/* one more (a counter's single writer: no read-modify-write needed) */
static inline void
link_count(_Atomic uint64_t *v, uint64_t by)
{
	atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + by,
		memory_order_relaxed);
}

/* cluster_ms.c */
/* the membership of a start: what to promote under, and the peers */
int cluster_ms_choose(struct cluster *c);
/* once promoted: store what the plan says (c->ms) */
int cluster_ms_adopt(struct cluster *c);
/* under c->lock: link l's place in c->ms, and whether it is a member */
void cluster_ms_place(struct cluster *c, struct link *l);
/* under c->lock: a joint c->ms held by k_old + 1 nodes of OLD becomes F */
void cluster_ms_advance(struct cluster *c);
/* wait up to ms for a joint membership to be committed; false if not */
bool cluster_ms_wait_final(struct cluster *c, int ms);

/* cluster_floor.c: the peer floors against the answers of the peers */
/*
 * hr, from the peer at host:port, comes from an older copy of its log (a
 * peer floor is above what it says): -1 with why (for the link's status;
 * the first time also logged, naming the remedy), else 0.
 */
int cluster_floor_check(struct cluster *c, const char *host, const char *port,
		const struct ctl_hello_reply *hr, char *why, size_t n);
/* hr accepted epoch, this node's: its promise (stored if it rises) */
void cluster_floor_promised(struct cluster *c, const struct ctl_hello_reply *hr,
		uint64_t epoch);
/* node_id's log `incarnation` acknowledged storing configuration epoch e */
void cluster_floor_stored(struct cluster *c, uint32_t node_id,
		uint64_t incarnation, uint64_t e);

/* promote.c */
uint64_t cluster_next_epoch(uint64_t above, uint32_t node_id);
int cluster_promote(struct cluster *c);
/*
 * Wait (at most timeout_ms) until no promotion's ask runs in this process:
 * a cluster's teardown, so that none outlives it (promote.c)
 */
void cluster_asks_drain(int timeout_ms);

/* quorum.c: the commit rule, and who sleeps until it moves */
/*
 * Recompute durable_lsn (under c->lock); if it moved, wake the durable
 * waiters it passed
 */
void cluster_quorum_update(struct cluster *c);
/* under c->lock: w sleeps until lsn is durable (quorum_update wakes it) */
void quorum_enqueue(struct cluster *c, struct durable_waiter *w);
/* under c->lock: w gave up (timed out): out of the queue if still in it */
void quorum_dequeue(struct cluster *c, struct durable_waiter *w);
/* under c->lock: wake every durable waiter (the primary was fenced) */
void quorum_wake_all(struct cluster *c);

/* fence_listen.c: 0 (also when no port is configured), or an error */
int fence_listen_start(struct cluster *c);
/* once c->stopping is set */
void fence_listen_stop(struct cluster *c);

/* link.c */
/*
 * The one writer of l->state (the link thread's, under c->lock): a change
 * the table in cluster.h does not list aborts a debug build, naming both.
 */
void link_set_state(struct link *l, enum repl_link_state to);
void link_fenced(struct link *l, const char *why);
/* the connection is lost: it drains, its thread closes it */
void link_fail(struct link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* link_connect.c: (re)connection and catch-up, by the link's thread */
int link_connect(struct link *l);
/* one control message, numbered; -1 (the link failed) if it cannot go */
int link_send(struct link *l, struct ctl_msg *m);
/* the reply of type want, heartbeats and verify answers taken meanwhile */
int link_recv_reply(struct link *l, enum ctl_type want, struct ctl_msg *m);
/* TRUNCATE or SET_HEAD at p, its ACK in *ack */
int link_shape_replica(struct link *l, enum ctl_type type, const struct log_pos *p,
		struct ctl_ack *ack);
int link_data_open(struct cluster *c, const char *host, struct ctl_chan *ch,
		const struct ctl_hello_reply *hr, struct rpma_conn **conn,
		struct rpma_mr_remote **dst, char *why, size_t n);
void link_data_close(struct rpma_conn **conn, struct rpma_mr_remote **dst);
/*
 * Binary search with QUERY messages for the newest LSN in [lo, hi] after
 * which the replica's chain and wal's hold the same position (equal
 * offset, lap and chained CRC: everything before agrees too).  *found is
 * false when not even lo agrees.  -1 with why on a channel failure.
 */
int chain_agreement(struct ctl_chan *ch, uint32_t *seq, int timeout_ms,
		struct wal *wal, uint64_t lo, uint64_t hi, bool *found,
		uint64_t *lsn, char *why, size_t n);

/*
 * link_progress.c: a catch-up's progress, all under c->lock.  begin: the
 * catch-up sends [start, target); end: it is over (or the link is down);
 * sample: the link thread's rate sample, which also ends the catch-up
 * once the replica flushed target; get: false when none is in progress,
 * else its bytes and the time left (UINT64_MAX: not known yet).
 */
void link_progress_begin(struct link *l, const struct log_pos *start,
		const struct log_pos *target, uint64_t now);
void link_progress_end(struct link *l);
void link_progress_sample(struct link *l, uint64_t now);
bool link_progress_get(const struct link *l, uint64_t now, uint64_t *total,
		uint64_t *done, uint64_t *eta_ms);

/* wake link l's thread; a syscall only for a link that sleeps: not one per
 * record (inline: everyone above the links wakes them) */
static inline void
link_kick(struct link *l)
{
	uint64_t one = 1;

	if (atomic_exchange(&l->sleeping, false))
		(void)!write(l->kick_fd, &one, sizeof(one));
}

/* link_verify.c: the link thread's side of a verification */
/* a request to send? then q is it, and it counts as sent */
bool link_verify_take(struct link *l, struct ctl_verify *q);
void link_verify_sent(struct link *l, uint32_t msg_seq);
/* is a request waiting to be sent (the link must not sleep)? */
bool link_verify_waiting(struct link *l);
/* the replica's VERIFY_REPLY: 0, or -1 if it answers nothing asked */
int link_verify_reply(struct link *l, const struct ctl_msg *m);
/* the link went down: nothing is in flight any more */
void link_verify_reset(struct link *l);
/*
 * A range of ring bytes cut into the pieces one write-and-flush covers:
 * `len` bytes from offset `off` (wrapping past ring_size to offset 0; len
 * at most ring_size), each piece ending at the ring's end or after max
 * bytes, whichever comes first.  Pure: tests check the pieces.
 */
struct link_split {
	uint64_t ring_size, max, off, left;
};
void link_split_init(struct link_split *s, uint64_t ring_size, uint64_t off,
		uint64_t len, uint64_t max);
/* the next piece: true with *off and *len (not 0); false when none is left */
bool link_split_next(struct link_split *s, uint64_t *off, uint64_t *len);
/* the requests post_piece() posts for a piece of len bytes (0: one flush) */
uint64_t link_piece_ops(uint64_t len);
/*
 * The most requests one batch posts on a ring of ring_size bytes: a batch
 * covers at most the whole ring (a full resync of a full log), and every
 * one of its requests holds a send-queue slot until the batch's signalled
 * flush completes.  A link's send queue is sized from it (link_sq_depth),
 * so no batch finds the queue full.
 */
uint64_t link_batch_ops_max(uint64_t ring_size);
uint32_t link_sq_depth(uint64_t ring_size);
void *link_main(void *arg);

/*
 * link_io.c: the data path, under io_lock (the link thread's and the
 * appenders' waiting for durability)
 */
/* publish since when the oldest unflushed bytes wait */
void link_note_waiting(struct link *l);
/*
 * Reap completions and, with post, send what was published since the
 * last batch: 0, or -1 with the link failed
 */
int link_data_path(struct link *l, bool post, bool *progress);
/* are batches in flight? */
static inline bool
link_busy(const struct link *l)
{
	return l->next_seq != l->oldest_seq;
}
/* an appender's turn at a link's data path, if nobody else has it */
void link_help(struct link *l, bool post);
/*
 * The leader's turn (durable_wait.c): reap and post as link_help does;
 * true while batches travel (or another thread has the data path).  With
 * cq, *cq is the CQ to sleep on while they do (NULL: none), counted in
 * cq_sleepers until the leader lets go of it.
 */
bool link_lead_step(struct link *l, struct rpma_cq **cq);
#define LEAD_CQS_MAX 32		/* rpma_ext_cq_poll's bound */
/* quorum.c: wake the leader, if one sleeps (a fence, a stop, a link
 * going down) */
void cluster_lead_wake(struct cluster *c);
/*
 * How long to busy-poll now, in ns (0: sleep at once): the fixed bound,
 * or adaptive: twice the fastest link's round trip, at most the bound;
 * none while the waiters are as many as the CPUs.  A round trip longer
 * than the bound: an appender polls the bound, a link thread not at all.
 */
uint64_t cluster_poll_budget_ns(struct cluster *c, bool appender);
/*
 * Where each look is a system call, when a leader that posted at
 * posted_ns looks first: once the quickest link's recent round trip
 * (rtt_lo_ns) has passed; 0 to look on, while a large batch is still
 * being sent.
 */
uint64_t cluster_first_look_ns(struct cluster *c, uint64_t posted_ns);

#endif
