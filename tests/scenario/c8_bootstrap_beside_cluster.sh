#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c8_bootstrap_beside_cluster.sh -- a bootstrap that does not hear from
# every node.  node1 the primary, node2 and node3 replicas, k = 1; node3's
# first start is late.  LSNs 1..10 are acknowledged on node1 and node2.
# Both stop; node2's disk is replaced, and the operator answers repld's
# "log missing" with --bootstrap (and role = "primary") instead of
# --reinit, while node1 is still down; node3, blank, is up.
#
# If a bootstrap needs only N - k nodes and refuses only a reached node
# that holds something, node1's first bootstrap goes ahead without node3,
# and node2's goes ahead counting itself and the blank node3: a new
# cluster beside the old one, whose LSNs 1..3 are acknowledged again with
# other records, while node1 still holds the ten.
#
# A correct system needs the answer of every other node, each empty:
# node1's bootstrap waits for node3 (refused while node3 is down, and
# then nothing of it stays: node2 was asked, not fenced, and node1's new
# log is removed, so it can be tried again), and node2's is refused
# (node1 does not answer, node3 holds the membership); node2 then comes
# back as a replica made anew, node1 leads again.
#
# Checked: no LSN acknowledged with two records, the ten records in the
# final primary's log, at most one primary.
set -u

NAME=c8_bootstrap_beside_cluster
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary 2000 1
conf 2 replica 2000 1
conf 3 replica 2000 1
launch 2
wait_new 2 "listening" "node2 listening"
launch 1
step_outcome 1 "is the primary of epoch" "node1's bootstrap with node3 not started"
if [[ $outcome != ok ]]; then
	new_err 1 | grep -q "did not answer" ||
		fail "node1's refusal does not say a node did not answer: $why"
	# nothing of it stays: its own new log is gone, node2 was not fenced
	[[ ! -e $D/node1.log ]] || fail "the refused bootstrap left its log behind"
	launch 3
	wait_new 3 "listening" "node3 listening"
	mark_err 1
	start 1 $BOOTSTRAP
	wait_new 1 "is the primary of epoch" "node1's bootstrap with every node up"
	wait_member 1 3
	stop 3
	say "node3 held the membership and stopped"
fi
wait_status 1 '"replicas_up":1' "node2 streaming"
must_ack 1 c8-{1..10}
((last_lsn >= 10)) || fail "ten records acknowledged, the last at LSN $last_lsn"
say "ten records acknowledged, LSNs $(head -n 1 "$D/acked" | cut -d' ' -f1)..$last_lsn"

stop 1
stop 2
wipe_log 2
running 3 || launch 3
wait_new 3 "listening" "node3 listening"
conf 2 primary 2000 1
say "node1 down, node2's disk replaced; node2 started with bootstrap"
mark_err 2
start 2 $BOOTSTRAP
step_outcome 2 "is the primary of epoch" "node2's bootstrap beside the cluster"
if [[ $outcome == ok ]]; then
	wait_status 2 '"replicas_up":1' "node3 streaming to node2"
	must_ack 2 c8-new-{1..3}
	final=2
else
	conf 2 replica 2000 1
	rm -f "$D/node2.log"	# (a repld before the rule left it)
	launch 2 $REINIT
	wait_new 2 "listening" "node2 listening with a log made anew"
	launch 1
	wait_new 1 "is the primary of epoch" "node1 leads again"
	wait_member 1 2
	final=1
fi
c=$(conflicts)
[[ -z $c ]] || fail "two records acknowledged at one LSN: $(echo "$c" | head -n 3)"
end_check 1 2 3
pass "no LSN acknowledged twice, the ten records survive the bootstrap beside the cluster"
