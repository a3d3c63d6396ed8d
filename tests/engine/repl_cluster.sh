#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_cluster.sh -- one primary and two replicas as real processes (ofi tcp,
# crash backend in /dev/shm), killed at random moments:
#   1. SIGKILL a replica KILLS times while the primary appends; each is
#      restarted and catches up;
#   2. SIGKILL the primary KILLS times and restart it (a new epoch each
#      time); replicas holding records past its log are truncated;
#   3. keep a replica down until the ring has lapped past its position, then
#      restart it: a full resync while appends continue;
#   4. with all stopped, leave records on a replica that its primary never
#      had (as a primary crashing before its local persist would): the
#      next catch-up truncates them.
# Then the primary stops cleanly and `repl_node verify` checks that every
# acknowledged LSN is on the primary and on both replicas, each record
# byte-exact, and that the replicas' rings are byte-identical to the
# primary's over what they hold.  At least APPENDS records in all.
#
# Environment: SEED (printed), KILLS (20), APPENDS (100000),
# REPL_NODE (the node program).
set -u

NAME=repl_cluster
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
KILLS=${KILLS:-20}
APPENDS=${APPENDS:-100000}
RANDOM=$SEED
echo "repl_cluster: seed $SEED (rerun with SEED=$SEED)"
. "$(dirname "$0")/cluster_lib.sh"

pause() {	# a random pause of 50..$1 ms
	sleep "$(printf '0.%03d' $((50 + RANDOM % ($1 - 50))))"
}

start_replica 0
start_replica 1
start_primary 1
wait_acked 1000

echo "repl_cluster: 1. killing a replica $KILLS times"
for ((k = 0; k < KILLS; k++)); do
	pause 400
	i=$((RANDOM % 2))
	kill -9 ${rpid[$i]}
	wait ${rpid[$i]} 2>/dev/null
	pause 300
	start_replica $i
done
wait_acked $(( $(acked) + 2000 ))

echo "repl_cluster: 2. killing the primary $KILLS times (acked $(acked))"
for ((k = 0; k < KILLS; k++)); do
	pause 400
	kill -9 $ppid
	wait $ppid 2>/dev/null
	start_primary 1
	wait_acked $(( $(acked) + 200 ))
done

echo "repl_cluster: 3. a replica down for more than a lap (acked $(acked))"
kill -9 ${rpid[1]}
wait ${rpid[1]} 2>/dev/null
wait_acked $(( $(acked) + 15000 ))
resyncs_before=$(grep -c "full resync" "$D/p.err")
start_replica 1
for ((t = 0; t < 300; t++)); do
	(( $(grep -c "full resync" "$D/p.err") > resyncs_before )) && break
	sleep 0.1
done
(( $(grep -c "full resync" "$D/p.err") > resyncs_before )) ||
	fail "the replica did not get a full resync"
wait_acked $(( $(acked) > APPENDS ? $(acked) + 3000 : APPENDS ))
stop_all

echo "repl_cluster: 4. records on a replica that were never committed"
"$NODE" forge "$D/r0" 50 || fail "cannot forge records"
drops_before=$(grep -c "dropping its LSNs" "$D/p.err")
# r0 alone first: nothing commits (so nothing is released) before its
# catch-up decided, and the primary cannot lap past the forged records
start_replica 0
start_primary 1
wait_acked $(( $(acked) + 1000 ))
start_replica 1
(( $(grep -c "dropping its LSNs" "$D/p.err") > drops_before )) ||
	fail "the uncommitted records were not truncated"
stop_all

echo "repl_cluster: $(acked) records acknowledged;" \
	"$(grep -c 'is up, resuming' "$D/p.err") catch-ups," \
	"$(grep -c 'full resync' "$D/p.err") full resyncs," \
	"$(grep -c 'dropping its LSNs' "$D/p.err") truncations of uncommitted records"
verify
echo "repl_cluster: ok"
