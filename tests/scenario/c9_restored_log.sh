#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c9_restored_log.sh -- a replica's log put back from an older copy: node1
# the primary of node2 and node3 (n = 3, k = 1), three records
# acknowledged, then node3's log file is copied while the cluster runs (a
# snapshot).  node1 dies; node2 is promoted (it fences node3 with its
# epoch E2) and acknowledges three records; node1 comes back as its
# replica.  node2 dies; node1 is promoted (E3, counting itself and node3)
# and acknowledges three records with node3 alone.  node1 dies; node3 is
# stopped, its old copy put back (epoch E1, without the last six records,
# but its own incarnation), and it restarts.  node2 comes back as a
# replica and is promoted.
#
# Before the peer floors node2 counts itself and node3 (N - k = 2; node3
# holds the membership and looks like itself), takes its own log (E2) as
# the most advanced and leads without the three records acknowledged under
# E3; node1, back as its replica, has them dropped.
#
# A correct system sees that node3 answers having followed E1 while it
# promised E2 to node2 (a promise never goes down while a log lives):
# node3 counts for nothing, node2's promotion is refused, naming node3 and
# the remedy.  With node1 back node2 is promoted counting node1 (and takes
# its records); its link does not stream to node3 either (its status says
# why) until node3's log is made anew (--reinit), which then catches up.
#
# Checked: the refusal and the link's reason name the older copy; every
# acknowledged record in the final primary's log; at most one primary.
set -u

NAME=c9_restored_log
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary
conf 2 replica
conf 3 replica
for n in 2 3; do launch $n; done
for n in 2 3; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
wait_member 1 3
must_ack 1 c9-{1..3}
# a snapshot of node3's log, taken under the running cluster
cp "$D/node3.log" "$D/node3.copy" || fail "cannot copy node3's log"
say "three records acknowledged, to LSN $last_lsn; node3's log copied"

# the cluster moves on: two promotions, records under each
kill9 1
promote_step 2 "node2's promotion after node1's death"
[[ $outcome == ok ]] || fail "node2's promotion was refused: $why"
wait_member 2 3
conf 1 replica
launch 1
wait_new 1 "listening" "node1 listening"
wait_member 2 1
must_ack 2 c9-node2-{1..3}
kill9 2
promote_step 1 "node1's promotion after node2's death"
[[ $outcome == ok ]] || fail "node1's promotion was refused: $why"
wait_member 1 3
must_ack 1 c9-node1-{1..3}
say "six more acknowledged, the last three by node1 and node3 alone, to LSN $last_lsn"

# node1 dies; node3's old copy is put back under it
kill9 1
stop 3
cp "$D/node3.copy" "$D/node3.log" || fail "cannot put node3's copy back"
launch 3
wait_new 3 "listening" "node3 listening on its old copy"
conf 2 replica
launch 2
wait_new 2 "listening" "node2 listening"
say "node1 down, node3 back on its old copy; node2 promoted"
promote_step 2 "node2's promotion beside node3's old copy"
if [[ $outcome == ok ]]; then
	# node3 counted: node1's records are on none of the two
	conf 1 replica
	launch 1
	wait_new 1 "listening" "node1 listening"
	wait_member 2 1
	end_check 1 2 3
	fail "node2 was promoted counting node3's old copy, and nothing was lost"
fi
new_err 2 | grep -q "runs on an older copy of its log" ||
	fail "node2's refusal does not say that node3 runs on an older copy: $why"
new_err 2 | grep -q -- "--reinit on node 3" ||
	fail "node2's refusal does not name the remedy (--reinit on node 3)"
say "refused: $(new_err 2 | grep -m1 -o "replica 127.*older copy of its log")"

# the way out: node1 back, node2 promoted with it; node3 gets nothing
conf 1 replica
launch 1
wait_new 1 "listening" "node1 listening"
promote_step 2 "node2's promotion with node1"
[[ $outcome == ok ]] || fail "node2's promotion with node1 was refused: $why"
wait_member 2 1
wait_status 2 "\"address\":\"127.0.0.1:$(cport 3)\",\"state\":\"down\"[^}]*older copy" \
	"node3 down, named an older copy, in node2's status"
say "node2 leads with node1; node3: $(grep -o "\"address\":\"127.0.0.1:$(cport 3)\"[^}]*" <<< "$st")"
# node3 made anew: then it catches up and counts
stop 3
wipe_log 3
launch 3 "$REINIT"
wait_new 3 "listening" "node3 listening with a log made anew"
wait_member 2 3
end_check 2
pass "node3's old copy counted for nothing until made anew; nothing acknowledged lost"
