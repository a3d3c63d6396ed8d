#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_quorum.sh -- a replica that stops answering (SIGSTOP, not a crash:
# its sockets stay open) is marked down after the timeout; with quorum 2 of
# 2 acknowledgements stop, and the primary says which replica is down and
# why; when it answers again it catches up and they resume.  With quorum 1
# of 2 they never stop.
set -u

NAME=repl_quorum
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$SEED
echo "repl_quorum: seed $SEED"
TIMEOUT_MS=1000
. "$(dirname "$0")/cluster_lib.sh"

start_replica 0
start_replica 1

echo "repl_quorum: quorum 2 of 2"
start_primary 2
wait_acked 2000
kill -STOP ${rpid[1]}
sleep $(( 2 * TIMEOUT_MS / 1000 + 1 ))
a1=$(acked)
sleep 2
a2=$(acked)
(( a2 == a1 )) || fail "acknowledgements went on ($a1 -> $a2) without a quorum"
grep -q "replica 1 down: " "$D/p.err" ||
	fail "the primary did not say which replica is down and why"
echo "repl_quorum: blocked at LSN $a1; the primary says:"
grep "replica 1 down" "$D/p.err" | tail -n 1
kill -CONT ${rpid[1]}
wait_acked $(( a1 + 2000 ))
echo "repl_quorum: resumed after the replica answered again (acked $(acked))"
kill -TERM $ppid
wait $ppid || fail "the primary did not stop cleanly"

echo "repl_quorum: quorum 1 of 2"
# another k than the log's membership: only on purpose
REPL_NODE_RECONFIGURE=1 start_primary 1
wait_acked $(( $(acked) + 1000 ))
kill -STOP ${rpid[1]}
a1=$(acked)
wait_acked $(( a1 + 3000 ))
echo "repl_quorum: went on without replica 1 ($a1 -> $(acked))"
kill -CONT ${rpid[1]}
wait_acked $(( $(acked) + 1000 ))
stop_all
verify
echo "repl_quorum: ok"
