/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership.h -- which nodes form the cluster and how many of them must
 * hold a record, with its own configuration epoch, kept in every node's
 * log.
 *
 * A configuration C is a set of nodes (the primary among them) and k, the
 * replicas besides the primary that must hold a record: N = |C|, an
 * acknowledgement needs k + 1 nodes of C and a promotion N - k, so the two
 * always share a node.  That holds only within one configuration, so the
 * membership is stored, not taken from whatever configuration a process
 * starts with, and every change goes through a joint membership holding
 * both the old configuration (OLD) and the new one (NEW): S -> J(S, T) ->
 * F(T), each with the next configuration epoch.  While J is current an
 * acknowledgement needs the quorums of both; J is committed (F stored)
 * once k_S + 1 nodes of S hold J, after which no promotion under S can
 * gather N_S - k_S nodes of S that hold S and nothing newer.
 * docs/replication.md ("Membership") has the whole argument.
 *
 * A node is listed by node id (0: not known yet, matched by address), its
 * control address and its log's incarnation (0: not known).  A primary
 * gives a replica the membership (MEMBERSHIP, answered by ACK once stored)
 * only after the replica holds everything committed; only then does it
 * count toward the quorum and toward promotions.
 *
 * Encoding (little-endian, MEMBERSHIP_SIZE bytes; also the body of the
 * control channel's MEMBERSHIP message):
 *
 *   off size field
 *     0    8 magic         "RPLMEMB" 0x02
 *     8    8 config_epoch  1, 2, ... (0 is never stored)
 *    16    4 k             replicas of NEW that must hold a record
 *    20    4 k_old         the same for OLD (JOINT only, else 0)
 *    24    4 flags         bit 0 JOINT, bit 1 FROM_JOINT (not both)
 *    28    4 count         entries that follow, 1..12
 *    32  64n entries       node_id u32 (0: not known, else 1..65535),
 *                          flags u16 (bit 0 NEW, bit 1 OLD; not 0; OLD
 *                          only with JOINT; NEW on every entry without
 *                          JOINT), port u16, incarnation u64 (0: not
 *                          known), host[48] (NUL-padded, 1..47
 *                          printable characters, no space)
 *   800    4 from_crc      FROM_JOINT: the crc of the joint membership it
 *                          ended (0: not known); else 0
 *   804    4 crc           CRC-32C of bytes 0..803
 *
 * A membership is named by its configuration epoch *and* its crc: two
 * primaries (one superseded, not yet fenced) can each begin a change from
 * the same membership and store two different ones with one epoch, so a
 * promotion counts a node only if it holds the very membership (or, under
 * F, the J whose crc F names).
 *
 * Entries past count are all zero; k < the entries in NEW, k_old < those
 * in OLD; no node id and no address is listed twice.  An entry with an
 * empty host has port 0 and a node id: a primary that does not listen on
 * a control port (repl_cfg.listen_port unset), matched by node id only.
 *
 * In the log it sits in both 4 KiB header copies at offset MEMBERSHIP_OFF;
 * the valid copy with the larger configuration epoch wins, and a store
 * overwrites the other one, so a torn store leaves the previous one.  A
 * copy in the version 1 format ("RPLMEMB" 0x01: the writer's replicas,
 * n and k, without node ids) is still read (membership_v1.c).
 */
#ifndef REPL_MEMBERSHIP_H
#define REPL_MEMBERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpma.h"

#define MEMBERSHIP_NODES_MAX 12
#define MEMBER_HOST_MAX 47
#define MEMBERSHIP_SIZE 808
#define MEMBERSHIP_OFF 1024		/* in each header copy */

#define MEMBERSHIP_F_JOINT	(1u << 0)	/* OLD and NEW */
#define MEMBERSHIP_F_FROM_JOINT	(1u << 1)	/* ended a joint one */
#define MEMBER_F_NEW		(1u << 0)
#define MEMBER_F_OLD		(1u << 1)

struct member {
	uint32_t node_id;		/* 0: not known yet */
	uint16_t flags;			/* MEMBER_F_* */
	uint16_t port;			/* its control channel (0: none) */
	uint64_t incarnation;		/* of its log (0: not known) */
	char host[MEMBER_HOST_MAX + 1];
};

struct membership {
	uint64_t config_epoch;
	uint32_t k;			/* of NEW */
	uint32_t k_old;			/* of OLD */
	uint32_t flags;			/* MEMBERSHIP_F_* */
	uint32_t count;
	uint32_t from_crc;		/* FROM_JOINT: the J it ended (0: ?) */
	struct member m[MEMBERSHIP_NODES_MAX];
	/*
	 * Read from a version 1 copy: m[] are the writer's replicas (ids
	 * 0), the writer itself is not listed.  Never encoded.
	 */
	bool v1;
	uint32_t v1_crc;		/* the crc a version 1 copy had */
};

/* 0 if ms may be encoded (what the decoder accepts), else -1 with *why */
int membership_check(const struct membership *ms, const char **why);
/* 0, or -1 with *why if membership_check refuses it (buf untouched) */
int membership_encode(const struct membership *ms, uint8_t *buf,
		const char **why);
/* total: 0, or -1 with *why naming the fault */
int membership_decode(const uint8_t *buf, size_t len, struct membership *ms,
		const char **why);
/* the version 1 format (membership_v1.c): the log's old copies only */
int membership_decode_v1(const uint8_t *buf, size_t len, struct membership *ms,
		const char **why);

/*
 * Which membership this is (with its configuration epoch): its encoding's
 * crc, never 0; 0 for none (config_epoch 0).
 */
uint32_t membership_crc(const struct membership *ms);
/* the nodes with flag (MEMBER_F_NEW or MEMBER_F_OLD) */
uint32_t membership_nodes(const struct membership *ms, uint16_t flag);
/*
 * The entry of the node with node_id (0: not known) reached at host:port
 * (host NULL: no address): by node id where the entry knows it, else by
 * address.  Its index, or -1.
 */
int membership_find(const struct membership *ms, uint32_t node_id,
		const char *host, uint16_t port);
/*
 * Does ms leave node_id out: it names the node in the old configuration
 * only (a joint membership whose change removes it), or, every entry's
 * node id known, not at all.  False for none stored, a version 1 copy (it
 * does not list its writer) or node id 0.
 */
bool membership_leaves_out(const struct membership *ms, uint32_t node_id);
/*
 * Does b say the same configuration(s) as a: the same k (and k_old), the
 * same nodes in NEW (and OLD), entry for entry, matched by node id where
 * both know it and by address otherwise (both must know it, and where
 * both know the node id the addresses must agree too) -- except self_id's
 * entries, which match by node id alone.  The configuration epoch, the
 * incarnations and FROM_JOINT are not compared.  A replaced address is
 * a change.
 */
bool membership_same(const struct membership *a, const struct membership *b,
		uint32_t self_id);
/*
 * J = (OLD = S's NEW, NEW = T's NEW), JOINT, S's epoch + 1: S's entries
 * with T's matched into them (membership_same's matching; a node of both
 * takes T's address), then T's others.  An S-only entry whose address a
 * T entry takes (another node now) keeps its node id but loses its
 * address.  0, or -1 with *why (more than 12 nodes, a node id twice).
 */
int membership_joint(const struct membership *s, const struct membership *t,
		uint32_t self_id, struct membership *j, const char **why);
/* F = J's NEW, FROM_JOINT, J's epoch + 1 */
void membership_final(const struct membership *j, struct membership *f);
/* "host:port", or "node N" for an entry without an address */
void membership_addr(const struct member *m, char *buf, size_t len);

/* the log's stored membership (config_epoch 0: none) */
int membership_load(struct rpma_ext_mem *mem, struct membership *ms);
/* store it durably over the older copy; REPL_E_INVAL if it is not valid */
int membership_store(struct rpma_ext_mem *mem, const struct membership *ms);

#endif
