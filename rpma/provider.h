/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * provider.h -- what a transport provides to the core.
 *
 * A peer picks its provider once, at creation; every object created from it
 * carries the provider's ops, so the data path makes one indirect call and
 * never tests which transport it is on.  Provider objects embed the generic
 * object as their first member.
 */
#ifndef RPMA_PROVIDER_H
#define RPMA_PROVIDER_H

#include "rpma.h"

struct rpma_peer;
struct rpma_mr_local;
struct rpma_ep;
struct rpma_conn_req;
struct rpma_conn;
struct rpma_cq;

/* one operation, already validated by conn.c */
struct rpma_op {
	const struct rpma_mr_local *local;	/* may be NULL (0-byte forms) */
	size_t local_offset;
	const struct rpma_mr_remote *remote;	/* one-sided ops only */
	size_t remote_offset;
	size_t len;
	int flags;				/* RPMA_F_COMPLETION_* */
	uint32_t imm;
	const void *op_context;
	const char *atomic_src;			/* atomic write: 8 bytes */
	enum rpma_flush_type flush_type;
};

struct rpma_provider {
	const char *name;
	enum rpma_ext_transport transport;

	int (*peer_delete)(struct rpma_peer *peer);

	/* fill mr->key, mr->raddr and the provider's handle */
	int (*mr_reg)(struct rpma_peer *peer, struct rpma_mr_local *mr);
	int (*mr_dereg)(struct rpma_mr_local *mr);
	/* NULL: nothing to advise (no on-demand paging) */
	int (*mr_advise)(struct rpma_mr_local *mr, size_t offset, size_t len,
			int advice, uint32_t flags);

	int (*ep_listen)(struct rpma_peer *peer, const char *addr,
			const char *port, struct rpma_ep **ep_ptr);
	/* NULL: the provider has no shared receive queues */
	int (*srq_new)(struct rpma_peer *peer, const struct rpma_srq_cfg *cfg,
			struct rpma_srq **srq_ptr);
	int (*conn_req_new)(struct rpma_peer *peer, const char *addr,
			const char *port, const struct rpma_conn_cfg *cfg,
			struct rpma_conn_req **req_ptr);
};

struct rpma_ep_ops {
	int (*shutdown)(struct rpma_ep *ep);
	int (*get_fd)(const struct rpma_ep *ep, int *fd);
	int (*next_conn_req)(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			struct rpma_conn_req **req_ptr);
};

struct rpma_conn_req_ops {
	int (*delete)(struct rpma_conn_req *req);
	int (*connect)(struct rpma_conn_req *req,
			const struct rpma_conn_private_data *pdata,
			struct rpma_conn **conn_ptr);
	int (*recv)(struct rpma_conn_req *req, const struct rpma_op *op);
};

struct rpma_srq_ops {
	int (*delete)(struct rpma_srq *srq);
	int (*recv)(struct rpma_srq *srq, const struct rpma_op *op);
};

struct rpma_srq {
	const struct rpma_srq_ops *ops;
	struct rpma_peer *peer;
	struct rpma_cq *rcq;		/* NULL: none of its own */
};

struct rpma_conn_ops {
	int (*next_event)(struct rpma_conn *conn, enum rpma_conn_event *event);
	int (*get_event_fd)(const struct rpma_conn *conn, int *fd);
	int (*disconnect)(struct rpma_conn *conn);
	int (*delete)(struct rpma_conn *conn);
	/* optional: the remote peer cfg changed what flush can promise */
	void (*peer_cfg_applied)(struct rpma_conn *conn);
	/* optional: wait on a shared completion channel (rings when NULL) */
	int (*wait)(struct rpma_conn *conn, struct rpma_cq **cq, bool *is_rcq);

	int (*read)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*write)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*write_with_imm)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*atomic_write)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*flush)(struct rpma_conn *conn, const struct rpma_op *op);
	/* write op's range, then flush it: in one post where the transport can */
	int (*write_flush)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*send)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*send_with_imm)(struct rpma_conn *conn, const struct rpma_op *op);
	int (*recv)(struct rpma_conn *conn, const struct rpma_op *op);
};

#endif
