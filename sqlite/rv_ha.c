/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_ha.c -- a replicated database's node inside the application, with
 * automatic failover (rv_ha.h): its roles and the changes between them.
 * The operations its coordinator drives it with are rv_ha_ops.c's.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "deadline.h"
#include "coordinator.h"
#include "primary_cfg.h"
#include "repl.h"
#include "repld_conf.h"
#include "rv_copy.h"
#include "rv_ha.h"
#include "rv_ha_internal.h"


/*
 * The process's nodes.  The list holds a reference of its own: a node
 * runs from its database's first open until the process exits, whatever
 * its connections do (an application closes them all to reopen after a
 * change of role, and the node must not resign meanwhile).  At exit each
 * node's coordinator stops first, giving the leader key back at once.
 */
static pthread_mutex_t has_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rv_ha *has;
static pthread_once_t at_exit_once = PTHREAD_ONCE_INIT;

const char *
rv_ha_role_name(enum rv_ha_role r)
{
	switch (r) {
	case RV_HA_REPLICA:
		return "replica";
	case RV_HA_PROMOTING:
		return "promoting";
	case RV_HA_PRIMARY:
		return "primary";
	case RV_HA_STEPPING_DOWN:
		return "stepping down";
	}
	return "?";
}

/* the role now, and a new generation: the connections of the last go stale */
void
rv_ha_become(struct rv_ha *h, enum rv_ha_role to)
{
	pthread_mutex_lock(&h->lock);
	h->role = to;
	atomic_fetch_add(&h->gen, 1);
	pthread_cond_broadcast(&h->settled);
	pthread_mutex_unlock(&h->lock);
}

/* ---- the replica ---- */

static void *
replica_main(void *arg)
{
	struct repl_replica_node *node = arg;

	(void)repl_replica_run(node);
	return NULL;
}

/*
 * The log served as a replica, and the copy applied to the database file.
 * A log that does not open leaves the node a replica without one: its
 * coordinator sees a node of no role and never promotes it.
 */
void
rv_ha_replica_start(struct rv_ha *h)
{
	const struct repld_conf *conf = &h->conf;
	struct repl_replica_node *node = NULL;
	struct rv_copy *copy = NULL;
	struct repl_replica_cfg cfg;
	char why[512];
	int ret;

	for (int i = 0; i < conf->n_peers; i++) {
		snprintf(h->floor_hosts[i], sizeof(h->floor_hosts[i]), "%s",
			conf->peers[i].address);
		snprintf(h->floor_ports[i], sizeof(h->floor_ports[i]), "%u",
			conf->peers[i].control_port);
		h->floor_peers[i] = (struct repl_replica){ h->floor_hosts[i],
			h->floor_ports[i] };
	}
	cfg = (struct repl_replica_cfg){
		.path = conf->log.path,
		.backend = primary_cfg_backend(conf->log.backend),
		.size = conf->log.size,
		.create = h->create_log,
		.peers = h->floor_peers,
		.n_peers = conf->n_peers,
		.quorum = conf->quorum,
		.node_id = conf->node_id,
		.provider = h->provider,
		.addr = conf->listen.address,
		.ctl_port = h->ctl_port,
		.data_port = h->data_port,
		.timeout_ms = conf->timeouts.down_ms,
		.tls_ca = conf->tls.ca,
		.tls_cert = conf->tls.cert,
		.tls_key = conf->tls.key,
	};
	memcpy(cfg.cluster_uuid, conf->cluster_uuid, 16);
	h->create_log = false;
	if ((ret = repl_replica_open(&cfg, &node)) != 0) {
		sqlite3_log(SQLITE_CANTOPEN, "replvfs: %s: the log %s did not open as a "
			"replica: %s; this node serves no primary and takes no part in "
			"failover until the database is opened again", h->path,
			conf->log.path, repl_strerror(ret));
		return;
	}
	/* first: its hold must be set before a primary's first HELLO */
	if (rv_copy_start(node, h->path, conf->cluster_uuid, &copy, why,
			sizeof(why)) != 0)
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: its copy did not start: %s; "
			"readers see the file as it is", h->path, why);
	pthread_mutex_lock(&h->lock);
	h->replica = node;
	h->copy = copy;
	if (pthread_create(&h->replica_thread, NULL, replica_main, node) != 0) {
		h->replica = NULL;
		h->copy = NULL;
		pthread_mutex_unlock(&h->lock);
		rv_copy_stop(&copy);
		repl_replica_close(&node);
		sqlite3_log(SQLITE_CANTOPEN, "replvfs: %s: cannot start the replica's "
			"thread", h->path);
		return;
	}
	pthread_mutex_unlock(&h->lock);
	sqlite3_log(SQLITE_NOTICE, "replvfs: %s: node %u is a replica, listening "
		"on %s, control port %u", h->path, conf->node_id, conf->listen.address,
		conf->listen.control_port);
}

