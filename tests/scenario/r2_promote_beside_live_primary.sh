#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# r2_promote_beside_live_primary.sh -- a promotion beside a healthy
# primary must not leave two primaries: node1 the primary of node2 (n = 1,
# k = 1), three records acknowledged; `replctl promote` on node2 while
# node1 runs.  Before the fix node2 needs n - k + 1 = 1 node, itself; it
# tries to fence node1, which as a primary takes no HELLO, and is
# promoted anyway; node1 never learns it: both report primary.
#
# A correct system fences node1 (it steps down or exits 3), or refuses
# the promotion, explicitly.
#
# Checked: at most one node reports primary (5 s to settle); everything
# acknowledged in that primary's log.
set -u

NAME=r2_promote_beside_live_primary
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
launch 2
wait_new 2 "listening" "node2 listening"
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":1' "node2 streaming"
must_ack 1 r2-{1..3}
say "three records acknowledged, to LSN $last_lsn"

ctl_step 2 "node2's promotion beside the live node1" promote
say "node2's promotion: $outcome${out:+: $out}"
end=$((SECONDS + 5))
while ((SECONDS < end)); do
	ps=()
	for n in 1 2; do [[ $(role_of $n) == primary ]] && ps+=(node$n); done
	((${#ps[@]} <= 1)) && break
	sleep 0.1
done
((${#ps[@]} <= 1)) ||
	fail "${ps[*]} both report primary 5 s after node2's promotion ($outcome)" \
		"(node2: $(new_err 2 | grep -m1 -o "promoted: .*"))"
running 1 || { wait "${pid[1]}"; say "node1 exited $?"; unset "pid[1]"; }
check_one_primary
final=${primary:-}
stop_all
if [[ -n $final ]]; then
	check_acked_in "$final"
else
	check_acked_any 1 2
fi
pass "one primary after node2's promotion (node${final:-?}), nothing lost"
