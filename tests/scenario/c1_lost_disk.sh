#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c1_lost_disk.sh -- a primary's lost disk with k = n: node1 the primary,
# node2 its only replica (n = 1, k = 1), LSNs 1..10 acknowledged (so on
# both).  Both stop; node1's log is deleted while it is down (its disk was
# replaced); node1 restarts first, then node2.
#
# Before explicit bootstrap, repld creates a fresh log for node1, finds no
# membership in it ("the cluster's first"), counts itself toward n - k + 1
# = 1 on its health alone and takes the epoch it had before (the next
# above 0); node2 takes that equal epoch as the same primary, and its
# catch-up drops node2's LSNs 1..10: nothing acknowledged survives.
#
# A correct system refuses node1's start (its log is missing and this is
# no first start: exit 5 naming the path).  Then node2 alone holds the
# records: it is promoted (n - k + 1 = 1), and node1 comes back as its
# replica with a fresh log (--reinit, where repld has it).
#
# Checked: the ten records in the final primary's log, at most one primary.
set -u

NAME=c1_lost_disk
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
launch 2
wait_new 2 "listening" "node2 listening"
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":1' "node2 streaming"
must_ack 1 c1-{1..10}
((last_lsn >= 10)) || fail "ten records acknowledged, the last at LSN $last_lsn"
say "ten records acknowledged, LSNs $(head -n 1 "$D/acked" | cut -d' ' -f1)..$last_lsn"

stop 1
stop 2
wipe_log 1
say "both stopped, node1's log deleted; node1 restarts first"

launch 1
step_outcome 1 "is the primary of epoch|node .* listening" "node1's start without its log"
if [[ $outcome == ok ]]; then
	launch 2
	wait_new 2 "listening" "node2 listening"
	# the primary takes node2 back and catches it up (a member again)
	wait_member 1 2
	final=1
else
	new_err 1 | grep -q "node1.log" ||
		fail "node1's refusal does not name its missing log: $why"
	launch 2
	wait_new 2 "listening" "node2 listening"
	ctl_step 2 "node2's promotion after node1's refusal" promote
	if [[ $outcome == ok ]]; then
		wait_status 2 '"role":"primary"' "node2 the primary"
		if [[ -n $REINIT ]]; then
			conf 1 replica 3000 1 2
			launch 1 "$REINIT"
			wait_new 1 "listening" "node1 listening with a fresh log"
			wait_member 2 1
		fi
	fi
	final=2
fi
check_one_primary
[[ -z $primary || $primary == "$final" ]] ||
	fail "node$primary reports primary, not node$final"
stop_all
check_acked_in $final
pass "the ten acknowledged records survived node1's lost disk"