/* the replica stops serving; its log is closed on return */
void
rv_ha_replica_stop(struct rv_ha *h)
{
	struct repl_replica_node *node;
	struct rv_copy *copy;

	pthread_mutex_lock(&h->lock);
	node = h->replica;
	copy = h->copy;
	h->copy = NULL;
	pthread_mutex_unlock(&h->lock);
	rv_copy_stop(&copy);
	if (node == NULL)
		return;
	repl_replica_stop(node);
	pthread_join(h->replica_thread, NULL);
	pthread_mutex_lock(&h->lock);
	(void)repl_replica_info(node, &h->replica_last);
	h->replica = NULL;
	pthread_mutex_unlock(&h->lock);
	repl_replica_close(&node);
}

/* ---- the primary ---- */

/*
 * The log opened as the primary, the database file rebuilt from it (the
 * node's copy its base): the file loaded anew, over etcd's membership when
 * the coordinator handed one.  0, or a REPL_E_* with msg.
 */
int
rv_ha_primary_open(struct rv_ha *h, bool bootstrap, char *msg, size_t msglen)
{
	struct rv_db_how how = h->how;
	struct repld_conf conf;
	struct rv_db *d;
	char err[512];

	if (repld_conf_load(h->conf_path, &conf, err, sizeof(err)) != 0) {
		snprintf(msg, msglen, "%s: %s", h->conf_path, err);
		return REPL_E_INVAL;
	}
	pthread_mutex_lock(&h->lock);
	if (h->take) {
		for (int i = 0; i < conf.n_peers; i++)
			free(conf.peers[i].address);
		for (int i = 0; i < h->take_n; i++)
			conf.peers[i] = (struct repld_peer){
				strdup(h->take_peers[i].address),
				h->take_peers[i].control_port };
		conf.n_peers = h->take_n;
		conf.quorum = h->take_quorum;
	}
	pthread_mutex_unlock(&h->lock);
	/* the file the application opens is the node's copy: the base */
	free(conf.sqlite_copy);
	conf.sqlite_copy = strdup(h->path);
	how.bootstrap = bootstrap;
	if (!bootstrap) {
		how.promote_gate = coordinator_promote_gate;
		how.promote_gate_arg = atomic_load(&h->coord);
	}
	if ((d = rv_db_open(h->path, &conf, &how, h->conf_path, msg, msglen)) == NULL)
		return REPL_E_INVAL;	/* msg says why */
	pthread_mutex_lock(&h->lock);
	h->db = d;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

void
rv_ha_primary_close(struct rv_ha *h)
{
	struct rv_db *d;

	pthread_mutex_lock(&h->lock);
	d = h->db;
	pthread_mutex_unlock(&h->lock);
	if (d == NULL)
		return;
	rv_db_retire(d);
	pthread_mutex_lock(&h->lock);
	h->db = NULL;
	pthread_mutex_unlock(&h->lock);
	rv_db_put(d);
}

/* ---- the node ---- */

static void
node_free(struct rv_ha *h)
{
	for (int i = 0; i < h->take_n; i++)
		free(h->take_peers[i].address);
	repld_conf_free(&h->conf);
	pthread_cond_destroy(&h->settled);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->change);
	free(h->conf_path);
	free(h->path);
	free(h);
}

static void
stop_all(void)
{
	struct rv_ha *h, *next;

	pthread_mutex_lock(&has_lock);
	h = has;
	has = NULL;
	pthread_mutex_unlock(&has_lock);
	for (; h != NULL; h = next) {
		next = h->next;
		coordinator_stop(atomic_load(&h->coord));
		rv_ha_put(h);	/* the list's: the last one stops the node */
	}
}

static void
at_exit_register(void)
{
	/* the extension stays loaded until exit (SQLITE_OK_LOAD_PERMANENTLY) */
	if (atexit(stop_all) != 0)
		sqlite3_log(SQLITE_WARNING, "replvfs: no exit handler: a node's "
			"leader key lasts its lease after the process exits");
}

