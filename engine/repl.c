/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * repl.c -- librepl's API (repl.h) over the local log (wal.c).  Errors of
 * the layers below become REPL_E_* codes; their reasons go to the core's
 * log function.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_chan.h"
#include "primary/cluster.h"
#include "common/fabric.h"
#include "common/elog.h"
#include "facade.h"
#include "log/log_lock.h"
#include "replica/replica.h"
#include "log/wal.h"
#include "common/errors.h"

struct repl {
	struct rpma_ext_mem *mem;
	struct wal *wal;
	struct cluster *cluster;	/* NULL: a single node */
	int full_timeout_ms;
	int lock_fd;			/* holds the log's lock (log_lock.h) */
};

/*
 * The internals speak REPL_E_* and turn the core's codes into them where
 * the call was made (common/errors.h); what still arrives as a core code
 * comes from the transport, passed on unchanged from below.
 */
int
facade_err(int ret)
{
	return err_transport(ret);
}

int
facade_backend(enum repl_backend b, enum rpma_ext_mem_backend *out)
{
	switch (b) {
	case REPL_BACKEND_PMEM:		*out = RPMA_EXT_MEM_PMEM; return 0;
	case REPL_BACKEND_FILE:		*out = RPMA_EXT_MEM_FILE; return 0;
	case REPL_BACKEND_CRASH:	*out = RPMA_EXT_MEM_CRASH; return 0;
	default:			return REPL_E_INVAL;
	}
}

const char *
repl_strerror(int err)
{
	switch (err) {
	case 0:			return "Success";
	case REPL_E_INVAL:	return "Invalid argument or configuration";
	case REPL_E_NOMEM:	return "Out of memory";
	case REPL_E_IO:		return "The log's medium failed";
	case REPL_E_CORRUPT:	return "The log on the medium is damaged (no valid header, or a record fails its checksum)";
	case REPL_E_FULL:	return "The log is full (release what the database checkpointed)";
	case REPL_E_TOO_BIG:	return "The record is larger than the log can hold";
	case REPL_E_NOT_FOUND:	return "No such record in the log";
	case REPL_E_TIMEDOUT:	return "Not durable on enough replicas in time (see repl_replica_status)";
	case REPL_E_FENCED:	return "Fenced: a newer primary took over; this one appends no more";
	case REPL_E_UNKNOWN:	return "Outcome unknown: fenced while the record was in flight (read it on the new primary)";
	case REPL_E_NO_QUORUM:	return "Cannot promote: fewer than n - k + 1 nodes reachable (forcing it may lose acknowledged records)";
	case REPL_E_MEMBERSHIP:	return "The replicas or quorum differ from the membership stored in the log (reconfigure to change it)";
	case REPL_E_LOCKED:	return "The log is in use: another process holds its lock";
	case REPL_E_NOT_MEMBER:	return "This node's log holds no membership: it is not a member of a cluster (bootstrap a new cluster, or let a primary catch it up)";
	case REPL_E_SUPERSEDED:	return "A newer primary took over while this node was down: it must not lead again on its own (serve as a replica, or promote explicitly)";
	case REPL_E_TRANSPORT:	return "The network failed (an RDMA or libfabric connection, or no usable device or provider)";
	case REPL_E_BLANK:	return "The medium holds no log (it is made only for a new cluster, or for a replica made anew)";
	case REPL_E_NO_PEERS:	return "The log is made anew and takes its promise floor from other nodes of its configuration, and none is given";
	case REPL_E_OTHER_CLUSTER: return "The log belongs to another cluster: its cluster id is not the configuration's";
	default:		return "Unknown error";
	}
}

/*
 * A bootstrap finds a file at the log's path: is it a restored log
 * (repl_restore_*) that holds no membership, which the bootstrap takes as
 * its new cluster's first log?  1 yes; 0 no (the bootstrap is refused as
 * over any log); REPL_E_OTHER_CLUSTER for a restore of another cluster.
 * Read offline, before anything maps or marks it.
 */
