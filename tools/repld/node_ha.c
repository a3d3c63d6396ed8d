/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * node_ha.c -- a repld node as the failover coordinator (ha/coordinator.h)
 * sees it: the coordinator's configuration taken from the node's file, its
 * log going to repld's, and the node operations it drives the node with.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "archiver.h"
#include "coordinator.h"
#include "log.h"
#include "node.h"
#include "node_ha.h"

/* the keys' limits are the file's (coord_keys.h says why they are written twice) */
_Static_assert(COORD_MEMBERS_MAX == REPLD_PEERS_MAX + 1, "a membership's nodes");
_Static_assert(COORD_HOST_MAX == REPLD_ADDRESS_MAX, "a member's host");
/* a refused change's codes reach the admin socket as the node's */
_Static_assert(COORD_E_UNREACHABLE == NODE_E_COORD_UNREACHABLE, "codes");
_Static_assert(COORD_E_NOT_LEADER == NODE_E_NOT_LEADER, "codes");
_Static_assert(COORD_E_CHANGE_PENDING == NODE_E_CHANGE_PENDING, "codes");
_Static_assert(COORD_E_CONFLICT == NODE_E_CONFLICT, "codes");

static void
ha_log(void *arg, int level, const char *msg)
{
	(void)arg;
	log_msg(level <= LOG_ERR ? REPL_LOG_LEVEL_ERROR : level == LOG_WARNING ?
		REPL_LOG_LEVEL_WARNING : level == LOG_NOTICE ? REPL_LOG_LEVEL_NOTICE :
		REPL_LOG_LEVEL_INFO, "%s", msg);
}

static void
cfg_of(const struct repld_conf *conf, struct coord_cfg *cfg, char *ctl_addr,
		size_t len)
{
	repld_host_port(ctl_addr, len, conf->listen.address, conf->listen.control_port);
	*cfg = (struct coord_cfg){
		.endpoints = (const char *const *)conf->coordinator.endpoints,
		.n_endpoints = (size_t)conf->coordinator.n_endpoints,
		.timeout_ms = conf->coordinator.timeout_ms,
		.ca = conf->coordinator.ca, .cert = conf->coordinator.cert,
		.key = conf->coordinator.key, .prefix = conf->coordinator.prefix,
		.cluster_uuid = conf->cluster_uuid_text, .node_id = conf->node_id,
		.lease_ms = (uint64_t)conf->coordinator.lease_ms,
		.candidate = conf->coordinator.candidate != 0,
		.down_ms = (uint64_t)conf->timeouts.down_ms, .ctl_addr = ctl_addr,
		.log = ha_log,
	};
}

/* ---- the node operations ---- */

static void
op_local(void *arg, struct ha_local *l)
{
	struct node *n = arg;
	enum node_role r = node_role(n);

	if (r == NODE_PRIMARY) {
		struct repl_status st;
		bool changing;
		struct repl *repl = node_try_enter(n, &changing);

		l->role = HA_ROLE_PRIMARY;
		if (repl != NULL) {
			repl_status(repl, &st);
			node_leave(n);
			coordinator_local_primary(l, &st);
		}
	} else if (r == NODE_REPLICA) {
		struct repl_replica_info info;

		node_replica_info(n, &info);
		coordinator_local_replica(l, &info);
	} else {
		l->role = HA_ROLE_OTHER;
	}
}

static int
op_membership(void *arg, struct repl_membership *out)
{
	return node_membership(arg, out);
}

static int
op_promote(void *arg, char *msg, size_t msglen)
{
	return node_promote(arg, false, true, msg, msglen);
}

static int
op_step_down(void *arg, char *msg, size_t msglen)
{
	return node_fence(arg, msg, msglen);
}

static bool
is_me(const struct node *n, const struct coord_ms_node *nd)
{
	char me[REPLD_ADDRESS_MAX + 10];

	repld_host_port(me, sizeof(me), n->conf.listen.address,
		n->conf.listen.control_port);
	return nd->node_id == n->conf.node_id ||
		(nd->node_id == 0 && strcmp(nd->ctl_addr, me) == 0);
}

/* m's nodes but this one as peers (hosts malloc'd); -1 with why if not */
static int
peers_of(const struct node *n, const struct coord_membership *m,
		struct repld_peer *peers, char *why, size_t whylen)
{
	struct coord_peer others[REPLD_PEERS_MAX];
	char me[REPLD_ADDRESS_MAX + 10];
	const char *bad = NULL;
	int np;

	repld_host_port(me, sizeof(me), n->conf.listen.address,
		n->conf.listen.control_port);
	memset(peers, 0, sizeof(peers[0]) * REPLD_PEERS_MAX);
	np = coord_membership_others(m, n->conf.node_id, me, others, REPLD_PEERS_MAX,
			&bad);
	for (int i = 0; i < np; i++) {
		peers[i].control_port = others[i].control_port;
		if ((peers[i].address = strdup(others[i].host)) == NULL) {
			bad = "(out of memory)";
			for (int j = 0; j < i; j++)
				free(peers[j].address);
			np = -1;
		}
	}
	if (np < 0)
		snprintf(why, whylen, "the membership key names a node this daemon "
			"cannot take as a peer (%s)", bad);
	return np;
}

