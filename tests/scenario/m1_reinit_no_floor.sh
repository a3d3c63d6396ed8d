#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# m1_reinit_no_floor.sh -- a node made anew (--reinit) must take a promise
# floor before it serves a primary (docs/model.md, finding 1, the trail of
# run reinit-no-floor): three nodes, k = 1.
#   1. node1 the primary; three records acknowledged.
#   2. node1 stalls (SIGSTOP) and is cut off from node3 (its control port
#      plugged: plug_port, a partition); node2 and node3 drop its silent
#      sessions without a word to it.  node3 is promoted: it fences node2
#      and itself (n - k + 1 = 2) but cannot reach node1, which is not
#      fenced and still takes itself for the primary.  node3 acknowledges
#      a record with node2.
#   3. node3 stalls too (SIGSTOP).  node2 loses its disk and restarts with
#      --reinit: a new, empty log that promised nothing.
#   4. node1 runs again.  It reaches node2 but not node3 (which does not
#      answer), and appends m1-old.
#   5. node3 runs again, fences node1 (which exits 3 and is restarted:
#      a replica now) and catches node2 up.
# Before the rule node2 takes node1's HELLO of the old epoch: node1 copies
# its log to node2, gives it the membership and acknowledges m1-old with
# it, and node3, the later primary, lacks it: node2's catch-up to node3
# drops it again.
#
# A correct system does not acknowledge m1-old: node2 asks k + 1 = 2 other
# nodes for their promises before it serves anything but a PROBE (node1
# answers with its old epoch, node3 does not answer while stopped), so it
# refuses node1 ("not ready") until node3 answers, then takes node3's
# epoch as its own promise and refuses node1 as stale.  (With node1 down
# it waits for node1 too: k + 1 = 2 answers from the two other nodes.)
#
# Checked: everything acknowledged is in node3's log (node3 the final
# primary), no LSN acknowledged with two records, one primary at the end;
# with the rule, node2 took node3's epoch as its floor.
#
# Environment: REPLD, REPLCTL, PLUG_PORT (the build tree's
# tests/scenario/plug_port by default).
set -u

NAME=m1_reinit_no_floor
. "$(dirname "$0")/scenario_lib.sh"
PLUG=${PLUG_PORT:-./tests/scenario/plug_port}
[[ -x $PLUG ]] || { echo "$NAME: $PLUG not built"; exit 99; }

conf 1 primary
conf 2 replica
conf 3 replica
launch 2
launch 3
wait_new 2 "listening" "node2 listening"
wait_new 3 "listening" "node3 listening"
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
must_ack 1 m1-{1..3}
say "1. node1 the primary, three records acknowledged, to LSN $last_lsn"

# 2. node1 stalls and node3 cannot reach it; node3 is promoted
freeze 1
mark_err 2
mark_err 3
wait_new 2 "is silent: dropped" "node2 dropping the stalled node1"
wait_new 3 "is silent: dropped" "node3 dropping the stalled node1"
"$PLUG" 127.0.0.1 "$(cport 1)" > "$D/plug.out" 2> "$D/plug.err" &
plug=$!
bg+=($plug)
for ((t = 0; t < 100; t++)); do
	grep -q "^plugged" "$D/plug.out" && break
	kill -0 $plug 2>/dev/null || fail "plug_port: $(cat "$D/plug.err")"
	sleep 0.1
done
grep -q "^plugged" "$D/plug.out" || fail "node1's control port not plugged in 10 s"
mark_err 3
promote_step 3 "node3's promotion, node1 stalled and cut off"
[[ $outcome == ok ]] || fail "node3's promotion (node2 and node3 of 3, k = 1) refused: $why"
wait_member 3 2
must_ack 3 m1-node3
e3=$(jnum "$(status_json 3)" epoch)
say "2. node3 the primary of epoch $e3 beside node1, which was not told;" \
	"m1-node3 acknowledged at LSN $last_lsn"

# 3. node3 stalls; node2 loses its disk and is made anew
freeze 3
kill9 2
wipe_log 2
launch 2 --reinit
wait_new 2 "listening" "node2 listening with a new log"
say "3. node3 stalled; node2's disk lost, node2 restarted with --reinit"

# 4. node1 runs again: node2 answers, node3 does not
kill -TERM $plug
wait $plug 2>/dev/null
thaw 1
try_append 1 6000 m1-old
if ((got)); then
	say "4. node1 acknowledged m1-old at LSN $last_lsn through the new node2"
else
	say "4. m1-old not acknowledged (replctl exit $rc)"
	new_err 2 | grep -q "not ready: taking its promise floor" ||
		fail "node2 did not say it refused node1 for its floor: $(new_err 2 | tail -n 3)"
	wait_status 2 '"floor_pending":true' "node2 waiting for its promise floor"
fi

# 5. node3 runs again: node1 is fenced, node2 follows node3
thaw 3
# node1 is fenced: it exits 3, or serves as a replica.  Anything else
# while running (primary, "down" while it stops, no answer once its
# socket is gone) is a node on its way: wait for it to get somewhere.
end=$((SECONDS + 15))
r1=
while running 1 && [[ $r1 != replica ]] && ((SECONDS < end)); do
	r1=$(role_of 1)
	[[ $r1 == replica ]] || sleep 0.2
done
if running 1; then
	[[ $r1 == replica ]] ||
		fail "node1 neither exited nor serves as a replica 15 s after node3 ran again (its role: ${r1:-no answer})"
else
	wait "${pid[1]}"
	rc=$?
	unset "pid[1]"
	clean_stderr "$D/node1.err" "node1 (exit $rc)"
	((rc == 3)) || fail "node1 exited $rc, not 3 (fenced): $(new_err 1 | tail -n 3)"
	# restarted as its file says (primary), it serves as node3's replica;
	# node2's floor needs its answer too (k + 1 = 2 of node1 and node3)
	launch 1
	wait_new 1 "listening" "node1 back as a replica"
	say "5. node1 fenced (exit 3), restarted: $(new_err 1 | grep -m1 -o "not the primary: [^;(]*")"
fi
if ((!got)); then
	wait_new 2 "took its promise floor: epoch $e3 " "node2's floor of node3's epoch"
	say "5. node2 $(new_err 2 | grep -m1 -o "took its promise floor: epoch [0-9]*")"
fi
wait_member 3 2
final=3
end_check 1 2 3
pass "nothing acknowledged by node1 through node2 made anew is lost"
