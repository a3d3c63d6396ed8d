#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# r1_restart_undoes_failover.sh -- a restart must not undo a failover:
# node1 the primary of node2 and node3 (k = 1), three records
# acknowledged; node1 dies, node2 is promoted (with node3) and
# acknowledges three more.  node1 restarts with its file unchanged:
# role = "primary".  Before the fix a primary promotes itself on every
# start: node1 fences node3 above node2's epoch and takes over, and node2,
# the primary the operator chose, is fenced (exit 3).
#
# A correct system keeps node2 the primary: node1 serves as its replica,
# or refuses to start, explicitly.
#
# Checked: 10 s after node1's restart node2 is still running and the
# primary, node1 is not; at most one primary; everything acknowledged in
# node2's log.
set -u

NAME=r1_restart_undoes_failover
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary
conf 2 replica
conf 3 replica
for n in 2 3; do launch $n; done
for n in 2 3; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
must_ack 1 r1-{1..3}
kill9 1

ctl_step 2 "the failover to node2" promote
[[ $outcome == ok ]] || fail "the failover to node2 was refused: $why"
wait_status 2 '"role":"primary"' "node2 the primary"
wait_member 2 3
must_ack 2 r1-node2-{1..3}
say "node1 killed, node2 promoted, six records acknowledged, to LSN $last_lsn"

# node1 restarts with role = "primary", as its file still says
grep -q 'role = "primary"' "$D/node1.conf" || fail "node1's file does not say primary"
launch 1
step_outcome 1 "is the primary of epoch|node .* listening" "node1's restart as the file's primary"
# node2_is: node2's state in $n2, for a failure message (here, not in a
# subshell: it reaps node2)
node2_is() {
	if running 2; then
		n2="node2 reports $(role_of 2)"
	else
		wait "${pid[2]}"
		n2="node2 exited $? ($(grep -m1 -o "fenced: .*" "$D/node2.err"))"
		unset "pid[2]"
	fi
}
end=$((SECONDS + 10))
while ((SECONDS < end)); do
	if [[ $(role_of 1) == primary ]]; then
		node2_is
		fail "node1 is the primary again after its restart" \
			"($(new_err 1 | grep -m1 -o "is the primary of epoch.*")); $n2"
	fi
	if [[ $(role_of 2) != primary ]]; then
		node2_is
		fail "node2 is no longer the primary after node1's restart: $n2"
	fi
	[[ $outcome == refused ]] && ((SECONDS >= end - 8)) && break
	sleep 0.2
done
say "node1's restart: $outcome; node2 still the primary, node1 $(role_of 1)"
check_one_primary
[[ $primary == 2 ]] || fail "node${primary:-?} reports primary, not node2"
stop_all
check_acked_in 2
pass "node2 still the primary after node1's restart, nothing lost"
