/* SPDX-License-Identifier: BSD-3-Clause */
/* node.c -- a repld node's state and its changes (see node.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coordinator.h"
#include "log.h"
#include "node.h"
#include "primary_cfg.h"

_Static_assert(REPL_BUSY_POLL_AUTO == -1 && REPL_BUSY_POLL_MAX == 1000000,
	"repld_conf.c reads busy_poll_us with repl.h's values");


const char *
node_role_name(enum node_role r)
{
	return r == NODE_PRIMARY ? "primary" : r == NODE_REPLICA ? "replica" : "down";
}

enum node_role
node_role(struct node *n)
{
	enum node_role r;

	pthread_mutex_lock(&n->lock);
	r = n->role;
	pthread_mutex_unlock(&n->lock);
	return r;
}

/* the libfabric provider name, or "verbs" */
static const char *
provider_of(const struct repld_conf *conf)
{
	bool no_rdma;
	const char *p = primary_cfg_provider(conf, &no_rdma);

	/* expected on hosts without RDMA: not an error */
	if (no_rdma)
		log_notice("no RDMA device for %s: using tcp (ofi)",
			conf->listen.address);
	return p;
}

/* ---- the gate ---- */

struct repl *
node_enter(struct node *n, int *err)
{
	struct repl *repl = NULL;

	pthread_mutex_lock(&n->lock);
	/* a reopen may take long: its appenders are told, not kept waiting */
	while (n->closed && !n->stopping && !n->fenced && !n->reopening)
		pthread_cond_wait(&n->cond, &n->lock);
	if (n->fenced)
		*err = REPL_E_FENCED;
	else if (n->stopping)
		*err = NODE_E_STOPPING;
	else if (n->reopening)
		*err = NODE_E_REOPENING;
	else if (n->role != NODE_PRIMARY)
		*err = NODE_E_WRONG_ROLE;
	else {
		repl = n->repl;
		n->active++;
	}
	pthread_mutex_unlock(&n->lock);
	return repl;
}

struct repl *
node_try_enter(struct node *n, bool *changing)
{
	struct repl *repl = NULL;

	pthread_mutex_lock(&n->lock);
	*changing = n->closed && !n->stopping;
	if (!n->closed && !n->stopping && n->role == NODE_PRIMARY) {
		repl = n->repl;
		n->active++;
	}
	pthread_mutex_unlock(&n->lock);
	return repl;
}

