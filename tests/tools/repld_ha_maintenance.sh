#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_maintenance.sh -- maintenance mode and the promotions' history:
# three nodes with a coordinator (lease 1 s), one etcd, appends through
# the primary all along.
#   1. `replctl --json maintenance on --reason ...` through a replica:
#      exit 0, the reply names it and the reason; every node's status says
#      failover "maintenance" with who and why, and the text status says
#      "failover MAINTENANCE (set by node 3 at ...: ...)";
#   2. an operator's `replctl switchover --to 2` still moves the primary;
#   3. the new primary killed (SIGKILL): for three leases after its key
#      has gone no node becomes the primary, none campaigns or takes
#      over, and the replicas' status waits for "maintenance";
#   4. `replctl maintenance off`: a replica takes over within a few
#      leases, and every acknowledged record is read back through it;
#   5. `replctl history`: the two promotions (node 2, then the new
#      primary), oldest first, from_lsn rising, how long node 2's epoch
#      lasted; the text form names them too.
# Usage errors exit 2 before any request.  Skipped (77) without etcd.
set -u

NAME=repld_ha_maintenance
LOGSIZE=${LOGSIZE:-16M}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

# usage: no request is made
for args in "maintenance" "maintenance maybe" "maintenance off --reason x" \
	"history now"; do
	"$CTL" -s "$D/none.sock" $args > /dev/null 2>&1
	rc=$?
	[[ $rc == 2 ]] || fail "replctl $args: exit $rc, want 2 (usage)"
done

etcd_start "${ETCD_FLAGS[@]}"
ha_start_cluster
: > "$D/acked"

# acks_at_least TAG N: the appender TAG has N acknowledged (10 s)
acks_at_least() {
	local t
	for ((t = 0; t < 100 && $(load_acks "$1") < $2; t++)); do sleep 0.1; done
	(($(load_acks "$1") >= $2)) || fail "only $(load_acks "$1") acknowledged by $1"
}

# 1. maintenance on, through a replica
out=$("$CTL" -s "$(sock 3)" --json maintenance on --reason "kernel upgrade, host 1" \
	2> "$D/m.err") || fail "maintenance on: exit $?: $out $(cat "$D/m.err")"
mapfile -t v < <(jget "$out" ok maintenance was_on node_id reason at_ms)
[[ "${v[*]:0:5}" == "true true false 3 kernel upgrade, host 1" && ${v[5]} -gt 0 ]] ||
	fail "maintenance on: the reply is $out"
for n in 1 2 3; do
	for ((t = 0; t < 50; t++)); do
		sj "$n" coordinator.failover coordinator.maintenance.node_id \
			coordinator.maintenance.reason
		[[ "${v[*]}" == "maintenance 3 kernel upgrade, host 1" ]] && break
		sleep 0.1
	done
	[[ "${v[*]}" == "maintenance 3 kernel upgrade, host 1" ]] ||
		fail "node$n's status: failover ${v[0]}, maintenance ${v[1]} ${v[2]}"
done
text=$("$CTL" -s "$(sock 1)" status) || fail "status of node1: exit $?"
grep -Eq "failover MAINTENANCE \(set by node 3 at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z: kernel upgrade, host 1\)" <<< "$text" ||
	fail "status of node1 does not say maintenance: $(grep coordinator <<< "$text")"
echo "$NAME: maintenance on, every node says so ($((SECONDS - T0)) s)"

# 2. a switchover still works in maintenance
load_start w1 1 21
acks_at_least w1 200
ep=$(jnum "$(status_json 1)" epoch)
out=$("$CTL" -s "$(sock 1)" --json switchover --to 2 2> "$D/sw.err") ||
	fail "switchover --to 2 in maintenance: exit $?: $out $(cat "$D/sw.err")"
new_primary "$ep" 20 2
((np == 2)) || fail "switchover in maintenance: node2 not the primary: $(roles_line)"
load_stop w1
load_pairs w1 21
wait_status 1 '"role":"replica".*"following":true.*"primary_node":2' \
	"node1 the replica of node2" 20
echo "$NAME: switchover to node2 in maintenance ($((SECONDS - T0)) s)"

# 3. the primary killed: nobody takes its place
load_start w2 2 22
acks_at_least w2 200
for n in 1 3; do
	sj "$n" coordinator.campaigns coordinator.takeovers
	was[$n]="${v[*]}"
