#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_chaos.sh -- three nodes (TLS on the control channel), one primary
# at a time (quorum 1, two replicas), node 2's control channel through a
# `repl-node proxy`.  Each round does one thing at random:
#   - SIGKILL a replica and restart it;
#   - SIGKILL the primary and promote a replica (the old primary's node
#     comes back as a replica);
#   - promote a replica while the old primary lives (frozen meanwhile): the
#     third node, the new primary's only replica then, must hold in its
#     persisted log all the new primary acknowledged; on waking the old
#     primary must exit fenced (code 3), then comes back as a replica;
#   - cut node 2's control connections at the proxy (while it is a replica).
# Never two nodes down at once, so every promotion must succeed.  Right
# after each promotion the new primary's log is checked against every
# acknowledgement it keeps (check_log: the 2 MiB ring laps, so the end's
# check sees only the last records).  Between rounds the cluster must
# acknowledge more records.  At the end the last
# primary stops cleanly once every replica flushed everything, and
# `repl-node verify-acks` checks every acknowledgement any primary made
# against its log and the replicas' against it.
#
# Environment: SEED (printed), ROUNDS (40; about 75 s), REPL_NODE (the
# node program).
set -u

NAME=repl_chaos
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
ROUNDS=${ROUNDS:-40}
RANDOM=$SEED
echo "repl_chaos: seed $SEED, $ROUNDS rounds (rerun with SEED=$SEED)"
. "$(dirname "$0")/cluster_lib.sh"

start_proxy 2

replica_kills=0 primary_kills=0 alive_promotions=0 fenced=0 cuts=0
node_replica 1
node_replica 2
promote 0
wait_more_acks 1000 0 $prim

for ((round = 1; round <= ROUNDS; round++)); do
	check_running
	pause 500
	read -r r1 r2 <<< "$(replicas_of $prim)"
	action=$((RANDOM % 4))
	# the proxy leads to node 2: cut it only while node 2 is a replica
	(( action == 3 && prim == PROXIED )) && action=$((RANDOM % 3))
	(( RANDOM % 2 )) && victim=$r1 || victim=$r2
	case $action in
	0)
		echo "repl_chaos: round $round: SIGKILL replica $victim"
		node_stop $victim KILL
		pause 300
		node_replica $victim
		replica_kills=$((replica_kills + 1))
		;;
	1)
		old=$prim
		echo "repl_chaos: round $round: SIGKILL primary $old, promote $victim"
		node_stop $old KILL
		node_stop $victim TERM
		(( rc == 0 )) || fail "node $victim: the replica did not stop cleanly ($rc)"
		promote $victim
		check_log $victim "node $victim promoted"
		node_replica $old
		primary_kills=$((primary_kills + 1))
		;;
	2)
		old=$prim
		old_pid=${npid[$old]}
		echo "repl_chaos: round $round: freeze primary $old, promote $victim"
		kill -STOP $old_pid
		node_stop $victim TERM
		(( rc == 0 )) || fail "node $victim: the replica did not stop cleanly ($rc)"
		promote $victim
		check_log $victim "node $victim promoted with node $old frozen"
		from=$(acked_lines)
		wait_more_acks 50 $from $prim
		# the old primary is no replica: the third node alone holds what
		# the new one acknowledged, and must keep it across a restart
		third=$((3 - old - victim))
		want=$(max_acked_in $epoch $from)
		got=$(persisted_last $third)
		(( ${got:-0} >= ${want:-0} )) || fail "node $third's persisted log ends at" \
			"LSN $got; node $victim's primary (epoch $epoch) acknowledged" \
			"LSN $want with it as the only replica"
		old_from=$(err_lines $old)
		kill -CONT $old_pid
		node_wait_exit $old 20 "woken after node $victim took over, it did not learn that it was fenced"
		(( rc == 3 )) || fail "the old primary $old exited with code $rc, not 3" \
			"(fenced), after node $victim took over"
		(( $(count_since $old $old_from "repl-node: fenced") > 0 )) ||
			fail "the old primary $old did not say it was fenced"
		node_replica $old
		alive_promotions=$((alive_promotions + 1))
		fenced=$((fenced + 1))
		;;
	3)
		echo "repl_chaos: round $round: cut node $PROXIED's control connections"
		kill -USR1 $proxy_pid
		cuts=$((cuts + 1))
		;;
	esac
	wait_more_acks 300 $(acked_lines) $prim
done

chaos_finish
echo "repl_chaos: seed $SEED, $ROUNDS rounds, $replica_kills replica kills," \
	"$primary_kills primary kills, $alive_promotions promotions with the old" \
	"primary alive ($fenced fenced), $cuts proxy cuts, $acked_lsns records" \
	"acknowledged, $checks checks of a new primary's log ($checked_total" \
	"acknowledged LSNs compared), 0 lost"
