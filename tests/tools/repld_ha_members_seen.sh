#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_members_seen.sh -- a node killed with SIGKILL leaves its member
# key in etcd until its lease runs out, still saying its link is up; status
# must not show it live meanwhile.  Three nodes with a coordinator whose
# lease (8 s) outlives each check:
#   1. node3 (a replica) is killed: once node1, the primary, counts one
#      replica up, its status lists node3's key with "seen":"no_link" (the
#      key itself still "link_up":true), and replctl status prints a
#      NO-LINK line for node 3; node2 says "unknown" of node3, "linked" of
#      node1, "self" of itself;
#   node3 is restarted;
#   2. node1 (the primary) is killed: node2's status lists node1's key,
#      role primary, with "seen":"no_link" (and, while node2 follows no
#      primary, the ms it has heard nothing: "silent_ms"), whether a
#      replica has taken over meanwhile or not;
#   3. a replica takes over, and every acknowledged record is kept.
# Without an etcd binary or python3 it is skipped (77).
set -u

NAME=repld_ha_members_seen
LEASE_MS=${LEASE_MS:-8000}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

# member N ID FIELD...: node N's status, its coordinator's member key of
# node ID: the FIELDs, one per line ("" for each when no such key)
member() {
	local n=$1 id=$2
	shift 2
	python3 - "$(status_json "$n")" "$id" "$@" <<-'PY'
	import json, sys
	try:
	    doc = json.loads(sys.argv[1])
	except ValueError:
	    doc = {}
	m = [x for x in (doc.get("coordinator") or {}).get("members") or []
	     if x.get("node_id") == int(sys.argv[2])]
	for f in sys.argv[3:]:
	    v = m[0].get(f, "") if m else ""
	    print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)
	PY
}

etcd_start "${ETCD_FLAGS[@]}"
ha_start_cluster
load_start s 1 11
for ((t = 0; t < 100 && $(load_acks s) < 100; t++)); do sleep 0.1; done
load_stop s
load_pairs s 11

v=($(member 1 1 seen) $(member 1 2 seen) $(member 1 3 seen))
[[ "${v[*]-}" == "self linked linked" ]] || fail "node1 sees its members as: ${v[*]-}"

# 1. a replica killed
kill -9 "${pid[3]}"; wait "${pid[3]}" 2>/dev/null; unset "pid[3]"
wait_status 1 '"replicas_up":1' "node1 counts one replica up" 10
mapfile -t v < <(member 1 3 node_id link_up seen)
[[ ${v[0]-} == 3 ]] || fail "node3's key is gone already: the lease (8 s) ran out before the check"
[[ ${v[1]} == true ]] || fail "node3's key does not say link up any more: ${v[*]}"
[[ ${v[2]} == no_link ]] || fail "node1 shows the killed node3 as seen '${v[2]}', not no_link"
out=$("$CTL" -s "$(sock 1)" status 2>&1)
grep -q "^NO-LINK   node 3: this node has no link with it" <<< "$out" ||
	fail "replctl status of node1 has no NO-LINK line for node 3: $out"
v=($(member 2 1 seen) $(member 2 2 seen) $(member 2 3 seen))
[[ "${v[*]-}" == "linked self unknown" ]] || fail "node2 sees its members as: ${v[*]-}"
echo "$NAME: a killed replica's live key is shown no_link ($((SECONDS - T0)) s)"
start 3
wait_status 1 '"replicas_up":2' "node3 back" 30
ha_ready 1

# 2. the primary killed: whatever node2 is meanwhile (a replica following
# nobody, the new primary, or a replica of the new one), it shows node1's
# key, live until its member lease ends, as no_link
ep=$(jnum "$(status_json 2)" epoch)
kill -9 "${pid[1]}"; wait "${pid[1]}" 2>/dev/null; unset "pid[1]"
for ((t = 0; t < 100; t++)); do
	mapfile -t v < <(member 2 1 node_id role seen silent_ms)
	[[ ${v[2]-} == no_link ]] && break
	sleep 0.1
done
[[ ${v[0]-} == 1 ]] || fail "node1's key is gone already: the lease (8 s) ran out before the check"
[[ ${v[1]} == primary ]] || fail "node1's key says role '${v[1]}', not primary"
[[ ${v[2]} == no_link ]] || fail "node2 shows the killed primary as seen '${v[2]}', not no_link"
# silent_ms: a number while node2 follows no primary, else null (all
# three from one status: node2 may take over between two)
sj 2 role following coordinator.members
if [[ "${v[0]} ${v[1]}" == "replica false" ]]; then
	silent=$(python3 -c 'import json, sys
m = [x for x in json.loads(sys.argv[1] or "[]") if x.get("node_id") == 1]
s = m[0].get("silent_ms", "") if m else ""
print("null" if s is None else s)' "${v[2]}")
	[[ $silent =~ ^[0-9]+$ ]] || fail "node2 follows nobody, and silent_ms is '$silent'"
fi
echo "$NAME: a killed primary's key is shown no_link ($((SECONDS - T0)) s)"

# 3. the takeover; nothing acknowledged lost
new_primary "$ep" 40 2 3
((np != 0)) || fail "no replica took over in 40 s: $(roles_line)"
check_read "$np"
echo "$NAME: ok ($((SECONDS - T0)) s)"
