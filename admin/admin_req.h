/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_req.h -- one request of the admin socket (admin_proto.h), parsed
 * totally from the bytes a client sent so far.  The bytes are a local
 * client's, so anything goes: every outcome is a request, "need more", or
 * an error naming what is wrong.
 */
#ifndef REPLD_ADMIN_REQ_H
#define REPLD_ADMIN_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum admin_verb {
	ADMIN_STATUS = 1,
	ADMIN_APPEND,
	ADMIN_VERIFY,
	ADMIN_PROMOTE,
	ADMIN_FENCE,
	ADMIN_ADD,
	ADMIN_REMOVE,
	ADMIN_RELOAD,
	ADMIN_RELEASE,
	ADMIN_READ,
	ADMIN_SWITCHOVER,
	ADMIN_FAILOVER,
	ADMIN_MAINTENANCE,
	ADMIN_HISTORY,
};

#define ADMIN_HOST_MAX 55
/* MAINTENANCE on's reason (the coordinator's COORD_REASON_MAX) */
#define ADMIN_REASON_MAX 200

struct admin_req {
	enum admin_verb verb;
	/* APPEND: the record (pointing into the parsed bytes), its client id */
	const void *data;
	size_t len;
	uint64_t client_id;
	/*
	 * APPEND whose line is whole but whose record is not (PARSE_MORE):
	 * the line's bytes, LF included (0 otherwise), with len and
	 * client_id set, so a large record can be received elsewhere
	 */
	size_t head;
	/* VERIFY: the range (0: the default end); READ: from */
	uint64_t from, to;
	/* READ follow: go on streaming what is committed later */
	bool follow;
	/* RELEASE: records up to it may go */
	uint64_t lsn;
	/* PROMOTE force */
	int force;
	/* ADD/REMOVE: the member, and a new quorum (-1: unchanged) */
	char host[ADMIN_HOST_MAX + 1];
	uint16_t port;
	int quorum;
	/* SWITCHOVER, FAILOVER: the node to take over (0: the best replica) */
	uint32_t node_id;
	/* MAINTENANCE: on or off; on's reason ("" for none) */
	bool maintenance_on;
	char reason[ADMIN_REASON_MAX + 1];
};

enum admin_parse {
	ADMIN_PARSE_MORE = 0,	/* no whole request yet (see head) */
	ADMIN_PARSE_OK = 1,	/* *req; *used bytes consumed */
	ADMIN_PARSE_BAD = -1,	/* why says; *used bytes to skip (the line) */
	ADMIN_PARSE_FATAL = -2,	/* why says; the stream cannot be resynchronised */
};

enum admin_parse admin_req_parse(const char *buf, size_t len,
		struct admin_req *req, size_t *used, char *why, size_t whylen);

const char *admin_verb_name(enum admin_verb v);

#endif
