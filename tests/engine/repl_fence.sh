#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_fence.sh -- a promotion while the old primary still lives.  Nodes A,
# B, C (TLS on the control channel); A is the primary (quorum 1) with B and
# C as replicas:
#   1. A is frozen (SIGSTOP) mid-flight; B's replica stops and B starts as
#      primary with replicas [A (nobody listens there), C]: it must promote
#      (itself + C = n - k + 1), acknowledge records up to its target and
#      exit cleanly; C's persisted log must then reach B's last LSN (what a
#      restart of C would find);
#   2. A thaws (SIGCONT): it must find itself fenced and exit with code 3,
#      and C's log image must not change (its old session and flushes are
#      refused); C's log says so;
#   3. A restarts as a replica on its own log and B promotes again: A's
#      never-committed tail (if A left one past B's promotion point) is
#      dropped; then `repl-node verify-acks` checks that no acknowledged
#      record was lost and that the replicas match the primary.
#
# Environment: SEED (printed), REPL_NODE (the node program).
set -u

NAME=repl_fence
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$SEED
echo "repl_fence: seed $SEED (rerun with SEED=$SEED)"
. "$(dirname "$0")/cluster_lib.sh"

A=0 B=1 C=2
addr() {
	echo 127.0.0.1:${NCTL[$1]}
}
# what the primary acknowledged last, by LSN
max_acked() {
	[[ -s $D/acked ]] && cut -d' ' -f2 "$D/acked" | sort -n | tail -n 1 || echo 0
}
image_hash() {
	sha256sum < "$D/n$C" | cut -d' ' -f1
}

node_replica $B
node_replica $C
node_primary $A 1000000000 $(addr $B) $(addr $C)
wait_more_acks 2000 0 $A
sleep "0.$((RANDOM % 500 + 100))"

echo "repl_fence: 1. A frozen, B promoted (acked $(max_acked))"
kill -STOP ${npid[$A]}
a_pid=${npid[$A]}
node_stop $B TERM
(( rc == 0 )) || fail "B's replica did not stop cleanly (exit code $rc)"
before=$(acked_lines)
# short runs: B's checkpoint (it keeps about 400 records) stays at or
# before its promotion point, so A's catch-up finds where their chains
# part instead of resyncing A in full
until=$(( $(max_acked) + 300 ))
b_from=$(err_lines $B)
node_primary $B $until $(addr $A) $(addr $C)
node_wait_exit $B 120 "it should reach LSN $until and stop"
(( rc == 0 )) || fail "B's primary did not finish (exit code $rc)"
promoted=$(tail -n +$((b_from + 1)) "$D/n$B.err" | grep -a -m1 "promoted: epoch")
[[ -n $promoted ]] || fail "B did not say it was promoted"
b_epoch=$(sed -n 's/.*promoted: epoch \([0-9]*\), log to LSN \([0-9]*\).*/\1/p' <<< "$promoted")
b_point=$(sed -n 's/.*promoted: epoch \([0-9]*\), log to LSN \([0-9]*\).*/\2/p' <<< "$promoted")
b_acks=$(tail -n +$((before + 1)) "$D/acked" | grep -c "^$b_epoch ")
(( b_acks > 0 )) || fail "B acknowledged nothing in epoch $b_epoch"
(( $(max_acked) >= until )) || fail "B stopped at LSN $(max_acked), before $until"
echo "repl_fence: B promoted at LSN $b_point (epoch $b_epoch)," \
	"acknowledged $b_acks records to LSN $until"

# B is gone: nothing writes C's log now; it must stay so
sleep 0.5
c_hash=$(image_hash)
sleep 0.5
[[ $(image_hash) == "$c_hash" ]] || fail "C's image changes with no primary"
# what C persisted must be a chain to B's last LSN: B saw it flushed there
c_last=$(persisted_last $C)
(( ${c_last:-0} >= until )) || fail "C's persisted log ends at LSN $c_last, short of" \
	"LSN $until that B flushed there (B promoted at LSN $b_point): records" \
	"C reported to B's promotion were never persisted on C"

echo "repl_fence: 2. A thaws"
a_from=$(err_lines $A)
kill -CONT $a_pid
node_wait_exit $A 30 "woken after B took over, it did not learn that it was fenced"
(( rc == 3 )) || fail "the old primary A exited with code $rc, not 3 (fenced)"
(( $(count_since $A $a_from "repl-node: fenced") > 0 )) ||
	fail "A's stderr does not say it was fenced"
(( $(count_since $A $a_from "this primary is fenced") > 0 )) ||
	fail "the engine on A did not log the fence"
[[ $(image_hash) == "$c_hash" ]] || fail "C's image changed after A thawed"
grep -a -q -e "fenced: this replica now follows" -e "refused node" "$D/n$C.err" ||
	fail "C's log does not show the fence"
echo "repl_fence: A exited fenced:" \
	"$(tail -n +$((a_from + 1)) "$D/n$A.err" | grep -a -m1 "repl-node: fenced")"
echo "repl_fence: C says:" \
	"$(grep -a -m1 -e "fenced: this replica now follows" -e "refused node" "$D/n$C.err")"

echo "repl_fence: 3. A back as a replica; B promoted again"
read -r _ _ _ a_last _ _ _ a_tail_epoch _ <<< "$("$NODE" status "$D/n$A")"
[[ -n $a_tail_epoch ]] || fail "cannot read A's log"
node_replica $A
b_from=$(err_lines $B)
node_primary $B $((until + 100)) $(addr $A) $(addr $C)
node_wait_exit $B 120 "it should reach LSN $((until + 100)) and stop"
(( rc == 0 )) || fail "B's second primary did not finish (exit code $rc)"
drops=$(count_since $B $b_from "replica 127.0.0.1:${NCTL[$A]}: dropping its LSNs")
if (( a_last > b_point )); then
	(( drops > 0 )) || fail "A's LSNs $((b_point + 1))..$a_last (epoch" \
		"$a_tail_epoch) were never committed and were not dropped"
	echo "repl_fence: A's uncommitted LSNs $((b_point + 1))..$a_last dropped:" \
		"$(tail -n +$((b_from + 1)) "$D/n$B.err" | grep -a -m1 "dropping its LSNs")"
else
	echo "repl_fence: A left no uncommitted tail (its log ends at $a_last)"
fi
node_stop $A TERM
node_stop $C TERM
"$NODE" verify-acks "$D/acked" "$D/n$B" "$D/n$A" "$D/n$C" || fail "verification"
echo "repl_fence: ok"
