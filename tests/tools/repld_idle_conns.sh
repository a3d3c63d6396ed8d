#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_idle_conns.sh -- connections that never speak cannot starve a
# replica's control port: with 12 idle TCP connections open to node3 (a
# replica of node1; more than the 8 it keeps waiting, so the oldest are
# dropped), `replctl promote` of node2 -- whose promotion must fence node3
# -- succeeds within 3 s; node1 learns it is fenced (exit 3), node3
# follows node2, and node3 drops the idle connections once their timeout
# (down_ms) passes.  Before, a replica waited for each new connection's
# HELLO in turn, down_ms each, and the promotion's fence waited behind them.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_idle_conns
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
ms() { echo $(($(date +%s%N) / 1000000)); }

start_cluster

# idle connections to node3's control port, held by this shell
idle=()
for ((i = 0; i < 12; i++)); do
	exec {fd}<> "/dev/tcp/127.0.0.1/$(cport 3)" || fail "connection $i to node3"
	idle+=("$fd")
done
sleep 0.2

t0=$(ms)
"$CTL" -s "$(sock 2)" --timeout 10000 promote > "$D/out" 2> "$D/err"
rc=$?
el=$(($(ms) - t0))
clean_stderr "$D/err" "replctl promote"
[[ $rc -eq 0 ]] || fail "promote of node2 with 12 idle connections to node3: exit $rc after $el ms: $(cat "$D/err") $(cat "$D/out")"
((el < 3000)) || fail "promote took $el ms with idle connections to node3"
echo "$NAME: promote with 12 idle connections to node3: exit 0 in $el ms"
wait_status 2 '"role":"primary"' "node2 the primary"
exited 1 "node1 still running after node2's promotion"
[[ $rc -eq 3 ]] || fail "node1 exited $rc, not 3 (fenced)"
wait_status 3 '"primary_node":2' "node3 following node2"
grep -q "newer connection needs its place" "$D/node3.err" ||
	fail "node3 kept more than 8 idle connections"
wait_for 3 "no HELLO within the timeout" "idle connections dropped" 5
for fd in "${idle[@]}"; do exec {fd}>&-; done
"$CTL" -s "$(sock 2)" append <<< "after" > /dev/null || fail "append to node2: exit $?"
stop 2
stop 3
for n in 2 3; do clean_stderr "$D/node$n.err" "node$n"; done

echo "$NAME: ok ($((SECONDS - T0)) s)"
