/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_internal.h -- the coordinator's own state and the calls its files
 * share: coordinator.c (the thread, the member key, the view),
 * coord_rules.c (the leader key: hold, campaign, promote, step down) and
 * coord_switchover.c (the admin's requests).  Everything here but the
 * lock's fields is the coordinator thread's alone.
 */
#ifndef REPLD_COORD_INTERNAL_H
#define REPLD_COORD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

#include "coord/etcd_client.h"
#include "coord/leader.h"
#include "coord_keys.h"
#include "coordinator.h"
#include "ha_rules.h"

/* a tick: a tenth of the lease, within these */
#define TICK_MS_MIN 100
#define TICK_MS_MAX 500
#define MS UINT64_C(1000000)

enum worker_state { WORKER_IDLE = 0, WORKER_RUNNING, WORKER_DONE };
enum worker_kind { WORK_PROMOTE = 1, WORK_STEP_DOWN, WORK_CARRY };
enum req_kind { REQ_SWITCHOVER = 0, REQ_MEMBERSHIP, REQ_WITHDRAW,
	REQ_MAINTENANCE, REQ_HISTORY };

/* a request another thread hands to the coordinator's (co_request) */
struct coord_req {
	enum req_kind kind;
	/* REQ_SWITCHOVER: its answer in ans */
	uint32_t to;
	bool failover;
	struct coord_answer *ans;
	/* REQ_MAINTENANCE: on or off, the reason, its answer */
	bool on;
	const char *reason;
	struct coord_maint_answer *maint;
	/* REQ_HISTORY: its answer */
	struct coord_history_answer *history;
	/* REQ_MEMBERSHIP, REQ_WITHDRAW: rev in and out, ret, msg */
	const struct coord_membership *ms;
	int64_t rev;
	int ret;
	char *msg;
	size_t msglen;
};

struct coordinator {
	void *node;			/* driven through ops only */
	struct coord_node_ops ops;
	coord_log_fn *log;
	void *log_arg;
	uint32_t node_id;
	uint64_t lease_ms;		/* configured */
	uint64_t tick_ms;
	char ctl_addr[80];
	char *prefix;			/* PREFIX<uuid>/ */
	char *k_members, *k_me, *k_switchover, *k_history;
	char *k_leader, *k_membership, *k_maintenance, *k_archiver;
	struct coord_leader *leader;
	struct etcd_client *etcd;	/* the leader's: this thread's only */

	pthread_t thread;
	pthread_mutex_t lock;		/* guards view, stop, woken, req */
	pthread_cond_t cond;
	bool stop;
	bool woken;			/* the watch saw a change: tick now */
	/* the watch on the keys (coord_watch.c): up, and a change not read */
	struct coord_watch *watch;
	atomic_bool watch_up;
	atomic_bool keys_dirty;
	struct coord_view view;
	struct {
		bool pending, done;
		struct coord_req *r;	/* the asking thread's, while pending */
	} req;

	/* the worker: one change of the node at a time */
	pthread_t worker;
	atomic_int worker_state;
	enum worker_kind work;
	void (*job)(struct coordinator *c);	/* what the worker runs */
	int worker_ret;
	char worker_msg[512];

	/* the member key's lease */
	int64_t member_lease;
	uint64_t member_renew_at;
	struct coord_member published;	/* node_id 0: nothing yet */
	uint64_t published_at;

	uint64_t leader_renew_at;
	/*
	 * Until when (CLOCK_MONOTONIC ns) this node's hold on the leader key
	 * is sure to last (leader.h's valid_until; 0: not held): written by
	 * the coordinator's thread after each call on the key, read by the
	 * promotion's gate in whichever thread promotes.
	 */
	_Atomic uint64_t lease_until;
	/* the cluster as last read */
	struct coord_keys keys;
	bool keys_valid;
	uint64_t keys_at;
	bool maint_seen;		/* maintenance as last logged */
	/* this node holds the log-archiver key (coord_archiver.c) */
	atomic_bool archiver_mine;
	/* the log-archiver key's holder as last read: its node id, 0 when
	   the key is free, -1 when etcd's keys are not known */
	_Atomic int64_t archiver_holder;

	/* the membership key's change being carried (WORK_CARRY) */
	struct coord_membership carry;	/* also WORK_PROMOTE's peers */
	bool promote_ms;		/* WORK_PROMOTE over carry's peers */
	uint64_t carry_backoff_until;
	uint64_t carry_warned;		/* the key's epoch last reported */

	/* the failover rules (ha/ha_rules.h): their input's constants and memory */
	struct ha_cfg ha_cfg;
	struct ha_state ha;
	bool reachable;
	uint64_t unreachable_since;
	unsigned seed;
};


/* coord_archiver.c: take the log-archiver key or give it up, each tick */
void co_archiver_tick(struct coordinator *c);

/* a line of the coordinator's log (syslog's levels), through cfg.log */
void co_log(struct coordinator *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define co_error(c, ...)	co_log(c, LOG_ERR, __VA_ARGS__)
#define co_warning(c, ...)	co_log(c, LOG_WARNING, __VA_ARGS__)
#define co_notice(c, ...)	co_log(c, LOG_NOTICE, __VA_ARGS__)

uint64_t co_now_ns(void);
void co_local_read(struct coordinator *c, struct ha_local *l);

/* a call's outcome: true on ETCD_OK; reachability and last_error */
bool co_etcd_ok(struct coordinator *c, enum etcd_rc rc, const char *what,
		const char *detail);
bool co_client_ok(struct coordinator *c, enum etcd_rc rc, const char *what);
bool co_leader_ok(struct coordinator *c, enum etcd_rc rc, const char *what);

/*
 * Hands r to the coordinator's thread, one request at a time, and waits
 * for its answer (in r).  false: the daemon is stopping, nothing was asked.
 */
bool co_request(struct coordinator *c, struct coord_req *r);

/* the worker thread running job (a promotion, a step-down, a carry);
 * false if it cannot start */
bool co_worker_start(struct coordinator *c, enum worker_kind kind,
		void (*job)(struct coordinator *c));

/* coord_watch.c: a thread that wakes the loop when a key changes */
struct coord_watch;
struct coord_watch *co_watch_start(struct coordinator *c,
		const struct etcd_client_cfg *ecfg);
void co_watch_stop(struct coord_watch *cw);
/* a key changed (or the watch came or went): read the keys, tick now */
void co_wake(struct coordinator *c);

/* the key's validity, published for coordinator_promote_gate */
void co_lease_publish(struct coordinator *c);

/* coord_rules.c: what ha_step says, done */
void co_resign(struct coordinator *c, const char *why);
void co_back_off(struct coordinator *c, uint64_t now);
void co_renew(struct coordinator *c, uint64_t now);
bool co_campaign(struct coordinator *c, const char *value);
void co_rules_tick(struct coordinator *c, const struct ha_local *l, uint64_t now);
void co_promoted(struct coordinator *c, uint64_t now);
void co_stepped_down(struct coordinator *c);

/* coord_membership.c */
int co_serve_membership(struct coordinator *c, bool withdraw,
		const struct coord_membership *m, int64_t rev_in, int64_t *rev_out,
		char *msg, size_t msglen);
void co_membership_tick(struct coordinator *c, uint64_t now, bool busy);
void co_membership_view(struct coordinator *c, uint64_t log_ce, bool joint);
void co_carry_run(struct coordinator *c);
/* before a coordinated promotion: the peers of carry */
void co_take_peers(struct coordinator *c);
void co_carried(struct coordinator *c, uint64_t now);

/* coord_switchover.c: a request, on the coordinator thread */
void co_serve_request(struct coordinator *c, uint32_t to, bool failover,
		struct coord_answer *a);

/* coord_maintenance.c: the maintenance key and the history, on the
 * coordinator thread; the log line when maintenance comes or goes */
void co_serve_maintenance(struct coordinator *c, bool on, const char *reason,
		struct coord_maint_answer *a);
void co_serve_history(struct coordinator *c, struct coord_history_answer *a);
void co_maintenance_seen(struct coordinator *c);
/* a request refused because the daemon is stopping */
void co_request_stopping(struct coord_req *r);

#endif
