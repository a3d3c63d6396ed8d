#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_log_lock.sh -- one process at a time on a log:
#   1. a replica runs on node2.log; a second repld (its own configuration,
#      ports and admin socket) on the same log, as a replica and as a
#      primary, is refused at once: exit 5, "refused to start: the log ...
#      is locked by process PID (repld)" naming the first daemon's pid;
#   2. the first daemon is unharmed (status answers), and stops cleanly;
#   3. then the same log opens for the other configuration; and after a
#      kill -9 of that one (the kernel drops its lock) for the first again.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_log_lock
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
ms() { echo $(($(date +%s%N) / 1000000)); }

conf 2 replica
start 2
wait_for 2 "listening" "listening"
[[ -f $D/node2.log ]] || fail "no node2.log in $D"

# refused N ROLE: node N's configuration, on node2.log, must be refused
refused() {
	local t0 el
	conf "$1" "$2"
	sed -i "s|^\s*path = .*|path = \"node2.log\";|" "$D/node$1.conf"
	grep -q 'path = "node2.log"' "$D/node$1.conf" || fail "conf $1: no log path set"
	t0=$(ms)
	timeout 10 "$REPLD" -c "$D/node$1.conf" 2> "$D/second$1.err"
	rc=$?
	el=$(($(ms) - t0))
	clean_stderr "$D/second$1.err" "a second repld ($2)"
	[[ $rc -eq 5 ]] || fail "a second repld ($2) on node2.log: exit $rc after $el ms, not 5: $(tail -n 5 "$D/second$1.err")"
	grep -q "refused to start: the log .*node2.log is locked by process ${pid[2]} (repld" \
		"$D/second$1.err" || fail "a second repld ($2): the holder not named: $(tail -n 5 "$D/second$1.err")"
	((el < 5000)) || fail "a second repld ($2) took $el ms to be refused"
	echo "$NAME: a second repld ($2): exit 5 in $el ms: $(grep 'refused to start' "$D/second$1.err")"
}
refused 3 replica
refused 1 primary

# 2. the first is unharmed
# a replica alone, following no primary: it answers, with status 5
"$CTL" -s "$(sock 2)" status > /dev/null 2>&1
rc=$?
[[ $rc -eq 5 ]] || fail "status of the first daemon: exit $rc, not 5"
kill -0 "${pid[2]}" || fail "the first daemon died"
stop 2

# 3. free again: the other configuration takes it; a SIGKILL frees it too
: > "$D/node3.err"
start 3
wait_for 3 "listening" "node3 listening on node2.log"
kill -9 "${pid[3]}"
wait "${pid[3]}" 2>/dev/null
unset "pid[3]"
: > "$D/node2.err"
start 2
wait_for 2 "listening" "node2 listening after node3's kill -9"
stop 2
clean_stderr "$D/node2.err" "node2"
clean_stderr "$D/node3.err" "node3"

echo "$NAME: ok ($((SECONDS - T0)) s)"
