#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_quiet_logs.sh -- what stays down is said once, not every second
# (repld(8), LOGGING):
#   1. the replica of a two-node cluster is killed and stays down 11 s
#      while the primary dials it about once a second: the primary says
#      "replica ... is down" once, and its 10-second status line names the
#      replica DOWN and how far behind; when it is back, "replica ... is up
#      after N s down";
#   2. twelve connections to the replica's control port that never send a
#      HELLO are dropped (the oldest evicted by newer ones, the rest after
#      timeouts.down_ms): the replica says "dropped the control
#      connection" once for each reason, not twelve times.
#   3. SIGTERM to the primary while an append waits for its quorum (the
#      replica killed): within 1 s it says "stopping: waiting for 1
#      operations on the log to end ..."; once the replica is back the
#      append ends and the primary exits 0.
# The first two were a line per attempt before; the third said nothing.
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_quiet_logs
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2

# 1. the replica down for 8 s
{ kill -9 "${pid[2]}"; wait "${pid[2]}"; } 2>/dev/null
unset 'pid[2]'
wait_for 1 "replica 127.0.0.1:$(cport 2) is down" "the replica said down"
sleep 11
n=$(grep -c "replica 127.0.0.1:$(cport 2) is \(still \)\?down" "$D/node1.err")
[[ $n -eq 1 ]] || fail "the primary said the replica down $n times in 11 s: $(grep -m 5 'is down' "$D/node1.err")"
# its 10-second status line names the replica down, and how far behind
grep -q "primary, epoch .*; 127.0.0.1:$(cport 2) DOWN, [0-9]* records behind" "$D/node1.err" ||
	fail "no status line names the replica down: $(grep 'primary, epoch' "$D/node1.err" | tail -n 2)"
# replctl status: the replica down, its lag's age readable
txt=$("$CTL" -s "$(sock 1)" status 2>&1)
[[ $txt == *"LAG-AGE"* && $txt =~ 127\.0\.0\.1:$(cport 2)\ +down\ +(yes|no)\ +[0-9]+\ +[0-9]+\ +[0-9.]+\ [KMG]?i?B\ +[0-9]+(ms|s|m[0-9]{2}s) ]] ||
	fail "replctl status of the primary, its replica down: $txt"
start 2
wait_for 1 "replica 127.0.0.1:$(cport 2) is up after [0-9]* s down" "the replica said up again"
echo "$NAME: a replica down 11 s: said down once, named DOWN in the status line, then up after $(grep -o 'is up after [0-9]* s' "$D/node1.err" | tail -n 1 | grep -o '[0-9]*') s"

# 2. connections without a HELLO, dropped after timeouts.down_ms (1 s)
before=$(grep -c "dropped the control connection.*no HELLO within the timeout" "$D/node2.err")
before_ev=$(grep -c "dropped the control connection.*newer connection needs its place" "$D/node2.err")
fds=()
for ((i = 0; i < 12; i++)); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$(cport 2)" || fail "could not connect to node2's control port"
	fds+=("$fd")
done
sleep 3
for fd in "${fds[@]}"; do exec {fd}>&-; done
# (more than the 8 it keeps waiting: the oldest are evicted, a reason of
# its own, said apart)
n=$(( $(grep -c "dropped the control connection.*no HELLO within the timeout" "$D/node2.err") - before ))
ev=$(( $(grep -c "dropped the control connection.*newer connection needs its place" "$D/node2.err") - before_ev ))
[[ $n -eq 1 && $ev -le 1 ]] ||
	fail "12 connections without a HELLO: the replica said $n timeouts and $ev evictions: $(grep 'dropped the control' "$D/node2.err" | tail -n 4)"
echo "$NAME: 12 connections dropped without a HELLO: said once for each reason"

# 3. SIGTERM with an append waiting for a quorum that is gone: said
{ kill -9 "${pid[2]}"; wait "${pid[2]}"; } 2>/dev/null
unset 'pid[2]'
wait_for 1 "replica 127.0.0.1:$(cport 2) is down" "the replica down again"
echo "waits" | "$CTL" -s "$(sock 1)" --timeout 60000 append > "$D/append.out" 2> "$D/append.err" &
apid=$!
sleep 0.5
kill -TERM "${pid[1]}"
wait_for 1 "stopping: waiting for 1 operations on the log to end" "the stop said what it waits for"
start 2
exited 1 "node1 still running 10 s after its replica came back"
[[ $rc -eq 0 ]] || fail "node1 exited $rc"
wait "$apid" 2>/dev/null
echo "$NAME: SIGTERM with an append waiting for its quorum: said what it waits for; done once the replica was back"

stop 2
for n in 1 2; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
