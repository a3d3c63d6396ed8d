#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c7_two_names.sh -- one replica under two names, counted twice: node1
# the primary of node2 and node3 with k = 0 (a record is acknowledged once
# durable on the primary; a promotion then needs n - k + 1 = 3 nodes, all
# of them).  Three records acknowledged with all up; node2 and node3 die;
# three more acknowledged by node1 alone; node1 dies.  node2's file lists
# its two peers as node3 at 127.0.0.1 and node3 at localhost (the same
# node, by another name).  node2 and node3 come back and `replctl promote`
# on node2 fences node3 twice and counts it twice: "3 of 3 nodes fenced"
# with two nodes, promoted without node1: the three records it alone held
# are lost.
#
# A correct system knows a node by its id, not by the name it is reached
# at: the promotion counts node3 once and is refused (explicitly), or the
# file is refused.
#
# Checked: everything acknowledged in the final primary's log; one primary.
set -u

NAME=c7_two_names
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary 3000 0 2 3
conf 2 replica 3000 0 1 3
conf 3 replica 3000 0 1 2
for n in 2 3; do launch $n; done
for n in 2 3; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
must_ack 1 c7-{1..3}
say "three records acknowledged with all up, to LSN $last_lsn"

kill9 2
kill9 3
must_ack 1 c7-node1-{1..3}
say "three records acknowledged by node1 alone (k = 0), to LSN $last_lsn"
kill9 1

# node2's peers: node3 twice, as 127.0.0.1 and as localhost
conf 2 replica 3000 0 3 3
sed -i '/^peers/s/\(.*\)address = "127.0.0.1"/\1address = "localhost"/' "$D/node2.conf"
grep -q 'address = "localhost"; control_port = '"$(cport 3)" "$D/node2.conf" ||
	fail "node2's file does not name node3 as localhost: $(grep peers "$D/node2.conf")"
grep -q 'address = "127.0.0.1"; control_port = '"$(cport 3)" "$D/node2.conf" ||
	fail "node2's file does not name node3 as 127.0.0.1: $(grep peers "$D/node2.conf")"
launch 3
launch 2
step_outcome 2 "node .* listening" "node2's start with node3 listed twice"
final=
if [[ $outcome == ok ]]; then
	wait_new 3 "listening" "node3 listening"
	ctl_step 2 "node2's promotion with node1 gone" promote
	if [[ $outcome == ok ]]; then
		wait_status 2 '"role":"primary"' "node2 the primary"
		say "node2 promoted: $(new_err 2 | grep -o "promoted: .*" | head -n 1)"
		final=2
	fi
fi
check_one_primary
[[ ${primary:-} == "$final" ]] || fail "node${primary:-?} reports primary, not node${final:-?}"
stop_all
if [[ -n $final ]]; then
	check_acked_in $final
else
	check_acked_any 1 2 3
fi
pass "node3 counted once: nothing acknowledged lost"
