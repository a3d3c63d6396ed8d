#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c6_released_log.sh -- a fully released log loses "most advanced" to a
# stale one: three nodes, k = 1 (n = 2).
#   E1: node1 the primary; three records acknowledged.  Both replicas die;
#       node1 appends c6-deposed (not acknowledged, in its log only) and
#       dies.
#   E2: node3 comes back, and node2 becomes the primary (with node3)
#       through librepl (release_primary: repld cannot release): three
#       records acknowledged, then all released -- the database
#       checkpointed them -- so node2's and node3's logs hold nothing after
#       their checkpoints.  node2 dies.
#   E3: node1 comes back as a replica; `replctl promote` on node3.  Before
#       the fix a log with nothing after its checkpoint reports the epoch
#       of its last record as 0, so node1's stale (E1, c6-deposed's LSN)
#       is "more advanced" than node3's (0, E2's last LSN): node3 takes
#       node1's log, and c6-deposed -- never acknowledged, from a deposed
#       primary -- becomes committed at an LSN node2 acknowledged another
#       record at; node3 then acknowledges new records at LSNs node2
#       acknowledged others at.
# A correct system keeps the epoch of the last record across a release:
# node3 stays the most advanced.  The promotion may be refused, explicitly.
#
# Checked: no LSN acknowledged with two records; every acknowledged record
# not released (at or after the final primary's checkpoint) in its log
# with its payload; one primary.
#
# Environment: REPLD, REPLCTL, RELEASE_PRIMARY (the build tree's
# tests/scenario/release_primary by default).
set -u

NAME=c6_released_log
. "$(dirname "$0")/scenario_lib.sh"
REL=${RELEASE_PRIMARY:-./tests/scenario/release_primary}
[[ -x $REL ]] || { echo "$NAME: $REL not built"; exit 99; }

conf 1 primary
conf 2 replica
conf 3 replica
for n in 2 3; do launch $n; done
for n in 2 3; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
must_ack 1 c6-{1..3}
say "E1: three records acknowledged, to LSN $last_lsn"

kill9 2
kill9 3
try_append 1 1500 c6-deposed
((got == 0)) || fail "E1: c6-deposed acknowledged with both replicas dead"
kill9 1
L1=$(lsn_of "$D/node1.log" c6-deposed)
[[ -n $L1 ]] || fail "E1: c6-deposed is not in node1's log"
say "E1: c6-deposed not acknowledged (replctl exit $rc), in node1's log at LSN $L1; node1 killed"

# E2: node2 the primary through librepl; it acknowledges, then releases all
launch 3
wait_new 3 "listening" "node3 listening"
mark_err 2
"$REL" "$D/node2.conf" c6-e2-{1..3} > "$D/rel.out" 2>> "$D/node2.err" &
pid[2]=$!
for ((t = 0; t < 200; t++)); do
	grep -q "^released " "$D/rel.out" && break
	running 2 || break
	sleep 0.1
done
record_acks 2 "$(awk '$1 ~ /^[0-9]+$/ { print "{\"ok\":true,\"lsn\":" $1 "}" }' "$D/rel.out")" \
	$(awk '$1 ~ /^[0-9]+$/ { print $2 }' "$D/rel.out")
if ! grep -q "^released " "$D/rel.out"; then
	running 2 && fail "E2: release_primary did not release in 20 s: $(tail -n 3 "$D/node2.err")"
	wait "${pid[2]}"
	rc=$?
	unset "pid[2]"
	clean_stderr "$D/node2.err" "E2: release_primary (exit $rc)"
	((rc == 4)) || fail "E2: release_primary exited $rc: $(new_err 2 | tail -n 3)"
	say "E2: node2's promotion refused (exit 4): $(new_err 2 | grep -m1 "release_primary:")"
else
	((got == 3)) || fail "E2: $got of three records acknowledged: $(cat "$D/rel.out")"
	read -r _ first last < <(grep "^released " "$D/rel.out")
	# first_lsn 0: no record kept
	((first == 0 && last == last_lsn)) ||
		fail "E2: node2's log not all released: LSNs $first..$last"
	st=$(status_json 3)
	say "E2: node2 acknowledged three records, to LSN $last_lsn, and released" \
		"them all: its log keeps none; node3's: first_lsn $(jnum "$st" first_lsn)," \
		"last_lsn $(jnum "$st" last_lsn)"
	kill9 2
fi

# E3: node1 back as a replica; node3 promoted
conf 1 replica
launch 1
wait_new 1 "listening" "node1 listening"
ctl_step 3 "E3: node3's promotion" promote
final=
if [[ $outcome == ok ]]; then
	wait_status 3 '"role":"primary"' "node3 the primary"
	say "E3: node3 promoted: $(new_err 3 | grep -m1 -o "promoted: .*")"
	wait_member 3 1
	must_ack 3 c6-e3-{1..2}
	say "E3: node3 acknowledged two records, to LSN $last_lsn"
	final=3
fi
check_one_primary
[[ ${primary:-} == "$final" ]] || fail "node${primary:-?} reports primary, not node${final:-?}"
stop_all
# no promotion: node3's log, the most advanced, still holds what it held
check_acked_in "${final:-3}" released
pass "the released log stayed the most advanced: nothing acknowledged lost"
