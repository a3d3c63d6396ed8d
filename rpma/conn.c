/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.c -- rpma_conn: argument and bounds checks, then one call into the
 * provider.  librpma checked only the shape of the arguments; here every
 * one-sided operation is also checked against both regions' sizes and
 * usage, so a bad offset fails at once instead of as a remote-access error
 * later (docs/librpma-differences.md).
 */
#include "config.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "cq.h"
#include "errormsg.h"
#include "mr.h"
#include "mr_remote.h"
#include "peer.h"
#include "peer_cfg.h"

#define KNOWN_FLAGS RPMA_F_COMPLETION_ALWAYS

int
rpma_private_data_store(struct rpma_conn_private_data *pdata,
		const void *ptr, size_t len)
{
	pdata->ptr = NULL;
	pdata->len = 0;
	if (len == 0 || ptr == NULL)
		return 0;
	if (len > UINT8_MAX)
		len = UINT8_MAX;
	pdata->ptr = malloc(len);
	if (pdata->ptr == NULL)
		return rpma_fail(RPMA_E_NOMEM, "cannot copy private data");
	memcpy(pdata->ptr, ptr, len);
	pdata->len = (uint8_t)len;
	return 0;
}

void
rpma_private_data_discard(struct rpma_conn_private_data *pdata)
{
	free(pdata->ptr);
	pdata->ptr = NULL;
	pdata->len = 0;
}

static int
flags_valid(int flags)
{
	return flags != 0 && (flags & ~KNOWN_FLAGS) == 0;
}

static int
local_range(const struct rpma_mr_local *mr, size_t offset, size_t len,
		int usage, const char *what)
{
	if (len > UINT32_MAX)
		return rpma_fail(RPMA_E_INVAL, "%s len %zu exceeds 2^32 - 1", what, len);
	if ((mr->usage & usage) == 0)
		return rpma_fail(RPMA_E_INVAL,
			"%s region lacks usage 0x%x (it has 0x%x)", what,
			(unsigned)usage, (unsigned)mr->usage);
	if (offset > mr->size || len > mr->size - offset)
		return rpma_fail(RPMA_E_INVAL,
			"%s range [%zu, +%zu) is outside the %zu-byte region",
			what, offset, len, mr->size);
	return 0;
}

static int
remote_range(const struct rpma_conn *conn, const struct rpma_mr_remote *mr,
		size_t offset, size_t len, int usage, const char *what)
{
	if (mr->desc.transport != conn->peer->prov->transport)
		return rpma_fail(RPMA_E_INVAL,
			"%s region was described for another transport", what);
	if ((mr->desc.usage & usage) == 0)
		return rpma_fail(RPMA_E_INVAL,
			"%s region lacks usage 0x%x (it has 0x%x)", what,
			(unsigned)usage, (unsigned)mr->desc.usage);
	if (offset > mr->desc.size || len > mr->desc.size - offset)
		return rpma_fail(RPMA_E_INVAL,
			"%s range [%zu, +%zu) is outside the %llu-byte region",
			what, offset, len, (unsigned long long)mr->desc.size);
	return 0;
}

int
rpma_msg_range(const struct rpma_mr_local *mr, size_t offset, size_t len,
		int usage, const char *what)
{
	if (mr == NULL)	/* the 0-byte form */
		return (offset || len) ? rpma_fail(RPMA_E_INVAL,
			"a NULL %s region needs offset and len 0", what) : 0;
	return local_range(mr, offset, len, usage, what);
}

