/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_msg.h -- the control channel's messages between a primary and a
 * replica: encoding and a total decoder.  The wire format is specified in
 * docs/replication.md ("Control messages"); bytes from the network are
 * untrusted, so ctl_msg_decode() checks every field it can and names what
 * is wrong.
 *
 * Frame (little-endian): magic "RPLC" (4), version (2), type (2),
 * body length (4), sequence number (4), then the body.  A frame is at most
 * CTL_FRAME_MAX bytes.
 */
#ifndef REPL_CTL_MSG_H
#define REPL_CTL_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "common/membership.h"
#include "common/pos.h"

#define CTL_HDR_SIZE 16
#define CTL_FRAME_MAX 1024
#define CTL_DESC_MAX 64
#define CTL_TEXT_MAX 200
#define CTL_VERSION 5

enum ctl_type {
	CTL_HELLO = 1,		/* primary -> replica: who I am, my geometry */
	CTL_HELLO_REPLY = 2,	/* replica -> primary: its state, data endpoint */
	CTL_QUERY = 3,		/* primary -> replica: your chain after lsn? */
	CTL_QUERY_REPLY = 4,
	CTL_TRUNCATE = 5,	/* primary -> replica: drop records from pos on */
	CTL_SET_HEAD = 6,	/* primary -> replica: move the checkpoint to pos */
	CTL_ACK = 7,		/* replica -> primary: TRUNCATE, SET_HEAD or
				   MEMBERSHIP done */
	CTL_COMMIT = 8,		/* primary -> replica: commit LSN, flushed tail */
	CTL_HEARTBEAT = 9,	/* either way, when idle */
	CTL_ERROR = 10,		/* either way, then the channel closes */
	CTL_MEMBERSHIP = 11,	/* primary -> replica: store this membership
				   (answered by ACK) */
	CTL_VERIFY = 12,	/* primary -> replica: checksums of these ranges? */
	CTL_VERIFY_REPLY = 13,
};

struct ctl_hello {
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	uint32_t flags;		/* CTL_HELLO_F_FENCE_ONLY */
	uint64_t epoch;
	uint64_t ring_size;
	struct log_pos head;
	uint64_t incarnation;	/* of the primary's log (never 0) */
	uint64_t head_epoch;	/* of record head.lsn - 1 (0: none) */
};

/* TRUNCATE, SET_HEAD: a position and the epoch of the record before it */
struct ctl_cut {
	struct log_pos pos;
	uint64_t epoch;		/* of record pos.lsn - 1 (0: none or not known) */
};

struct ctl_hello_reply {
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	uint32_t flags;		/* CTL_HELLO_F_* */
	uint64_t epoch;		/* the epoch the replica follows (its header's) */
	uint64_t ring_size;
	struct log_pos head;	/* its checkpoint */
	struct log_pos tail;	/* after its last valid record */
	uint16_t data_port;	/* where its RPMA endpoint listens */
	uint16_t desc_len;
	uint8_t backend;	/* CTL_BACKEND_*: where its ring persists */
	uint64_t tail_epoch;	/* the epoch of its last record (0: none) */
	uint64_t config_epoch;	/* of the membership its log holds (0: none) */
	uint64_t incarnation;	/* of its log (never 0) */
	uint64_t head_epoch;	/* of record head.lsn - 1 (0: none or not known) */
	/*
	 * The epoch it followed before this HELLO (= epoch when the HELLO
	 * changed nothing): a promise never goes down, so one below what
	 * this node saw it promise says its log was put back.
	 */
	uint64_t prior_epoch;
	uint64_t epoch_inc;	/* incarnation of the log that chose epoch (0: ?) */
	uint32_t config_crc;	/* its membership's crc: which one (0: none) */
	uint8_t desc[CTL_DESC_MAX];	/* its ring's region descriptor */
};

/* HELLO_REPLY backend: 0 for a replica that does not say */
#define CTL_BACKEND_UNKNOWN	0
#define CTL_BACKEND_PMEM	1
#define CTL_BACKEND_FILE	2
#define CTL_BACKEND_CRASH	3
#define CTL_BACKEND_MAX		3

/* HELLO: a promotion's fence -- fence, report, and expect no data path */
#define CTL_HELLO_F_FENCE_ONLY	(1u << 0)
/* a restart's question: answer with your state, change nothing */
#define CTL_HELLO_F_PROBE	(1u << 1)
/* HELLO_REPLY */
#define CTL_HELLO_F_SUSPECT	(1u << 0)	/* its medium's health is suspect */
#define CTL_HELLO_F_STALE	(1u << 1)	/* refused: the HELLO's epoch is
						   below .epoch; nothing changed */
/* a log made anew still taking its promise floor: its epoch says nothing */
#define CTL_HELLO_F_PENDING	(1u << 2)


struct ctl_query {
	uint64_t lsn;
};