static int
bootstrap_restored(const struct repl_cfg *cfg)
{
	struct repl_reader *rd;
	struct repl_log_header h;
	int ret;

	if (repl_reader_open(cfg->path, &rd, NULL, 0) != 0)
		return 0;
	ret = repl_reader_header(rd, &h);
	repl_reader_close(&rd);
	if (ret != 0 || !h.restored || h.membership.config_epoch != 0)
		return 0;
	if (memcmp(h.cluster_uuid, cfg->cluster_uuid, sizeof(h.cluster_uuid)) != 0) {
		REPL_LOG_ERROR("bootstrap refused: %s is a restored log of another "
			"cluster (its cluster id is not the configuration's: restore "
			"with the new cluster's id)", cfg->path);
		return REPL_E_OTHER_CLUSTER;
	}
	REPL_LOG_NOTICE("bootstrap: %s is a restored log: the new cluster starts "
		"with its records", cfg->path);
	return 1;
}

int
repl_open(const struct repl_cfg *cfg, struct repl **repl_ptr)
{
	enum rpma_ext_mem_backend backend;
	struct repl *repl;
	bool created = false;
	int ret, restored = 0;
	bool format;

	if (cfg == NULL || repl_ptr == NULL || cfg->path == NULL ||
	    facade_backend(cfg->backend, &backend) != 0 ||
	    (cfg->create && cfg->size == 0) || cfg->n_replicas < 0 ||
	    (cfg->n_replicas && cfg->replicas == NULL) || cfg->quorum < 0)
		return REPL_E_INVAL;
	if (cfg->quorum > cfg->n_replicas) {
		/* e.g. a reconfiguration that removes too many replicas */
		REPL_LOG_ERROR("refused: quorum %d with %d replicas: fewer replicas "
			"than must hold each record", cfg->quorum, cfg->n_replicas);
		return REPL_E_INVAL;
	}
	{
		/* a single node flushes nothing remotely: only the value counts */
		const char *provider = cfg->n_replicas == 0 ? "verbs" :
			cfg->provider ? cfg->provider : "tcp";
		const char *why;

		if (fabric_flush_check(provider, cfg->flush_method, &why)) {
			REPL_LOG_ERROR("refused: flush method %d over %s: %s",
				cfg->flush_method, provider, why);
			return REPL_E_INVAL;
		}
	}
	if (cfg->n_replicas && (cfg->tls_ca || cfg->tls_cert || cfg->tls_key)) {
		const char *why = NULL;

		/* before the log is locked, made or formatted: it stays as it is */
		if (!cfg->tls_ca || !cfg->tls_cert || !cfg->tls_key) {
			REPL_LOG_ERROR("TLS needs a CA, a certificate and a key");
			return REPL_E_INVAL;
		}
		if ((ret = ctl_tls_check(cfg->tls_ca, cfg->tls_cert, cfg->tls_key,
				&why)) != 0) {
			REPL_LOG_ERROR("%s (the log %s is left as it was)", why,
				cfg->path);
			return ret == -ENOMEM ? REPL_E_NOMEM : REPL_E_INVAL;
		}
	}
	repl = calloc(1, sizeof(*repl));
	if (repl == NULL)
		return REPL_E_NOMEM;
	repl->full_timeout_ms = cfg->full_timeout_ms;
	/* before anything reads or formats it: a second opener changes nothing */
	if ((ret = log_lock(cfg->path, cfg->create, &repl->lock_fd, &created)))
		goto err_free;
	if (cfg->create && cfg->bootstrap && !created &&
	    (restored = bootstrap_restored(cfg)) < 0) {
		ret = restored;
		goto err_lock;
	}
	/* a restored log is opened as it is: its size is the restore's */
	format = cfg->create && !restored;
	ret = rpma_ext_mem_open(backend, cfg->path,
		format ? cfg->size : 0, format ? RPMA_EXT_MEM_CREATE : 0,
		&repl->mem);
	if ((ret = err_medium(ret)))
		goto err_lock;
	if (format && cfg->bootstrap && wal_probe(repl->mem) == WAL_PROBE_VALID) {
		/* a device always exists: what it holds says if it is new */
		REPL_LOG_ERROR("bootstrap refused: %s holds a log already (the "
			"cluster was bootstrapped before); start without bootstrap",
			cfg->path);
		ret = REPL_E_NOT_MEMBER;
		goto err_mem;
	}
	if (format) {
		struct wal_identity id = { .node_id = cfg->node_id, .epoch = cfg->epoch };

		memcpy(id.cluster_uuid, cfg->cluster_uuid, sizeof(id.cluster_uuid));
		if ((ret = wal_format(repl->mem, &id)))
			goto err_mem;
	}
	if (!cfg->create) {
		static const uint8_t none[16];
		uint8_t uuid[16];

		/* before wal_open(), which marks the log open: nothing written */
		if (memcmp(cfg->cluster_uuid, none, 16) != 0 &&
		    wal_cluster_of(repl->mem, uuid) == 0 &&
		    memcmp(cfg->cluster_uuid, uuid, 16) != 0) {
			REPL_LOG_ERROR("refused: %s belongs to another cluster (its "
				"cluster id is not the configuration's)", cfg->path);
			ret = REPL_E_OTHER_CLUSTER;
			goto err_mem;
		}
	}
	if ((ret = wal_open(repl->mem, &repl->wal)))
		goto err_mem;
	if (cfg->n_replicas) {
		struct cluster_replica reps[64];
		struct cluster_cfg cc = {
			.provider = cfg->provider ? cfg->provider : "tcp",
			.replicas = reps, .n_replicas = cfg->n_replicas,
			.quorum = cfg->quorum, .heartbeat_ms = cfg->heartbeat_ms,
			.down_timeout_ms = cfg->down_timeout_ms,
			.tls_ca = cfg->tls_ca, .tls_cert = cfg->tls_cert,
			.tls_key = cfg->tls_key,
			.promote_wait_ms = cfg->promote_wait_ms,
			.force = cfg->force_promotion != 0,
			.reconfigure = cfg->reconfigure != 0,
			.bootstrap = cfg->bootstrap != 0,
			.refuse_if_superseded = cfg->refuse_if_superseded != 0,
			.listen_addr = cfg->listen_addr,
			.listen_port = cfg->listen_port,
			.flush_method = cfg->flush_method,
			.busy_poll_us = cfg->busy_poll_us,
			.promote_gate = cfg->promote_gate,
			.promote_gate_arg = cfg->promote_gate_arg,
		};

		if (cfg->n_replicas > 64) {
			ret = REPL_E_INVAL;
			goto err_wal;
		}
		for (int i = 0; i < cfg->n_replicas; i++) {
			if (cfg->replicas[i].host == NULL || cfg->replicas[i].port == NULL) {
				ret = REPL_E_INVAL;
				goto err_wal;
			}
			reps[i] = (struct cluster_replica){ cfg->replicas[i].host,
				cfg->replicas[i].port };
		}
		/* every start of a primary is a promotion: a new epoch */
		if ((ret = cluster_start(&cc, repl->mem, repl->wal, &repl->cluster)))
			goto err_wal;
	}
	/* taken (its membership stored): from now on an ordinary log */
	if (restored && (ret = wal_clear_flags(repl->wal, WAL_F_RESTORED))) {
		cluster_stop(&repl->cluster);
		goto err_wal;
	}
	*repl_ptr = repl;
	return 0;

err_wal:
	wal_close(&repl->wal);
err_mem:
	rpma_ext_mem_close(&repl->mem);
err_lock:
	/* a log this open made and could not finish is not left behind */
	log_lock_abandon(cfg->path, &repl->lock_fd, created);
err_free:
	free(repl);
	return facade_err(ret);
}