static int
op_carry(void *arg, const struct coord_membership *m, char *msg, size_t msglen)
{
	struct repld_peer peers[REPLD_PEERS_MAX];
	int np = peers_of(arg, m, peers, msg, msglen);

	if (np < 0)
		return REPL_E_INVAL;
	return node_carry(arg, peers, np, (int)m->quorum, m->config_epoch, msg, msglen);
}

static void
op_take_peers(void *arg, const struct coord_membership *m)
{
	struct repld_peer peers[REPLD_PEERS_MAX];
	char why[256];
	int np = peers_of(arg, m, peers, why, sizeof(why));

	if (np < 0) {
		log_warning("coordinator: %s: promoting over the configured peers", why);
		return;
	}
	if (node_take_peers(arg, peers, np, (int)m->quorum) == 0)
		log_notice("coordinator: promoting over the membership this log holds, "
			"as etcd's key names it (configuration epoch %" PRIu64 ": %d peers, "
			"quorum %" PRIu32 ")", m->config_epoch, np, m->quorum);
}

/*
 * An archive group, and the role it archives in (archiver.h); a replica
 * takes the key only once the primary has heard its whole-log hold, and
 * keeps it once it has it
 */
static bool
op_archive_wanted(void *arg)
{
	struct node *n = arg;
	enum node_role r = node_role(n);
	struct archiver *a = atomic_load(&n->archiver);

	if (n->conf.archive.target == NULL || a == NULL)
		return false;
	if (r == NODE_PRIMARY)
		return n->conf.archive.any;
	return r == NODE_REPLICA && (archiver_may_take(a) ||
		coordinator_archiver_allowed(atomic_load(&n->coord)));
}

static const struct coord_node_ops node_ops = {
	.local = op_local,
	.membership = op_membership,
	.promote = op_promote,
	.step_down = op_step_down,
	.carry = op_carry,
	.take_peers = op_take_peers,
	.archive_wanted = op_archive_wanted,
};

void
node_ha_membership_at_start(struct node *n)
{
	struct repld_peer peers[REPLD_PEERS_MAX];
	char ctl_addr[REPLD_ADDRESS_MAX + 10], why[256];
	struct coord_membership key;
	struct repl_log_header hdr;
	struct repl_reader *rd;
	struct coord_cfg cfg;
	bool named = false;
	int np, ret;

	if (n->conf.coordinator.n_endpoints == 0 ||
	    repl_reader_open(n->conf.log.path, &rd, NULL, 0) != 0)
		return;		/* no coordinator, or no log yet: the file's */
	ret = repl_reader_header(rd, &hdr);
	repl_reader_close(&rd);
	if (ret != 0 || hdr.membership.config_epoch == 0)
		return;
	cfg_of(&n->conf, &cfg, ctl_addr, sizeof(ctl_addr));
	if (!coordinator_membership_at_start(&cfg, &key))
		return;		/* etcd silent, or no key: the file's */
	if (key.config_epoch != hdr.membership.config_epoch) {
		log_notice("coordinator: etcd's membership key is at configuration "
			"epoch %" PRIu64 ", this node's log at %" PRIu64 ": starting "
			"with the file's peers", key.config_epoch,
			hdr.membership.config_epoch);
		return;
	}
	for (int i = 0; i < key.n; i++)
		named |= is_me(n, &key.nodes[i]);
	if (!named || (np = peers_of(n, &key, peers, why, sizeof(why))) < 0) {
		log_warning("coordinator: etcd's membership key %s: starting with "
			"the file's peers", named ? why : "does not name this node");
		return;
	}
	if (node_members_are(n, peers, np, (int)key.quorum)) {
		for (int i = 0; i < np; i++)
			free(peers[i].address);
		return;
	}
	if (node_take_peers(n, peers, np, (int)key.quorum) == 0)
		log_notice("coordinator: starting with the membership etcd's key holds "
			"(configuration epoch %" PRIu64 ", as this node's log: %d peers, "
			"quorum %" PRIu32 "), not the file's: edit the file to match",
			key.config_epoch, np, key.quorum);
}

int
node_ha_start(struct node *n, struct coordinator **out, char *err, size_t errlen)
{
	struct coord_cfg cfg;
	char ctl_addr[REPLD_ADDRESS_MAX + 10];

	*out = NULL;
	if (n->conf.coordinator.n_endpoints == 0)
		return 0;
	cfg_of(&n->conf, &cfg, ctl_addr, sizeof(ctl_addr));
	return coordinator_start(&cfg, &node_ops, n, out, err, errlen);
}

uint32_t
node_ha_leader_at_start(const struct repld_conf *conf, uint64_t *epoch)
{
	struct coord_cfg cfg;
	char ctl_addr[REPLD_ADDRESS_MAX + 10];

	*epoch = 0;
	if (conf->coordinator.n_endpoints == 0)
		return 0;
	cfg_of(conf, &cfg, ctl_addr, sizeof(ctl_addr));
	return coordinator_leader_at_start(&cfg, epoch);
}