/* the shape shared by read, write and write_with_imm */
static int
one_sided_check(struct rpma_conn *conn, const struct rpma_mr_local *local,
		size_t local_off, const struct rpma_mr_remote *remote,
		size_t remote_off, size_t len, int flags, int local_usage,
		int remote_usage)
{
	int ret;

	if (conn == NULL || !flags_valid(flags))
		return rpma_fail(RPMA_E_INVAL, "conn is NULL or flags are not RPMA_F_COMPLETION_*");
	if (local == NULL || remote == NULL) {
		/* the 0-byte form: everything NULL or 0 */
		if (local != NULL || remote != NULL || local_off || remote_off || len)
			return rpma_fail(RPMA_E_INVAL,
				"a NULL region needs the 0-byte form (all offsets and len 0)");
		return 0;
	}
	if (len > UINT32_MAX)
		return rpma_fail(RPMA_E_INVAL, "len %zu exceeds 2^32 - 1", len);
	ret = local_range(local, local_off, len, local_usage, "local");
	if (ret)
		return ret;
	return remote_range(conn, remote, remote_off, len, remote_usage, "remote");
}

int
rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
		const struct rpma_mr_remote *src, size_t src_offset, size_t len,
		int flags, const void *op_context)
{
	struct rpma_op op = {
		.local = dst, .local_offset = dst_offset,
		.remote = src, .remote_offset = src_offset,
		.len = len, .flags = flags, .op_context = op_context,
	};
	int ret = one_sided_check(conn, dst, dst_offset, src, src_offset, len,
			flags, RPMA_MR_USAGE_READ_DST, RPMA_MR_USAGE_READ_SRC);

	return ret ? ret : conn->ops->read(conn, &op);
}

int
rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		const struct rpma_mr_local *src, size_t src_offset, size_t len,
		int flags, const void *op_context)
{
	struct rpma_op op = {
		.local = src, .local_offset = src_offset,
		.remote = dst, .remote_offset = dst_offset,
		.len = len, .flags = flags, .op_context = op_context,
	};
	int ret = one_sided_check(conn, src, src_offset, dst, dst_offset, len,
			flags, RPMA_MR_USAGE_WRITE_SRC, RPMA_MR_USAGE_WRITE_DST);

	return ret ? ret : conn->ops->write(conn, &op);
}

int
rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, int flags, uint32_t imm,
		const void *op_context)
{
	struct rpma_op op = {
		.local = src, .local_offset = src_offset,
		.remote = dst, .remote_offset = dst_offset,
		.len = len, .flags = flags, .imm = imm, .op_context = op_context,
	};
	int ret = one_sided_check(conn, src, src_offset, dst, dst_offset, len,
			flags, RPMA_MR_USAGE_WRITE_SRC, RPMA_MR_USAGE_WRITE_DST);

	return ret ? ret : conn->ops->write_with_imm(conn, &op);
}

int
rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const char src[8], int flags,
		const void *op_context)
{
	struct rpma_op op = {
		.remote = dst, .remote_offset = dst_offset, .len = 8,
		.flags = flags, .op_context = op_context, .atomic_src = src,
	};
	int ret;

	if (conn == NULL || dst == NULL || src == NULL || !flags_valid(flags))
		return rpma_fail(RPMA_E_INVAL, "conn, dst or src is NULL or flags are invalid");
	ret = remote_range(conn, dst, dst_offset, 8, RPMA_MR_USAGE_WRITE_DST, "remote");
	if (ret)
		return ret;
	/* the address the store lands on, not just the offset */
	if ((dst->desc.raddr + dst_offset) % RPMA_ATOMIC_WRITE_ALIGNMENT)
		return rpma_fail(RPMA_E_INVAL,
			"atomic write address 0x%llx is not 8-byte aligned",
			(unsigned long long)(dst->desc.raddr + dst_offset));
	return conn->ops->atomic_write(conn, &op);
}

