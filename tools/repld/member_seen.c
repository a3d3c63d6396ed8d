/* SPDX-License-Identifier: BSD-3-Clause */
/* member_seen.c -- what this node itself sees of etcd's members (member_seen.h) */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "member_seen.h"

void
member_seen_primary(struct node *n, struct repl *repl, struct member_seen_map *map)
{
	struct repl_membership ms;
	struct repl_replica_status rs;
	struct {
		char host[REPLD_ADDRESS_MAX + 1];
		uint16_t port;
	} peer[REPLD_PEERS_MAX];
	int n_peers;

	memset(map, 0, sizeof(*map));
	map->primary = true;
	map->silent_ms = UINT64_MAX;
	/* copied under the node's lock, read with the engine's locks only */
	pthread_mutex_lock(&n->lock);
	map->self = n->conf.node_id;
	n_peers = n->conf.n_peers;
	for (int i = 0; i < n_peers; i++) {
		snprintf(peer[i].host, sizeof(peer[i].host), "%s",
			n->conf.peers[i].address);
		peer[i].port = n->conf.peers[i].control_port;
	}
	pthread_mutex_unlock(&n->lock);
	if (repl_membership(repl, &ms) != 0)
		return;
	for (uint32_t j = 0; j < ms.count && j < REPL_MEMBERS_MAX; j++) {
		const struct repl_member *e = &ms.nodes[j];

		if (e->node_id == 0 || e->node_id == map->self ||
		    !(e->flags & REPL_MEMBER_NEW) || map->n == MEMBER_SEEN_MAX)
			continue;
		/* its link: the peer at the address the membership names */
		for (int i = 0; i < n_peers; i++) {
			if (peer[i].port != e->port || strcmp(peer[i].host, e->host) != 0)
				continue;
			map->replica[map->n].node_id = e->node_id;
			map->replica[map->n].linked =
				repl_replica_status(repl, i, &rs) == 0 &&
				rs.state != REPL_REPLICA_DOWN;
			map->n++;
			break;
		}
	}
}

void
member_seen_replica(struct node *n, struct member_seen_map *map)
{
	struct repl_replica_info info;

	memset(map, 0, sizeof(*map));
	node_replica_info(n, &info);
	pthread_mutex_lock(&n->lock);
	map->self = n->conf.node_id;
	pthread_mutex_unlock(&n->lock);
	map->following = info.following ? info.primary_id : 0;
	map->silent_ms = info.primary_silent_ms;
}

enum member_seen
member_seen_of(const struct member_seen_map *map, uint32_t node_id,
		const char *role, uint64_t *silent_ms)
{
	*silent_ms = UINT64_MAX;
	if (node_id == map->self)
		return MEMBER_SEEN_SELF;
	if (map->primary) {
		for (int i = 0; i < map->n; i++)
			if (map->replica[i].node_id == node_id)
				return map->replica[i].linked ? MEMBER_SEEN_LINKED :
					MEMBER_SEEN_NO_LINK;
		return MEMBER_SEEN_UNKNOWN;
	}
	if (node_id == map->following)
		return MEMBER_SEEN_LINKED;
	/* a replica expects to follow whichever node says it is the primary */
	if (strcmp(role, "primary") == 0) {
		*silent_ms = map->following ? UINT64_MAX : map->silent_ms;
		return MEMBER_SEEN_NO_LINK;
	}
	return MEMBER_SEEN_UNKNOWN;
}

const char *
member_seen_name(enum member_seen s)
{
	switch (s) {
	case MEMBER_SEEN_SELF:
		return "self";
	case MEMBER_SEEN_LINKED:
		return "linked";
	case MEMBER_SEEN_NO_LINK:
		return "no_link";
	default:
		return "unknown";
	}
}
