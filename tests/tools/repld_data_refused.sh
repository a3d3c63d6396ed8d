#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_data_refused.sh -- a replica that answers HELLO but refuses the
# data connection (node3, run with REPL_TEST_REFUSE_DATA, a test-only
# switch of the replica: it refuses every data connection as it refuses
# one without the admission token) is a link failure on the primary:
#   1. node1 logs "cannot open the data connection", marks node3 down and
#      retries it with the backoff: its reconnects count rises;
#   2. node2 streams meanwhile: appends are acknowledged (quorum 1);
#   3. SIGTERM to node1 ends it within 5 s, exit 0.
# Before, the primary's link thread waited forever for an event of the
# refused connection: node3 stayed "catching up" with 0 reconnects and a
# SIGTERM hung in "draining the replicas".
#
# Environment: REPLD, REPLCTL (the build tree's by default); REPLD_REFUSING:
# the repld that runs node3 (default REPLD; the switch is in the replica,
# the failure in the primary).
set -u

NAME=repld_data_refused
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
REFUSING=${REPLD_REFUSING:-$REPLD}
ms() { echo $(($(date +%s%N) / 1000000)); }
P3=127.0.0.1:$(cport 3)

# node3's entry of node1's status: its state and reconnects
n3() { grep -o "\"address\":\"$P3\",\"state\":\"[a-z ]*\"[^}]*\"reconnects\":[0-9]*" <<< "$1"; }
reconnects() { n3 "$1" | grep -o '"reconnects":[0-9]*' | cut -d: -f2; }

conf 1 primary
conf 2 replica
conf 3 replica
start 2
# a new cluster's first start; a repld from before explicit bootstrap
# (to show the failure there) has no such option and makes its log anyway
boot=()
"$REFUSING" --help | grep -q -- --bootstrap && boot=(--bootstrap)
REPL_TEST_REFUSE_DATA=1 "$REFUSING" -c "$D/node3.conf" "${boot[@]}" 2>> "$D/node3.err" &
pid[3]=$!
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1
up 1 2
wait_for 3 "refused a data connection" "node3's refusal"

# 1. a link failure, retried
wait_for 1 "replica $P3 is down: cannot open the data connection to port $(($(cport 3) + 1))" \
	"node3's link failing on its data connection" 5
st=$(status_json 1)
r1=$(reconnects "$st")
[[ -n $r1 ]] || fail "no node3 in node1's status: $st"
sleep 3
st=$(status_json 1)
r2=$(reconnects "$st")
echo "$NAME: node3 as node1 sees it: $(n3 "$st")"
((r2 > r1 && r2 >= 2)) || fail "node3's reconnects went from $r1 to $r2 in 3 s: $(n3 "$st")"
[[ $(n3 "$st") != *'"state":"streaming"'* ]] || fail "node3 streams: $(n3 "$st")"

# 2. the other replica carries the quorum
"$CTL" -s "$(sock 1)" append <<< "with-node3-refusing" > "$D/out" 2> "$D/err" ||
	fail "append with node3 refusing: exit $?: $(cat "$D/err")"
[[ $(cat "$D/out") =~ ^[0-9]+$ ]] || fail "append: $(cat "$D/out")"

# 3. SIGTERM ends the primary in time
t0=$(ms)
kill -TERM "${pid[1]}"
for ((t = 0; t < 100; t++)); do
	kill -0 "${pid[1]}" 2>/dev/null || break
	sleep 0.1
done
el=$(($(ms) - t0))
kill -0 "${pid[1]}" 2>/dev/null && fail "node1 still running $el ms after SIGTERM"
wait "${pid[1]}"
rc=$?
unset "pid[1]"
[[ $rc -eq 0 ]] || fail "node1 exited $rc after SIGTERM"
((el < 5000)) || fail "node1 took $el ms to stop"
echo "$NAME: SIGTERM: node1 exited 0 in $el ms"
stop 2
stop 3
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done

echo "$NAME: ok ($((SECONDS - T0)) s)"
