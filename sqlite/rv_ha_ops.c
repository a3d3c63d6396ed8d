/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rv_ha_ops.c -- the operations a node's coordinator (ha/) drives it
 * with: what it reports of itself, its promotion and step-down, and the
 * membership etcd's key names (rv_ha.h, rv_ha_internal.h).
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

/* ---- the coordinator's operations ---- */

static void
primary_local(const struct rv_db_view *v, void *arg)
{
	struct ha_local *l = arg;
	struct repl_status st;

	if (v->repl == NULL)
		return;		/* retired: no role */
	repl_status(v->repl, &st);
	coordinator_local_primary(l, &st);
}

static void
op_local(void *arg, struct ha_local *l)
{
	struct rv_ha *h = arg;
	struct repl_replica_info info;

	l->role = HA_ROLE_OTHER;
	pthread_mutex_lock(&h->lock);
	if (h->role == RV_HA_PRIMARY && h->db != NULL) {
		/* under the node's lock: the step-down waits to put it */
		rv_db_inspect(h->db, primary_local, l);
	} else if (h->role == RV_HA_REPLICA && h->replica != NULL &&
		   repl_replica_info(h->replica, &info) == 0) {
		coordinator_local_replica(l, &info);
	}
	pthread_mutex_unlock(&h->lock);
}

static void
membership_of(const struct rv_db_view *v, void *arg)
{
	struct repl_membership *out = arg;

	if (v->repl != NULL)
		(void)repl_membership(v->repl, out);
}

static int
op_membership(void *arg, struct repl_membership *out)
{
	struct rv_ha *h = arg;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&h->lock);
	if (h->role == RV_HA_PRIMARY && h->db != NULL) {
		rv_db_inspect(h->db, membership_of, out);
		ret = out->config_epoch != 0 ? 0 : -1;
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static int promote(struct rv_ha *h, char *msg, size_t msglen);
static int step_down(struct rv_ha *h, char *msg, size_t msglen);

static int
op_promote(void *arg, char *msg, size_t msglen)
{
	struct rv_ha *h = arg;
	int ret;

	pthread_mutex_lock(&h->change);
	ret = promote(h, msg, msglen);
	pthread_mutex_unlock(&h->change);
	return ret;
}

int
rv_ha_step_down(struct rv_ha *h, char *msg, size_t msglen)
{
	int ret;

	pthread_mutex_lock(&h->change);
	ret = step_down(h, msg, msglen);
	pthread_mutex_unlock(&h->change);
	return ret;
}

static int
op_step_down(void *arg, char *msg, size_t msglen)
{
	return rv_ha_step_down(arg, msg, msglen);
}

static int
promote(struct rv_ha *h, char *msg, size_t msglen)
{
	int ret;

	if (atomic_load(&h->coord) == NULL) {
		snprintf(msg, msglen, "the node's coordinator is starting");
		return REPL_E_INVAL;
	}
	pthread_mutex_lock(&h->lock);
	if (h->role != RV_HA_REPLICA) {
		pthread_mutex_unlock(&h->lock);
		snprintf(msg, msglen, "the node is %s, not a replica",
			rv_ha_role_name(h->role));
		return REPL_E_INVAL;
	}
	pthread_mutex_unlock(&h->lock);
	rv_ha_become(h, RV_HA_PROMOTING);
	rv_ha_replica_stop(h);
	if ((ret = rv_ha_primary_open(h, false, msg, msglen)) != 0) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: the promotion was refused: "
			"%s; serving as a replica again", h->path, msg);
		rv_ha_replica_start(h);
		rv_ha_become(h, RV_HA_REPLICA);
		return ret;
	}
	rv_ha_become(h, RV_HA_PRIMARY);
	sqlite3_log(SQLITE_NOTICE, "replvfs: %s: node %u is the primary: the "
		"connections opened before are closed and opened again by the "
		"application", h->path, h->conf.node_id);
	return 0;
}