struct rv_ha *
rv_ha_find(const char *db_path)
{
	struct rv_ha *h;

	pthread_mutex_lock(&has_lock);
	for (h = has; h != NULL && strcmp(h->path, db_path) != 0; h = h->next)
		;
	if (h != NULL)
		h->refs++;
	pthread_mutex_unlock(&has_lock);
	return h;
}

struct rv_ha *
rv_ha_get(const char *db_path, const char *conf_path, struct repld_conf *conf,
		const struct rv_db_how *how, char *why, size_t whylen)
{
	struct rv_ha *h;
	bool no_rdma;

	pthread_mutex_lock(&has_lock);
	for (h = has; h != NULL && strcmp(h->path, db_path) != 0; h = h->next)
		;
	if (h != NULL) {
		h->refs++;
		pthread_mutex_unlock(&has_lock);
		repld_conf_free(conf);
		return h;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL || (h->path = strdup(db_path)) == NULL ||
	    (h->conf_path = strdup(conf_path)) == NULL) {
		if (h != NULL)
			free(h->path);
		free(h);
		pthread_mutex_unlock(&has_lock);
		repld_conf_free(conf);
		snprintf(why, whylen, "replvfs: out of memory");
		return NULL;
	}
	h->conf = *conf;
	h->how = *how;
	pthread_mutex_init(&h->change, NULL);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->settled, NULL);
	h->refs = 2;		/* the caller's and the list's */
	h->provider = primary_cfg_provider(&h->conf, &no_rdma);
	repld_host_port(h->ctl_addr, sizeof(h->ctl_addr), h->conf.listen.address,
		h->conf.listen.control_port);
	snprintf(h->ctl_port, sizeof(h->ctl_port), "%u", h->conf.listen.control_port);
	snprintf(h->data_port, sizeof(h->data_port), "%u", h->conf.listen.data_port);
	if (h->conf.sqlite_copy != NULL && strcmp(h->conf.sqlite_copy, db_path) != 0)
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: sqlite_copy (%s) is not used "
			"with a coordinator: the node's copy is the database file the "
			"application opens", db_path, h->conf.sqlite_copy);
	/*
	 * The cluster's first start: the node whose file says primary makes
	 * it; the others make their logs and wait for it.  Any later start is
	 * a replica's: the coordinator promotes the node if it should lead.
	 */
	if (how->bootstrap && h->conf.role == REPLD_ROLE_PRIMARY) {
		if (rv_ha_primary_open(h, true, why, whylen) != 0) {
			node_free(h);
			pthread_mutex_unlock(&has_lock);
			return NULL;
		}
		h->role = RV_HA_PRIMARY;
	} else {
		h->create_log = how->bootstrap;
		rv_ha_replica_start(h);
		h->role = RV_HA_REPLICA;
	}
	if (rv_ha_coord_start(h, why, whylen) != 0) {
		rv_ha_primary_close(h);
		rv_ha_replica_stop(h);
		node_free(h);
		pthread_mutex_unlock(&has_lock);
		return NULL;
	}
	h->next = has;
	has = h;
	pthread_mutex_unlock(&has_lock);
	(void)pthread_once(&at_exit_once, at_exit_register);
	return h;
}

void
rv_ha_put(struct rv_ha *h)
{
	struct rv_ha **p;

	if (h == NULL)
		return;
	pthread_mutex_lock(&has_lock);
	if (--h->refs > 0) {
		pthread_mutex_unlock(&has_lock);
		return;
	}
	for (p = &has; *p != NULL && *p != h; p = &(*p)->next)
		;
	if (*p == h)
		*p = h->next;
	pthread_mutex_unlock(&has_lock);
	/* first: the leader key given back, and no change runs after it */
	coordinator_stop(atomic_load(&h->coord));
	coordinator_free(atomic_exchange(&h->coord, NULL));
	rv_ha_primary_close(h);
	rv_ha_replica_stop(h);
	node_free(h);
}

uint64_t
rv_ha_gen(struct rv_ha *h)
{
	return atomic_load_explicit(&h->gen, memory_order_acquire);
}

