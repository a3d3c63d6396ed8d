/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_open.c -- a replica's resources: its log (locked, probed, made
 * when asked), its endpoints (RPMA data, TLS control), the registration of
 * its ring, and, for a log made anew, the promise floor it takes before it
 * serves anyone.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/elog.h"
#include "common/errors.h"
#include "common/fabric.h"
#include "common/fault.h"
#include "common/membership.h"
#include "log/log_lock.h"
#include "replica/replica_internal.h"

int
open_log(struct replica *r)
{
	const struct replica_cfg *cfg = r->cfg;
	bool make = cfg->create || cfg->reinit;
	enum wal_probe kind;
	int ret;

	/* one process at a time: a second one is refused before it reads */
	if ((ret = log_lock(cfg->path, make, &r->lock_fd, &r->log_created)))
		return ret;
	ret = rpma_ext_mem_open(cfg->backend, cfg->path, make ? cfg->size : 0,
		make ? RPMA_EXT_MEM_CREATE : 0, &r->mem);
	if ((ret = err_medium(ret))) {
		REPL_LOG_ERROR("replica: cannot open its log %s", cfg->path);
		return ret;
	}
	kind = wal_probe(r->mem);
	if (cfg->reinit && cfg->n_peers <= 0) {
		/* refused before anything is formatted: the log stays as it is */
		REPL_LOG_ERROR("replica: %s is not made anew: a log made anew "
			"takes its promise floor from other nodes of its "
			"configuration before it serves a primary, and the "
			"configuration lists none (peers)", cfg->path);
		return REPL_E_NO_PEERS;
	}
	if (cfg->reinit || (kind == WAL_PROBE_BLANK && cfg->create)) {
		/*
		 * An empty log in this cluster's name, a new incarnation.  Made
		 * anew, it promised nothing, not even what the log it replaces
		 * promised: marked so until it has taken its floor.  A new
		 * cluster's blank medium (create alone) is not.
		 */
		struct wal_identity id = { .node_id = cfg->node_id,
			.flags = cfg->reinit ? WAL_F_PROMISE_PENDING : 0 };

		if (cfg->reinit && kind != WAL_PROBE_BLANK)
			REPL_LOG_WARNING("replica: %s is made anew (reinit): what it "
				"held is gone; it is a member again once a primary "
				"has caught it up", cfg->path);
		memcpy(id.cluster_uuid, cfg->cluster_uuid, sizeof(id.cluster_uuid));
		if ((ret = wal_format(r->mem, &id)) != 0) {
			REPL_LOG_ERROR("replica: cannot format %s (%d)", cfg->path, ret);
			return ret;
		}
	} else if (kind == WAL_PROBE_BLANK) {
		/* a replaced disk must not pass for a new cluster's node */
		REPL_LOG_ERROR("replica: %s holds no log (every header byte is "
			"zero): refused; a blank medium is made a log only for a "
			"new cluster (create) or for a replica made anew (reinit)",
			cfg->path);
		return REPL_E_BLANK;
	} else if (kind == WAL_PROBE_DAMAGED || kind == WAL_PROBE_FOREIGN) {
		REPL_LOG_ERROR("replica: %s %s: refused (reinit makes it a new, "
			"empty log, losing what it holds)", cfg->path,
			kind == WAL_PROBE_DAMAGED ? "holds a damaged log (both header "
			"copies fail their checks)" : "holds no log but other data "
			"(a mistyped path?)");
		return REPL_E_CORRUPT;
	}
	{
		uint8_t uuid[16];

		/* before wal_open(), which marks the log open: nothing written */
		if (wal_cluster_of(r->mem, uuid) == 0 &&
		    memcmp(uuid, cfg->cluster_uuid, 16) != 0) {
			REPL_LOG_ERROR("replica: %s belongs to another cluster (its "
				"cluster id is not the configuration's)", cfg->path);
			return REPL_E_OTHER_CLUSTER;
		}
	}
	ret = wal_open(r->mem, &r->wal);
	if (ret) {
		REPL_LOG_ERROR("replica: %s holds no usable log (%d)", cfg->path, ret);
		return ret;
	}
	wal_identity(r->wal, &r->id, &r->ring_size);
	if (memcmp(r->id.cluster_uuid, cfg->cluster_uuid, 16) != 0) {
		REPL_LOG_ERROR("replica: %s belongs to another cluster (its cluster "
			"id is not the configuration's)", cfg->path);
		return REPL_E_OTHER_CLUSTER;
	}
	if (r->id.flags & WAL_F_PROMISE_PENDING) {
		if (cfg->n_peers <= 0) {
			REPL_LOG_ERROR("replica: %s was made anew and has not taken "
				"its promise floor yet; it takes it from other nodes "
				"of its configuration before it serves a primary, and "
				"the configuration lists none (peers)", cfg->path);
			return REPL_E_NO_PEERS;
		}
		if (!cfg->reinit)
			REPL_LOG_NOTICE("replica: %s was made anew and has not taken "
				"its promise floor yet (it stopped before): it takes "
				"it now", cfg->path);
	}
	/* nothing is readable before a primary says what is committed */
	wal_set_read_limit(r->wal, 0);
	return 0;
}