int
repl_close(struct repl **repl_ptr)
{
	if (repl_ptr == NULL)
		return REPL_E_INVAL;
	if (*repl_ptr == NULL)
		return 0;
	cluster_stop(&(*repl_ptr)->cluster);
	wal_close(&(*repl_ptr)->wal);
	rpma_ext_mem_close(&(*repl_ptr)->mem);
	log_unlock(&(*repl_ptr)->lock_fd);
	free(*repl_ptr);
	*repl_ptr = NULL;
	return 0;
}

int
repl_append(struct repl *repl, const void *buf, size_t len, uint64_t *lsn)
{
	struct iovec iov = { (void *)buf, len };

	return repl_appendv(repl, &iov, 1, 0, lsn);
}

int
repl_appendv(struct repl *repl, const struct iovec *iov, int iovcnt,
		uint64_t client_id, uint64_t *lsn)
{
	if (repl == NULL)
		return REPL_E_INVAL;
	if (repl->cluster && cluster_fenced(repl->cluster))
		return REPL_E_FENCED;
	return facade_err(wal_append(repl->wal, iov, iovcnt, client_id,
		repl->full_timeout_ms, lsn));
}

int
repl_wait_durable(struct repl *repl, uint64_t lsn, int timeout_ms)
{
	if (repl == NULL)
		return REPL_E_INVAL;
	if (repl->cluster)
		return facade_err(cluster_wait_durable(repl->cluster, lsn, timeout_ms));
	return facade_err(wal_sync(repl->wal, lsn));
}