struct ctl_query_reply {
	uint64_t lsn;
	uint32_t found;		/* 0: lsn is not in its ring */
	struct log_pos after;	/* the position after record lsn */
};

struct ctl_ack {
	int32_t status;		/* 0 or a negative error */
	struct log_pos head;
	struct log_pos tail;
	uint64_t hold_next;	/* the first LSN a reader holds there
				   (repl_replica_hold); 0: none */
};

struct ctl_commit {
	uint64_t epoch;
	uint64_t commit_lsn;	/* readers on the replica stop there */
	struct log_pos flushed;	/* everything before is durable on it */
};

/*
 * VERIFY: the records from..to (inclusive), in ranges of per_range records
 * (the last may be shorter); at most CTL_VERIFY_RANGES_MAX ranges.
 */
#define CTL_VERIFY_RANGES_MAX 64

struct ctl_verify {
	uint64_t from, to;
	uint32_t per_range;
};

/* VERIFY_REPLY flags: the replica does not hold the whole range (crc 0) */
#define CTL_VERIFY_F_MISSING	(1u << 0)

struct ctl_verify_reply {
	uint64_t from, to;		/* as asked */
	uint32_t per_range;
	uint32_t n;			/* ranges: ctl_verify_ranges() of the above */
	uint32_t crc[CTL_VERIFY_RANGES_MAX];	/* wal_range_crc() of each */
	uint32_t flags[CTL_VERIFY_RANGES_MAX];	/* CTL_VERIFY_F_* */
};

/* how many ranges from..to makes (0 if from is 0, to < from or per_range 0) */
uint64_t ctl_verify_ranges(uint64_t from, uint64_t to, uint32_t per_range);

/*
 * HEARTBEAT: the primary's heartbeats carry time_ns and zeros; the
 * replica's answer also says what its readers need, so that the primary
 * learns of a hold without waiting for an ACK (a release round or a new
 * connection)
 */
struct ctl_heartbeat {
	uint64_t time_ns;
	uint64_t hold_next;	/* as in ACK: the first LSN a reader holds
				   there (repl_replica_hold); 0: none */
	uint32_t flags;		/* CTL_HEARTBEAT_F_* */
};

/* a reader on this replica needs a base from the primary's application */
#define CTL_HEARTBEAT_F_WANTS_BASE	(1u << 0)

/* ERROR code: the replica now follows a newer primary (see its text) */
#define CTL_CODE_FENCED 1
/*
 * ERROR code: the answer comes from a primary, not a replica (fenced by
 * this HELLO, or leading a newer epoch): a link retries later, it is not
 * itself fenced by it
 */
#define CTL_CODE_NOT_REPLICA 2

struct ctl_error {
	int32_t code;		/* CTL_CODE_* or a negative error */
	char text[CTL_TEXT_MAX + 1];	/* NUL-terminated, printable ASCII */
};

struct ctl_msg {
	enum ctl_type type;
	uint32_t seq;
	union {
		struct ctl_hello hello;
		struct ctl_hello_reply hello_reply;
		struct ctl_query query;
		struct ctl_query_reply query_reply;
		struct ctl_cut cut;		/* TRUNCATE, SET_HEAD */
		struct ctl_ack ack;
		struct ctl_commit commit;
		struct ctl_heartbeat heartbeat;
		struct ctl_error error;
		struct membership membership;
		struct ctl_verify verify;
		struct ctl_verify_reply verify_reply;
	} u;
};

/*
 * Encode m into buf (at least CTL_FRAME_MAX bytes); returns the frame's
 * length, or a negative value if m cannot be encoded (an unknown type, a
 * descriptor or text too long, or any field the decoder would reject:
 * a sender never puts on the wire what its peer must refuse).
 */
int ctl_msg_encode(const struct ctl_msg *m, uint8_t *buf, size_t size);

/* 0 if ctl_msg_encode() would accept m, else -1 with *why saying why not */
int ctl_msg_check(const struct ctl_msg *m, const char **why);

/*
 * The total length of the frame whose first CTL_HDR_SIZE bytes are hdr, or
 * -1 with *why set if the header is not one (bad magic, version, unknown
 * type, or a body length the type cannot have -- so never more than
 * CTL_FRAME_MAX).
 */
int ctl_msg_frame_len(const uint8_t *hdr, const char **why);

/*
 * Decode one whole frame of len bytes.  Returns 0, or -1 with *why naming
 * the fault (a static string) and *m unspecified.
 */
int ctl_msg_decode(const uint8_t *buf, size_t len, struct ctl_msg *m,
		const char **why);

/* the type's name, for logs ("HELLO", ...; "unknown" otherwise) */
const char *ctl_msg_type_name(int type);

/*
 * Fixed field i of message type `type`, as a row of docs/replication.md's
 * tables: "| offset | size | type | `name` |" into row.  0, or -1 when the
 * type has no such field (the rows of a type are i = 0, 1, ... until -1).
 */
int ctl_msg_layout(int type, int i, char *row, size_t size);

#endif
