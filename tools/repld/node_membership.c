/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_membership.c -- the primary's membership changes: node_add,
 * node_remove, node_reload, node_carry (the coordinator's), the checks
 * before one closes the log (enough nodes streaming, the leader key still
 * held), its proposal to etcd and the change itself (remember).  A
 * replica only keeps the peers for its next promotion (node_take_peers).
 * A change that could reopen neither membership hands over to
 * node_reopen.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coordinator.h"
#include "log.h"
#include "node_internal.h"

#ifdef RPMA_DEBUG_FAULT_INJECTION
/*
 * Debug builds, for the tests: with REPLD_TEST_STOP_AT=POINT in its
 * environment the daemon stops itself (SIGSTOP) when it passes POINT, as a
 * pause of the whole process there would (a SIGSTOP from outside cannot
 * be timed into a window of microseconds).  SIGCONT resumes it.
 */
static void
test_stop_at(const char *point)
{
	const char *at = getenv("REPLD_TEST_STOP_AT");

	if (at == NULL || strcmp(at, point) != 0)
		return;
	log_notice("stopping at %s (REPLD_TEST_STOP_AT)", point);
	(void)raise(SIGSTOP);
}
#else
static void
test_stop_at(const char *point)
{
	(void)point;
}
#endif
/* readers of the membership (status) take n->lock */
static void
set_members(struct node *n, const struct repld_peer *peers, int n_peers,
		int quorum)
{
	pthread_mutex_lock(&n->lock);
	memcpy(n->conf.peers, peers, sizeof(n->conf.peers));
	n->conf.n_peers = n_peers;
	n->conf.quorum = quorum;
	pthread_mutex_unlock(&n->lock);
}

/* the peer at host:port, or -1 */
static int
peer_index(const struct repld_conf *conf, const char *host, uint16_t port)
{
	for (int i = 0; i < conf->n_peers; i++)
		if (strcmp(conf->peers[i].address, host) == 0 &&
		    conf->peers[i].control_port == port)
			return i;
	return -1;
}

/* free the addresses of a[0..na) that keep[0..nk) does not hold too */
static void
free_unshared(const struct repld_peer *a, int na, const struct repld_peer *keep,
		int nk)
{
	for (int i = 0; i < na; i++) {
		bool shared = false;

		for (int j = 0; j < nk && !shared; j++)
			shared = a[i].address == keep[j].address;
		if (!shared)
			free(a[i].address);
	}
}

/* the final membership of this node and peers, quorum, config epoch ce;
 * node ids from the stored membership where it names the address */
static void
proposal_of(const struct node *n, const struct repl_membership *stored,
		const struct repld_peer *peers, int n_peers, int quorum, uint64_t ce,
		struct coord_membership *out)
{
	memset(out, 0, sizeof(*out));
	out->config_epoch = ce;
	out->quorum = (uint32_t)quorum;
	out->nodes[0].node_id = n->conf.node_id;
	repld_host_port(out->nodes[0].ctl_addr, sizeof(out->nodes[0].ctl_addr),
		n->conf.listen.address, n->conf.listen.control_port);
	out->n = 1;
	for (int i = 0; i < n_peers && out->n < COORD_MEMBERS_MAX; i++) {
		struct coord_ms_node *nd = &out->nodes[out->n++];

		repld_host_port(nd->ctl_addr, sizeof(nd->ctl_addr), peers[i].address,
			peers[i].control_port);
		for (uint32_t j = 0; j < stored->count && j < REPL_MEMBERS_MAX; j++)
			if (strcmp(stored->nodes[j].host, peers[i].address) == 0 &&
			    stored->nodes[j].port == peers[i].control_port)
				nd->node_id = stored->nodes[j].node_id;
	}
}

uint64_t
node_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* is stored member m this node? (by node id; by address where it has none) */
static bool
member_is_self(const struct node *n, const struct repl_member *m)
{
	if (m->node_id != 0)
		return m->node_id == n->conf.node_id;
	return m->port == n->conf.listen.control_port &&
		strcmp(m->host, n->conf.listen.address) == 0;
}

/*
 * Can the primary be promoted again under its stored membership now?  The
 * promotion that a change begins with fences N - k nodes of that
 * membership (of each configuration while it is joint) that hold it,
 * this one counting: promote.c.  A replica counts here while its link
 * streams and it is a member, which is what holding the membership shows
 * from this side.  The links are the configured peers in order, then the
 * stored members the peers do not name (cluster_ms.c, choose_peers).
 * false with the nodes not counted, "host:port (state: why)", in missing.
 */
static bool
reach_enough(struct node *n, char *need, size_t needlen, char *missing,
		size_t len)
{
	struct repl_membership ms;
	struct repl_status st;
	unsigned need_new, need_old, have_new = 0, have_old = 0;
	int extra = n->conf.n_peers;
	size_t at = 0;

	missing[0] = '\0';
	/* none stored, or a version 1 one without node ids: the engine decides */
	if (repl_membership(n->repl, &ms) != 0 || ms.config_epoch == 0 ||
	    ms.version != 2 || repl_status(n->repl, &st) != 0)
		return true;
	need_new = ms.n_new > ms.k ? ms.n_new - ms.k : 0;
	need_old = (ms.flags & REPL_MEMBERSHIP_JOINT) && ms.n_old > ms.k_old ?
		ms.n_old - ms.k_old : 0;
	for (uint32_t e = 0; e < ms.count && e < REPL_MEMBERS_MAX; e++) {
		const struct repl_member *m = &ms.nodes[e];
		struct repl_replica_status rs;
		bool up;
		int i;

		if (member_is_self(n, m)) {
			up = !(st.health & REPL_HEALTH_SUSPECT);
		} else if (m->port == 0) {
			continue;	/* no address: no link, never fenced */
		} else {
			for (i = 0; i < n->conf.n_peers; i++)
				if (n->conf.peers[i].control_port == m->port &&
				    strcmp(n->conf.peers[i].address, m->host) == 0)
					break;
			if (i == n->conf.n_peers)
				i = extra++;
			bool link = repl_replica_status(n->repl, i, &rs) == 0;

			up = link && rs.link_state == REPL_LINK_STREAMING && rs.member;
			if (!up && at < len) {
				int w = snprintf(missing + at, len - at, "%s%s:%u (%s%s%s)",
					at ? ", " : "", m->host, (unsigned)m->port,
					link ? repl_link_state_name(rs.link_state) :
						"no link",
					link && rs.why[0] ? ": " : "", link ? rs.why : "");

				at = w < 0 ? len : at + (size_t)w;
			}
		}
		if (up) {
			have_new += (m->flags & REPL_MEMBER_NEW) != 0;
			have_old += (m->flags & REPL_MEMBER_OLD) != 0;
		}
	}
	if (need_old)
		snprintf(need, needlen, "%u of the %u nodes of the current "
			"membership's new configuration and %u of the %u of its old "
			"one (joint, configuration epoch %llu) streaming, this one "
			"counting, and %u and %u are", need_new,
			ms.n_new, need_old, ms.n_old,
			(unsigned long long)ms.config_epoch, have_new, have_old);
	else
		snprintf(need, needlen, "%u of the current membership's %u nodes "
			"(configuration epoch %llu, quorum %u) streaming, this one "
			"counting, and %u %s", need_new,
			ms.n_new, (unsigned long long)ms.config_epoch, ms.k, have_new,
			have_new == 1 ? "is" : "are");
	return have_new >= need_new && have_old >= need_old;
}

/*
 * Before a change closes the log: the nodes the promotion needs must be
 * streaming, else it would fail and so, for the same reason, would the
 * reopen under the old membership.  Waits for them as long as a promotion
 * would (timeouts.promote_wait_ms).  0, or REPL_E_NO_QUORUM with msg.
 */
static int
reach_check(struct node *n, char *msg, size_t msglen)
{
	uint64_t until = node_now_ms() + (uint64_t)n->conf.timeouts.promote_wait_ms;
	char need[256], missing[384];

	while (!reach_enough(n, need, sizeof(need), missing, sizeof(missing))) {
		if (node_now_ms() >= until) {
			snprintf(msg, msglen, "membership change refused, nothing "
				"changed: it begins with a promotion that needs %s; "
				"not streaming: %s. The primary goes on under its "
				"current membership: retry once they are back", need,
				missing);
			log_warning("%s", msg);
			return REPL_E_NO_QUORUM;
		}
		(void)poll(NULL, 0, 50);
	}
	return 0;
}

/*
 * The proposal written to etcd for a change whose log stayed at the old
 * configuration epoch: no membership of it was stored on any node (the
 * primary stores it first), so the key may say the old one again.  With
 * n->change held and the log open.
 */
void
node_proposal_withdraw(struct node *n, int64_t rev, uint64_t config_epoch)
{
	struct coordinator *coord = atomic_load(&n->coord);
	struct coord_membership applied;
	struct repl_membership now;

	if (rev == 0 || coord == NULL || n->repl == NULL)
		return;
	if (repl_membership(n->repl, &now) == 0 &&
	    now.config_epoch == config_epoch &&
	    coord_membership_from_log(&now, &applied))
		coordinator_membership_withdraw(coord, &applied, rev);
}

/* ---- the change ---- */

/*
 * Apply a new membership (peers, quorum) to the primary: drain, close,
 * open with it as the next configuration.  With a coordinator and propose,
 * the change is first written to etcd's membership key by compare-and-swap
 * (docs/replication.md, "The membership in etcd"); a refusal there changes
 * nothing.  First of all, the nodes the promotion needs must be streaming
 * (reach_check): otherwise it is refused with nothing changed.  If the
 * open under the new membership fails the old membership is reopened, and
 * if that fails too (a node went away after the check) a thread goes on
 * reopening it (reopen_main) while appends are refused.  It owns the
 * addresses in peers from here: what does not end up in the node's
 * membership is freed.  Called with n->change held.
 */
static int
remember(struct node *n, struct repld_peer *peers, int n_peers, int quorum,
		bool propose, char *msg, size_t msglen)
{
	struct repld_peer old[REPLD_PEERS_MAX];
	int old_n = n->conf.n_peers, old_k = n->conf.quorum, ret;
	struct coordinator *coord = atomic_load(&n->coord);
	struct repl_membership stored;
	struct coord_membership want;
	int64_t rev = 0;
	uint64_t closed_ms;
	int reopen;
	char why[512];

	if (quorum < 0 || quorum > n_peers) {
		snprintf(msg, msglen, "a quorum of %d with %d replicas: it must be "
			"0..%d", quorum, n_peers, n_peers);
		free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
		return REPL_E_INVAL;
	}
	if (node_role(n) != NODE_PRIMARY) {
		bool reopening = node_reopen_info(n, &(struct node_reopen){ 0 });

		snprintf(msg, msglen, "the membership is changed on the primary; "
			"this node is %s", reopening ? "down, reopening its log under "
			"its old membership after a change that failed: retry once it "
			"serves again" : node_role_name(node_role(n)));
		free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
		return reopening ? NODE_E_REOPENING : NODE_E_WRONG_ROLE;
	}
	if ((ret = reach_check(n, msg, msglen)) != 0) {
		free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
		return ret;
	}
	memset(&stored, 0, sizeof(stored));
	if (coord != NULL && propose) {
		if (node_membership(n, &stored) != 0 || stored.config_epoch == 0 ||
		    (stored.flags & REPL_MEMBERSHIP_JOINT)) {
			snprintf(msg, msglen, "the membership is changed on a primary "
				"that stores a final membership; this one %s",
				stored.config_epoch == 0 ? "is changing state" :
				"is in the middle of a change");
			free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
			return REPL_E_MEMBERSHIP;
		}
		proposal_of(n, &stored, peers, n_peers, quorum,
			stored.config_epoch + 2, &want);
		if ((ret = coordinator_membership_propose(coord, &want, &rev, msg,
				msglen)) != 0) {
			log_warning("%s", msg);
			free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
			return ret;
		}
	}
	if (propose && coord != NULL)
		test_stop_at("membership-proposed");
	/*
	 * With a coordinator a change is the leader key's holder's: a primary
	 * paused past its lease between the proposal and here (another node
	 * may be the primary now) changes nothing, and the coordinator hands
	 * it over.  The promotion below asks again before each fence.
	 */
	if (coord != NULL && coordinator_promote_gate(coord)) {
		snprintf(msg, msglen, "this primary's hold on the leader key ran out "
			"before the change began (was the process paused?): nothing "
			"changed; the coordinator steps it down if another node took "
			"the key");
		log_warning("%s", msg);
		free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
		return NODE_E_NOT_LEADER;
	}
	memcpy(old, n->conf.peers, sizeof(old));
	log_notice("reconfiguring: %d peers, quorum %d -> %d peers, quorum %d",
		old_n, old_k, n_peers, quorum);
	node_gate_close(n, NODE_ST_CHANGING);
	closed_ms = node_now_ms();
	node_primary_close(n);
	set_members(n, peers, n_peers, quorum);
	if ((ret = node_primary_open(n, &(struct open_how){ .reconfigure = true,
			.gated = true }, why, sizeof(why))) == 0) {
		struct repl_status st;

		free_unshared(old, old_n, peers, n_peers);
		repl_status(n->repl, &st);
		node_gate_open(n);
		if (st.config_joint) {
			/*
			 * The primary runs under both configurations and commits
			 * the change once enough old nodes hold it: not done.
			 */
			snprintf(msg, msglen, "the change to %d replicas, quorum %d is "
				"not committed: too few nodes of the old configuration "
				"hold it (configuration epoch %llu, joint); until they "
				"do, a record is acknowledged only once both "
				"configurations' quorums hold it (the daemon's log names "
				"the unreachable nodes)", n_peers, quorum,
				(unsigned long long)st.config_epoch);
			log_error("%s", msg);
			return REPL_E_NO_QUORUM;
		}
		snprintf(msg, msglen, "membership now %d replicas, quorum %d "
			"(configuration epoch %llu)", n_peers, quorum,
			(unsigned long long)st.config_epoch);
		return 0;
	}
	snprintf(msg, msglen, "the new membership did not take: %s", why);
	set_members(n, old, old_n, old_k);
	free_unshared(peers, n_peers, old, old_n);
	if (coord != NULL && coordinator_promote_gate(coord)) {
		/*
		 * The lease ran out during the promotion: another node may
		 * lead now.  Reopening as the primary would fence it; this
		 * node serves as a replica instead, and the coordinator takes
		 * it from there.
		 */
		size_t at = strlen(msg);

		log_warning("the leader key's lease ran out during the change: "
			"serving as a replica");
		if (node_replica_start(n) != 0)
			n->exit_code = REPLD_EXIT_FAILED;
		snprintf(msg + at, msglen - at, "; this primary's hold on the leader "
			"key ran out meanwhile: it serves as a replica now");
		node_gate_open(n);
		return NODE_E_NOT_LEADER;
	}
	if ((reopen = node_primary_open(n, &(struct open_how){ .gated = true }, why,
			sizeof(why))) != 0) {
		size_t at = strlen(msg);

		log_error("the old membership could not be reopened either: %s", why);
		/*
		 * A node the check saw went away: not the operator's doing, and
		 * not for ever.  The node stays up and tries again.
		 */
		if (node_reopen_retryable(reopen) &&
		    node_reopen_start(n, why, closed_ms, rev, stored.config_epoch) == 0) {
			snprintf(msg + at, msglen - at, "; nor could the old one be "
				"reopened, so the log is closed: appends are refused "
				"(REOPENING) while the primary retries reopening it under "
				"the old membership, until enough of its nodes answer");
			log_warning("the log is closed: retrying to reopen it under the "
				"old membership (every %d..%d s)", REOPEN_FIRST_MS / 1000,
				REOPEN_MAX_MS / 1000);
			return ret;
		}
		n->exit_code = ret == REPL_E_NO_QUORUM ?
			REPLD_EXIT_NO_QUORUM : REPLD_EXIT_FAILED;
	} else {
		/* back under the old configuration epoch */
		node_proposal_withdraw(n, rev, stored.config_epoch);
	}
	node_gate_open(n);
	return ret;
}

int
node_add(struct node *n, const char *host, uint16_t port, int quorum,
		char *msg, size_t msglen)
{
	struct repld_peer peers[REPLD_PEERS_MAX];
	int np, ret;

	/* the membership is read under the change lock: an add waiting for
	 * another one builds on what that one left */
	pthread_mutex_lock(&n->change);
	np = n->conf.n_peers;
	if (peer_index(&n->conf, host, port) >= 0) {
		snprintf(msg, msglen, "%s:%u is a member already", host, port);
		ret = REPL_E_INVAL;
	} else if ((strcmp(host, n->conf.listen.address) == 0 &&
			port == n->conf.listen.control_port)) {
		snprintf(msg, msglen, "%s:%u is this node", host, port);
		ret = REPL_E_INVAL;
	} else if (np == REPLD_PEERS_MAX) {
		snprintf(msg, msglen, "there are %d replicas already, the most a "
			"membership holds", np);
		ret = REPL_E_INVAL;
	} else {
		memcpy(peers, n->conf.peers, sizeof(peers));
		peers[np] = (struct repld_peer){ strdup(host), port };
		ret = peers[np].address == NULL ? REPL_E_NOMEM :
			remember(n, peers, np + 1,
				quorum >= 0 ? quorum : n->conf.quorum, true, msg, msglen);
	}
	pthread_mutex_unlock(&n->change);
	return ret;
}

int
node_remove(struct node *n, const char *host, uint16_t port, int quorum,
		char *msg, size_t msglen)
{
	struct repld_peer peers[REPLD_PEERS_MAX];
	int i, np, k, ret;

	pthread_mutex_lock(&n->change);
	np = n->conf.n_peers;	/* under the change lock, as in node_add */
	if ((i = peer_index(&n->conf, host, port)) < 0) {
		snprintf(msg, msglen, "%s:%u is not a member", host, port);
		ret = REPL_E_INVAL;
	} else {
		memcpy(peers, n->conf.peers, sizeof(peers));
		memmove(&peers[i], &peers[i + 1], sizeof(peers[0]) * (size_t)(np - i - 1));
		memset(&peers[np - 1], 0, sizeof(peers[0]));
		/* fewer replicas than the quorum: the quorum shrinks with them */
		k = quorum >= 0 ? quorum :
			n->conf.quorum > np - 1 ? np - 1 : n->conf.quorum;
		ret = remember(n, peers, np - 1, k, true, msg, msglen);
	}
	pthread_mutex_unlock(&n->change);
	return ret;
}

int
node_carry(struct node *n, struct repld_peer *peers, int n_peers, int quorum,
		uint64_t config_epoch, char *msg, size_t msglen)
{
	struct repl_membership stored;
	int ret;

	pthread_mutex_lock(&n->change);
	/* the change this primary was asked for itself, carried meanwhile */
	if (node_membership(n, &stored) == 0 && stored.config_epoch >= config_epoch) {
		snprintf(msg, msglen, "the log holds configuration epoch %llu already",
			(unsigned long long)stored.config_epoch);
		free_unshared(peers, n_peers, n->conf.peers, n->conf.n_peers);
		pthread_mutex_unlock(&n->change);
		return 0;
	}
	ret = remember(n, peers, n_peers, quorum, false, msg, msglen);
	pthread_mutex_unlock(&n->change);
	return ret;
}

bool
node_members_are(const struct node *n, const struct repld_peer *peers, int n_peers,
		int quorum)
{
	if (n_peers != n->conf.n_peers || quorum != n->conf.quorum)
		return false;
	for (int i = 0; i < n_peers; i++)
		if (peer_index(&n->conf, peers[i].address, peers[i].control_port) < 0)
			return false;
	return true;
}

int
node_take_peers(struct node *n, struct repld_peer *peers, int n_peers, int quorum)
{
	struct repld_peer old[REPLD_PEERS_MAX];
	int old_n, ret = 0;

	pthread_mutex_lock(&n->change);
	/* (one reopening its log is a primary still: its peers stay) */
	if (node_role(n) == NODE_PRIMARY ||
	    node_reopen_info(n, &(struct node_reopen){ 0 })) {
		free_unshared(peers, n_peers, NULL, 0);
		ret = -1;
	} else {
		old_n = n->conf.n_peers;
		memcpy(old, n->conf.peers, sizeof(old));
		set_members(n, peers, n_peers, quorum);
		free_unshared(old, old_n, peers, n_peers);
	}
	pthread_mutex_unlock(&n->change);
	return ret;
}

int
node_membership(struct node *n, struct repl_membership *out)
{
	bool changing;
	struct repl *repl;

	memset(out, 0, sizeof(*out));
	if (node_role(n) != NODE_PRIMARY || (repl = node_try_enter(n, &changing)) == NULL)
		return -1;
	(void)repl_membership(repl, out);
	node_leave(n);
	return 0;
}

int
node_reload(struct node *n, char *msg, size_t msglen)
{
	struct repld_conf fresh;
	char err[512];
	bool same;
	int ret;

	if (repld_conf_load(n->conf_path, &fresh, err, sizeof(err)) != 0) {
		snprintf(msg, msglen, "reload: the file does not load, nothing "
			"changed: %s", err);
		log_warning("%s", msg);
		return REPL_E_INVAL;
	}
	pthread_mutex_lock(&n->change);
	same = node_members_are(n, fresh.peers, fresh.n_peers, fresh.quorum);
	if (same) {
		snprintf(msg, msglen, "reload: the membership is unchanged (%d "
			"replicas, quorum %d); other settings take effect on a "
			"restart", fresh.n_peers, fresh.quorum);
		ret = 0;
	} else if (node_reopen_info(n, &(struct node_reopen){ 0 })) {
		/* its reopen is under the membership the log holds */
		snprintf(msg, msglen, "reload: nothing changed: this primary is "
			"reopening its log under its old membership after a change "
			"that failed; reload once it serves again");
		same = true;	/* the file's addresses are freed */
		ret = NODE_E_REOPENING;
	} else if (node_role(n) != NODE_PRIMARY) {
		/* a replica keeps the peers for its promotion */
		struct repld_peer old[REPLD_PEERS_MAX];
		int old_n = n->conf.n_peers;

		memcpy(old, n->conf.peers, sizeof(old));
		set_members(n, fresh.peers, fresh.n_peers, fresh.quorum);
		free_unshared(old, old_n, fresh.peers, fresh.n_peers);
		snprintf(msg, msglen, "reload: %d peers, quorum %d, for a promotion",
			n->conf.n_peers, n->conf.quorum);
		ret = 0;
	} else {
		ret = remember(n, fresh.peers, fresh.n_peers, fresh.quorum, true,
			msg, msglen);
	}
	/* the file's addresses belong to the node now, or are freed */
	if (!same)
		fresh.n_peers = 0;
	pthread_mutex_unlock(&n->change);
	log_notice("%s", msg);
	repld_conf_free(&fresh);
	return ret;
}
