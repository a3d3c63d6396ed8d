/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * admin_proto.h -- the protocol of repld's admin socket, shared by the
 * daemon and replctl.
 *
 * A UNIX stream socket (mode 0600: whoever may use it may append and
 * promote).  Line-based so a script can speak it with socat or nc -U:
 *
 *   request:  VERB [ARG ...] LF		at most ADMIN_LINE_MAX bytes
 *             APPEND LEN [CLIENT_ID] LF, then exactly LEN bytes of record
 *   reply:    one JSON object on one line, LF-terminated:
 *             {"ok":true, ...}  or
 *             {"ok":false,"error":"REPL_E_FENCED","code":-300009,
 *              "message":"..."}
 *             Its numbers are integers within a signed 64-bit one (LSNs,
 *             epochs and counts are at most INT64_MAX), as jansson and
 *             most JSON readers hold them; strings are UTF-8.
 *
 * Requests may be pipelined; replies come in request order.  Appends on
 * one connection are acknowledged in order, each only once durable by the
 * primary's quorum rule (repl_wait_durable); the daemon batches what a
 * connection has sent so far into one wait.  A change of the node
 * (PROMOTE, FENCE, ADD, REMOVE, RELOAD, SWITCHOVER, FAILOVER, MAINTENANCE)
 * whose client
 * closed the connection before it was served is not made; one that only
 * shut down its sending side is.
 *
 * Verbs (an unknown one, or one the node's role does not serve, gets an
 * error reply naming it; the connection stays open):
 *
 *   STATUS		the node: role, node_id, epoch, LSNs, replicas
 *   APPEND LEN [ID]	(primary) append LEN bytes (0 < LEN <= ADMIN_RECORD_MAX),
 *			tagged with client id ID (decimal, default 0);
 *			{"ok":true,"lsn":N} once durable
 *   VERIFY [FROM [TO]]	(primary) compare the checksums of the records
 *			FROM..TO (default: the oldest kept .. the commit LSN;
 *			each at most INT64_MAX)
 *			on this node and each streaming replica
 *   PROMOTE [force]	(replica) become the primary: a new epoch that
 *			fences the old primary; "force" goes on without
 *			n - k + 1 nodes (acknowledged records may be lost)
 *   FENCE		(primary) step down: appends taken get their answers,
 *			later ones WRONG_ROLE; the log is closed, the node
 *			serves as a replica
 *   ADD HOST:PORT [QUORUM]	(primary) add a replica (its control port);
 *			a reconfiguration: the next configuration epoch
 *   REMOVE HOST:PORT [QUORUM]	(primary) remove one
 *   RELOAD		as SIGHUP: take the membership (peers, quorum) from
 *			the configuration file again
 *   RELEASE LSN	(primary, retention.mode = "checkpointer") an
 *			external checkpointer no longer needs the records up
 *			to LSN (at most INT64_MAX): the daemon may release
 *			them, within its retention settings
 *   READ FROM [follow]	(primary) stream the committed records from LSN
 *			FROM on (0: the oldest kept): a first reply, then
 *			per record {"ok":true,"lsn":N,"len":L} LF and its L
 *			bytes; without follow it ends at the commit LSN
 *			({"ok":true,"end":true,"next":N}); with it, when the
 *			client sends anything or goes.  Its position holds
 *			retention (reader.c, retention.h)
 *   SWITCHOVER [NODE]	(any node with a coordinator) record in etcd that
 *			the primary steps down and NODE (default: the most
 *			advanced replica) takes over; answers at once
 *			{"ok":true,"from":F,"to":T,"epoch":E,"message":...}
 *   FAILOVER NODE	the same, also with no primary, NODE campaigning
 *			regardless of its link (coordinator.h)
 *   MAINTENANCE on [REASON]	(any node with a coordinator) write the
 *			cluster's maintenance key (REASON: the rest of the
 *			line, at most ADMIN_REASON_MAX bytes, no control
 *			character); MAINTENANCE off deletes it.  While it
 *			exists no node takes over by itself (ha_rules.h)
 *   HISTORY		(any node with a coordinator) the history/<epoch>
 *			keys, oldest first
 *
 * Error names beyond repl.h's REPL_E_*: "BAD_REQUEST" (the request does
 * not parse), "WRONG_ROLE" (the verb is not served by this node's role),
 * "BUSY" (ADMIN_CLIENTS_MAX connections are served already; retry),
 * "STOPPING" (the daemon is stopping); a READ's stream also "RELEASED"
 * and "READER_LOST"; SWITCHOVER and FAILOVER "NO_COORDINATOR",
 * "COORDINATOR_UNREACHABLE", "NO_PRIMARY", "BAD_TARGET", "PENDING";
 * MAINTENANCE and HISTORY "NO_COORDINATOR", "COORDINATOR_UNREACHABLE".  Changes of state (PROMOTE, FENCE,
 * ADD, REMOVE, RELOAD) run one at a time; appends wait while one runs.
 */
#ifndef REPLD_ADMIN_PROTO_H
#define REPLD_ADMIN_PROTO_H

#define ADMIN_LINE_MAX 512		/* a request line, LF included */
#define ADMIN_RECORD_MAX (1u << 20)	/* one appended record */
#define ADMIN_REPLY_MAX 65536		/* a reply line, LF included */
#define ADMIN_CLIENTS_MAX 64		/* connections served at once */

#endif
