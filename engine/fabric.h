/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fabric.h -- the transport a node replicates over, chosen by name:
 * "verbs" (an RDMA device: Soft-RoCE or a NIC) or a libfabric provider
 * ("tcp", "net").  On verbs every connection uses the core's flush
 * service (GPSPM): a replica's ring is ordinary memory whose durability
 * comes from its persistence backend, which only the replica's CPU can
 * apply, so a persistent flush needs the replica's core on both sides.
 */
#ifndef REPL_FABRIC_H
#define REPL_FABRIC_H

#include <stdbool.h>

#include "rpma.h"

/*
 * A peer for provider: on verbs the device that serves addr (local: an
 * address of this node, for listening; else a remote one to reach).
 */
int fabric_peer_new(const char *provider, const char *addr, bool local,
		struct rpma_peer **peer_ptr);

/* a connection configuration for provider (NULL on failure) */
struct rpma_conn_cfg *fabric_conn_cfg(const char *provider, int depth,
		int timeout_ms);

/*
 * Disconnect and delete *conn without depending on the peer: the local
 * side of the connection goes to the error state at once; the peer's
 * answer is awaited at most wait_ms (a frozen or hostile peer must not
 * hold up a fence or a reconnection).
 */
void fabric_conn_drop(struct rpma_conn **conn, int wait_ms);

/*
 * Wait at most timeout_ms for conn's next event: 0 when it is ESTABLISHED
 * (libfabric's connect does not time out by itself).
 */
int fabric_conn_established(struct rpma_conn *conn, int timeout_ms);

#endif
