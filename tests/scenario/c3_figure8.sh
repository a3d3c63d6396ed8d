#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c3_figure8.sh -- Raft's Figure 8 with three nodes (k = 1, n = 2):
#   E1: node1 the primary; three records acknowledged.  Both replicas die;
#       node1 appends f8-e1 (not acknowledged: replctl gives up, but the
#       record is in node1's local log), then node1 dies.
#   E2: node2 and node3 come back; node2 is promoted (with node3), node3
#       dies, node2 appends f8-e2 locally only, then node2 dies.
#   E3: node1 and node3 come back; node1 is promoted with node3.  node1
#       is the most advanced by (epoch of the last record, LSN), so it
#       re-replicates f8-e1 to node3 and commits it; a client settling its
#       timed-out append as repl_wait_durable(3) says (everything the new
#       primary holds durable, the record at its LSN) acknowledges it.
#       Then node1 dies.
#   E4: node2 comes back and is promoted with node3: (E2, f8-e2's LSN)
#       beats (E1, the same LSN), so node3's copy of f8-e1 is overwritten
#       by f8-e2: an acknowledged record is gone.
# A correct system (an epoch-start record per primary, committed before
# older records count as committed) never settles f8-e1 as committed, or
# keeps it.  Any promotion may be refused, explicitly.
#
# Checked: everything acknowledged (settled ones too) in the final
# primary's log; no LSN acknowledged with two records; one primary.
set -u

NAME=c3_figure8
. "$(dirname "$0")/scenario_lib.sh"

# promote N WHAT: replctl promote on node N; primary=N when it took
promote() {
	ctl_step "$1" "$2" promote
	if [[ $outcome == ok ]]; then
		wait_status "$1" '"role":"primary"' "node$1 the primary after its promotion"
		primary=$1
	fi
}

# the end: the final primary's log holds everything acknowledged
finish() {
	check_one_primary
	stop_all
	if [[ -n $primary ]]; then
		check_acked_in "$primary"
	else
		check_acked_any 1 2 3
	fi
	pass "$*"
}

conf 1 primary
conf 2 replica
conf 3 replica
launch 2
launch 3
wait_new 2 "listening" "node2 listening"
wait_new 3 "listening" "node3 listening"
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "both replicas streaming"
must_ack 1 f8-1 f8-2 f8-3
say "E1: three records acknowledged, to LSN $last_lsn"

# E1: f8-e1 reaches node1's log only
kill9 2
kill9 3
try_append 1 1500 f8-e1
((got == 0)) || fail "E1: f8-e1 acknowledged with both replicas dead"
kill9 1
L1=$(lsn_of "$D/node1.log" f8-e1)
[[ -n $L1 ]] || fail "E1: f8-e1 is not in node1's log"
say "E1: f8-e1 not acknowledged (replctl exit $rc), in node1's log at LSN $L1; node1 killed"

# E2: node2 promoted with node3; f8-e2 reaches node2's log only
conf 1 replica
launch 2
launch 3
wait_new 2 "listening" "node2 listening"
wait_new 3 "listening" "node3 listening"
primary=
promote 2 "E2: node2's promotion"
[[ -n $primary ]] || finish "E2's promotion refused"
wait_member 2 3
kill9 3
try_append 2 1500 f8-e2
((got == 0)) || fail "E2: f8-e2 acknowledged with node3 dead"
kill9 2
L2=$(lsn_of "$D/node2.log" f8-e2)
[[ -n $L2 ]] || fail "E2: f8-e2 is not in node2's log"
say "E2: f8-e2 not acknowledged (replctl exit $rc), in node2's log at LSN $L2; node2 killed"

# E3: node1 promoted with node3; the client settles f8-e1 there
launch 1
launch 3
wait_new 1 "listening" "node1 listening"
wait_new 3 "listening" "node3 listening"
primary=
promote 1 "E3: node1's promotion"
[[ -n $primary ]] || finish "E3's promotion refused"
wait_status 1 '"replicas_up":1' "node3 streaming to node1"
settle 1 "$L1" f8-e1
kill9 1
say "E3: node1 killed"

# E4: node2 promoted with node3
launch 2
wait_new 2 "listening" "node2 listening"
primary=
promote 2 "E4: node2's promotion"
[[ -n $primary ]] && wait_status 2 '"replicas_up":1' "node3 streaming to node2"
finish "nothing acknowledged overwritten (f8-e1 settled: $settled)"
