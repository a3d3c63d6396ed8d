/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coord_keys.h -- the coordinator's keys under PREFIX<uuid>/ in etcd: their
 * values written (JSON, jansson) and read back.  What etcd holds is
 * untrusted (another version, an operator's etcdctl, a restored backup):
 * every value is parsed totally, and one that does not parse is as good
 * as absent for the member list, and "held by an unknown node" for the
 * leader key -- never a reason to campaign.
 *
 *   leader          {"node_id","epoch","state":"promoting"|"primary","ctl_addr"}
 *   members/<id>    {"node_id","role","epoch","last_lsn","last_epoch",
 *                    "link_up","candidate","ctl_addr"}
 *   membership      {"config_epoch","quorum","nodes":[{"node_id","ctl_addr"}...]}
 *   switchover      {"from","to","failover"}
 *   maintenance     {"node_id","at_ms","reason"}: while it exists no node
 *                   takes over by itself (ha_rules.h); no lease
 *   history/<epoch> {"node_id","epoch","from_lsn","at_ms"}
 *   log-archiver    {"node_id"}: the node that archives the log (repld's
 *                   archive group), under that node's member lease
 *   epochs          decimal text (ha/coord/leader.h)
 */
#ifndef HA_COORD_KEYS_H
#define HA_COORD_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coord/etcd_client.h"
#include "coord/leader.h"

#define COORD_VALUE_MAX 512
#define COORD_MEMBERSHIP_VALUE_MAX 2048
/*
 * A membership's nodes: a primary and as many replicas as repld's file
 * holds (REPLD_PEERS_MAX + 1; repld asserts the two agree); a node's host
 * as long as the log's membership record keeps (REPLD_ADDRESS_MAX).
 */
#define COORD_MEMBERS_MAX 9
#define COORD_HOST_MAX 55

/* a live members/<id> key, as published */
struct coord_member {
	uint32_t node_id;
	char role[8];			/* "primary", "replica", "down" */
	uint64_t epoch, last_lsn, last_epoch;
	bool link_up, candidate;
};

/*
 * The membership key: a configuration by node id (0: not known yet, the
 * node then named by its control address) with its configuration epoch --
 * every node, the primary among them, and the quorum k.  Written only by
 * compare-and-swap, by the leader key's holder (repld's coord_membership.c).
 */
struct coord_ms_node {
	uint32_t node_id;
	char ctl_addr[COORD_HOST_MAX + 10];	/* "host:port", "[v6]:port" */
};

struct coord_membership {
	uint64_t config_epoch;		/* >= 1 */
	uint32_t quorum;		/* < n */
	int n;				/* 1 .. COORD_MEMBERS_MAX */
	struct coord_ms_node nodes[COORD_MEMBERS_MAX];
};


struct coord_leader_value {
	uint32_t node_id;		/* 0: a value that does not parse */
	uint64_t epoch;
	char state[12];			/* "primary", "promoting" ("?" if not) */
	char ctl_addr[COORD_HOST_MAX + 10];	/* its control address ("": none
						   that parses) */
};

struct coord_switchover {
	uint32_t from, to;		/* to 0: the most advanced replica */
	bool failover;
};

/* an operator's reason for maintenance: printable, at most this many bytes */
#define COORD_REASON_MAX 200

struct coord_maintenance {
	uint32_t node_id;		/* the node that set it (0: a value that
					   does not parse) */
	uint64_t at_ms;			/* its wall clock then, ms since 1970 */
	char reason[COORD_REASON_MAX + 1];	/* "" when none was given */
};

/* a history/<epoch> key: a promotion a coordinator made */
struct coord_history {
	uint32_t node_id;
	uint64_t epoch, from_lsn, at_ms;
};

/* the cluster's keys as one tick read them */
struct coord_keys {
	bool has_leader;
	struct coord_leader_value leader;
	int64_t leader_ttl_s;		/* -1: unknown */
	int64_t leader_lease;		/* the lease the key is under (0: none) */
	bool has_switchover;
	struct coord_switchover sw;
	/* the maintenance key exists (one whose value does not parse counts:
	   maint.node_id 0) */
	bool has_maintenance;
	struct coord_maintenance maint;
	bool has_membership;		/* a value that parses */
	bool bad_membership;		/* a key whose value does not parse */
	int64_t membership_rev;		/* its mod_revision (0: no key) */
	struct coord_membership membership;
	struct coord_member members[COORD_MEMBERS_MAX];	/* by node id */
	int n_members;
	int bad_members;		/* keys whose value did not parse */
	/* the log-archiver key exists (archiver 0: its value does not parse) */
	bool has_archiver;
	uint32_t archiver;
};

/* each: the value's length in buf (NUL-terminated), 0 if it cannot be made */
size_t coord_leader_value(uint32_t node_id, uint64_t epoch, const char *state,
		const char *ctl_addr, char *buf, size_t size);
size_t coord_member_value(const struct coord_member *m, const char *ctl_addr,
		char *buf, size_t size);
size_t coord_switchover_value(uint32_t from, uint32_t to, bool failover,
		char *buf, size_t size);
size_t coord_history_value(uint32_t node_id, uint64_t epoch, uint64_t from_lsn,
		char *buf, size_t size);
size_t coord_archiver_value(uint32_t node_id, char *buf, size_t size);
/* reason: coord_reason_ok's; at_ms the wall clock in ms since 1970 */
size_t coord_maintenance_value(uint32_t node_id, uint64_t at_ms, const char *reason,
		char *buf, size_t size);

/*
 * A reason an operator may give: UTF-8 of at most COORD_REASON_MAX bytes
 * without control characters (it is shown on one line of status).
 */
bool coord_reason_ok(const char *s, size_t len);

size_t coord_membership_value(const struct coord_membership *m, char *buf,
		size_t size);

/*
 * "host:port" or "[ipv6]:port" (a ctl_addr): a host of 1..COORD_HOST_MAX
 * bytes without blanks (or ':' outside brackets), a port 1..65535; false if
 * not.  host (brackets off) and port may be NULL.
 */
bool coord_ctl_addr_split(const char *s, char host[COORD_HOST_MAX + 1],
		uint16_t *port);

/* a node of a membership other than this one, as a peer to open the log with */
struct coord_peer {
	char host[COORD_HOST_MAX + 1];
	uint16_t control_port;
};

/*
 * m's nodes other than this one (node id my_id; a node of id 0 is this one
 * when its address is my_ctl_addr), at most max, into out: how many, or -1
 * with *bad the control address that does not split (or the first past
 * max).
 */
int coord_membership_others(const struct coord_membership *m, uint32_t my_id,
		const char *my_ctl_addr, struct coord_peer *out, int max,
		const char **bad);

/* total parsers: false when the bytes are not such a value */
bool coord_membership_parse(const char *v, size_t len, struct coord_membership *out);
/* the same configuration epoch, quorum and nodes (in any order); a node id
 * 0 on either side matches any by address */
bool coord_membership_same(const struct coord_membership *a,
		const struct coord_membership *b);
bool coord_leader_parse(const char *v, size_t len, struct coord_leader_value *out);
bool coord_member_parse(const char *v, size_t len, struct coord_member *out);
bool coord_switchover_parse(const char *v, size_t len, struct coord_switchover *out);
bool coord_maintenance_parse(const char *v, size_t len, struct coord_maintenance *out);
bool coord_archiver_parse(const char *v, size_t len, uint32_t *node_id);
bool coord_history_parse(const char *v, size_t len, struct coord_history *out);

/* the same role, epoch, link and candidacy (the position aside) */
bool coord_member_same(const struct coord_member *a, const struct coord_member *b);

/*
 * Reads leader, maintenance, members/, membership and switchover in one
 * range (one revision), then the leader's lease's TTL.  ETCD_OK, or the
 * failing call's code with why.
 */
enum etcd_rc coord_keys_read(struct etcd_client *etcd, const char *prefix,
		struct coord_keys *out, char *why, size_t whylen);

/* the history keys as read: at most COORD_HISTORY_MAX, oldest first */
#define COORD_HISTORY_MAX 256

struct coord_history_list {
	int n;			/* entries in e: the newest that parse */
	int total;		/* keys that parse (n = min(total, MAX)) */
	int invalid;		/* keys whose value does not parse, or does not
				   name the epoch of its key */
	struct coord_history e[COORD_HISTORY_MAX];	/* by epoch, rising */
};

/*
 * Reads every history/ key under prefix (one range), ordered by epoch:
 * an epoch holds its node's id in its low 16 bits and rises with each
 * promotion, so that is the order they were made in.  ETCD_OK, or the
 * call's code with why.
 */
enum etcd_rc coord_history_read(struct etcd_client *etcd, const char *prefix,
		struct coord_history_list *out, char *why, size_t whylen);

#endif