/*
 * The control channel's TLS contexts, before the log is touched: a bad
 * certificate or key leaves the log as it was (a log to be made is not
 * made, --reinit formats nothing).  The floor's client context is kept
 * only for a log that waits for its floor (open_log() says).
 */
int
open_tls(struct replica *r)
{
	const struct replica_cfg *cfg = r->cfg;
	const char *why = NULL;

	if (!cfg->tls_ca && !cfg->tls_cert && !cfg->tls_key) {
		REPL_LOG_WARNING("replica: the control channel is plain TCP: anyone on "
			"the network can read and forge it (configure TLS)");
		return 0;
	}
	if (!cfg->tls_ca || !cfg->tls_cert || !cfg->tls_key) {
		REPL_LOG_ERROR("replica: TLS needs a CA, a certificate and a key");
		return REPL_E_INVAL;
	}
	/* as a server, and for the floor's questions as a client */
	if (ctl_tls_new(cfg->tls_ca, cfg->tls_cert, cfg->tls_key, 1, &r->tls,
			&why) ||
	    ctl_tls_new(cfg->tls_ca, cfg->tls_cert, cfg->tls_key, 0,
			&r->floor_tls, &why)) {
		REPL_LOG_ERROR("replica: %s (the log %s is left as it was)", why,
			cfg->path);
		return REPL_E_INVAL;
	}
	return 0;
}

int
open_endpoints(struct replica *r)
{
	const struct replica_cfg *cfg = r->cfg;
	int ret;

	ret = fabric_peer_new(cfg->provider, cfg->addr, true, &r->peer);
	if (ret) {
		REPL_LOG_ERROR("replica: no RPMA peer on %s for %s", cfg->provider,
			cfg->addr);
		return ret;
	}
	if ((ret = new_region(r)))
		return ret;
	REPL_FAULT(REPL_E_TRANSPORT, {});
	ret = err_transport(rpma_ep_listen(r->peer, cfg->addr, cfg->data_port, &r->ep));
	if (ret) {
		REPL_LOG_ERROR("replica: cannot listen for data on %s:%s", cfg->addr,
			cfg->data_port);
		return ret;
	}
	ret = ctl_listen(cfg->addr, cfg->ctl_port, r->tls, &r->listener);
	if (ret) {
		REPL_LOG_ERROR("replica: cannot listen for control on %s:%s: %s",
			cfg->addr, cfg->ctl_port, strerror(-ret));
		return REPL_E_TRANSPORT;
	}
	return 0;
}

void
close_all(struct replica *r)
{
	promise_floor_delete(&r->floor);
	ctl_tls_delete(&r->floor_tls);
	ctl_listener_close(&r->listener);
	ctl_tls_delete(&r->tls);
	if (r->ep)
		rpma_ep_shutdown(&r->ep);
	if (r->mr)
		rpma_mr_dereg(&r->mr);
	if (r->peer)
		rpma_peer_delete(&r->peer);
	wal_close(&r->wal);
	if (r->mem)
		rpma_ext_mem_close(&r->mem);
	log_unlock(&r->lock_fd);
}

/*
 * Register the ring anew and drop the old registration: the key a former
 * primary holds then names nothing, so its one-sided writes fail at the
 * NIC (a remote access error) instead of landing in the ring.
 */
int
new_region(struct replica *r)
{
	struct rpma_mr_local *mr = NULL, *old = r->mr;
	uint8_t desc[CTL_DESC_MAX];
	size_t len = 0;
	int ret;

	ret = rpma_ext_mr_reg_mem(r->peer, r->mem, RPMA_MR_USAGE_WRITE_DST |
		RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr);
	if (ret == 0)
		ret = rpma_mr_get_descriptor_size(mr, &len);
	if (ret == 0 && (REPL_FAULTED() || len > sizeof(desc)))
		ret = REPL_E_INVAL;
	if (ret == 0)
		ret = rpma_mr_get_descriptor(mr, desc);
	if (ret) {
		if (mr)
			rpma_mr_dereg(&mr);
		REPL_LOG_ERROR("replica: cannot register its ring");
		return ret;
	}
	r->mr = mr;
	memcpy(r->desc, desc, len);
	r->desc_len = len;
	if (old) {
		/* a flush request being served holds it: that ends soon */
		uint64_t until = clock_now_ms() + (uint64_t)r->cfg->timeout_ms;

		while ((ret = rpma_mr_dereg(&old)) == RPMA_E_AGAIN &&
		       clock_now_ms() < until)
			(void)poll(NULL, 0, 1);
		if (ret) {
			REPL_LOG_ERROR("replica: cannot drop its old registration");
			return ret;
		}
	}
	return 0;
}

