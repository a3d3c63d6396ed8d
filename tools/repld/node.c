/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node.c -- a repld node's lifecycle (init, start, tick, stop, free).
 * Its gate and state are node_gate.c; the changes node_role.c,
 * node_membership.c and node_reopen.c.  See node.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
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

_Static_assert(REPL_BUSY_POLL_AUTO == -1 && REPL_BUSY_POLL_MAX == 1000000,
	"repld_conf.c reads busy_poll_us with repl.h's values");

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

_Static_assert(NODE_ST_STARTING == 0, "node_init's memset starts the node");

void
node_init(struct node *n, const char *conf_path, struct repld_conf *conf)
{
	memset(n, 0, sizeof(*n));
	n->conf_path = conf_path;
	n->conf = *conf;
	memset(conf, 0, sizeof(*conf));
	n->exit_code = -1;
	/* memset: NODE_ST_STARTING, the gate closed until node_start */
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
 * unmounted filesystem must not pass for a new node).  0, or
 * REPLD_EXIT_REFUSED.
 */
/*
 * A log written by a restore (repl_restore_open) that no bootstrap took
 * yet: it holds no membership and is marked restored (read offline).
 */
static bool
restored_log(const char *path)
{
	struct repl_reader *rd;
	struct repl_log_header h;
	bool yes;

	if (repl_reader_open(path, &rd, NULL, 0) != 0)
		return false;
	yes = repl_reader_header(rd, &h) == 0 && h.restored &&
		h.membership.config_epoch == 0;
	repl_reader_close(&rd);
	return yes;
}