int
repl_read(struct repl *repl, uint64_t lsn, void *buf, size_t size, size_t *len)
{
	if (repl == NULL)
		return REPL_E_INVAL;
	return facade_err(wal_read(repl->wal, lsn, buf, size, len));
}

int
repl_record_info(struct repl *repl, uint64_t lsn, struct repl_record_info *info)
{
	if (repl == NULL || info == NULL)
		return REPL_E_INVAL;
	return facade_err(wal_record_info(repl->wal, lsn, &info->client_id,
		&info->epoch, &info->len));
}

int
repl_iterate(struct repl *repl, uint64_t from, repl_iterate_fn *cb, void *arg)
{
	int ret;

	if (repl == NULL || cb == NULL)
		return REPL_E_INVAL;
	ret = wal_iterate(repl->wal, from, cb, arg);
	return ret == REPL_E_CORRUPT ? REPL_E_CORRUPT : ret;
}

int
repl_iterate_records(struct repl *repl, uint64_t from, repl_record_fn *cb, void *arg)
{
	struct wal_status ws;
	uint64_t commit;

	if (repl == NULL || cb == NULL)
		return REPL_E_INVAL;
	/* an archiver ships what no failover can take back: the committed */
	if (repl->cluster) {
		commit = cluster_durable_lsn(repl->cluster);
	} else {
		wal_status(repl->wal, &ws);
		commit = ws.durable_lsn;
	}
	return facade_err(wal_iterate_records(repl->wal, from, commit, cb, arg));
}

/* past_down: the holds of replicas not streaming count for nothing */
static int
release(struct repl *repl, uint64_t lsn, bool past_down)
{
	if (repl == NULL)
		return REPL_E_INVAL;
	if (repl->cluster)
		return facade_err(cluster_release(repl->cluster, lsn, past_down));
	return facade_err(wal_release(repl->wal, lsn));
}

int
repl_release(struct repl *repl, uint64_t lsn)
{
	return release(repl, lsn, false);
}

int
repl_release_past_down(struct repl *repl, uint64_t lsn)
{
	return release(repl, lsn, true);
}

int
repl_lsn_keeping(struct repl *repl, uint64_t keep_bytes, uint64_t *lsn)
{
	if (repl == NULL || lsn == NULL)
		return REPL_E_INVAL;
	return facade_err(wal_lsn_keeping(repl->wal, keep_bytes, lsn));
}

int
repl_membership(struct repl *repl, struct repl_membership *out)
{
	struct membership ms;

	if (repl == NULL || out == NULL)
		return REPL_E_INVAL;
	memset(&ms, 0, sizeof(ms));
	if (repl->cluster)
		cluster_membership(repl->cluster, &ms);
	facade_membership_out(&ms, out);
	return 0;
}

