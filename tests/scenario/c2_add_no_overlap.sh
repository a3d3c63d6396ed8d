#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c2_add_no_overlap.sh -- an add whose old and new quorums need not meet:
# node1 the primary of node2 and node3 (n = 2, k = 1), three records
# acknowledged; node3 goes down (frozen: it takes connections and never
# answers).  `replctl add` of node4 keeps k = 1 (n = 3).  The add fences
# node2, which answers; node2 dies right then (SIGKILL on its log line,
# while the primary still waits for node3), before it can store the new
# membership.  node1 then acknowledges records with node4 alone.
# node2 and node3 restart, cut off from node1 (frozen), and `replctl
# promote` on node2 counts under the membership node2 holds, the old one
# (n - k + 1 = 2: node2 and node3): it is promoted and acknowledges
# records at the LSNs node1 acknowledged others: two primaries, one LSN,
# two records.  (The same holds whenever k2 <= k1 + added - 1, for a
# remove or a reload that lowers k.)
#
# A correct system (joint consensus: the change needs k1 + 1 nodes of the
# old configuration too) refuses the add or node2's promotion, explicitly,
# or node2's promotion fences node1 under the new configuration.
#
# Checked: no LSN acknowledged with two records; everything acknowledged
# in the final primary's log; one primary at the end.
set -u

NAME=c2_add_no_overlap
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary 3000 1 2 3
conf 2 replica 3000 1 1 3
conf 3 replica 3000 1 1 2
conf 4 replica 3000 1 1 2 3
for n in 2 3 4; do launch $n; done
for n in 2 3 4; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
must_ack 1 c2-{1..3}
say "three records acknowledged, to LSN $last_lsn"

# node3 down: frozen, so a fence waits for it (down_ms) before giving up
freeze 3
wait_status 1 '"replicas_up":1' "node3 down" 10
say "node3 frozen; adding node4 with k = 1"

# the add; node2 dies as soon as it answered a fence for it
kill_on 2 "fenced for the primary|following the primary" 10
ctl_step 1 "the add of node4" add "127.0.0.1:$(cport 4)"
add_outcome=$outcome
kill_done 2
say "node2 killed on its ${killed_by:0:110}"
[[ $killed_by == line:* ]] ||
	say "NOTE: node2 was killed without having answered the add's fence"

if [[ $add_outcome == ok ]]; then
	say "the add: $out"
	# node4 takes part in the acknowledgements of the new membership
	wait_member 1 4
	must_ack 1 c2-node1-{1..3}
	say "node1 acknowledged three records with node4, to LSN $last_lsn"
fi

# node2 and node3 return (node3 restarted: a frozen one would first work
# through the connections queued meanwhile), cut off from node1
freeze 1
kill9 3
launch 3
launch 2
wait_new 3 "listening" "node3 listening"
wait_new 2 "listening" "node2 listening"
final=1
ctl_step 2 "node2's promotion with node1 cut off" promote
if [[ $outcome == ok ]]; then
	wait_status 2 '"role":"primary"' "node2 the primary"
	wait_status 2 '"replicas_up":1' "node3 streaming to node2" 20
	must_ack 2 c2-node2-{1..3}
	say "node2 acknowledged three records too, to LSN $last_lsn"
	final=2
fi

# node1 comes back: it must find itself fenced (or be the only primary)
thaw 1
end=$((SECONDS + 15))
while ((SECONDS < end)); do
	running 1 || break
	[[ $final == 1 || $(role_of 1) != primary ]] && break
	sleep 0.2
done
running 1 || { wait "${pid[1]}"; say "node1 exited $? once thawed"; unset "pid[1]"; }
check_one_primary
[[ -z $primary || $primary == "$final" ]] ||
	fail "node$primary reports primary, not node$final"
stop_all
check_acked_in $final
pass "no LSN acknowledged twice, nothing acknowledged lost"