int
floor_begin(struct replica *r)
{
	struct log_pos head;
	struct log_pos h;
	int ret;

	if (r->cfg->n_peers > 0 && r->cfg->quorum >= r->cfg->n_peers) {
		/*
		 * k = n: an acknowledgement needs every node.  An old primary
		 * that a newer promotion superseded acknowledges nothing more
		 * (the newer primary is no replica of it), and the newer one
		 * acknowledged nothing without every replica, the old primary
		 * among them, following it.  There is no promise to keep, and
		 * no k + 1 others to ask: the mark goes at once.  (A two-node
		 * cluster takes a replaced disk back while its primary runs.)
		 */
		if ((ret = wal_take_floor(r->wal, 0, 0)) != 0) {
			REPL_LOG_ERROR("replica: cannot clear the promise-pending "
				"mark (%d)", ret);
			return ret;
		}
		wal_identity(r->wal, &r->id, &r->ring_size);
		REPL_LOG_NOTICE("replica: its log was made anew; with quorum %d of "
			"%d peers (k = n: every node holds each acknowledged "
			"record) it needs no promise floor", r->cfg->quorum,
			r->cfg->n_peers);
		return 0;
	}
	wal_positions(r->wal, &head, NULL, NULL);
	h = head;
	ret = promise_floor_new(r->cfg, r->id.cluster_uuid, r->id.node_id,
		r->id.incarnation, r->ring_size, &h, r->floor_tls, &r->floor);
	if (ret) {
		REPL_LOG_ERROR("replica: cannot ask for its promise floor (%d)", ret);
		return ret;
	}
	session_state(r, REPL_SESSION_FLOOR);
	REPL_LOG_NOTICE("replica: its log was made anew and promised nothing: "
		"before it serves a primary it takes the highest promise among %d "
		"of the %d other nodes of its configuration (k + 1, k = %d) as its "
		"own", promise_floor_needed(r->floor), promise_floor_peers(r->floor),
		r->cfg->quorum);
	return 0;
}

/* the floor's questions go on; once enough answered, it is stored */
void
floor_step(struct replica *r)
{
	char answers[600];
	uint64_t epoch, inc;
	int ret;

	if (!promise_floor_step(r->floor, &epoch, &inc, answers, sizeof(answers)))
		return;
	/* the promise and the end of the pending mark: one header update */
	if ((ret = wal_take_floor(r->wal, epoch, inc)) != 0) {
		REPL_LOG_ERROR("replica: cannot store its promise floor, epoch %llu "
			"(%d): asking again", (unsigned long long)epoch, ret);
		promise_floor_retry(r->floor);
		return;
	}
	wal_identity(r->wal, &r->id, &r->ring_size);
	REPL_LOG_NOTICE("replica: took its promise floor: epoch %llu (chosen by "
		"node %llu, incarnation %016llx), the highest of %d answers (%s); "
		"it follows epoch %llu and serves primaries from now on",
		(unsigned long long)epoch, (unsigned long long)(epoch & 0xffff),
		(unsigned long long)inc, promise_floor_answered(r->floor), answers,
		(unsigned long long)r->id.epoch);
	promise_floor_delete(&r->floor);
	ctl_tls_delete(&r->floor_tls);
	session_state(r, REPL_SESSION_IDLE);
}

int
replica_open(const struct replica_cfg *cfg, struct replica **rp)
{
	struct replica *r;
	int ret;

	if (cfg == NULL || rp == NULL || cfg->path == NULL || cfg->addr == NULL ||
	    cfg->ctl_port == NULL || cfg->data_port == NULL || cfg->stop == NULL)
		return REPL_E_INVAL;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return REPL_E_NOMEM;
	r->cfg = cfg;
	r->lock_fd = -1;
	r->state_since_ms = clock_now_ms();
	r->n.entered[REPL_SESSION_IDLE] = 1;
	if ((ret = open_tls(r)) == 0 && (ret = open_log(r)) == 0 &&
	    !(r->id.flags & WAL_F_PROMISE_PENDING))
		ctl_tls_delete(&r->floor_tls);
	if (ret || (ret = open_endpoints(r)) ||
	    ((r->id.flags & WAL_F_PROMISE_PENDING) && (ret = floor_begin(r)))) {
		/* a log this open made and could not finish is not left behind */
		log_lock_abandon(cfg->path, &r->lock_fd, r->log_created);
		close_all(r);
		free(r);
		return ret;
	}
	publish_state(r);
	*rp = r;
	return 0;
}
