#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c5_replaced_address.sh -- a replica replaced by another at a new
# address, with the same n and k: node1 the primary of node2 and node3
# (n = 2, k = 1), three records acknowledged.  node1's file then lists
# node4 instead of node3 and `replctl reload` applies it.  Before the fix
# the configuration epoch does not move (memberships compare n and k
# only), so node3 -- removed, but still running, never told -- holds the
# current configuration epoch and still counts.  node2 dies; node1
# acknowledges three records with node4; node1 dies.  node2 comes back
# and `replctl promote` (its file still names node1 and node3) counts
# node2 and node3: promoted, without the three records.
#
# A correct system gives the replacement a new configuration epoch (the
# member lists differ), so node3 no longer counts: node2's promotion is
# refused, explicitly, or it takes node4's records.
#
# Checked: everything acknowledged in the final primary's log; one primary.
set -u

NAME=c5_replaced_address
. "$(dirname "$0")/scenario_lib.sh"

conf 1 primary 3000 1 2 3
conf 2 replica 3000 1 1 3
conf 3 replica 3000 1 1 2
conf 4 replica 3000 1 1 2
for n in 2 3 4; do launch $n; done
for n in 2 3 4; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":2' "node2 and node3 streaming"
must_ack 1 c5-{1..3}
ce=$(jnum "$(status_json 1)" config_epoch)
say "three records acknowledged, to LSN $last_lsn (configuration epoch $ce)"

# node3 replaced by node4: same n, same k
conf 1 primary 3000 1 2 4
ctl_step 1 "the reload replacing node3 by node4" reload
[[ $outcome == ok ]] || fail "the reload was refused: $why"
say "reload: $out"
wait_member 1 4
wait_member 1 2
say "node4 a member; configuration epoch $(jnum "$st" config_epoch) (was $ce)"

# node2 dies; node1 acknowledges with node4; node1 dies
kill9 2
must_ack 1 c5-node4-{1..3}
say "three records acknowledged with node4 alone, to LSN $last_lsn"
kill9 1

# node2 back (its file: node1 and node3), promoted
launch 2
step_outcome 2 "node .* listening" "node2's restart"
final=
if [[ $outcome == ok ]]; then
	ctl_step 2 "node2's promotion" promote
	if [[ $outcome == ok ]]; then
		wait_status 2 '"role":"primary"' "node2 the primary"
		say "node2 promoted: $(new_err 2 | grep -m1 -o "promoted: .*")"
		final=2
	fi
fi
check_one_primary
[[ ${primary:-} == "$final" ]] || fail "node${primary:-?} reports primary, not node${final:-?}"
stop_all
if [[ -n $final ]]; then
	check_acked_in $final
else
	check_acked_any 2 3 4
fi
pass "the replaced node did not count: nothing acknowledged lost"
