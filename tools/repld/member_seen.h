/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * member_seen.h -- what this node itself sees of the nodes etcd lists.
 *
 * A node's member key in etcd is its own report, kept alive by its lease:
 * a node killed with SIGKILL leaves a key that goes on saying its link is
 * up until that lease runs out.  Status sets beside each key what this
 * node knows first-hand: a primary, whether its link to that replica is
 * up; a replica, whether it follows the node whose key says "primary".
 * The failover rules never read it: it only keeps status from showing a
 * dead node live.
 */
#ifndef REPLD_MEMBER_SEEN_H
#define REPLD_MEMBER_SEEN_H

#include <stdbool.h>
#include <stdint.h>

#include "node.h"

#define MEMBER_SEEN_MAX 16

enum member_seen {
	MEMBER_SEEN_UNKNOWN = 0,	/* no link between the two is expected */
	MEMBER_SEEN_SELF,
	MEMBER_SEEN_LINKED,		/* a link with it is up now */
	MEMBER_SEEN_NO_LINK,		/* a link with it is expected, and down */
};

struct member_seen_map {
	uint32_t self;
	bool primary;			/* a primary's view, else a replica's */
	/* a primary: the replicas of its membership by node id */
	int n;
	struct {
		uint32_t node_id;
		bool linked;
	} replica[MEMBER_SEEN_MAX];
	/* a replica: the primary it follows (0: none), and since when it
	 * heard nothing from one (UINT64_MAX: never) */
	uint32_t following;
	uint64_t silent_ms;
};

/* a primary's view, with its handle entered (node_try_enter) */
void member_seen_primary(struct node *n, struct repl *repl,
		struct member_seen_map *map);
/* a replica's view */
void member_seen_replica(struct node *n, struct member_seen_map *map);
/*
 * What this node sees of node_id, whose key says role; *silent_ms (for
 * NO_LINK on a replica) the ms since it heard from a primary, else
 * UINT64_MAX
 */
enum member_seen member_seen_of(const struct member_seen_map *map,
		uint32_t node_id, const char *role, uint64_t *silent_ms);
/* the word status --json shows: "self", "linked", "no_link", "unknown" */
const char *member_seen_name(enum member_seen s);

#endif
