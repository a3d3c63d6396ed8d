/* SPDX-License-Identifier: BSD-3-Clause */
/* primary_cfg.c -- a repld.conf node as librepl's primary (primary_cfg.h) */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "primary_cfg.h"

enum repl_backend
primary_cfg_backend(enum repld_backend b)
{
	switch (b) {
	case REPLD_BACKEND_PMEM:	return REPL_BACKEND_PMEM;
	case REPLD_BACKEND_CRASH:	return REPL_BACKEND_CRASH;
	case REPLD_BACKEND_FILE:
	default:			return REPL_BACKEND_FILE;
	}
}

const char *
primary_cfg_provider(const struct repld_conf *conf, bool *no_rdma)
{
	*no_rdma = false;
	switch (conf->transport) {
	case REPLD_TRANSPORT_VERBS:
		return "verbs";
	case REPLD_TRANSPORT_OFI_NET:
		return "net";
	case REPLD_TRANSPORT_OFI_TCP:
		return "tcp";
	case REPLD_TRANSPORT_AUTO:
	default:
		/* an RDMA device serving the listen address: use it */
		if (repl_rdma_available(conf->listen.address))
			return "verbs";
		*no_rdma = true;
		return "tcp";
	}
}

void
primary_cfg_fill(struct primary_cfg *pc, const struct repld_conf *conf,
		const char *provider)
{
	memset(pc, 0, sizeof(*pc));
	snprintf(pc->ctl_port, sizeof(pc->ctl_port), "%u", conf->listen.control_port);
	for (int i = 0; i < conf->n_peers; i++) {
		snprintf(pc->ports[i], sizeof(pc->ports[i]), "%u",
			conf->peers[i].control_port);
		pc->reps[i] = (struct repl_replica){ conf->peers[i].address, pc->ports[i] };
	}
	pc->cfg = (struct repl_cfg){
		.path = conf->log.path,
		.backend = primary_cfg_backend(conf->log.backend),
		.size = conf->log.size,
		.node_id = conf->node_id,
		.full_timeout_ms = conf->full_timeout_ms,
		.busy_poll_us = conf->busy_poll_us,	/* -1: REPL_BUSY_POLL_AUTO */
		.replicas = pc->reps,
		.n_replicas = conf->n_peers,
		.quorum = conf->quorum,
		.provider = provider,
		.heartbeat_ms = conf->timeouts.heartbeat_ms,
		.down_timeout_ms = conf->timeouts.down_ms,
		.promote_wait_ms = conf->timeouts.promote_wait_ms,
		/* REPLD_FLUSH_* has REPL_FLUSH_*'s values; native never gets here */
		.flush_method = (int)conf->flush_method,
		/* a promotion elsewhere reaches this primary where its replica was */
		.listen_addr = conf->listen.address,
		.listen_port = pc->ctl_port,
		.tls_ca = conf->tls.ca,
		.tls_cert = conf->tls.cert,
		.tls_key = conf->tls.key,
	};
	memcpy(pc->cfg.cluster_uuid, conf->cluster_uuid, sizeof(pc->cfg.cluster_uuid));
}
