/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi.h -- the libfabric provider: FI_EP_MSG endpoints (tcp, net).
 *
 * Connections carry, besides the application's operations, the core's own
 * requests to the target: a flush (GPSPM) or an 8-byte atomic write.  A
 * request is an RMA write of a 32-byte record into the target's request
 * area with remote CQ data naming the slot; the target's progress thread
 * serves it in order and answers with a 0-byte write whose CQ data carries
 * the slot and a status.  Remote CQ data consumes no posted receive on these
 * providers (no FI_RX_CQ_DATA mode), so the application's send/recv are
 * untouched.  The request follows the writes it covers because the endpoint
 * orders write-after-write; where it does not, the request is fenced.
 *
 * CQ data layout (64 bits): bits 63..56 tag, 55..48 status, 47..0 slot or,
 * with tag 0, the application's 32-bit immediate.
 */
#ifndef RPMA_OFI_H
#define RPMA_OFI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

/*
 * libfabric's own functions, through ofi_dl.c: it is loaded on first use,
 * not linked.  Every call below these lines goes there; the operation
 * tables of the objects it makes need nothing of this.
 */
int rpma_fi_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints, struct fi_info **info);
void rpma_fi_freeinfo(struct fi_info *info);
struct fi_info *rpma_fi_dupinfo(const struct fi_info *info);
int rpma_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		void *context);
const char *rpma_fi_strerror(int errnum);
#define fi_getinfo rpma_fi_getinfo
#define fi_freeinfo rpma_fi_freeinfo
#define fi_dupinfo rpma_fi_dupinfo
#define fi_fabric rpma_fi_fabric
#define fi_strerror rpma_fi_strerror
#define fi_allocinfo() rpma_fi_dupinfo(NULL)

#include "conn.h"
#include "peer.h"
#include "progress.h"
#include "request.h"

#define OFI_API_VERSION FI_VERSION(1, 17)

#define OFI_TAG_USER	0x00ull
#define OFI_TAG_REQ	0xC1ull
#define OFI_TAG_RESP	0xC2ull
#define OFI_DATA(tag, status, slot) \
	(((uint64_t)(tag) << 56) | ((uint64_t)(status) << 48) | (uint64_t)(slot))
#define OFI_DATA_TAG(d)		((d) >> 56)
#define OFI_DATA_STATUS(d)	(((d) >> 48) & 0xff)
#define OFI_DATA_SLOT(d)	((d) & 0xffffffffffffull)

/* the core's hello, first in the connection's private data (little-endian) */
struct ofi_hello {
	char magic[4];		/* "RPMC" */
	uint8_t version;	/* 1 */
	uint8_t reserved;
	uint16_t nslots;	/* request slots the sender serves */
	uint64_t req_key;	/* its request area */
	uint64_t req_raddr;
	uint64_t reserved2;
};
_Static_assert(sizeof(struct ofi_hello) == 32, "hello is 32 bytes");


struct ofi_peer {
	struct rpma_peer base;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	bool virt_addr;		/* FI_MR_VIRT_ADDR: remote addresses are VAs */
	bool prov_key;		/* FI_MR_PROV_KEY: the provider picks keys */
	bool ordered_waw;	/* a request cannot overtake earlier writes */
	bool two_segments;	/* a write may carry its flush request along */
	struct rpma_progress *progress;	/* progress.h */
};

enum ofi_op_kind {
	OFI_OP_READ, OFI_OP_WRITE, OFI_OP_SEND, OFI_OP_RECV,
	OFI_OP_INTERNAL,	/* a request or response: no completion of its own */
	OFI_OP_WRITE_REQ,	/* a write carrying a request (rpma_ext_write_flush) */
};

/* one posted operation; its address is the libfabric context */
struct ofi_srq;

struct ofi_op {
	const void *op_context;
	const struct rpma_mr_local *mr;	/* held until completion */
	uint8_t kind;
	bool signaled;
	bool to_rcq;
	bool in_use;
	struct ofi_srq *srq;		/* a receive posted to an SRQ */
	struct ofi_op *next_free;
};

/* a shared receive queue: a libfabric shared receive context */
struct ofi_srq {
	struct rpma_srq base;
	struct ofi_peer *peer;
	struct fid_ep *srx;
	pthread_mutex_t lock;
	struct ofi_op *ops;
	uint32_t nops;
	struct ofi_op *free_ops;
	atomic_int users;		/* connections receiving through it */
};

struct ofi_conn {
	struct rpma_conn base;
	struct ofi_peer *peer;
	struct fid_ep *ep;
	struct fid_eq *eq;
	struct fid_cq *cq;
	int eq_fd;
	int cq_fd;
	bool passive;
	/*
	 * The application reaps its completions (rpma_ext_conn_cfg_set_polled):
	 * the progress thread leaves it alone, and whoever drives it holds
	 * drive_lock, so one thread at a time reads its CQ.
	 */
	bool polled;
	pthread_mutex_t drive_lock;
	bool established;	/* FI_CONNECTED was seen */
	atomic_bool closed;

	pthread_mutex_t ops_lock;
	struct ofi_op *ops;
	uint32_t nops;
	struct ofi_op *free_ops;