done
ep=$(jnum "$(status_json 2)" epoch)
kill -9 "${pid[2]}"
wait "${pid[2]}" 2>/dev/null
unset "pid[2]"
load_stop w2
load_pairs w2 22
# no_primary: neither survivor is a primary
no_primary() {
	local n
	for n in 1 3; do
		[[ $(jstr "$(status_json "$n")" role) == primary ]] &&
			fail "node$n became the primary in maintenance: $(roles_line)"
	done
	return 0
}
# its key goes with its lease (a second), then three leases of nothing
gone=0
for ((t = 0; t < 50 && gone == 0; t++)); do
	no_primary
	[[ $(cj 1 coordinator.leader) == null ]] && gone=1 || sleep 0.1
done
((gone)) || fail "the dead primary's leader key still there 5 s after: $(roles_line)"
t_end=$(($(ms_now) + 3 * LEASE_MS))
while (($(ms_now) < t_end)); do
	no_primary
	sleep 0.1
done
for n in 1 3; do
	sj "$n" role coordinator.failover coordinator.waiting coordinator.campaigns \
		coordinator.takeovers
	[[ "${v[*]:0:3}" == "replica maintenance maintenance" ]] ||
		fail "node$n, 3 leases after the key went: ${v[*]}"
	[[ "${v[*]:3:2}" == "${was[$n]}" ]] ||
		fail "node$n campaigned or took over in maintenance: ${was[$n]} then ${v[*]:3:2}"
done
# (its exit is 5: a replica that follows no primary cannot acknowledge)
"$CTL" -s "$(sock 3)" status 2> /dev/null | grep -q "waiting   maintenance: " ||
	fail "node3's status text does not say it waits for maintenance"
echo "$NAME: node2 killed; no primary for 3 leases after its key went ($((SECONDS - T0)) s)"

# 4. maintenance off: a replica takes over
out=$("$CTL" -s "$(sock 1)" --json maintenance off 2> "$D/m.err") ||
	fail "maintenance off: exit $?: $out $(cat "$D/m.err")"
mapfile -t v < <(jget "$out" ok maintenance was_on node_id)
[[ "${v[*]}" == "true false true 3" ]] || fail "maintenance off: the reply is $out"
new_primary "$ep" $((5 * LEASE_MS / 1000 + 2)) 1 3
((np != 0)) || fail "no primary within 5 leases of maintenance off: $(roles_line)"
echo "$NAME: maintenance off; node$np the primary $np_ms ms later ($((SECONDS - T0)) s)"
[[ $(cj "$np" coordinator.failover) == armed ]] || fail "node$np: failover not armed"
sort_acked
check_read "$np"
echo "$NAME: $checked acknowledged records read back through node$np"

# 5. the history: node 2's promotion, then node np's
out=$("$CTL" -s "$(sock "$np")" --json history 2> "$D/h.err") ||
	fail "history: exit $?: $out $(cat "$D/h.err")"
mapfile -t v < <(jget "$out" ok total invalid 'epochs[0].node_id' \
	'epochs[1].node_id' 'epochs[0].from_lsn' 'epochs[1].from_lsn' \
	'epochs[0].epoch' 'epochs[1].epoch' 'epochs[0].previous_ms' \
	'epochs[1].previous_ms' 'epochs[2]')
[[ "${v[*]:0:5}" == "true 2 0 2 $np" && -z ${v[11]} ]] ||
	fail "history: not the promotions of node2 then node$np: $out"
((v[6] > v[5] && v[8] > v[7])) || fail "history: from_lsn or epoch not rising: $out"
[[ ${v[9]} == null && ${v[10]} =~ ^[0-9]+$ ]] ||
	fail "history: previous_ms null then a number, not ${v[9]} ${v[10]}: $out"
text=$("$CTL" -s "$(sock "$np")" history) || fail "history (text): exit $?"
[[ $(grep -c "^[0-9]" <<< "$text") == 2 ]] && grep -q "^EPOCH" <<< "$text" ||
	fail "history (text): $text"
echo "$NAME: history: node2 from LSN ${v[5]}, node$np from LSN ${v[6]}, node2's epoch lasted ${v[10]} ms"

for n in 1 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