int
repl_status(struct repl *repl, struct repl_status *st)
{
	struct wal_status ws;

	if (repl == NULL || st == NULL)
		return REPL_E_INVAL;
	wal_status(repl->wal, &ws);
	st->first_lsn = ws.first_lsn;
	st->last_lsn = ws.last_lsn;
	st->durable_lsn = ws.durable_lsn;
	st->used_bytes = ws.used;
	st->size_bytes = ws.size;
	st->epoch = ws.epoch;
	st->health = ws.health;
	st->log_full = ws.full;
	st->appends_full = ws.full_refusals;
	st->commit_lsn = repl->cluster ? cluster_durable_lsn(repl->cluster) :
		ws.durable_lsn;
	st->replicas_up = repl->cluster ? cluster_links_up(repl->cluster) : 0;
	st->fenced = repl->cluster ? cluster_fenced(repl->cluster) : 0;
	st->config_epoch = repl->cluster ? cluster_config_epoch(repl->cluster) : 0;
	st->config_joint = repl->cluster ? cluster_config_joint(repl->cluster) : 0;
	{
		struct rpma_ext_mem_stats ms;

		if (rpma_ext_mem_get_stats(repl->mem, &ms) != 0)
			memset(&ms, 0, sizeof(ms));
		st->persist_ranges = ms.ranges;
		st->persist_barriers = ms.barriers;
	}
	return 0;
}

int
repl_replica_status(struct repl *repl, int i, struct repl_replica_status *st)
{
	struct cluster_link_status ls;
	int ret;

	if (repl == NULL || st == NULL || repl->cluster == NULL)
		return REPL_E_INVAL;
	if ((ret = cluster_link_status(repl->cluster, i, &ls)))
		return facade_err(ret);
	st->state = ls.state == REPL_LINK_STREAMING ? REPL_REPLICA_STREAMING :
		ls.state == REPL_LINK_CATCHING_UP ? REPL_REPLICA_CATCHING_UP :
		REPL_REPLICA_DOWN;
	st->flushed_lsn = ls.flushed_lsn;
	st->lag_records = ls.lag_records;
	st->reconnects = ls.reconnects;
	st->member = ls.member;
	memcpy(st->why, ls.why, sizeof(st->why));
	st->lag_bytes = ls.lag_bytes;
	st->lag_ms = ls.lag_ms;
	memcpy(st->transport, ls.transport, sizeof(st->transport));
	memcpy(st->flush_method, ls.flush_method, sizeof(st->flush_method));
	memcpy(st->backend, ls.backend, sizeof(st->backend));
	st->config_epoch = ls.config_epoch;
	st->link_state = (enum repl_link_state)ls.state;
	for (int s = 0; s < REPL_LINK_STATES; s++) {
		st->state_ms[s] = ls.n.state_ms[s];
		st->state_entries[s] = ls.n.entered[s];
	}
	st->batches = ls.n.batches;
	st->flushes = ls.n.flushes;
	st->spins = ls.n.spins;
	st->sleeps = ls.n.sleeps;
	st->catch_ups = ls.n.catch_ups;
	st->full_resyncs = ls.n.full_resyncs;
	st->holds = ls.holds;
	st->hold_lsn = ls.hold_lsn;
	st->hold_from = ls.hold_from;
	st->wants_base = ls.wants_base;
	st->catchup_total_bytes = ls.catchup_total_bytes;
	st->catchup_done_bytes = ls.catchup_done_bytes;
	st->catchup_eta_ms = ls.catchup_eta_ms;
	return 0;
}

int
repl_verify(struct repl *repl, int i, uint64_t from, uint64_t to,
		struct repl_verify_result *res)
{
	struct cluster_verify_result cr;
	int ret;

	if (repl == NULL || res == NULL || repl->cluster == NULL || from > to)
		return REPL_E_INVAL;
	ret = cluster_verify(repl->cluster, i, from, to, &cr);
	if (ret == REPL_E_INVAL)
		return REPL_E_INVAL;
	memset(res, 0, sizeof(*res));
	res->from = cr.from;
	res->to = cr.to;
	res->ranges = cr.ranges;
	res->mismatches = cr.mismatches;
	for (int k = 0; k < REPL_VERIFY_SHOW; k++)
		res->bad[k] = (struct repl_verify_range){ cr.bad[k].from, cr.bad[k].to };
	memcpy(res->why, cr.why, sizeof(res->why));
	/* a fenced primary is told so, not that an append's fate is unknown */
	return facade_err(ret);
}