/* what every flush needs: a known type, a region registered for it, a method */
static int
flush_check(struct rpma_conn *conn, const struct rpma_mr_remote *dst,
		size_t dst_offset, size_t len, enum rpma_flush_type type)
{
	int usage;
	int ret;

	if (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY)
		return rpma_fail(RPMA_E_INVAL, "unknown flush type %d", (int)type);
	/* as for the other operations: a flush request carries 32 bits of len */
	if (len > UINT32_MAX)
		return rpma_fail(RPMA_E_INVAL, "len %zu exceeds 2^32 - 1", len);
	usage = type == RPMA_FLUSH_TYPE_PERSISTENT ?
		RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT : RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	if ((dst->desc.usage & usage) == 0)
		return rpma_fail(RPMA_E_NOSUPP,
			"remote region was not registered for this flush type");
	ret = remote_range(conn, dst, dst_offset, len, usage, "flush");
	if (ret)
		return ret;
	if (conn->flush_method[type] == RPMA_EXT_FLUSH_NONE)
		return rpma_fail(RPMA_E_NOSUPP, type == RPMA_FLUSH_TYPE_PERSISTENT ?
			"the target declared no direct write to PMem and serves no flush requests" :
			"no flush method reaches visibility on this connection");
	return 0;
}

int
rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		size_t len, enum rpma_flush_type type, int flags,
		const void *op_context)
{
	struct rpma_op op = {
		.remote = dst, .remote_offset = dst_offset, .len = len,
		.flags = flags, .op_context = op_context, .flush_type = type,
	};
	int ret;

	if (conn == NULL || dst == NULL || !flags_valid(flags))
		return rpma_fail(RPMA_E_INVAL, "conn or dst is NULL or flags are invalid");
	ret = flush_check(conn, dst, dst_offset, len, type);
	return ret ? ret : conn->ops->flush(conn, &op);
}

int
rpma_ext_write_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		size_t dst_offset, const struct rpma_mr_local *src,
		size_t src_offset, size_t len, enum rpma_flush_type type,
		int flags, const void *op_context)
{
	struct rpma_op op = {
		.local = src, .local_offset = src_offset,
		.remote = dst, .remote_offset = dst_offset,
		.len = len, .flags = flags, .op_context = op_context,
		.flush_type = type,
	};
	int ret;

	if (conn == NULL || dst == NULL || src == NULL || !flags_valid(flags))
		return rpma_fail(RPMA_E_INVAL, "conn, dst or src is NULL or flags are invalid");
	if (len == 0)
		return rpma_fail(RPMA_E_INVAL, "nothing to write: use rpma_flush()");
	ret = one_sided_check(conn, src, src_offset, dst, dst_offset, len,
			RPMA_F_COMPLETION_ON_ERROR, RPMA_MR_USAGE_WRITE_SRC,
			RPMA_MR_USAGE_WRITE_DST);
	if (ret == 0)
		ret = flush_check(conn, dst, dst_offset, len, type);
	if (ret)
		return ret;
	return conn->ops->write_flush(conn, &op);
}

int
rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, const void *op_context)
{
	struct rpma_op op = {
		.local = src, .local_offset = offset, .len = len,
		.flags = flags, .op_context = op_context,
	};
	int ret;

	if (conn == NULL || !flags_valid(flags))
		return rpma_fail(RPMA_E_INVAL, "conn is NULL or flags are invalid");
	if ((ret = rpma_msg_range(src, offset, len, RPMA_MR_USAGE_SEND, "send")))
		return ret;
	return conn->ops->send(conn, &op);
}

int
rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src,
		size_t offset, size_t len, int flags, uint32_t imm,
		const void *op_context)
{
	struct rpma_op op = {
		.local = src, .local_offset = offset, .len = len,
		.flags = flags, .imm = imm, .op_context = op_context,
	};
	int ret;

	if (conn == NULL || !flags_valid(flags))
		return rpma_fail(RPMA_E_INVAL, "conn is NULL or flags are invalid");
	if ((ret = rpma_msg_range(src, offset, len, RPMA_MR_USAGE_SEND, "send")))
		return ret;
	return conn->ops->send_with_imm(conn, &op);
}

int
rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset,
		size_t len, const void *op_context)
{
	struct rpma_op op = {
		.local = dst, .local_offset = offset, .len = len,
		.op_context = op_context,
	};
	int ret;

	if (conn == NULL)
		return rpma_fail(RPMA_E_INVAL, "conn is NULL");
	if ((ret = rpma_msg_range(dst, offset, len, RPMA_MR_USAGE_RECV, "recv")))
		return ret;
	return conn->ops->recv(conn, &op);
}

