/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs.h -- the verbs provider: libibverbs RC queue pairs set up through
 * librdmacm, as librpma did.
 *
 * The application polls the verbs CQs itself (rpma_cq_get_wc), so the data
 * path has no thread hand-off.  Every work request carries a slot of ours as
 * its wr_id: the slot holds the application's op_context and the local
 * region the request uses.  A completion retires its slot and every earlier
 * slot of the same queue (RC completes a queue's requests in order), so a
 * region's in-flight count is exact even for unsignaled requests.
 *
 * Flush: APM, an 8-byte RDMA READ after the writes, reading the 8 bytes
 * that end at the flushed range's end (clamped into the region), and only
 * for PERSISTENT where the target declared direct write to PMem.  Native
 * flush needs rdma-core >= 45 (absent here).  Atomic write: an inline,
 * fenced 8-byte RDMA WRITE (no native atomic write on rxe).
 */
#ifndef RPMA_VERBS_H
#define RPMA_VERBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conn.h"
#include "cq.h"
#include "peer.h"
#include "progress.h"

struct verbs_peer {
	struct rpma_peer base;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	bool odp;
	bool iwarp;
	/* serves the flush service of this peer's GPSPM connections */
	struct rpma_progress *progress;
};

struct verbs_ring;

/* one posted work request */
struct verbs_slot {
	const void *op_context;
	const struct rpma_mr_local *mr;
	struct verbs_ring *ring;
	uint64_t seq;
	bool done;
	bool submitted;		/* ibv_post_send took it */
};

/* a queue's slots, retired in order */
struct verbs_ring {
	pthread_mutex_t lock;
	struct verbs_slot *slots;
	uint32_t nslots;
	uint64_t posted;	/* next sequence number */
	uint64_t retired;	/* every seq below is retired */
	uint64_t submitted_upto;	/* every seq below reached the QP */
	/* a send queue: a completion means every earlier request completed */
	bool in_order;
};

struct verbs_cq {
	struct rpma_cq base;
	struct ibv_cq *cq;
	struct ibv_comp_channel *channel;
	bool channel_owned;
};

struct verbs_gpspm;

struct verbs_conn {
	struct rpma_conn base;
	struct verbs_peer *peer;
	struct rdma_cm_id *id;
	struct rdma_event_channel *evch;	/* the conn's own (after connect) */
	struct verbs_cq *cq;
	struct verbs_cq *rcq;
	struct ibv_comp_channel *shared_channel;
	struct rpma_srq *srq;
	struct verbs_ring sq;
	struct verbs_ring rq;
	/* APM: the 8 bytes a flush reads into */
	void *raw;
	struct ibv_mr *raw_mr;
	bool passive;
	bool have_pdata;
	bool disconnected;	/* the QP is in error: nothing more completes well */
	/* the core's flush service (rpma_ext_conn_cfg_set_gpspm), or NULL */
	struct verbs_gpspm *gpspm;
};

struct verbs_conn_req {
	struct rpma_conn_req base;
	struct verbs_conn *conn;
	struct rdma_addrinfo *rai;	/* active side */
};

struct verbs_srq {
	struct rpma_srq base;
	struct ibv_srq *srq;
	struct verbs_cq *rcq;
	struct verbs_ring ring;
};

struct verbs_ep {
	struct rpma_ep base;
	struct verbs_peer *peer;
	struct rdma_event_channel *evch;
	struct rdma_cm_id *id;
};

extern const struct rpma_conn_ops rpma_verbs_conn_ops;
extern const struct rpma_conn_req_ops rpma_verbs_conn_req_ops;
extern const struct rpma_ep_ops rpma_verbs_ep_ops;

int rpma_verbs_err(int err, const char *what);

int rpma_verbs_ep_listen(struct rpma_peer *peer, const char *addr,
		const char *port, struct rpma_ep **ep_ptr);
int rpma_verbs_conn_req_new(struct rpma_peer *peer, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr);
int rpma_verbs_srq_new(struct rpma_peer *peer, const struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr);

/* build the CQs and the QP of a connection on id */
int rpma_verbs_conn_new(struct verbs_peer *peer, struct rdma_cm_id *id,
		const struct rpma_conn_cfg *cfg, bool passive,
		struct verbs_conn **conn_ptr);
void rpma_verbs_conn_free(struct verbs_conn *conn);

/* completion queues (verbs_cq.c) */
int rpma_verbs_cq_new(struct verbs_peer *peer, uint32_t size,
		struct ibv_comp_channel *shared, struct verbs_cq **cq_ptr);
void rpma_verbs_cq_delete(struct verbs_cq *cq);

/* translate a work completion of ours: wr_id back to op_context */
void rpma_verbs_wc_translate(struct ibv_wc *wc);

/* the flush service (verbs_gpspm.c) */
int rpma_verbs_gpspm_new(struct verbs_conn *conn, uint32_t nslots,
		uint32_t cq_size, uint32_t rcq_size);
int rpma_verbs_gpspm_start(struct verbs_conn *conn);
void rpma_verbs_gpspm_cqs(struct verbs_conn *conn, struct ibv_cq **scq,
		struct ibv_cq **rcq);
void rpma_verbs_gpspm_delete(struct verbs_conn *conn);
/* the connection is gone: fail what waits for an answer, refuse more */
void rpma_verbs_gpspm_closed(struct verbs_conn *conn);
int rpma_verbs_gpspm_request(struct verbs_conn *conn, const struct rpma_op *op,
		int req_op);
void rpma_verbs_progress_stop(struct verbs_peer *peer);
int rpma_verbs_progress_count(struct verbs_peer *peer);

/* slots (verbs_cq.c) */
int rpma_verbs_ring_init(struct verbs_ring *ring, uint32_t nslots, bool in_order);
void rpma_verbs_ring_fini(struct verbs_ring *ring);
struct verbs_slot *rpma_verbs_slot_get(struct verbs_ring *ring,
		const void *op_context, const struct rpma_mr_local *mr);
void rpma_verbs_slot_unget(struct verbs_slot *slot);
/* ibv_post_send took the slot's request */
void rpma_verbs_slot_submitted(struct verbs_slot *slot);
/*
 * A send queue's requests of the core's own (flush service) are not in
 * the ring: the mark before posting one says which of the ring's requests
 * precede it on the QP, and its completion retires them (RC order), so
 * unsignaled writes followed by such a request free their slots.
 */
uint64_t rpma_verbs_ring_mark(struct verbs_ring *ring);
void rpma_verbs_ring_retire_before(struct verbs_ring *ring, uint64_t mark);

#endif