void
node_leave(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	if (--n->active == 0)
		pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

/* close the gate and wait until every appender inside had its answer */
static void
gate_close(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	n->closed = true;
	while (n->active > 0)
		pthread_cond_wait(&n->cond, &n->lock);
	pthread_mutex_unlock(&n->lock);
}

static void
gate_open(struct node *n)
{
	pthread_mutex_lock(&n->lock);
	n->closed = false;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

static void
set_role(struct node *n, enum node_role role, struct repl *repl)
{
	pthread_mutex_lock(&n->lock);
	n->role = role;
	n->repl = repl;
	pthread_mutex_unlock(&n->lock);
}

/* ---- the replica ---- */

void
node_replica_info(struct node *n, struct repl_replica_info *info)
{
	pthread_mutex_lock(&n->lock);
	if (n->replica == NULL || repl_replica_info(n->replica, info) != 0)
		*info = n->replica_last;
	pthread_mutex_unlock(&n->lock);
}

static void
say_listening(const struct node *n)
{
	log_notice("node %u (replica) listening on %s, control port %u, data port %u",
		n->conf.node_id, n->conf.listen.address,
		n->conf.listen.control_port, n->conf.listen.data_port);
}

static void *
replica_main(void *arg)
{
	struct node *n = arg;

	(void)pthread_setname_np(pthread_self(), "repld-replica");
	n->replica_ret = repl_replica_run(n->replica);
	return NULL;
}

/*
 * Open the log as a replica and serve it in a thread.  An open that fails
 * leaves the node a replica with replica_ret set: node_tick says why.
 */
static int
replica_start(struct node *n)
{
	const struct repld_conf *conf = &n->conf;
	struct repl_replica_node *replica = NULL;
	struct repl_replica_cfg cfg;
	int ret;

	snprintf(n->ctl_port, sizeof(n->ctl_port), "%u", conf->listen.control_port);
	snprintf(n->data_port, sizeof(n->data_port), "%u", conf->listen.data_port);
	/* a log made anew takes its promise floor from these (copies: a reload
	 * may change the file's list meanwhile) */
	for (int i = 0; i < conf->n_peers; i++) {
		snprintf(n->floor_hosts[i], sizeof(n->floor_hosts[i]), "%s",
			conf->peers[i].address);
		snprintf(n->floor_ports[i], sizeof(n->floor_ports[i]), "%u",
			conf->peers[i].control_port);
		n->floor_peers[i] = (struct repl_replica){ n->floor_hosts[i],
			n->floor_ports[i] };
	}
	cfg = (struct repl_replica_cfg){
		.path = conf->log.path,
		.backend = primary_cfg_backend(conf->log.backend),
		.size = conf->log.size,
		/*
		 * Formats a blank medium only for a new cluster; made anew
		 * (reinit), whatever it holds.  At any other start a blank
		 * medium is a missing log: a replaced disk is not a new node.
		 */
		.create = n->bootstrap,
		.reinit = n->reinit,
		.peers = n->floor_peers,
		.n_peers = conf->n_peers,
		.quorum = conf->quorum,
		.node_id = conf->node_id,
		.provider = n->provider,
		.addr = conf->listen.address,
		.ctl_port = n->ctl_port,
		.data_port = n->data_port,
		.timeout_ms = conf->timeouts.down_ms,
		.tls_ca = conf->tls.ca,
		.tls_cert = conf->tls.cert,
		.tls_key = conf->tls.key,
		/* for tests only (repld_data_refused.sh): a link failure after HELLO */
		.test_refuse_data = getenv("REPL_TEST_REFUSE_DATA") != NULL,
	};
	memcpy(cfg.cluster_uuid, conf->cluster_uuid, 16);
	/*
	 * The start that asked for it makes the log, once: a later start of
	 * the replica (after a refused promotion, a step-down) opens what the
	 * log holds by then.
	 */
	n->bootstrap = n->reinit = false;
	n->replica_ret = 0;
	if ((ret = repl_replica_open(&cfg, &replica)) != 0) {
		n->replica_ret = ret;
		set_role(n, NODE_REPLICA, NULL);
		return 0;
	}
	say_listening(n);
	pthread_mutex_lock(&n->lock);
	n->replica = replica;
	pthread_mutex_unlock(&n->lock);
	/* first: its hold must be set before a primary's first HELLO */
	node_copy_start(n, replica);
	if (pthread_create(&n->replica_thread, NULL, replica_main, n) != 0) {
		log_error("cannot start the replica's thread");
		node_copy_stop(n);
		pthread_mutex_lock(&n->lock);
		n->replica = NULL;
		pthread_mutex_unlock(&n->lock);
		repl_replica_close(&replica);
		return -1;
	}
	n->replica_running = true;
	set_role(n, NODE_REPLICA, NULL);
	return 0;
}

/* stop serving primaries; the log is closed on return */
static int
replica_stop(struct node *n)
{
	struct repl_replica_node *replica;

	if (!n->replica_running)
		return n->replica_ret;	/* an open that failed, or none */
	node_copy_stop(n);
	repl_replica_stop(n->replica);
	pthread_join(n->replica_thread, NULL);
	n->replica_running = false;
	pthread_mutex_lock(&n->lock);
	replica = n->replica;
	(void)repl_replica_info(replica, &n->replica_last);
	n->replica = NULL;
	pthread_mutex_unlock(&n->lock);
	repl_replica_close(&replica);
	set_role(n, NODE_DOWN, NULL);
	return n->replica_ret;
}

/* ---- the primary ---- */

/* how primary_open promotes */
struct open_how {
	bool force;		/* with fewer than n - k + 1 nodes */
	bool reconfigure;	/* the file's membership becomes the next */
	bool bootstrap;		/* the first start of a cluster */
	bool restart;		/* a start from the file, not a promotion asked */
	bool quiet;		/* the caller logs the outcome */
	/* a promotion the coordinator stands behind: it stops once the
	   leader key's lease may have run out (repl_cfg.promote_gate) */
	bool gated;
};

/* the log is another process's: who, for the operator */
static void
refused_locked(const char *path, char *msg, size_t msglen)
{
	char holder[96];

	(void)repl_lock_holder(path, holder, sizeof(holder));
	snprintf(msg, msglen, "refused to start: the log %s is locked by %s: "
		"another repld or librepl program has it open", path, holder);
}

/* the log is another cluster's: what to do, for the operator */
static void
other_cluster(const struct repld_conf *conf, char *msg, size_t msglen)
{
	snprintf(msg, msglen, "refused to start: the log %s belongs to another "
		"cluster (its cluster id is not cluster_uuid %s): give log.path "
		"this node's own log, or cluster_uuid its cluster's; a replica "
		"whose log should be this cluster's is made anew with --reinit "
		"(what it holds is lost)", conf->log.path, conf->cluster_uuid_text);
}

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

/*
 * Open the log as the primary: a promotion over the configured peers.
 * 0, or a REPL_E_* with a sentence in msg.
 */
static int
primary_open(struct node *n, const struct open_how *how, char *msg,
		size_t msglen)
{
	const bool force = how->force, reconfigure = how->reconfigure;
	const struct repld_conf *conf = &n->conf;
	struct primary_cfg pc;
	struct repl *repl = NULL;
	struct repl_status st;
	int ret;

	snprintf(n->ctl_port, sizeof(n->ctl_port), "%u", conf->listen.control_port);
	primary_cfg_fill(&pc, conf, n->provider);
	pc.cfg.force_promotion = force;
	pc.cfg.reconfigure = reconfigure;
	pc.cfg.bootstrap = how->bootstrap;
	pc.cfg.refuse_if_superseded = how->restart;
	if (how->gated && atomic_load(&n->coord) != NULL) {
		pc.cfg.promote_gate = coordinator_promote_gate;
		pc.cfg.promote_gate_arg = atomic_load(&n->coord);
	}
	/* only the first start of a cluster makes a primary's log */
	pc.cfg.create = how->bootstrap;
	if (!how->quiet)
		log_notice("node %u %s log %s, promoting over %s (%d peers, quorum %d%s%s)",
			conf->node_id, pc.cfg.create ? "creating" : "opening",
			conf->log.path, n->provider, conf->n_peers, conf->quorum,
			reconfigure ? ", reconfiguring" : "", force ? ", FORCED" : "");
	if ((ret = repl_open(&pc.cfg, &repl)) != 0) {
		struct stat lst;

		/*
		 * A refused bootstrap changed no other node (it asks before it
		 * fences); the log it made goes too, so that it can be tried
		 * again once the other nodes are up.
		 */
		if (how->bootstrap && ret != REPL_E_LOCKED &&
		    stat(conf->log.path, &lst) == 0 && S_ISREG(lst.st_mode) &&
		    unlink(conf->log.path) == 0)
			log_warning("the log %s made for the bootstrap is removed again",
				conf->log.path);
		if (ret == REPL_E_NOT_MEMBER)
			snprintf(msg, msglen, "refused to start: %s (the daemon's "
				"log says why)", repl_strerror(ret));
		else if (ret == REPL_E_SUPERSEDED)
			snprintf(msg, msglen, "%s (the daemon's log says why)",
				repl_strerror(ret));
		else if (ret == REPL_E_NO_QUORUM && how->bootstrap)
			snprintf(msg, msglen, "refused to start: a bootstrap needs "
				"the answer of every other node of the configuration "
				"(%d peers), each holding nothing, and not all "
				"answered (the daemon's log names them): start the "
				"other nodes first; a node whose disk was replaced "
				"rejoins with --reinit, not --bootstrap", conf->n_peers);
		else if (ret == REPL_E_NO_QUORUM)
			snprintf(msg, msglen, "promotion refused: fewer than n - k + 1 "
				"nodes reachable (%d peers, quorum %d; the unreachable "
				"ones are named in the daemon's log)", conf->n_peers,
				conf->quorum);
		else if (ret == REPL_E_LOCKED)
			refused_locked(conf->log.path, msg, msglen);
		else if (ret == REPL_E_MEMBERSHIP)
			snprintf(msg, msglen, "%sthe log stores another membership "
				"than %d peers with quorum %d: make the configuration "
				"say the stored one, or start with --reconfigure to make "
				"this one the next", how->restart ?
				"refused to start: " : "", conf->n_peers, conf->quorum);
		else if (ret == REPL_E_OTHER_CLUSTER)
			other_cluster(conf, msg, msglen);
		else
			snprintf(msg, msglen, "cannot open the log %s as the primary: %s",
				conf->log.path, repl_strerror(ret));
		if (!how->quiet)
			log_error("%s", msg);
		return ret;
	}
	repl_status(repl, &st);
	log_notice("node %u is the primary of epoch %llu (configuration epoch %llu)",
		conf->node_id, (unsigned long long)st.epoch,
		(unsigned long long)st.config_epoch);
	set_role(n, NODE_PRIMARY, repl);
	return 0;
}

static int
primary_close(struct node *n)
{
	struct repl *repl;
	int ret;

	pthread_mutex_lock(&n->lock);
	repl = n->repl;
	n->repl = NULL;
	n->role = NODE_DOWN;
	pthread_mutex_unlock(&n->lock);
	if (repl == NULL)
		return 0;
	if ((ret = repl_close(&repl)) != 0)
		log_error("closing the log: %s", repl_strerror(ret));
	return ret;
}

/* ---- start, changes, stop ---- */

void
node_init(struct node *n, const char *conf_path, struct repld_conf *conf)
{
	memset(n, 0, sizeof(*n));
	n->conf_path = conf_path;
	n->conf = *conf;
	memset(conf, 0, sizeof(*conf));
	n->exit_code = -1;
	n->closed = true;	/* until node_start */
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	pthread_mutex_init(&n->change, NULL);
	retention_init(&n->retention, n);
	snprintf(n->provider, sizeof(n->provider), "%s", provider_of(&n->conf));
}

/*
 * Where the log must be at a start: a missing log is made only by the
 * first start of a cluster (bootstrap) or a replica made anew (reinit);
 * any other start refuses, naming the path (a replaced disk or an
 * unmounted filesystem must not pass for a new node).  0, or exit 5.
 */
static int
log_expected(struct node *n, const struct node_start_how *how)
{
	const char *path = n->conf.log.path;
	bool missing = access(path, F_OK) != 0 && errno == ENOENT;
	struct stat st;

	/* a device always exists: the engine tells whether it holds a log */
	if (how->bootstrap && !missing && stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode)) {
		log_error("refused to start: --bootstrap starts a new cluster, but the log %s "
			"exists: start without --bootstrap", path);
		return 5;
	}
	if (missing && !how->bootstrap && !how->reinit) {
		log_error("refused to start: the log %s does not exist; it is made only by the "
			"first start of a new cluster (--bootstrap) or for a replica "
			"whose disk was replaced (--reinit: it then copies everything "
			"from the primary). If the disk should hold it, mount it",
			path);
		return 5;
	}
	return 0;
}

int
node_start(struct node *n, const struct node_start_how *how)
{
	struct open_how oh = { .reconfigure = how->reconfigure,
		.bootstrap = how->bootstrap, .restart = true };
	char msg[512];
	int ret;

	if ((ret = log_expected(n, how)) != 0)
		return ret;
	pthread_mutex_lock(&n->change);
	n->bootstrap = how->bootstrap;
	n->reinit = how->reinit;
	if (how->reinit && n->conf.role != REPLD_ROLE_REPLICA)
		log_warning("--reinit: this node starts as a replica (a log made anew "
			"holds nothing to lead with); promote it once caught up");
	if (n->conf.role == REPLD_ROLE_REPLICA || how->reinit || how->as_replica) {
		ret = replica_start(n) ? 1 : 0;
	} else if ((ret = primary_open(n, &oh, msg, sizeof(msg)))) {
		if (ret == REPL_E_SUPERSEDED) {
			/* a restart must not undo a failover: follow the new one */
			log_warning("not the primary: a newer primary took over while this "
				"node was down; serving as a replica (promote it "
				"explicitly to lead again)");
			ret = replica_start(n) ? 1 : 0;
		} else {
			ret = ret == REPL_E_NO_QUORUM && !how->bootstrap ? 4 :
				ret == REPL_E_NO_QUORUM ||
				ret == REPL_E_NOT_MEMBER ||
				ret == REPL_E_LOCKED ||
				ret == REPL_E_MEMBERSHIP ||
				ret == REPL_E_OTHER_CLUSTER ? 5 : 1;
		}
	}
	gate_open(n);
	pthread_mutex_unlock(&n->change);
	return ret;
}

int
node_promote(struct node *n, bool force, bool gated, char *msg, size_t msglen)
{
	int ret;

	pthread_mutex_lock(&n->change);
	if (node_role(n) != NODE_REPLICA) {
		snprintf(msg, msglen, "this node is not a replica: it is %s",
			node_role_name(node_role(n)));
		pthread_mutex_unlock(&n->change);
		return NODE_E_WRONG_ROLE;
	}
	log_notice("promoting this replica%s", force ? " (forced)" : "");
	gate_close(n);
	if ((ret = replica_stop(n)) != 0) {
		snprintf(msg, msglen, "the replica stopped with an error (%d)", ret);
		n->exit_code = 1;
		gate_open(n);
		pthread_mutex_unlock(&n->change);
		return REPL_E_IO;
	}
	if ((ret = primary_open(n, &(struct open_how){ .force = force,
			.gated = gated }, msg, msglen)) != 0) {
		/* it stays what it was: a replica */
		if (replica_start(n) != 0)
			n->exit_code = 1;
	} else {
		snprintf(msg, msglen, "promoted: this node is the primary");
	}
	gate_open(n);
	pthread_mutex_unlock(&n->change);
	return ret;
}

int
node_fence(struct node *n, char *msg, size_t msglen)
{
	int ret;

	pthread_mutex_lock(&n->change);
	if (node_role(n) != NODE_PRIMARY) {
		snprintf(msg, msglen, "this node is not the primary: it is %s",
			node_role_name(node_role(n)));
		pthread_mutex_unlock(&n->change);
		return NODE_E_WRONG_ROLE;
	}
	log_notice("stepping down: draining the appends, then serving as a replica");
	gate_close(n);
	ret = primary_close(n);
	if (replica_start(n) != 0) {
		n->exit_code = 1;
		ret = REPL_E_IO;
	}
	gate_open(n);
	snprintf(msg, msglen, ret ? "stepped down, but closing the log failed: %s" :
		"stepped down: serving as a replica", repl_strerror(ret));
	pthread_mutex_unlock(&n->change);
	return ret;
}

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

static uint64_t
now_ms(void)
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
	uint64_t until = now_ms() + (uint64_t)n->conf.timeouts.promote_wait_ms;
	char need[256], missing[384];

	while (!reach_enough(n, need, sizeof(need), missing, sizeof(missing))) {
		if (now_ms() >= until) {
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
static void
proposal_withdraw(struct node *n, int64_t rev, uint64_t config_epoch)
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

/* ---- the reopen after a change that could reopen nothing ---- */

#define REOPEN_FIRST_MS	2000	/* then doubled at each failure */
#define REOPEN_MAX_MS	10000

/* what may come right once nodes are back; any other failure stays */
static bool
reopen_retryable(int ret)
{
	return ret == REPL_E_NO_QUORUM || ret == REPL_E_TRANSPORT ||
		ret == REPL_E_TIMEDOUT;
}

bool
node_reopen_info(struct node *n, struct node_reopen *out)
{
	bool on;

	pthread_mutex_lock(&n->lock);
	on = n->reopening;
	if (on)
		*out = n->reopen;
	pthread_mutex_unlock(&n->lock);
	return on;
}

static void
reopen_set(struct node *n, bool on, unsigned attempts, const char *why)
{
	pthread_mutex_lock(&n->lock);
	n->reopening = on;
	n->reopen.attempts = attempts;
	snprintf(n->reopen.error, sizeof(n->reopen.error), "%s", why);
	/* appenders waiting at the gate are refused now */
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

/* wait ms unless a stop begins; false: it did */
static bool
reopen_wait(struct node *n, int ms)
{
	struct timespec until;
	bool stopping;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&n->lock);
	while (!n->stopping &&
	       pthread_cond_timedwait(&n->cond, &n->lock, &until) != ETIMEDOUT)
		;
	stopping = n->stopping;
	pthread_mutex_unlock(&n->lock);
	return !stopping;
}

static void *
reopen_main(void *arg)
{
	struct node *n = arg;
	int delay = REOPEN_FIRST_MS;
	char why[512];

	(void)pthread_setname_np(pthread_self(), "repld-reopen");
	while (reopen_wait(n, delay)) {
		struct node_reopen r;
		int ret;

		pthread_mutex_lock(&n->change);
		pthread_mutex_lock(&n->lock);
		ret = n->stopping;
		pthread_mutex_unlock(&n->lock);
		if (ret) {
			pthread_mutex_unlock(&n->change);
			break;
		}
		/*
		 * As a restart: should another node have been promoted while
		 * the log was closed, this one must not undo that failover.
		 */
		ret = primary_open(n, &(struct open_how){ .restart = true,
			.quiet = true }, why, sizeof(why));
		(void)node_reopen_info(n, &r);
		if (ret == 0) {
			log_notice("the log is reopened under the old membership "
				"after %u failed attempts (%llu s closed): serving "
				"again", r.attempts,
				(unsigned long long)(now_ms() - r.since_ms) / 1000);
			proposal_withdraw(n, n->reopen_rev, n->reopen_config_epoch);
		} else if (ret == REPL_E_SUPERSEDED) {
			log_warning("not the primary: a newer primary took over while "
				"this node's log was closed; serving as a replica "
				"(promote it explicitly to lead again)");
			if (replica_start(n) != 0)
				n->exit_code = 1;
		} else if (!reopen_retryable(ret)) {
			log_error("the log stays closed: reopening it under the old "
				"membership failed for good: %s", why);
			n->exit_code = 1;
		} else {
			reopen_set(n, true, r.attempts + 1, why);
			log_warning("the log is closed: reopening the log under the old "
				"membership failed (attempt %u, closed for %llu s): %s; "
				"appends are refused meanwhile; next attempt in %d s",
				r.attempts + 1,
				(unsigned long long)(now_ms() - r.since_ms) / 1000, why,
				(delay * 2 < REOPEN_MAX_MS ? delay * 2 : REOPEN_MAX_MS) /
					1000);
			pthread_mutex_unlock(&n->change);
			delay = delay * 2 < REOPEN_MAX_MS ? delay * 2 : REOPEN_MAX_MS;
			continue;
		}
		if (n->exit_code < 0) {
			reopen_set(n, false, 0, "");
			gate_open(n);
		}
		pthread_mutex_unlock(&n->change);
		break;
	}
	return NULL;
}

/*
 * Reopen the log in the background: the node stays down with its gate
 * closed, refusing appends, until it serves again.  With n->change held.
 * -1 when the thread cannot be started.
 */
static int
reopen_start(struct node *n, const char *why, uint64_t closed_ms, int64_t rev,
		uint64_t config_epoch)
{
	/* a thread before this one has ended: it served again */
	if (n->reopen_joinable) {
		pthread_join(n->reopen_thread, NULL);
		n->reopen_joinable = false;
	}
	n->reopen_rev = rev;
	n->reopen_config_epoch = config_epoch;
	pthread_mutex_lock(&n->lock);
	n->reopen.since_ms = closed_ms;
	pthread_mutex_unlock(&n->lock);
	reopen_set(n, true, 0, why);
	if (pthread_create(&n->reopen_thread, NULL, reopen_main, n) != 0) {
		reopen_set(n, false, 0, "");
		return -1;
	}
	n->reopen_joinable = true;
	return 0;
}

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
	gate_close(n);
	closed_ms = now_ms();
	primary_close(n);
	set_members(n, peers, n_peers, quorum);
	if ((ret = primary_open(n, &(struct open_how){ .reconfigure = true,
			.gated = true }, why, sizeof(why))) == 0) {
		struct repl_status st;

		free_unshared(old, old_n, peers, n_peers);
		repl_status(n->repl, &st);
		gate_open(n);
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
		if (replica_start(n) != 0)
			n->exit_code = 1;
		snprintf(msg + at, msglen - at, "; this primary's hold on the leader "
			"key ran out meanwhile: it serves as a replica now");
		gate_open(n);
		return NODE_E_NOT_LEADER;
	}
	if ((reopen = primary_open(n, &(struct open_how){ .gated = true }, why,
			sizeof(why))) != 0) {
		size_t at = strlen(msg);

		log_error("the old membership could not be reopened either: %s", why);
		/*
		 * A node the check saw went away: not the operator's doing, and
		 * not for ever.  The node stays up and tries again.
		 */
		if (reopen_retryable(reopen) &&
		    reopen_start(n, why, closed_ms, rev, stored.config_epoch) == 0) {
			snprintf(msg + at, msglen - at, "; nor could the old one be "
				"reopened, so the log is closed: appends are refused "
				"(REOPENING) while the primary retries reopening it under "
				"the old membership, until enough of its nodes answer");
			log_warning("the log is closed: retrying to reopen it under the "
				"old membership (every %d..%d s)", REOPEN_FIRST_MS / 1000,
				REOPEN_MAX_MS / 1000);
			return ret;
		}
		n->exit_code = ret == REPL_E_NO_QUORUM ? 4 : 1;
	} else {
		/* back under the old configuration epoch */
		proposal_withdraw(n, rev, stored.config_epoch);
	}
	gate_open(n);
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
	same = fresh.n_peers == n->conf.n_peers && fresh.quorum == n->conf.quorum;
	for (int i = 0; same && i < fresh.n_peers; i++)
		same = peer_index(&n->conf, fresh.peers[i].address,
			fresh.peers[i].control_port) >= 0;
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

int
node_tick(struct node *n)
{
	struct repl_status st;
	int code = -1;

	/* a change under way (a reopen's attempt may take promote_wait_ms):
	 * the next tick looks; the daemon's loop keeps its signals and pings */
	if (pthread_mutex_trylock(&n->change) != 0)
		return -1;
	if (n->exit_code >= 0) {
		code = n->exit_code;
	} else if (node_role(n) == NODE_PRIMARY) {
		/* the handle stays valid: changes hold n->change */
		if (repl_status(n->repl, &st) == 0 && st.fenced) {
			log_error("fenced: a newer primary took over (this one was of epoch "
				"%llu, its last LSN %llu)",
				(unsigned long long)st.epoch,
				(unsigned long long)st.last_lsn);
			pthread_mutex_lock(&n->lock);
			n->fenced = true;	/* what later appenders are told */
			pthread_cond_broadcast(&n->cond);
			pthread_mutex_unlock(&n->lock);
			gate_close(n);
			primary_close(n);
			if (n->conf.coordinator.n_endpoints > 0) {
				/*
				 * Automatic failover: it follows the new primary,
				 * whose catch-up cuts any tail it did not
				 * acknowledge; exiting would need a person.
				 */
				log_notice("serving as a replica of the newer primary");
				pthread_mutex_lock(&n->lock);
				n->fenced = false;	/* a replica: WRONG_ROLE */
				pthread_mutex_unlock(&n->lock);
				if (replica_start(n) != 0)
					n->exit_code = code = 1;
				gate_open(n);
			} else {
				n->exit_code = code = 3;
			}
		}
	} else if (node_role(n) == NODE_REPLICA && n->replica_ret == REPL_E_LOCKED) {
		char msg[512];

		refused_locked(n->conf.log.path, msg, sizeof(msg));
		log_error("%s", msg);
		n->exit_code = code = 5;
	} else if (node_role(n) == NODE_REPLICA &&
		   n->replica_ret == REPL_E_BLANK) {
		log_error("refused to start: the log %s is blank (it holds no log); it is "
			"made only by the first start of a new cluster (--bootstrap) "
			"or for a replica whose disk was replaced (--reinit: it then "
			"copies everything from the primary)", n->conf.log.path);
		n->exit_code = code = 5;
	} else if (node_role(n) == NODE_REPLICA &&
		   n->replica_ret == REPL_E_NO_PEERS) {
		log_error("refused to start: the log %s is made anew (--reinit), or was and "
			"has not taken its promise floor yet: it takes the floor from "
			"other nodes of its configuration before it serves a "
			"primary, and the file lists no peers", n->conf.log.path);
		n->exit_code = code = 5;
	} else if (node_role(n) == NODE_REPLICA &&
		   n->replica_ret == REPL_E_OTHER_CLUSTER) {
		char msg[512];

		other_cluster(&n->conf, msg, sizeof(msg));
		log_error("%s", msg);
		n->exit_code = code = 5;
	} else if (node_role(n) == NODE_REPLICA && n->replica_ret != 0) {
		log_error("the replica stopped: its log or endpoints could not be set up "
			"(log %s, %s ports %s/%s)", n->conf.log.path,
			n->conf.listen.address, n->ctl_port, n->data_port);
		n->exit_code = code = 1;
	}
	pthread_mutex_unlock(&n->change);
	return code;
}

int
node_stop(struct node *n)
{
	int ret = 0;

	pthread_mutex_lock(&n->change);
	pthread_mutex_lock(&n->lock);
	n->stopping = true;
	pthread_cond_broadcast(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (n->reopen_joinable) {
		/* it ends at once, or after its attempt (which needs the lock) */
		pthread_mutex_unlock(&n->change);
		pthread_join(n->reopen_thread, NULL);
		pthread_mutex_lock(&n->change);
		n->reopen_joinable = false;
	}
	gate_close(n);
	if (node_role(n) == NODE_PRIMARY) {
		log_notice("stopping: draining the replicas");
		ret = primary_close(n) ? 1 : 0;
	} else if (n->replica_running) {
		ret = replica_stop(n) ? 1 : 0;
	}
	pthread_mutex_unlock(&n->change);
	log_notice("node %u stopped", n->conf.node_id);
	return n->exit_code >= 0 ? n->exit_code : ret;
}

void
node_free(struct node *n)
{
	coordinator_free(atomic_load(&n->coord));
	retention_fini(&n->retention);
	repld_conf_free(&n->conf);
	pthread_mutex_destroy(&n->change);
	pthread_cond_destroy(&n->cond);
	pthread_mutex_destroy(&n->lock);
}
