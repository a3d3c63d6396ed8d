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

#include "repl.h"

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

/* a primary's flush method is one of repl.h's REPL_FLUSH_* */

/*
 * Can provider flush by method?  0, or -1 with *why saying why not.  APM
 * needs verbs: a libfabric provider reaches persistence only by a request
 * the replica's core serves.
 */
int fabric_flush_check(const char *provider, int method, const char **why);

/*
 * Make a primary's connection flush by method (on verbs, APM: the replica
 * declared its ring PMem, so a READ after the writes persists them), then
 * check that it does.  0, or -1 with why.
 */
int fabric_flush_apply(struct rpma_conn *conn, int method, char *why, size_t n);

/* "apm", "gpspm", "native"; "" for none */
const char *fabric_flush_method_name(enum rpma_ext_flush_method method);
/* "pmem", "file", "crash" (rpma_ext_mem_backend's values, also a
   HELLO_REPLY's); "" for any other */
const char *fabric_backend_name(unsigned backend);

#endif
