/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_catchup.c -- what a link's catch-up and a promotion both do with a
 * replica that answered HELLO: open the data path to its ring (the
 * descriptor checked against the geometry, the connection admitted by the
 * session's token and stamped with the epoch), and find the newest LSN on
 * which both chains agree.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "primary/primary.h"
#include "ctl/ctl_chan.h"
#include "common/fabric.h"
#include "common/errors.h"
#include "common/fault.h"

/* does the replica's chain hold the same position after lsn as ours? */
static int
agrees(struct ctl_chan *ch, uint32_t *seq, int timeout_ms, struct wal *wal,
		uint64_t lsn, bool *yes, char *why, size_t n)
{
	struct ctl_msg m = { .type = CTL_QUERY, .seq = ++*seq };
	struct log_pos ours, theirs;
	int ret;

	*yes = false;
	if (wal_pos_after(wal, lsn, &ours))
		return 0;
	m.u.query.lsn = lsn;
	if (ctl_chan_send(ch, &m, timeout_ms) != 0) {
		snprintf(why, n, "control channel: %s", ctl_chan_why(ch));
		return -1;
	}
	do
		ret = ctl_chan_recv(ch, &m, timeout_ms);
	while (ret == 0 && m.type == CTL_HEARTBEAT);
	if (ret != 0 || m.type != CTL_QUERY_REPLY) {
		snprintf(why, n, "no QUERY_REPLY from the replica: %s", ret ?
			(ret == CTL_CHAN_AGAIN ? "timed out" : ctl_chan_why(ch)) :
			m.type == CTL_ERROR ? m.u.error.text : ctl_msg_type_name(m.type));
		return -1;
	}
	theirs = m.u.query_reply.after;
	*yes = m.u.query_reply.found && pos_equal(&ours, &theirs);
	return 0;
}

int
chain_agreement(struct ctl_chan *ch, uint32_t *seq, int timeout_ms,
		struct wal *wal, uint64_t lo, uint64_t hi, bool *found,
		uint64_t *lsn, char *why, size_t n)
{
	bool yes = false;

	*found = false;
	if (lo > hi)
		return 0;
	if (agrees(ch, seq, timeout_ms, wal, lo, &yes, why, n))
		return -1;
	if (!yes)
		return 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (agrees(ch, seq, timeout_ms, wal, mid, &yes, why, n))
			return -1;
		if (yes)
			lo = mid;
		else
			hi = mid - 1;
	}
	*found = true;
	*lsn = lo;
	return 0;
}

/*
 * The data path to a replica that answered HELLO with hr: its descriptor
 * checked against the geometry (a region that does not take writes, has
 * no persistent flush or is smaller than the ring is refused, named), the
 * connection opened with the session's admission token, and stamped with
 * this primary's epoch.
 */
int
link_data_open(struct cluster *c, const char *host, struct ctl_chan *ch,
		const struct ctl_hello_reply *hr, struct rpma_conn **conn,
		struct rpma_mr_remote **dst, char *why, size_t n)
{
	struct rpma_conn_cfg *ccfg = NULL;
	struct rpma_conn_req *req = NULL;
	char port[8];
	size_t size;
	int ret, ft, usage;

	if (memcmp(hr->cluster_uuid, c->id.cluster_uuid, 16) != 0 ||
	    hr->ring_size != c->ring_size) {
		snprintf(why, n, "its log belongs to another cluster or has another size");
		return -1;
	}
	if (REPL_FAULTED() ||
	    rpma_mr_remote_from_descriptor(hr->desc, hr->desc_len, dst) ||
	    rpma_mr_remote_get_size(*dst, &size) ||
	    rpma_mr_remote_get_flush_type(*dst, &ft) ||
	    rpma_ext_mr_remote_get_usage(*dst, &usage)) {
		snprintf(why, n, "its region descriptor is not valid");
		goto err;
	}
	if (!(usage & RPMA_MR_USAGE_WRITE_DST)) {
		snprintf(why, n, "its region does not take RDMA writes (usage 0x%x)", usage);
		goto err;
	}
	if (size < WAL_RING_OFF + c->ring_size ||
	    !(ft & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
		snprintf(why, n, "its region is %zu bytes%s; %llu and persistent flushes "
			"are needed", size, (ft & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ?
			"" : " without persistent flushes",
			(unsigned long long)(WAL_RING_OFF + c->ring_size));
		goto err;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)hr->data_port);
	/* a full resync's one batch may cover the whole ring */
	ccfg = fabric_conn_cfg(c->cfg.provider, (int)link_sq_depth(c->ring_size),
		c->cfg.down_timeout_ms);
	/*
	 * Its completions are reaped by the threads that wait for them (the
	 * appenders and the link's), never by the core's progress thread: a
	 * completion wakes at most the one that sleeps for it.
	 */
	if (ccfg && rpma_ext_conn_cfg_set_polled(ccfg, true))
		rpma_conn_cfg_delete(&ccfg);
	ret = ccfg ? rpma_conn_req_new(c->peer, host, port, ccfg, &req) : REPL_E_NOMEM;
	rpma_conn_cfg_delete(&ccfg);
	if (ret == 0) {
		/* over TLS, the admission token of this session opens the door */
		uint8_t token[CTL_TOKEN_SIZE];
		struct rpma_conn_private_data pdata = { token, CTL_TOKEN_SIZE };

		ret = rpma_conn_req_connect(&req,
			ctl_chan_admission_token(ch, token) == 0 ? &pdata : NULL, conn);
	}
	if (ret == 0)
		ret = fabric_conn_established(*conn, c->cfg.down_timeout_ms);
	if (ret) {
		snprintf(why, n, "cannot open the data connection to port %s", port);
		goto err;
	}
	/* its flush requests carry the epoch: a fenced replica refuses them */
	rpma_ext_conn_set_epoch(*conn, c->id.epoch);
	return 0;
err:
	link_data_close(conn, dst);
	return -1;
}

void
link_data_close(struct rpma_conn **conn, struct rpma_mr_remote **dst)
{
	fabric_conn_drop(conn, 200);
	if (*dst)
		rpma_mr_remote_delete(dst);
}
