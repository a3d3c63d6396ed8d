/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * request.h -- the core's requests to a peer's core (GPSPM): a flush of
 * either type or an 8-byte atomic write, carried out by the target's CPU
 * against the target's registered regions.  Both providers carry the same
 * 32-byte record, little-endian:
 *
 *   off size field
 *     0    1 op      enum rpma_req_op (a response: RPMA_REQ_RESPONSE)
 *     1    1 status  enum rpma_req_status (responses)
 *     2    2 slot    the initiator's slot, echoed in the response (verbs)
 *     4    4 len
 *     8    8 key     the target region's key
 *    16    8 addr    raddr + offset, as the initiator addresses the region
 *    24    8 value   atomic write: the 8 bytes to store;
 *                     flushes: the initiator's epoch (fencing)
 *
 * A flush whose epoch is below the target peer's floor
 * (rpma_ext_peer_fence) is refused with RPMA_REQ_FENCED.
 * A PERSISTENT flush is answered OK only after the range was persisted by
 * the region's backend (or its CPU cache lines flushed); any failure is a
 * non-OK status that the initiator completes as an error, never success.
 */
#ifndef RPMA_REQUEST_H
#define RPMA_REQUEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpma.h"

struct rpma_peer;
struct rpma_op;

struct rpma_req {
	uint8_t op;
	uint8_t status;
	uint16_t slot;
	uint32_t len;
	uint64_t key;
	uint64_t addr;
	uint64_t value;
};
_Static_assert(sizeof(struct rpma_req) == 32, "a request record is 32 bytes");

enum rpma_req_op {
	RPMA_REQ_FLUSH_PERSISTENT = 1,
	RPMA_REQ_FLUSH_VISIBILITY = 2,
	RPMA_REQ_ATOMIC_WRITE = 3,
	RPMA_REQ_RESPONSE = 4,
};

enum rpma_req_status {
	RPMA_REQ_OK = 0,
	RPMA_REQ_NO_REGION = 1,		/* no region with that key */
	RPMA_REQ_RANGE = 2,		/* outside the region */
	RPMA_REQ_USAGE = 3,		/* region not registered for it */
	RPMA_REQ_PERSIST = 4,		/* the backend failed to persist */
	RPMA_REQ_BAD = 5,		/* malformed */
	RPMA_REQ_FENCED = 6,		/* its epoch was fenced off */
};

/* fill a request for op (little-endian on the wire) */
void rpma_req_fill(struct rpma_req *r, enum rpma_req_op op,
		const struct rpma_op *o, uint64_t epoch);

/* carry out a request against peer's regions; returns its status */
unsigned rpma_req_serve(struct rpma_peer *peer, const struct rpma_req *r);

/*
 * The same for n requests that arrived together (at most RPMA_REQ_GROUP),
 * in order, status[i] for r[i]: consecutive PERSISTENT flushes share one
 * barrier of their regions' backends (a file's fdatasync), each answered
 * OK only once all of the group's ranges are durable.
 */
#define RPMA_REQ_GROUP 16
void rpma_req_serve_group(struct rpma_peer *peer, const struct rpma_req *r,
		unsigned *status, int n);

/* the completion status an answered request gives the application */
enum ibv_wc_status rpma_req_wc_status(unsigned status);

/* the initiator's requests waiting for an answer, by slot */
struct rpma_req_pending {
	const void *op_context;
	void *carrier;		/* the provider's, let go with the answer */
	bool in_use;
	bool signaled;
	enum ibv_wc_opcode opcode;
};

struct rpma_req_table {
	pthread_mutex_t lock;
	struct rpma_req_pending *slots;
	uint32_t n;
	uint32_t next;
};

int rpma_req_table_init(struct rpma_req_table *t, uint32_t n);
void rpma_req_table_fini(struct rpma_req_table *t);
/* a free slot below limit for op, or RPMA_E_PROVIDER when all are taken */
int rpma_req_table_take(struct rpma_req_table *t, uint32_t limit,
		const struct rpma_op *op, enum rpma_req_op rop, uint32_t *slot);
/* the request could not be posted */
void rpma_req_table_untake(struct rpma_req_table *t, uint32_t slot);
/*
 * The slot's request ended with st: frees the slot and returns true with
 * *wc filled when the application is to see a completion (it asked for
 * one, or it failed).
 */
bool rpma_req_table_complete(struct rpma_req_table *t, uint32_t slot,
		enum ibv_wc_status st, uint32_t vendor_err, uint32_t qp_num,
		struct ibv_wc *wc);
/* a taken slot's carrier (see rpma_req_table_carrier) */
void rpma_req_table_set_carrier(struct rpma_req_table *t, uint32_t slot,
		void *carrier);
/*
 * The carrier of a slot that was in use, once: complete() and untake()
 * clear the slot, so call it first; NULL if none or already taken.
 */
void *rpma_req_table_carrier(struct rpma_req_table *t, uint32_t slot);

/* the request a flush of this type makes */
static inline enum rpma_req_op
rpma_req_flush_op(enum rpma_flush_type type)
{
	return type == RPMA_FLUSH_TYPE_PERSISTENT ?
		RPMA_REQ_FLUSH_PERSISTENT : RPMA_REQ_FLUSH_VISIBILITY;
}

#endif
