#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_enable.sh -- the coordinator turned on in a running cluster, one
# node at a time, the replicas first (the order that is not the documented
# one, and that used to fail over the healthy primary): three nodes without
# a coordinator, etcd up, an appender through node1.  node2 is restarted
# with a coordinator block: its link to node1 is not up at its first tick
# and node1 holds no leader key, yet it must not campaign (the keyless
# rule, ha/ha_rules.h); the same for node3.  Then node1 is restarted with
# its coordinator: the replicas lose it for its restart, and must leave it
# lease_ms + down_ms to come back; it takes the leader key and stays the
# primary.  No campaign anywhere, node1 the primary throughout, every
# acknowledged record kept; a replica's status names the primary by its
# control address.
set -u

NAME=repld_ha_enable
# a primary's restart must fit in lease_ms + down_ms (4 s here) on a
# loaded machine
DOWN_MS=${DOWN_MS:-3000}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_start "${ETCD_FLAGS[@]}"
NO_COORD=([1]=1 [2]=1 [3]=1)
ha_start_nodes
ep=$(jnum "$(status_json 1)" epoch)
echo "$NAME: cluster up without coordinators, node1 the primary of epoch $ep ($((SECONDS - T0)) s)"
load_start a 1 11
for ((t = 0; t < 100 && $(load_acks a) < 300; t++)); do sleep 0.1; done
(($(load_acks a) >= 300)) || fail "only $(load_acks a) acknowledged in 10 s"

# calm N: node N is a replica that follows node1 and has not campaigned
calm() {
	local v
	v=($(cj "$1" role following primary_node coordinator.campaigns))
	[[ "${v[*]-}" == "replica true 1 0" ]] ||
		fail "node$1 after its restart with a coordinator: $(roles_line)"
}

# node1 must be the primary of epoch $ep (not fenced, not replaced)
still_primary() {
	kill -0 "${pid[1]}" 2>/dev/null || fail "node1 exited ($1)"
	v=($(cj 1 role epoch))
	[[ "${v[*]-}" == "primary $ep" ]] || fail "node1 is not the primary of epoch $ep $1: $(roles_line)"
}

for n in 2 3; do
	NO_COORD[$n]=0
	hconf "$n" replica
	stop "$n"
	start "$n"
	wait_status "$n" '"following":true' "node$n following again" 20
	# a lease and down_ms and more: a campaign would have come by now
	sleep $(((LEASE_MS + DOWN_MS) / 1000 + 2))
	calm "$n"
	still_primary "after node$n took its coordinator"
	[[ $(cj "$n" coordinator.waiting) == link ]] ||
		fail "node$n: coordinator.waiting is not \"link\": $st"
	# where the primary is reached: its control address, not a source port
	[[ $(cj "$n" primary_address) == "127.0.0.1:$(cport 1)" ]] ||
		fail "node$n: primary_address is not node1's control address 127.0.0.1:$(cport 1): $st"
	# an append sent to a replica is refused with where the primary is
	out=$(echo misdirected | "$CTL" -s "$(sock "$n")" --json append 2>> "$D/ctl.err")
	[[ $(jget "$out" error primary_node primary_address | tr '\n' ' ') == \
		"WRONG_ROLE 1 127.0.0.1:$(cport 1) " ]] ||
		fail "node$n: an append to it was not refused with where the primary is: $out"
	echo "$NAME: node$n restarted with a coordinator, no campaign, node1 still the primary ($((SECONDS - T0)) s)"
done

# node1 last: its replicas give it lease_ms + down_ms to come back
load_stop a
[[ $lrc == 0 ]] || fail "the appender exited $lrc: $(head -n 3 "$D/load.a.err")"
NO_COORD[1]=0
hconf 1 primary
stop 1
start 1
ha_ready 1 30
for n in 2 3; do
	[[ $(cj "$n" coordinator.campaigns) == 0 ]] || fail "node$n campaigned while node1 restarted: $(roles_line)"
done
nep=$(jnum "$(status_json 1)" epoch)
echo "$NAME: node1 restarted with its coordinator, the primary of epoch $nep holding the leader key; no campaign ($((SECONDS - T0)) s)"

load_start b 1 12
for ((t = 0; t < 100 && $(load_acks b) < 100; t++)); do sleep 0.1; done
load_stop b
[[ $lrc == 0 ]] || fail "the second appender exited $lrc: $(head -n 3 "$D/load.b.err")"
: > "$D/acked"
load_pairs a 11
load_pairs b 12
sort_acked
check_read 1
wait_status 1 '"lag_records":0,.*"lag_records":0' "the replicas caught up" 30
for n in 1 2 3; do stop "$n"; done
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
for n in 1 2 3; do check_acked all "$D/acked" "$D/node$n.log"; done
echo "$NAME: ok: the coordinator turned on node by node, replicas first; node1 the primary throughout, all $checked acknowledged records kept ($((SECONDS - T0)) s)"
