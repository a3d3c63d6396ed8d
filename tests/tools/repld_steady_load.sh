#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_steady_load.sh -- heartbeats do not starve under a light, steady
# load: three nodes, quorum 2, `replctl append` paced at about 30 records
# a second for about 10 s, no faults.  Every record is acknowledged; no
# replica is dropped as "silent for" on the primary, nor the primary as
# "silent" on a replica; both replicas stream with 0 reconnects.  Before,
# the primary sent a HEARTBEAT only when it had sent nothing else for a
# period, and the replica speaks only to answer: the COMMITs of a steady
# load kept the replicas silent until they were taken for dead.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_steady_load
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
N=300

conf 1 primary 3000 2
conf 2 replica 3000 2
conf 3 replica 3000 2
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1
up 1 2
up 1 3
wait_status 1 '"replicas_up":2' "both replicas up"

# N lines, one every 33 ms
paced() {
	local i
	for ((i = 1; i <= N; i++)); do
		echo "steady-$i"
		sleep 0.033
	done
}
t=$SECONDS
paced | "$CTL" -s "$(sock 1)" --json append > "$D/app.out" 2> "$D/app.err"
rc=$?
el=$((SECONDS - t))
acks=$(grep -c '"ok":true' "$D/app.out")
[[ $rc -eq 0 && $acks -eq $N ]] ||
	fail "the appender: exit $rc, $acks of $N acknowledged: $(head -n 3 "$D/app.err")"
echo "$NAME: $N records in $el s, all acknowledged"

silent=$(grep -c "silent for" "$D/node1.err")
[[ $silent -eq 0 ]] || fail "node1 dropped replicas $silent times: $(grep -m 3 "silent for" "$D/node1.err")"
for n in 2 3; do
	! grep -q "is silent: dropped" "$D/node$n.err" ||
		fail "node$n dropped the primary: $(grep -m 3 "is silent" "$D/node$n.err")"
done
st=$(status_json 1)
[[ $(grep -o '"reconnects":[0-9]*' <<< "$st" | sort -u) == '"reconnects":0' ]] ||
	fail "reconnects under a steady load: $st"
[[ $(grep -o '"state":"streaming"' <<< "$st" | wc -l) -eq 2 ]] ||
	fail "not both replicas streaming: $st"
echo "$NAME: no replica dropped, reconnects 0"
stop 1
stop 2
stop 3
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done

echo "$NAME: ok ($((SECONDS - T0)) s)"