int
rv_ha_attach(struct rv_ha *h, int wait_ms, uint64_t *gen, struct rv_db **db,
		char *why, size_t whylen)
{
	struct timespec until;
	int role, rc = 0;

	until = deadline_after_ms(CLOCK_REALTIME, wait_ms);
	pthread_mutex_lock(&h->lock);
	while ((h->role == RV_HA_PROMOTING || h->role == RV_HA_STEPPING_DOWN) &&
	       rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&h->settled, &h->lock, &until);
	role = (int)h->role;
	*gen = atomic_load(&h->gen);
	*db = NULL;
	if (h->role == RV_HA_PRIMARY && h->db != NULL)
		*db = rv_db_find(h->path);
	pthread_mutex_unlock(&h->lock);
	/*
	 * A commit in doubt (fenced, timed out): the -wal holds its frames,
	 * which a new connection's recovery would read.  No connection opens
	 * on it; the node steps down, and the log decides (the next
	 * promotion rebuilds the file from it).
	 */
	if (*db != NULL && rv_db_in_doubt(*db)) {
		char msg[256];

		rv_db_put(*db);
		*db = NULL;
		if (rv_ha_step_down(h, msg, sizeof(msg)) != 0)
			sqlite3_log(SQLITE_WARNING, "replvfs: %s: %s", h->path, msg);
		snprintf(why, whylen, "replvfs: %s: a commit's outcome is unknown on "
			"this primary: the node stepped down; open the database "
			"again", h->path);
		return -1;
	}
	if (role == RV_HA_PROMOTING || role == RV_HA_STEPPING_DOWN) {
		snprintf(why, whylen, "replvfs: %s: the node is still %s after %d ms",
			h->path, rv_ha_role_name((enum rv_ha_role)role), wait_ms);
		return -1;
	}
	if (role == RV_HA_PRIMARY && *db == NULL) {
		snprintf(why, whylen, "replvfs: %s: the primary's database is gone",
			h->path);
		return -1;
	}
	return role;
}

void
rv_ha_view(struct rv_ha *h, struct rv_ha_view *v)
{
	struct repl_replica_info info;
	struct rv_copy_status cs;

	memset(v, 0, sizeof(*v));
	v->node_id = h->conf.node_id;
	pthread_mutex_lock(&h->lock);
	v->role = h->role;
	if (h->role == RV_HA_PRIMARY) {
		v->has_primary = true;
		v->primary_id = h->conf.node_id;
		snprintf(v->primary_addr, sizeof(v->primary_addr), "%s", h->ctl_addr);
		v->lsn = h->db != NULL ? rv_db_durable_lsn(h->db) : 0;
	} else if (h->replica != NULL && repl_replica_info(h->replica, &info) == 0 &&
		   info.following && info.primary_id != 0 && info.config_epoch != 0) {
		/* (a log with no membership yet knows no control address) */
		v->has_primary = true;
		v->primary_id = info.primary_id;
		snprintf(v->primary_addr, sizeof(v->primary_addr), "%s",
			info.primary_addr);
	}
	if (h->role == RV_HA_REPLICA && h->copy != NULL) {
		rv_copy_get(h->copy, &cs);
		v->lsn = cs.applied_lsn;
	}
	pthread_mutex_unlock(&h->lock);
	if (!v->has_primary && atomic_load(&h->coord) != NULL) {
		struct coord_view cv;

		/* between primaries: the one etcd names, if it says where */
		coordinator_view(atomic_load(&h->coord), &cv);
		if (cv.has_leader && cv.leader_addr[0] != '\0' &&
		    cv.leader_id != h->conf.node_id) {
			v->has_primary = true;
			v->primary_id = cv.leader_id;
			snprintf(v->primary_addr, sizeof(v->primary_addr), "%s",
				cv.leader_addr);
		}
	}
}

void
rv_ha_say_read_only(struct rv_ha *h)
{
	struct rv_ha_view v;

	rv_ha_view(h, &v);
	if (v.has_primary)
		sqlite3_log(SQLITE_READONLY, "replvfs: %s: node %u is a replica (%s): "
			"write to the primary, node %u at %s", h->path, v.node_id,
			rv_ha_role_name(v.role), v.primary_id, v.primary_addr);
	else
		sqlite3_log(SQLITE_READONLY, "replvfs: %s: node %u is a replica (%s) "
			"and knows no primary now: write once one is elected", h->path,
			v.node_id, rv_ha_role_name(v.role));
}

int
rv_ha_switchover(struct rv_ha *h, uint32_t to, char *out, size_t outlen)
{
	struct coordinator *c = atomic_load(&h->coord);
	struct coord_answer a;

	if (c == NULL) {
		snprintf(out, outlen, "the node's coordinator is not running");
		return -1;
	}
	coordinator_switchover(c, to, false, &a);
	if (a.error != NULL) {
		snprintf(out, outlen, "%s: %s", a.error, a.message);
		return -1;
	}
	snprintf(out, outlen, "{\"from\":%u,\"to\":%u,\"epoch\":%" PRIu64 "}",
		(unsigned)a.from, (unsigned)a.to, a.epoch);
	return 0;
}
