/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_role.c -- the node's roles and the changes between them: the
 * replica's start and stop, the primary's open and close, and the two
 * changes asked for (node_promote, node_fence).  What opening a log as one
 * role or the other takes, and how a refusal reads, is this file's; the
 * gate around it is node.c's.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archiver.h"
#include "coordinator.h"
#include "log.h"
#include "node_internal.h"
#include "primary_cfg.h"

/* the log as the role this state says is open, or none (repl: the primary's) */
static void
become(struct node *n, enum node_state to, struct repl *repl)
{
	pthread_mutex_lock(&n->lock);
	n->repl = repl;
	node_set_state(n, to);
	pthread_mutex_unlock(&n->lock);
}

/* the state once the log closed, from the one that closes it; lock held */
static enum node_state
log_closed(enum node_state s)
{
	return s == NODE_ST_FENCED ? NODE_ST_DEPOSED :
		s == NODE_ST_STOPPING ? NODE_ST_STOPPED : NODE_ST_SWITCHING;
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
int
node_replica_start(struct node *n)
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
		become(n, NODE_ST_REPLICA, NULL);
		return 0;
	}
	say_listening(n);
	pthread_mutex_lock(&n->lock);
	n->replica = replica;
	pthread_mutex_unlock(&n->lock);
	/* first: its hold must be set before a primary's first HELLO */
	node_copy_start(n, replica);
	archiver_attach_replica(atomic_load(&n->archiver), replica);
	if (pthread_create(&n->replica_thread, NULL, replica_main, n) != 0) {
		log_error("cannot start the replica's thread");
		archiver_detach(atomic_load(&n->archiver));
		node_copy_stop(n);
		pthread_mutex_lock(&n->lock);
		n->replica = NULL;
		pthread_mutex_unlock(&n->lock);
		repl_replica_close(&replica);
		return -1;
	}
	n->replica_running = true;
	become(n, NODE_ST_REPLICA, NULL);
	return 0;
}

/* stop serving primaries; the log is closed on return */
int
node_replica_stop(struct node *n)
{
	struct repl_replica_node *replica;

	if (!n->replica_running)
		return n->replica_ret;	/* an open that failed, or none */
	archiver_detach(atomic_load(&n->archiver));
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
	pthread_mutex_lock(&n->lock);
	n->repl = NULL;
	node_set_state(n, log_closed(n->state));
	pthread_mutex_unlock(&n->lock);
	return n->replica_ret;
}

/* ---- the primary ---- */

/* the log is another process's: who, for the operator */
void
node_refused_locked(const char *path, char *msg, size_t msglen)
{
	char holder[96];

	(void)repl_lock_holder(path, holder, sizeof(holder));
	snprintf(msg, msglen, "refused to start: the log %s is locked by %s: "
		"another repld or librepl program has it open", path, holder);
}

/* the log is another cluster's: what to do, for the operator */
void
node_other_cluster(const struct repld_conf *conf, char *msg, size_t msglen)
{
	snprintf(msg, msglen, "refused to start: the log %s belongs to another "
		"cluster (its cluster id is not cluster_uuid %s): give log.path "
		"this node's own log, or cluster_uuid its cluster's; a replica "
		"whose log should be this cluster's is made anew with --reinit "
		"(what it holds is lost)", conf->log.path, conf->cluster_uuid_text);
}

/*
 * Open the log as the primary: a promotion over the configured peers.
 * 0, or a REPL_E_* with a sentence in msg.
 */
int
node_primary_open(struct node *n, const struct open_how *how, char *msg,
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
		/*
		 * A refused bootstrap changed no other node (it asks before it
		 * fences), and the engine removed the log it made: it can be
		 * tried again once the other nodes are up.
		 */
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
			node_refused_locked(conf->log.path, msg, msglen);
		else if (ret == REPL_E_MEMBERSHIP)
			snprintf(msg, msglen, "%sthe log stores another membership "
				"than %d peers with quorum %d: make the configuration "
				"say the stored one, or start with --reconfigure to make "
				"this one the next", how->restart ?
				"refused to start: " : "", conf->n_peers, conf->quorum);
		else if (ret == REPL_E_OTHER_CLUSTER)
			node_other_cluster(conf, msg, msglen);
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
	become(n, NODE_ST_PRIMARY, repl);
	return 0;
}

int
node_primary_close(struct node *n)
{
	struct repl *repl;
	int ret;

	pthread_mutex_lock(&n->lock);
	repl = n->repl;
	n->repl = NULL;
	node_set_state(n, log_closed(n->state));
	pthread_mutex_unlock(&n->lock);
	if (repl == NULL)
		return 0;
	if ((ret = repl_close(&repl)) != 0)
		log_error("closing the log: %s", repl_strerror(ret));
	return ret;
}

/* ---- the changes asked for ---- */
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
	node_gate_close(n, NODE_ST_PROMOTING);
	if ((ret = node_replica_stop(n)) != 0) {
		snprintf(msg, msglen, "the replica stopped with an error (%d)", ret);
		n->exit_code = REPLD_EXIT_FAILED;
		node_gate_open(n);
		pthread_mutex_unlock(&n->change);
		return REPL_E_IO;
	}
	if ((ret = node_primary_open(n, &(struct open_how){ .force = force,
			.gated = gated }, msg, msglen)) != 0) {
		/* it stays what it was: a replica */
		if (node_replica_start(n) != 0)
			n->exit_code = REPLD_EXIT_FAILED;
	} else {
		snprintf(msg, msglen, "promoted: this node is the primary");
	}
	node_gate_open(n);
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
	node_gate_close(n, NODE_ST_STEPPING_DOWN);
	ret = node_primary_close(n);
	if (node_replica_start(n) != 0) {
		n->exit_code = REPLD_EXIT_FAILED;
		ret = REPL_E_IO;
	}
	node_gate_open(n);
	snprintf(msg, msglen, ret ? "stepped down, but closing the log failed: %s" :
		"stepped down: serving as a replica", repl_strerror(ret));
	pthread_mutex_unlock(&n->change);
	return ret;
}
