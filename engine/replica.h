/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.h -- the replica side of replication: a process that owns a ring
 * identical in geometry to its primary's, lets the primary write into it
 * with one-sided RDMA (registered on a persistence backend, so a flush
 * request persists the range), and answers the primary's control messages
 * (hello, catch-up queries, truncate, checkpoint moves, commit point).
 */
#ifndef REPL_REPLICA_H
#define REPL_REPLICA_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "rpma.h"

struct replica_cfg {
	const char *path;		/* its log: file or device */
	enum rpma_ext_mem_backend backend;
	size_t size;			/* with create: the log's size */
	int create;			/* format if the medium holds no log */
	uint8_t cluster_uuid[16];
	uint32_t node_id;
	const char *provider;		/* "verbs", or a libfabric provider ("tcp") */
	const char *addr;		/* where to listen */
	const char *ctl_port;		/* the control channel's port */
	const char *data_port;		/* the RPMA endpoint's port */
	int timeout_ms;			/* a primary silent this long is dropped */
	/* the control channel's TLS (CA, certificate, key); all NULL: plain TCP */
	const char *tls_ca, *tls_cert, *tls_key;
	volatile sig_atomic_t *stop;	/* set (e.g. by a signal handler) to stop */
	/* called once the replica listens (both ports), e.g. to signal readiness */
	void (*ready)(void *arg);
	void *ready_arg;
};

/*
 * Serve primaries, one at a time, until *cfg->stop is set.  Returns 0 after
 * a stop, or a negative error (with a message logged) if the log or the
 * endpoints cannot be set up.
 */
int replica_run(const struct replica_cfg *cfg);

#endif