int
rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL)
		return RPMA_E_INVAL;
	return conn->ops->get_event_fd(conn, fd);
}

int
rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	if (conn == NULL || event == NULL)
		return RPMA_E_INVAL;
	return conn->ops->next_event(conn, event);
}

int
rpma_conn_get_private_data(const struct rpma_conn *conn,
		struct rpma_conn_private_data *pdata)
{
	if (conn == NULL || pdata == NULL)
		return RPMA_E_INVAL;
	*pdata = conn->pdata;
	return 0;
}

int
rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn,
		const struct rpma_peer_cfg *pcfg)
{
	bool dw;

	if (conn == NULL || pcfg == NULL)
		return RPMA_E_INVAL;
	rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &dw);
	atomic_store(&conn->direct_write_to_pmem, dw);
	if (conn->ops->peer_cfg_applied)
		conn->ops->peer_cfg_applied(conn);
	return 0;
}

int
rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	if (conn == NULL || qp_num == NULL)
		return RPMA_E_INVAL;
	*qp_num = conn->qp_num;
	return 0;
}

int
rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr)
{
	if (conn == NULL || cq_ptr == NULL)
		return RPMA_E_INVAL;
	*cq_ptr = conn->cq;
	return 0;
}

int
rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr)
{
	if (conn == NULL || rcq_ptr == NULL)
		return RPMA_E_INVAL;
	*rcq_ptr = conn->rcq;
	return 0;
}

int
rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	if (conn == NULL || fd == NULL)
		return RPMA_E_INVAL;
	if (!conn->shared_channel)
		return RPMA_E_NOT_SHARED_CHNL;
	/* cq and rcq share the cq's fd */
	rpma_cq_get_fd(conn->cq, fd);
	if (conn->rcq)
		rpma_cq_get_fd(conn->rcq, fd);
	return 0;
}

int
rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq,
		bool *is_rcq)
{
	struct rpma_cq *both[2];
	int ret;

	(void)flags;	/* reserved, as in librpma */
	if (conn == NULL || cq == NULL)
		return RPMA_E_INVAL;
	if (!conn->shared_channel)
		return RPMA_E_NOT_SHARED_CHNL;
	if (conn->ops->wait)
		return conn->ops->wait(conn, cq, is_rcq);
	both[0] = conn->cq;
	both[1] = conn->rcq;
	for (;;) {
		for (int i = 0; i < 2; i++) {
			if (both[i] && rpma_cq_has_entries(both[i])) {
				*cq = both[i];
				if (is_rcq)
					*is_rcq = i == 1;
				return 0;
			}
		}
		ret = rpma_cq_block(both, conn->rcq ? 2 : 1);
		if (ret)
			return ret;
	}
}

int
rpma_conn_disconnect(struct rpma_conn *conn)
{
	if (conn == NULL)
		return RPMA_E_INVAL;
	return conn->ops->disconnect(conn);
}

int
rpma_conn_delete(struct rpma_conn **conn_ptr)
{
	int ret;

	if (conn_ptr == NULL)
		return RPMA_E_INVAL;
	if (*conn_ptr == NULL)
		return 0;
	ret = (*conn_ptr)->ops->delete(*conn_ptr);
	*conn_ptr = NULL;
	return ret;
}

int
rpma_ext_conn_get_flush_method(const struct rpma_conn *conn,
		enum rpma_flush_type type, enum rpma_ext_flush_method *method)
{
	if (conn == NULL || method == NULL ||
	    (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY))
		return RPMA_E_INVAL;
	*method = conn->flush_method[type];
	return 0;
}

int
rpma_ext_conn_set_epoch(struct rpma_conn *conn, uint64_t epoch)
{
	if (conn == NULL)
		return RPMA_E_INVAL;
	atomic_store_explicit(&conn->epoch, epoch, memory_order_relaxed);
	return 0;
}
