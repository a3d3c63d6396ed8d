#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_reinit.sh -- how a replica's log is made, and the promise floor of
# one made anew, on a three-node cluster (k = 1):
#   1. a blank log (every byte zero) at a start without --bootstrap or
#      --reinit is a missing log: refused, exit 5, and left as it is;
#   2. with node2 down, node3 made anew (--reinit) waits for its promise
#      floor (k + 1 = 2 answers, node1's only): it says so in its log and
#      its status, and node1 cannot catch it up;
#   3. a promotion of it is refused (its log holds no membership), and the
#      replica it goes back to is the same log, not made anew once more;
#   4. SIGTERM ends the wait at once; restarted without --reinit, the log,
#      still marked, takes its floor first;
#   5. node2 back: node3 takes its floor, node1's epoch, and node1 catches
#      it up.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_reinit
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
ms() { echo $(($(date +%s%N) / 1000000)); }
# header KEY: a string or bool of node3's log header (replctl dump --json;
# the first such key: the header's own, not its membership's)
header() {
	"$CTL" dump --json --payload none "$D/node3.log" 2>> "$D/ctl.err" | head -n 1 |
		grep -o "\"$1\":\(\"[^\"]*\"\|[a-z]*\)" | head -n 1 | cut -d: -f2 | tr -d '"'
}

start_cluster
e1=$(jnum "$(status_json 1)" epoch)

# 1. a blank log is no new node's
stop 3
head -c "$(stat -c %s "$D/node3.log")" /dev/zero > "$D/node3.log"
: > "$D/node3.err"
timeout 10 "$REPLD" -c "$D/node3.conf" 2> "$D/node3.err"
rc=$?
clean_stderr "$D/node3.err" "node3 on a blank log"
((rc == 5)) || fail "node3 on a blank log: exit $rc, not 5: $(tail -n 3 "$D/node3.err")"
grep -q "refused to start: the log .*node3.log is blank" "$D/node3.err" ||
	fail "node3 on a blank log: no reason given: $(tail -n 3 "$D/node3.err")"
cmp -s -n "$(stat -c %s "$D/node3.log")" "$D/node3.log" /dev/zero ||
	fail "node3's blank log was written to"
echo "$NAME: a blank log without --bootstrap or --reinit: exit 5 ($((SECONDS - T0)) s)"

# 2. made anew while node2 is down: it waits for its floor
stop 2
: > "$D/node3.err"
start 3 --reinit
wait_for 3 "waiting for its promise floor: 1 of the 2 answers" "the floor's wait"
wait_status 3 '"floor_pending":true,"floor_needed":2,"floor_answered":1' \
	"node3's status: waiting for its floor"
wait_for 1 "not ready: taking its promise floor from 2 other nodes" "node1 refused by node3"
# it answers, and says by its exit status that it serves no primary (5)
"$CTL" -s "$(sock 3)" status > "$D/status.txt" 2>> "$D/ctl.err"
rc=$?
[[ $rc -eq 5 ]] || fail "replctl status on node3 waiting for its floor: exit $rc, not 5"
grep -q "waiting for its promise floor" "$D/status.txt" ||
	fail "replctl status does not say node3 waits: $(cat "$D/status.txt")"
inc=$(header incarnation)
[[ $(header promise_pending) == true && -n $inc ]] ||
	fail "node3's log is not marked promise pending (incarnation '$inc')"
echo "$NAME: node3 made anew waits for its floor, node1 refused ($((SECONDS - T0)) s)"

# 3. a refused promotion does not make the log anew again
"$CTL" -s "$(sock 3)" --timeout 30000 promote > "$D/promote.out" 2>&1 &&
	fail "node3's promotion without a membership took: $(cat "$D/promote.out")"
wait_status 3 '"role":"replica"' "node3 a replica again"
[[ $(header incarnation) == "$inc" ]] ||
	fail "node3's log was made anew again after the refused promotion ($inc, now $(header incarnation))"
wait_status 3 '"floor_pending":true' "node3 still waiting for its floor"
echo "$NAME: node3's promotion refused; its log kept ($((SECONDS - T0)) s)"

# 4. SIGTERM while it waits, then a start without --reinit
t0=$(ms)
stop 3
el=$(($(ms) - t0))
((el < 3000)) || fail "node3 took $el ms to stop while it waited for its floor"
[[ $(header promise_pending) == true && $(header incarnation) == "$inc" ]] ||
	fail "node3's log after the stop: not the same log waiting for its floor"
: > "$D/node3.err"
start 3
wait_for 3 "has not taken its promise floor yet" "the floor taken again at the restart"
wait_status 3 '"floor_pending":true' "node3 waiting for its floor again"
echo "$NAME: SIGTERM in $el ms; restarted, node3 waits for its floor again ($((SECONDS - T0)) s)"

# 5. node2 answers: the floor, then node1 catches node3 up
: > "$D/node2.err"
start 2
wait_for 3 "took its promise floor: epoch $e1 " "node3's floor: node1's epoch"
wait_status 1 "\"address\":\"127.0.0.1:$(cport 3)\",\"state\":\"streaming\",\"member\":true" \
	"node3 a streaming member of node1's" 20
wait_status 3 '"floor_pending":false' "node3 done with its floor"
[[ $(header promise_pending) == false && $(header incarnation) == "$inc" ]] ||
	fail "node3's log after its floor: still marked, or another log (pending $(header promise_pending), incarnation $(header incarnation), was $inc)"
echo "$NAME: $(grep -m1 -o "took its promise floor: epoch [0-9]*" "$D/node3.err"); a member ($((SECONDS - T0)) s)"

for n in 1 2 3; do stop $n; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