static int
log_expected(struct node *n, const struct node_start_how *how)
{
	const char *path = n->conf.log.path;
	bool missing = access(path, F_OK) != 0 && errno == ENOENT;
	struct stat st;

	/* a device always exists: the engine tells whether it holds a log */
	if (how->bootstrap && !missing && stat(path, &st) == 0 &&
	    S_ISREG(st.st_mode)) {
		bool restored = restored_log(path);

		/* a restored log starts the new cluster, on its primary */
		if (restored && n->conf.role == REPLD_ROLE_PRIMARY &&
		    !how->as_replica) {
			log_notice("--bootstrap: the log %s is a restored log: the new "
				"cluster starts from its records", path);
			return 0;
		}
		log_error("refused to start: --bootstrap starts a new cluster, but the log %s "
			"exists: start without --bootstrap%s", path, restored ?
			" (a restored log bootstraps only a node whose role is "
			"\"primary\")" : "");
		return REPLD_EXIT_REFUSED;
	}
	if (missing && !how->bootstrap && !how->reinit) {
		log_error("refused to start: the log %s does not exist; it is made only by the "
			"first start of a new cluster (--bootstrap) or for a replica "
			"whose disk was replaced (--reinit: it then copies everything "
			"from the primary). If the disk should hold it, mount it",
			path);
		return REPLD_EXIT_REFUSED;
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
		ret = node_replica_start(n) ? REPLD_EXIT_FAILED : 0;
	} else if ((ret = node_primary_open(n, &oh, msg, sizeof(msg)))) {
		if (ret == REPL_E_SUPERSEDED) {
			/* a restart must not undo a failover: follow the new one */
			log_warning("not the primary: a newer primary took over while this "
				"node was down; serving as a replica (promote it "
				"explicitly to lead again)");
			ret = node_replica_start(n) ? REPLD_EXIT_FAILED : 0;
		} else {
			ret = ret == REPL_E_NO_QUORUM && !how->bootstrap ?
				REPLD_EXIT_NO_QUORUM :
				ret == REPL_E_NO_QUORUM ||
				ret == REPL_E_NOT_MEMBER ||
				ret == REPL_E_LOCKED ||
				ret == REPL_E_MEMBERSHIP ||
				ret == REPL_E_OTHER_CLUSTER ?
				REPLD_EXIT_REFUSED : REPLD_EXIT_FAILED;
		}
	}
	node_gate_open(n);
	pthread_mutex_unlock(&n->change);
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
			/* what later appenders are told */
			node_gate_close(n, NODE_ST_FENCED);
			node_primary_close(n);	/* DEPOSED */
			if (n->conf.coordinator.n_endpoints > 0) {
				/*
				 * Automatic failover: it follows the new primary,
				 * whose catch-up cuts any tail it did not
				 * acknowledge; exiting would need a person.
				 */
				log_notice("serving as a replica of the newer primary");
				pthread_mutex_lock(&n->lock);
				/* appenders wait for the replica: WRONG_ROLE */
				node_set_state(n, NODE_ST_SWITCHING);
				pthread_mutex_unlock(&n->lock);
				if (node_replica_start(n) != 0)
					n->exit_code = code = REPLD_EXIT_FAILED;
				node_gate_open(n);
			} else {
				n->exit_code = code = REPLD_EXIT_FENCED;
			}
		}
	} else if (node_role(n) == NODE_REPLICA && n->replica_ret == REPL_E_LOCKED) {
		char msg[512];

		node_refused_locked(n->conf.log.path, msg, sizeof(msg));
		log_error("%s", msg);
		n->exit_code = code = REPLD_EXIT_REFUSED;
	} else if (node_role(n) == NODE_REPLICA &&
		   n->replica_ret == REPL_E_BLANK) {
		log_error("refused to start: the log %s is blank (it holds no log); it is "
			"made only by the first start of a new cluster (--bootstrap) "
			"or for a replica whose disk was replaced (--reinit: it then "
			"copies everything from the primary)", n->conf.log.path);
		n->exit_code = code = REPLD_EXIT_REFUSED;
	} else if (node_role(n) == NODE_REPLICA &&
		   n->replica_ret == REPL_E_NO_PEERS) {
		log_error("refused to start: the log %s is made anew (--reinit), or was and "
			"has not taken its promise floor yet: it takes the floor from "
			"other nodes of its configuration before it serves a "
			"primary, and the file lists no peers", n->conf.log.path);
		n->exit_code = code = REPLD_EXIT_REFUSED;
	} else if (node_role(n) == NODE_REPLICA &&
		   n->replica_ret == REPL_E_OTHER_CLUSTER) {
		char msg[512];

		node_other_cluster(&n->conf, msg, sizeof(msg));
		log_error("%s", msg);
		n->exit_code = code = REPLD_EXIT_REFUSED;
	} else if (node_role(n) == NODE_REPLICA && n->replica_ret != 0) {
		log_error("the replica stopped: its log or endpoints could not be set up "
			"(log %s, %s ports %s/%s)", n->conf.log.path,
			n->conf.listen.address, n->ctl_port, n->data_port);
		n->exit_code = code = REPLD_EXIT_FAILED;
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
	node_set_state(n, NODE_ST_STOPPING);
	pthread_mutex_unlock(&n->lock);
	if (n->reopen_joinable) {
		/* it ends at once, or after its attempt (which needs the lock) */
		pthread_mutex_unlock(&n->change);
		pthread_join(n->reopen_thread, NULL);
		pthread_mutex_lock(&n->change);
		n->reopen_joinable = false;
	}
	node_gate_close(n, NODE_ST_STOPPING);
	if (node_role(n) == NODE_PRIMARY) {
		log_notice("stopping: draining the replicas");
		ret = node_primary_close(n) ? REPLD_EXIT_FAILED : 0;
	} else if (n->replica_running) {
		ret = node_replica_stop(n) ? REPLD_EXIT_FAILED : 0;
	}
	/* (already, when a log closed) */
	pthread_mutex_lock(&n->lock);
	node_set_state(n, NODE_ST_STOPPED);
	pthread_mutex_unlock(&n->lock);
	pthread_mutex_unlock(&n->change);
	log_notice("node %u stopped", n->conf.node_id);
	return n->exit_code >= 0 ? n->exit_code : ret;
}

void
node_free(struct node *n)
{
	coordinator_free(atomic_load(&n->coord));
	{
		struct archiver *a = atomic_load(&n->archiver);

		atomic_store(&n->archiver, NULL);
		archiver_free(&a);
	}
	retention_fini(&n->retention);
	repld_conf_free(&n->conf);
	pthread_mutex_destroy(&n->change);
	pthread_cond_destroy(&n->cond);
	pthread_mutex_destroy(&n->lock);
}