static int
step_down(struct rv_ha *h, char *msg, size_t msglen)
{
	pthread_mutex_lock(&h->lock);
	if (h->role != RV_HA_PRIMARY) {
		pthread_mutex_unlock(&h->lock);
		snprintf(msg, msglen, "the node is %s, not the primary",
			rv_ha_role_name(h->role));
		return REPL_E_INVAL;
	}
	pthread_mutex_unlock(&h->lock);
	rv_ha_become(h, RV_HA_STEPPING_DOWN);
	rv_ha_primary_close(h);
	rv_ha_replica_start(h);
	rv_ha_become(h, RV_HA_REPLICA);
	sqlite3_log(SQLITE_NOTICE, "replvfs: %s: node %u stepped down: a replica "
		"now; the connections opened before are closed and opened again by "
		"the application", h->path, h->conf.node_id);
	return 0;
}

static int
op_carry(void *arg, const struct coord_membership *m, char *msg, size_t msglen)
{
	(void)arg;
	snprintf(msg, msglen, "a replvfs node does not carry a membership change "
		"from etcd (configuration epoch %" PRIu64 "): change the membership "
		"through the primary (replctl add and remove, repl_admin=1)",
		m->config_epoch);
	return REPL_E_INVAL;
}

static void
op_take_peers(void *arg, const struct coord_membership *m)
{
	struct rv_ha *h = arg;
	struct coord_peer others[REPLD_PEERS_MAX];
	struct repld_peer peers[REPLD_PEERS_MAX];
	const char *bad = NULL;
	int np = coord_membership_others(m, h->conf.node_id, h->ctl_addr, others,
			REPLD_PEERS_MAX, &bad);

	for (int i = 0; i < np; i++) {
		peers[i].control_port = others[i].control_port;
		if ((peers[i].address = strdup(others[i].host)) == NULL) {
			bad = "(out of memory)";
			for (int j = 0; j < i; j++)
				free(peers[j].address);
			np = -1;
		}
	}
	if (np < 0) {
		sqlite3_log(SQLITE_WARNING, "replvfs: %s: the membership key names a "
			"node this one cannot take as a peer (%s): promoting over the "
			"file's peers", h->path, bad);
		return;
	}
	pthread_mutex_lock(&h->lock);
	for (int i = 0; i < h->take_n; i++)
		free(h->take_peers[i].address);
	memcpy(h->take_peers, peers, sizeof(peers[0]) * (size_t)np);
	h->take_n = np;
	h->take_quorum = (int)m->quorum;
	h->take = true;
	pthread_mutex_unlock(&h->lock);
}

static const struct coord_node_ops ops = {
	.local = op_local,
	.membership = op_membership,
	.promote = op_promote,
	.step_down = op_step_down,
	.carry = op_carry,
	.take_peers = op_take_peers,
};

static void
coord_log(void *arg, int level, const char *msg)
{
	struct rv_ha *h = arg;

	sqlite3_log(level <= LOG_ERR ? SQLITE_ERROR : level == LOG_WARNING ?
		SQLITE_WARNING : SQLITE_NOTICE, "replvfs: %s: coordinator: %s",
		h->path, msg);
}

int
rv_ha_coord_start(struct rv_ha *h, char *why, size_t whylen)
{
	const struct repld_conf *conf = &h->conf;
	struct coord_cfg cfg = {
		.endpoints = (const char *const *)conf->coordinator.endpoints,
		.n_endpoints = (size_t)conf->coordinator.n_endpoints,
		.timeout_ms = conf->coordinator.timeout_ms,
		.ca = conf->coordinator.ca, .cert = conf->coordinator.cert,
		.key = conf->coordinator.key, .prefix = conf->coordinator.prefix,
		.cluster_uuid = conf->cluster_uuid_text, .node_id = conf->node_id,
		.lease_ms = (uint64_t)conf->coordinator.lease_ms,
		.candidate = conf->coordinator.candidate != 0,
		.down_ms = (uint64_t)conf->timeouts.down_ms, .ctl_addr = h->ctl_addr,
		.log = coord_log, .log_arg = h,
	};
	struct coordinator *c;
	char err[256];

	if (coordinator_start(&cfg, &ops, h, &c, err, sizeof(err)) != 0) {
		snprintf(why, whylen, "replvfs: %s: its coordinator did not start: %s",
			h->path, err);
		return -1;
	}
	atomic_store(&h->coord, c);
	return 0;
}