	/* requests others send us */
	struct rpma_req *req_area;
	struct fid_mr *req_mr;
	uint16_t nslots;
	struct ofi_op internal_op;	/* context of requests and responses */
	struct ofi_srq *srq;		/* receives go through it, or NULL */

	/* requests we send */
	struct rpma_req *stage;
	struct fid_mr *stage_mr;
	struct rpma_req_table pending;	/* ours, waiting for answers */
	uint16_t remote_nslots;
	uint64_t remote_req_key;
	uint64_t remote_req_raddr;
	bool have_remote_hello;

	struct rpma_progress_item pitem;	/* the progress thread's */
};

struct ofi_ep {
	struct rpma_ep base;
	struct ofi_peer *peer;
	struct fi_info *info;
	struct fid_pep *pep;
	struct fid_eq *eq;
	int eq_fd;
	/* the endpoint and each pending request: fi_reject needs the pep */
	atomic_int refs;
};

struct ofi_conn_req {
	struct rpma_conn_req base;
	struct ofi_conn *conn;		/* built at request time, armed at connect */
	struct ofi_ep *ep;		/* passive side: for fi_reject */
	struct fi_info *info;
};

void rpma_ofi_ep_put(struct ofi_ep *ep);
int rpma_ofi_progress_count(struct ofi_peer *peer);

extern const struct rpma_conn_ops rpma_ofi_conn_ops;
extern const struct rpma_conn_req_ops rpma_ofi_conn_req_ops;
extern const struct rpma_ep_ops rpma_ofi_ep_ops;

int rpma_ofi_err(int fi_ret, const char *what);
struct fi_info *rpma_ofi_hints(const struct ofi_peer *peer);
int rpma_ofi_mr_reg_raw(struct ofi_peer *peer, void *ptr, size_t size,
		uint64_t access, struct fid_mr **mr_out);
/* a blocking read honours O_NONBLOCK set on the event fd */
bool rpma_ofi_fd_nonblocking(int fd);

/* connection objects (ofi_conn.c) */
int rpma_ofi_conn_new(struct ofi_peer *peer, struct fi_info *info,
		const struct rpma_conn_cfg *cfg, bool passive,
		struct ofi_conn **conn_ptr);
void rpma_ofi_conn_free(struct ofi_conn *conn);
void rpma_ofi_hello_fill(const struct ofi_conn *conn, struct ofi_hello *h);
int rpma_ofi_hello_take(struct ofi_conn *conn, const void *data, size_t len,
		struct rpma_conn_private_data *user);
int rpma_ofi_conn_req_new(struct rpma_peer *peer, const char *addr,
		const char *port, const struct rpma_conn_cfg *cfg,
		struct rpma_conn_req **req_ptr);
int rpma_ofi_ep_listen(struct rpma_peer *peer, const char *addr,
		const char *port, struct rpma_ep **ep_ptr);
int rpma_ofi_post_recv(struct ofi_conn *conn, const struct rpma_op *op);
int rpma_ofi_srq_new(struct rpma_peer *peer, const struct rpma_srq_cfg *cfg,
		struct rpma_srq **srq_ptr);
void rpma_ofi_srq_op_put(struct ofi_op *o);
/* handle what the CQ holds; returns how many entries (progress thread) */
int rpma_ofi_conn_progress(struct ofi_conn *conn);
/* fail every outstanding request of ours (the connection is gone) */
void rpma_ofi_conn_fail_pending(struct ofi_conn *conn);
/* fail them if the connection's events say it is gone (progress thread) */
void rpma_ofi_conn_watch(struct ofi_conn *conn);

/* shared by ofi_conn.c and ofi_data.c */
struct ofi_op *rpma_ofi_op_get(struct ofi_conn *conn, enum ofi_op_kind kind,
		const struct rpma_op *op);
void rpma_ofi_op_put(struct ofi_conn *conn, struct ofi_op *o);
uint32_t rpma_ofi_qp_num(const struct ofi_conn *conn);
int rpma_ofi_conn_next_event(struct rpma_conn *base, enum rpma_conn_event *event);
int rpma_ofi_conn_get_event_fd(const struct rpma_conn *base, int *fd);
int rpma_ofi_conn_disconnect(struct rpma_conn *base);
int rpma_ofi_conn_delete(struct rpma_conn *base);

/* progress (ofi_progress.c) */
int rpma_ofi_progress_add(struct ofi_peer *peer, struct ofi_conn *conn);
void rpma_ofi_progress_remove(struct ofi_peer *peer, struct ofi_conn *conn);
void rpma_ofi_progress_stop(struct ofi_peer *peer);
void rpma_ofi_progress_drive(void *conn);
int rpma_ofi_progress_wait_fd(void *conn);

/* requests (ofi_request.c) */
int rpma_ofi_request_post(struct ofi_conn *conn, const struct rpma_op *op,
		enum rpma_req_op rop, bool with_data);
/* serve the requests in slots[0..n) (n <= RPMA_REQ_GROUP), which arrived
 * together, and answer each */
void rpma_ofi_request_serve(struct ofi_conn *conn, const uint64_t *slots, int n);
void rpma_ofi_request_answered(struct ofi_conn *conn, uint64_t slot,
		unsigned status);

#endif
