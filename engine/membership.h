/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * membership.h -- who the replicas are and how many must hold a record,
 * with its own configuration epoch, kept in every node's log.
 *
 * The promotion rule (fence n - k + 1 nodes) is only sound against the
 * membership under which records were acknowledged, so it is stored, not
 * taken from whatever configuration a process starts with: a primary whose
 * configuration has another n or k than the stored membership refuses to
 * start unless asked to reconfigure, and a reconfiguration gets the next
 * configuration epoch.  A primary gives a replica the membership (over the
 * control channel) only once the replica holds everything committed; until
 * then it is a new member that has not caught up, and it counts neither
 * toward the quorum nor toward a promotion's n - k + 1 nodes.  The
 * addresses are the configuration's, kept for operators: a promoted
 * replica lists the old primary where it listed itself.
 *
 * Encoding (little-endian, MEMBERSHIP_SIZE bytes; also the body of the
 * control channel's MEMBERSHIP message):
 *
 *   off size field
 *     0    8 magic         "RPLMEMB" 0x01
 *     8    8 config_epoch  1, 2, ... (0: none stored)
 *    16    4 quorum        k: replicas that must hold a record
 *    20    4 n             members that follow, at most MEMBERS_MAX
 *    24  64n members       reserved u32 (0), port u16,
 *                          reserved u16 (0), host[56] (NUL-padded,
 *                          printable, at least one character)
 *   536    4 reserved      0
 *   540    4 crc           CRC-32C of bytes 0..539
 *
 * Members past n are all zero.  In the log it sits in both 4 KiB header
 * copies at offset MEMBERSHIP_OFF; the valid copy with the larger
 * configuration epoch wins, and a store overwrites the other one, so a
 * torn store leaves the previous membership.
 */
#ifndef REPL_MEMBERSHIP_H
#define REPL_MEMBERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpma.h"

#define MEMBERS_MAX 8
#define MEMBER_HOST_MAX 55
#define MEMBERSHIP_SIZE 544
#define MEMBERSHIP_OFF 1024		/* in each header copy */
struct member {
	uint16_t port;			/* its control channel */
	char host[MEMBER_HOST_MAX + 1];
};

struct membership {
	uint64_t config_epoch;
	uint32_t quorum;
	uint32_t n;
	struct member m[MEMBERS_MAX];
};

void membership_encode(const struct membership *ms, uint8_t *buf);
/* total: 0, or -1 with *why naming the fault */
int membership_decode(const uint8_t *buf, size_t len, struct membership *ms,
		const char **why);
/* the same n and k: what the promotion rule depends on */
bool membership_same(const struct membership *a, const struct membership *b);

/* the log's stored membership (config_epoch 0: none) */
int membership_load(struct rpma_ext_mem *mem, struct membership *ms);
/* store it durably over the older copy */
int membership_store(struct rpma_ext_mem *mem, const struct membership *ms);

#endif
