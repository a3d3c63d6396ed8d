/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promote.c -- how a node becomes the primary: every start of a primary is
 * a promotion, whether the node led before or was a replica a moment ago.
 *
 * An acknowledged record is on the primary that acknowledged it and on
 * k replicas: k + 1 of the configuration's N nodes.  Any N - k nodes
 * therefore hold every acknowledged record between them.  So a promotion:
 *
 *  0. a restart of the node that led before (refuse_if_superseded) is
 *     refused if its log last followed another node's epoch, or if a node
 *     it reaches, asked before each round of fencing, follows a newer
 *     epoch than its log's: a restart must not undo a failover;
 *  1. picks an epoch above every one it knows of: epoch = term << 16 |
 *     node id, so two nodes can never pick the same one;
 *  2. fences replicas with it (HELLO with FENCE_ONLY: each drops its
 *     current primary, refuses its writes and flushes, and answers with its
 *     log's end and that end's epoch); a replica that already follows a
 *     higher epoch answers STALE and the round starts again above it.
 *     A round asks all its nodes at once and ends as soon as its outcome
 *     is decided (asking, below): a node that never answers (paused: its
 *     kernel still accepts) costs nothing while enough others answer;
 *  3. counts, under the membership its log holds (cluster_ms.c chose it),
 *     itself and the fenced nodes that the membership lists, that hold it
 *     (they caught up under it: membership.h), whose media are not
 *     suspect and whose answers this node's peer floors do not show to
 *     come from an older copy of their logs (cluster_floor.c), per
 *     configuration: N - k of its configuration, or of each
 *     of its two while it is joint; or it waits (up to promote_wait_ms)
 *     and then refuses -- unless forced, and then it says data may be
 *     lost.  A replica holding a newer membership than this node means
 *     this node missed a change: refused too.  Where no node holds any
 *     membership no primary ever ran, nothing was acknowledged, and all
 *     count (bootstrap);
 *  4. takes the highest (epoch of the last record, LSN) among them: if a
 *     replica's log goes further, the missing tail is read from it with
 *     RDMA reads into the local ring at the same offsets, persisted and
 *     rescanned (the records check themselves), after dropping a local
 *     tail the best one does not hold (never committed);
 *  5. only then records the new epoch in its header; cluster_ms.c stores
 *     the membership that follows (the first one, or a change's J), and
 *     the links start, whose catch-up truncates every replica to the new
 *     primary's chain.
 *
 * The old primary, if it still runs, learns from the first replica it
 * talks to that it was fenced and acknowledges nothing more.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "primary/primary.h"
#include "primary/promote_hello.h"
#include "ctl/ctl_chan.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fault.h"

#define TERM_SHIFT 16
#define ROUNDS_MAX 8		/* STALE answers before giving up */
#define PULL_PIECE (4u << 20)	/* the largest single rpma_read */

/*
 * How long a decided round still takes answers that come at once: a live
 * node answers a HELLO about as fast as the others did (three times the
 * slowest answer so far), a silent one never does.  Within bounds: on a
 * loaded machine answers are slow and uneven; a paused node costs the
 * upper bound at most.
 */
#define HELLO_GRACE_MIN_MS 50
#define HELLO_GRACE_MAX_MS 300

/* ms left of the grace that starts at the first call (*until 0), the
 * round's slowest answer having taken slowest_ms */
static int
grace_left(uint64_t *until, uint64_t slowest_ms)
{
	uint64_t now = clock_now_ms(), g = 3 * slowest_ms;

	if (*until == 0)
		*until = now + (g < HELLO_GRACE_MIN_MS ? HELLO_GRACE_MIN_MS :
			g > HELLO_GRACE_MAX_MS ? HELLO_GRACE_MAX_MS : g);
	return now >= *until ? 0 : (int)(*until - now);
}

uint64_t
cluster_next_epoch(uint64_t above, uint32_t node_id)
{
	return (((above >> TERM_SHIFT) + 1) << TERM_SHIFT) | (node_id & 0xffff);
}

/* wait for n completions of reads on conn (each signalled) */
static int
wait_reads(struct rpma_conn *conn, int n, int timeout_ms)
{
	struct rpma_cq *cq;
	uint64_t until = clock_now_ms() + (uint64_t)timeout_ms;

	if (rpma_conn_get_cq(conn, &cq))
		return -1;
	while (n > 0) {
		struct ibv_wc wc[8];
		int got = 0, ret = rpma_cq_get_wc(cq, 8, wc, &got);

		if (ret == RPMA_E_NO_COMPLETION) {
			int left = (int)(until - clock_now_ms());

			if (left <= 0)
				return -1;
			(void)rpma_ext_cq_poll(&cq, 1, NULL, 0, left < 100 ? left : 100);
			continue;
		}
		if (ret)
			return -1;
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				return -1;
		n -= got;
	}
	return 0;
}

/* read ring bytes [off, off + len) of the replica into the local ring */
static int
pull_range(struct cluster *c, struct rpma_conn *conn, struct rpma_mr_remote *src,
		uint64_t off, uint64_t len)
{
	for (uint64_t done = 0; done < len;) {
		uint64_t n = len - done < PULL_PIECE ? len - done : PULL_PIECE;
		size_t at = (size_t)(WAL_RING_OFF + off + done);

		if (REPL_FAULTED() ||
		    rpma_read(conn, c->src, at, src, at, (size_t)n,
				RPMA_F_COMPLETION_ALWAYS, NULL) ||
		    wait_reads(conn, 1, c->cfg.down_timeout_ms))
			return -1;
		done += n;
	}
	return 0;
}

/*
 * Make the local log end where replica i's does: a session with it that
 * has a data connection (HELLO again, without FENCE_ONLY), the newest LSN
 * both chains agree on, the local tail after it dropped (never committed),
 * then the rest read from it.
 */
static int
pull_tail(struct cluster *c, int i, struct fenced *f, uint64_t epoch)
{
	struct log_pos head, pub, start, best_head, best_tail;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *src = NULL;
	uint64_t lo, hi, common = 0;
	bool found;
	int ret = -1;

	ctl_chan_close(&f->ch);
	if (promote_hello_one(c, i, epoch, 0, f) != 0)
		return -1;
	if (link_data_open(c, c->peers[i].host, f->ch, &f->hr, &conn, &src,
			f->why, sizeof(f->why)))
		return -1;
	best_head = f->hr.head;
	best_tail = f->hr.tail;
	wal_positions(c->wal, &head, &pub, NULL);
	lo = (best_head.lsn > head.lsn ? best_head.lsn : head.lsn) - 1;
	hi = best_tail.lsn - 1 < pub.lsn - 1 ? best_tail.lsn - 1 : pub.lsn - 1;
	if (chain_agreement(f->ch, &f->seq, c->cfg.down_timeout_ms, c->wal, lo, hi,
			&found, &common, f->why, sizeof(f->why)))
		goto out;
	if (found && wal_pos_after(c->wal, common, &start) == 0) {
		if (pub.lsn > start.lsn)
			REPL_LOG_NOTICE("promotion: dropping local LSNs %llu..%llu "
				"(never committed)", (unsigned long long)start.lsn,
				(unsigned long long)pub.lsn - 1);
		if (wal_truncate(c->wal, &start, 0) ||
		    (best_head.lsn > head.lsn && wal_set_head(c->wal, &best_head))) {
			snprintf(f->why, sizeof(f->why), "cannot cut the local log");
			goto out;
		}
	} else {
		/* nothing in common: this log restarts empty where its starts */
		REPL_LOG_NOTICE("promotion: the local log shares nothing with the "
			"most advanced one: copying all of it from LSN %llu",
			(unsigned long long)best_head.lsn);
		start = best_head;
		if (wal_truncate(c->wal, &start, f->hr.head_epoch)) {
			snprintf(f->why, sizeof(f->why), "cannot empty the local log");
			goto out;
		}
	}
	if (start.lap == best_tail.lap)
		ret = pull_range(c, conn, src, start.off, best_tail.off - start.off);
	else
		ret = pull_range(c, conn, src, start.off, c->ring_size - start.off) ||
			pull_range(c, conn, src, 0, best_tail.off);
	if (ret) {
		snprintf(f->why, sizeof(f->why), "reading its log failed: %s",
			rpma_ext_errormsg());
		goto out;
	}
	/* the records check themselves; what they pass is persisted */
	if (REPL_FAULTED() || wal_refresh_persist(c->wal)) {
		snprintf(f->why, sizeof(f->why), "cannot persist the copy");
		ret = -1;
		goto out;
	}
	wal_positions(c->wal, NULL, &pub, NULL);
	if (!pos_equal(&pub, &best_tail)) {
		snprintf(f->why, sizeof(f->why), "the copy ends at LSN %llu, not %llu",
			(unsigned long long)pub.lsn, (unsigned long long)best_tail.lsn);
		ret = -1;
		goto out;
	}
	if (best_tail.lsn > start.lsn)
		REPL_LOG_NOTICE("promotion: copied LSNs %llu..%llu from the most "
			"advanced replica", (unsigned long long)start.lsn,
			(unsigned long long)best_tail.lsn - 1);
	ret = 0;
out:
	link_data_close(&conn, &src);
	ctl_chan_close(&f->ch);
	return ret;
}

/* (epoch of the last record, last LSN): the order of "more advanced" */
static bool
ahead(uint64_t e1, uint64_t l1, uint64_t e2, uint64_t l2)
{
	return e1 > e2 || (e1 == e2 && l1 > l2);
}

/*
 * May a node holding the membership (e, crc) count under membership m?
 * Only if it holds m itself: a configuration epoch alone does not name a
 * membership (two primaries, one superseded, can each store a change from
 * the same one with the same number).  Under F that ended a change, the
 * holders of the J it names were caught up too.
 */
static bool
holds_under(const struct cluster *c, uint64_t e, uint32_t crc)
{
	const struct membership *m = &c->under;

	if (e == 0 || crc == 0)
		return false;
	/* under a version 1 one, its writer's copy is what replicas hold */
	if (e == m->config_epoch)
		return crc == membership_crc(c->stored.v1 ? &c->stored : m);
	return (m->flags & MEMBERSHIP_F_FROM_JOINT) && m->from_crc != 0 &&
		e + 1 == m->config_epoch && crc == m->from_crc;
}

/*
 * The configurations (MEMBER_F_*) of the promotion's membership that
 * fenced peer i counts in: it is listed in them (by node id; by address
 * where the entry has none), holds the membership and is not suspect.
 */
static uint16_t
counts(const struct cluster *c, int i, const struct fenced *f)
{
	int at;

	if (f->ch == NULL || f->older || (f->hr.flags & CTL_HELLO_F_SUSPECT))
		return 0;
	if (c->cfg.bootstrap)
		return MEMBER_F_NEW;	/* all empty: checked by holds_state() */
	if (!holds_under(c, f->hr.config_epoch, f->hr.config_crc)) {
		if (f->hr.config_epoch == c->under.config_epoch)
			REPL_LOG_WARNING("promotion: replica %s:%s holds another "
				"membership of configuration epoch %llu (crc %08x, "
				"this node's %08x): it does not count",
				c->peers[i].host, c->peers[i].port,
				(unsigned long long)f->hr.config_epoch,
				(unsigned)f->hr.config_crc,
				(unsigned)membership_crc(c->stored.v1 ? &c->stored :
					&c->under));
		return 0;
	}
	at = membership_find(&c->under, f->hr.node_id, c->peers[i].host,
		c->peers[i].port_num);
	return at < 0 ? 0 : c->under.m[at].flags;
}

/* what a promotion needs and has, per configuration of its membership */
struct tally {
	uint32_t need_new, need_old;	/* N - k of each (old: 0 if not joint) */
	uint32_t new, old;
};

static void
tally_init(const struct membership *m, struct tally *t)
{
	uint32_t n = membership_nodes(m, MEMBER_F_NEW);
	uint32_t o = membership_nodes(m, MEMBER_F_OLD);

	*t = (struct tally){ .need_new = n > m->k ? n - m->k : 0 };
	if (m->flags & MEMBERSHIP_F_JOINT)
		t->need_old = o > m->k_old ? o - m->k_old : 0;
}

static void
tally_add(struct tally *t, uint16_t flags)
{
	t->new += (flags & MEMBER_F_NEW) != 0;
	t->old += (flags & MEMBER_F_OLD) != 0;
}

static bool
tally_enough(const struct tally *t)
{
	return t->new >= t->need_new && t->old >= t->need_old;
}

/*
 * Does the round wait for every hello?  A bootstrap needs every answer,
 * and the membership a bootstrap, an upgrade or a change stores next
 * takes its nodes' ids from the answers (cluster_ms.c): only a promotion
 * that keeps (or finishes) its membership ends a round once decided.
 */
static bool
asks_all(const struct cluster *c)
{
	return c->cfg.bootstrap || (c->plan != CLUSTER_PLAN_KEEP &&
		c->plan != CLUSTER_PLAN_FINISH);
}

/* does fenced replica f hold anything a cluster leaves behind? */
static bool
holds_state(const struct fenced *f, uint64_t epoch)
{
	/* (a promise of this bootstrap's epoch is its own earlier round's) */
	return f->hr.head.lsn != 1 || f->hr.tail.lsn != 1 ||
		f->hr.tail_epoch != 0 || f->hr.config_epoch != 0 ||
		(f->hr.prior_epoch != 0 && f->hr.prior_epoch != epoch);
}

/*
 * A bootstrap needs every other node's answer, each empty: one not heard
 * from may be a node of an existing cluster (this node's log lost, the
 * operator answering with bootstrap rather than reinit).
 */
static int
answered(const struct fenced *f, int n)
{
	int a = 0;

	for (int i = 0; i < n; i++)
		a += f[i].ok;
	return a;
}

/* a bootstrap refused by node i, which holds something: why */
static int
bootstrap_holder(const struct cluster *c, int i, const struct fenced *f)
{
	REPL_LOG_ERROR("bootstrap refused: node %s:%s (node %u) holds %s: the "
		"cluster exists already; start without bootstrap",
		c->peers[i].host, c->peers[i].port, (unsigned)f->hr.node_id,
		f->hr.config_epoch ? "a membership" :
		f->hr.tail_epoch ? "records of an epoch" :
		f->hr.prior_epoch ? "a promise to a primary" : "records");
	return REPL_E_NOT_MEMBER;
}

/* a bootstrap refused because `missing` of the n other nodes did not answer */
static int
bootstrap_unheard(int missing, int n)
{
	REPL_LOG_ERROR("bootstrap refused: it needs the answer of every other "
		"node of the configuration, each holding nothing, and %d of %d "
		"did not answer: a node not heard from may hold a cluster's "
		"records", missing, n);
	return REPL_E_NO_QUORUM;
}

/*
 * The answers name distinct nodes other than this one: a node reached
 * under two names (127.0.0.1 and localhost) would count twice.  0, or -1
 * having said which.
 */
static int
distinct_nodes(const struct cluster *c, const struct fenced *f, int n)
{
	for (int i = 0; i < n; i++) {
		if (f[i].ch == NULL)
			continue;
		if (f[i].hr.node_id == c->id.node_id) {
			REPL_LOG_ERROR("promotion refused: replica %s:%s answers as "
				"node %u, which is this node: the membership lists "
				"it as a replica of itself", c->peers[i].host,
				c->peers[i].port, (unsigned)c->id.node_id);
			return -1;
		}
		for (int j = 0; j < i; j++)
			if (f[j].ch && f[j].hr.node_id == f[i].hr.node_id) {
				REPL_LOG_ERROR("promotion refused: replicas %s:%s and "
					"%s:%s are one node (node %u, incarnation "
					"%016llx): a node listed twice would count twice",
					c->peers[j].host,
					c->peers[j].port,
					c->peers[i].host,
					c->peers[i].port,
					(unsigned)f[i].hr.node_id,
					(unsigned long long)f[i].hr.incarnation);
				return -1;
			}
	}
	return 0;
}

/*
 * A restart of the node that led before: has its own log followed
 * another node's epoch since it led?  The header's epoch is the newest
 * this node promised: its own (low 16 bits: its node id) while it led,
 * another node's once it served that node's newer epoch as a replica (or
 * was fenced by its promotion).  A node promoted explicitly writes its
 * own epoch there when the promotion ends (step 5), so only a restart
 * from a file that still says "primary" finds another's; a replica that
 * crashed in the middle of its promotion, before its epoch was written,
 * finds it too and is refused: the safe answer, since that promotion may
 * have fenced nodes and its outcome is unknown, and an operator who
 * wants this node to lead promotes it explicitly.
 */
static bool
followed_another(const struct cluster *c)
{
	uint64_t e = c->id.epoch;

	if (e == 0 || (e & 0xffff) == (c->id.node_id & 0xffff))
		return false;
	REPL_LOG_ERROR("restart as the primary refused: this node's log last "
		"followed epoch %llu of node %llu, not an epoch of its own: it "
		"served as a replica of a newer primary since it led; start it "
		"as a replica, or promote it explicitly (replctl promote) if a "
		"failover is wanted", (unsigned long long)e,
		(unsigned long long)(e & 0xffff));
	return true;
}

/*
 * An epoch above this log's that this node chose in this incarnation:
 * its own promotion, cut short after it fenced and before it wrote the
 * epoch (an error or a crash before step 5).  A node that follows it has
 * seen no newer primary since (a promotion would have gone above it), so
 * it shows no failover; without this, one failed write would refuse
 * every later restart.
 */
static bool
own_unfinished(const struct cluster *c, const struct ctl_hello_reply *hr)
{
	return (hr->epoch & 0xffff) == (c->id.node_id & 0xffff) &&
		hr->epoch_inc == c->id.incarnation;
}

/*
 * A restart of the node that led before: does a replica (or a running
 * primary) it reaches follow a newer epoch than its log's (a failover
 * while it was down)?  Asked with PROBE at the log's own epoch, so
 * nothing changes anywhere; the answer is compared, not raced (whose node
 * id is larger does not matter).  Asked of every node before each round
 * of fencing, and a round fences only the nodes that answered (probed):
 * a node that comes back during the promotion's wait is asked before it
 * is fenced, so a replica of the newer primary is never fenced by a
 * restart that its answer would have refused.  All are asked at once; the
 * first newer one ends it.  1 newer, 0 not, -1 out of memory.
 */
static int
superseded(struct cluster *c, struct fenced *f, int n)
{
	struct asking *a;
	bool newer = false;
	int ret, i;

	for (i = 0; i < n; i++) {
		f[i].probed = false;
		f[i].ask = true;
	}
	if ((a = asking_start(c, f, n, c->id.epoch, CTL_HELLO_F_PROBE,
			false)) == NULL)
		return -1;
	while ((ret = asking_next(a, c, f, c->id.epoch, CTL_HELLO_F_PROBE,
			newer ? 0 : -1, &i)) != HELLO_NONE) {
		f[i].probed = ret >= 0;
		if (!newer && ret >= 0 && f[i].hr.epoch > c->id.epoch &&
		    !own_unfinished(c, &f[i].hr)) {
			REPL_LOG_ERROR("restart as the primary refused: replica %s:%s "
				"follows epoch %llu of node %llu, newer than this "
				"log's %llu: a failover happened while this node was "
				"down; start it as a replica, or promote it "
				"explicitly (replctl promote) if a failover is wanted",
				c->peers[i].host,
				c->peers[i].port,
				(unsigned long long)f[i].hr.epoch,
				(unsigned long long)(f[i].hr.epoch & 0xffff),
				(unsigned long long)c->id.epoch);
			newer = true;
		}
		ctl_chan_close(&f[i].ch);
	}
	asking_end(&a);
	return newer;
}

/*
 * A bootstrap asks before it fences: every other node, with PROBE (which
 * changes nothing), until each answered or `until`.  0 once all answered
 * empty; REPL_E_NOT_MEMBER if one holds something (the cluster
 * exists), REPL_E_NO_QUORUM if not all answered; either way no node
 * was changed, so a refused bootstrap can be tried again.
 */
static int
bootstrap_probe(struct cluster *c, struct fenced *f, int n, uint64_t epoch,
		uint64_t until)
{
	int left = n;

	for (;;) {
		struct asking *a;
		int ret, i;

		for (i = 0; i < n; i++)
			f[i].ask = !f[i].ok;
		if ((a = asking_start(c, f, n, epoch, CTL_HELLO_F_PROBE,
				false)) == NULL)
			return REPL_E_NOMEM;
		while ((ret = asking_next(a, c, f, epoch, CTL_HELLO_F_PROBE,
				-1, &i)) != HELLO_NONE) {
			if (ret >= 0) {
				/* a probe's answer: epoch is what it follows */
				f[i].hr.prior_epoch = f[i].hr.epoch;
				if (holds_state(&f[i], 0)) {
					asking_end(&a);
					fenced_close_all(f, n);
					return bootstrap_holder(c, i, &f[i]);
				}
				f[i].ok = true;
				left--;
			}
			ctl_chan_close(&f[i].ch);
		}
		asking_end(&a);
		if (left == 0 || clock_now_ms() >= until)
			break;
		(void)poll(NULL, 0, 200);
	}
	for (int i = 0; i < n; i++) {
		if (!f[i].ok)
			REPL_LOG_WARNING("bootstrap: node %s:%s did not answer: %s",
				c->peers[i].host, c->peers[i].port, f[i].why);
		f[i].ok = false;
	}
	/* (nothing was changed on the others) */
	return left == 0 ? 0 : bootstrap_unheard(left, n);
}

/* the epoch a promotion above `above` takes, or 0 if none is left */
static uint64_t
epoch_above(uint64_t above, uint32_t node_id)
{
	uint64_t e;

	if ((above >> TERM_SHIFT) >= (UINT32_MAX >> TERM_SHIFT))
		return 0;
	e = cluster_next_epoch(above, node_id);
	return e > UINT32_MAX ? 0 : e;
}

int
cluster_promote(struct cluster *c)
{
	/* the rule holds under the membership records were acknowledged in */
	const struct membership *under = &c->under;
	const int n = c->n_links;
	struct fenced *f;
	struct asking *ask = NULL;
	uint64_t epoch, until = clock_now_ms() + (uint64_t)c->cfg.promote_wait_ms;
	struct wal_status st;
	struct log_pos pub;
	struct tally t;
	int rounds = 0, best, ret = REPL_E_NO_QUORUM;
	uint16_t self = 0;
	bool self_ok, probe;

	wal_status(c->wal, &st);
	wal_positions(c->wal, NULL, &pub, NULL);
	if (c->cfg.bootstrap) {
		/* a restored log's records are the new cluster's first ones */
		if (c->stored.config_epoch != 0 ||
		    (pub.lsn != 1 && !(c->id.flags & WAL_F_RESTORED))) {
			REPL_LOG_ERROR("bootstrap refused: this node's log is not new "
				"(it holds %s): the cluster was bootstrapped before",
				c->stored.config_epoch ? "a membership" : "records");
			return REPL_E_NOT_MEMBER;
		}
	} else if (c->stored.config_epoch == 0) {
		REPL_LOG_ERROR("promotion refused: this node's log holds no "
			"membership, so it is no member of a cluster and does not "
			"know under which rule records were acknowledged (a new or "
			"replaced log: bootstrap a new cluster, or let a primary "
			"catch this node up as a replica)");
		return REPL_E_NOT_MEMBER;
	}
	/* epoch space first: nothing is fenced for a promotion that cannot be */
	if ((epoch = epoch_above(c->id.epoch, c->id.node_id)) == 0) {
		REPL_LOG_ERROR("promotion refused: epochs are exhausted (this log "
			"follows %llu)", (unsigned long long)c->id.epoch);
		return REPL_E_INVAL;
	}
	if (c->cfg.refuse_if_superseded && !c->cfg.bootstrap &&
	    followed_another(c))
		return REPL_E_SUPERSEDED;
	probe = c->cfg.refuse_if_superseded && c->id.epoch != 0;
	REPL_FAULT(REPL_E_NOMEM, {});
	f = calloc((size_t)(n ? n : 1), sizeof(*f));
	if (f == NULL)
		return REPL_E_NOMEM;
	if (c->cfg.bootstrap && (ret = bootstrap_probe(c, f, n, epoch, until))) {
		free(f);
		return ret;
	}
	self_ok = !(st.health & REPL_HEALTH_SUSPECT);
	if (!self_ok)
		REPL_LOG_WARNING("promotion: this node's log is suspect (health "
			"0x%x): it does not count toward the N - k nodes",
			st.health);
	{
		/* it holds its membership: it counts in each configuration it is in */
		const struct member *me = &c->conf_ms.m[0];
		int at = membership_find(under, c->id.node_id,
			me->port ? me->host : NULL, me->port);

		self = at < 0 || !self_ok ? 0 : under->m[at].flags;
	}
	for (;;) {
		uint64_t stale = 0, grace_until, round_t0, slowest = 0;
		bool decided = false, alone;
		int r, i;

		if (probe && (r = superseded(c, f, n)) != 0) {
			ret = r < 0 ? REPL_E_NOMEM : REPL_E_SUPERSEDED;
			goto out;
		}
		tally_init(under, &t);
		tally_add(&t, self);
		/*
		 * Where this node alone makes the N - k, the answers decide
		 * nothing and the round is there to fence them all: it waits
		 * for every hello, as it always did.
		 */
		alone = tally_enough(&t);
		for (i = 0; i < n; i++) {
			f[i].ok = false;
			/* not probed: f[i].why says why the probe failed */
			f[i].ask = !probe || f[i].probed;
		}
		/* the gate is asked before each node is fenced (ask_run) */
		round_t0 = clock_now_ms();
		if ((ask = asking_start(c, f, n, epoch, CTL_HELLO_F_FENCE_ONLY,
				true)) == NULL) {
			ret = REPL_E_NOMEM;
			goto out;
		}
		/*
		 * Until decided; then a grace for the answers of nodes that
		 * answer at once: one that follows a higher epoch (a refused
		 * promotion fenced it) must be heard now, or it fences this
		 * primary as soon as a link reaches it.  A silent node is not
		 * waited for beyond the grace.
		 */
		grace_until = 0;
		while ((r = asking_next(ask, c, f, epoch, CTL_HELLO_F_FENCE_ONLY,
				!decided ? -1 : grace_left(&grace_until, slowest),
				&i)) != HELLO_NONE) {
			if (r >= 0)
				slowest = clock_now_ms() - round_t0;
			switch (r) {
			case HELLO_GATE:
				ret = REPL_E_SUPERSEDED;
				goto out;
			case 0:
				f[i].ok = true;
				if (!c->cfg.bootstrap &&
				    f[i].hr.config_epoch > under->config_epoch &&
				    !c->cfg.force) {
					REPL_LOG_ERROR("promotion refused: replica %s:%s "
						"holds membership configuration epoch %llu, "
						"this node %llu: it missed a change of the "
						"membership (promote a node that has it)",
						c->peers[i].host,
						c->peers[i].port,
						(unsigned long long)f[i].hr.config_epoch,
						(unsigned long long)under->config_epoch);
					ret = REPL_E_NO_QUORUM;
					goto out;
				}
				if (c->cfg.bootstrap && holds_state(&f[i], epoch)) {
					ret = bootstrap_holder(c, i, &f[i]);
					goto out;
				}
				tally_add(&t, counts(c, i, &f[i]));
				break;
			case 1:
				if (c->cfg.bootstrap) {
					/* it promised an epoch since the probe */
					ret = bootstrap_holder(c, i, &f[i]);
					goto out;
				}
				if (f[i].hr.epoch > stale)
					stale = f[i].hr.epoch;
				break;
			default:
				break;
			}
			decided = stale != 0 ||
				(!asks_all(c) && !alone && tally_enough(&t));
		}
		asking_end(&ask);
		if (distinct_nodes(c, f, n)) {
			ret = REPL_E_NO_QUORUM;
			goto out;
		}
		if (stale) {
			fenced_close_all(f, n);
			if (c->cfg.refuse_if_superseded) {
				/* a failover happened while this node was down */
				REPL_LOG_ERROR("restart as the primary refused: a replica "
					"follows epoch %llu of node %llu, newer than this "
					"log's %llu; start it as a replica, or promote it "
					"explicitly (replctl promote) if a failover is "
					"wanted", (unsigned long long)stale,
					(unsigned long long)(stale & 0xffff),
					(unsigned long long)c->id.epoch);
				ret = REPL_E_SUPERSEDED;
				goto out;
			}
			/* someone got there first: go above it */
			if (++rounds >= ROUNDS_MAX) {
				REPL_LOG_ERROR("promotion: epochs keep moving under it "
					"(another node is promoting?)");
				ret = REPL_E_NO_QUORUM;
				goto out;
			}
			if ((epoch = epoch_above(stale, c->id.node_id)) == 0) {
				REPL_LOG_ERROR("promotion refused: epochs are exhausted "
					"(a replica follows %llu)",
					(unsigned long long)stale);
				ret = REPL_E_INVAL;
				goto out;
			}
			continue;
		}
		if (c->cfg.bootstrap ? answered(f, n) == n : tally_enough(&t))
			break;
		if (clock_now_ms() >= until) {
			for (i = 0; i < n; i++)
				if (f[i].ch == NULL)
					REPL_LOG_WARNING("promotion: replica %s:%s not "
						"fenced: %s", c->peers[i].host,
						c->peers[i].port, f[i].why);
				else if (f[i].older)
					REPL_LOG_WARNING("promotion: replica %s:%s not "
						"counted: %s", c->peers[i].host,
						c->peers[i].port, f[i].why);
			if (c->cfg.bootstrap) {
				ret = bootstrap_unheard(n - answered(f, n), n);
				goto out;
			}
			if (!c->cfg.force || c->cfg.bootstrap) {
				if (t.need_old)
					REPL_LOG_ERROR("promotion refused: membership "
						"configuration epoch %llu is a change in "
						"progress and needs N - k nodes of each "
						"configuration that are fenced, hold it and "
						"are healthy: %u of %u of the old one, %u of "
						"%u of the new one; an acknowledged record "
						"may be on the others only",
						(unsigned long long)under->config_epoch,
						t.old, t.need_old, t.new, t.need_new);
				else
					REPL_LOG_ERROR("promotion refused: %u of the %u "
						"nodes needed (N - k with N = %u, k = %u of "
						"membership configuration epoch %llu) are "
						"fenced, hold that membership and are healthy; "
						"an acknowledged record may be on the others "
						"only", t.new, t.need_new,
						membership_nodes(under, MEMBER_F_NEW), under->k,
						(unsigned long long)under->config_epoch);
				ret = REPL_E_NO_QUORUM;
				goto out;
			}
			REPL_LOG_ERROR("FORCED promotion with %u of the %u nodes needed "
				"(old configuration: %u of %u): records acknowledged by "
				"an earlier primary MAY BE LOST", t.new, t.need_new, t.old,
				t.need_old);
			break;
		}
		fenced_close_all(f, n);
		(void)poll(NULL, 0, 200);
	}

	/* who answered where: the membership it stores lists them (cluster_ms.c) */
	for (int i = 0; i < n; i++) {
		c->peers[i].reached = f[i].ok && f[i].ch != NULL;
		c->peers[i].node_id = c->peers[i].reached ? f[i].hr.node_id : 0;
		c->peers[i].incarnation = c->peers[i].reached ?
			f[i].hr.incarnation : 0;
	}

	/* the most advanced log among the fenced: this one wins ties */
	wal_positions(c->wal, NULL, &pub, NULL);
	best = -1;
	{
		uint64_t be = wal_tail_epoch(c->wal), bl = pub.lsn - 1;

		for (int i = 0; i < n; i++)
			if (f[i].ch && !f[i].older &&
			    ahead(f[i].hr.tail_epoch, f[i].hr.tail.lsn - 1,
					be, bl)) {
				best = i;
				be = f[i].hr.tail_epoch;
				bl = f[i].hr.tail.lsn - 1;
			}
	}
	if (best >= 0) {
		REPL_LOG_NOTICE("promotion: replica %s:%s holds more (to LSN %llu, "
			"epoch %llu): copying its tail", c->peers[best].host,
			c->peers[best].port,
			(unsigned long long)f[best].hr.tail.lsn - 1,
			(unsigned long long)f[best].hr.tail_epoch);
		if (pull_tail(c, best, &f[best], epoch)) {
			REPL_LOG_ERROR("promotion: cannot copy the tail of replica "
				"%s:%s: %s", c->peers[best].host,
				c->peers[best].port, f[best].why);
			ret = REPL_E_TRANSPORT;
			goto out;
		}
	}
	if (promote_gate_closed(c, "taking the new epoch")) {
		ret = REPL_E_SUPERSEDED;
		goto out;
	}
	if ((ret = wal_set_epoch(c->wal, epoch, c->id.incarnation)))
		goto out;
	wal_identity(c->wal, &c->id, &c->ring_size);
	/*
	 * The commit rule: the epoch's first record.  Records of older epochs
	 * become committed only once it is durable by the rule (cluster.c).
	 */
	REPL_FAULT_GOTO(ret, REPL_E_FULL, out);
	if ((ret = wal_append_epoch_start(c->wal, 0, &c->epoch_start_lsn)) ||
	    (ret = wal_sync(c->wal, c->epoch_start_lsn))) {
		REPL_LOG_ERROR("promotion: cannot write the epoch's first record (%d)",
			ret);
		goto out;
	}
	wal_positions(c->wal, NULL, &pub, NULL);
	REPL_LOG_NOTICE("promoted: epoch %llu, log to LSN %llu, epoch starts at "
		"LSN %llu, %u of the %u nodes counted", (unsigned long long)epoch,
		(unsigned long long)pub.lsn - 1,
		(unsigned long long)c->epoch_start_lsn, t.new,
		membership_nodes(under, MEMBER_F_NEW));
	ret = 0;
out:
	asking_end(&ask);
	fenced_close_all(f, n);
	free(f);
	return ret;
}
