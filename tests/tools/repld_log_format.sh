#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_log_format.sh -- repld's log (repld(8), LOGGING), on one replica:
#
#  1. every line of stderr, repld's own and librepl's, is
#     "YYYY-MM-DDTHH:MM:SS.mmmZ LEVEL repld: MESSAGE" (UTC, ms) with LEVEL
#     one of fatal, error, warning, notice, info, debug;
#  2. transport "auto" on a host without an RDMA device logs no error
#     (the probe's failure is the answer "use tcp"), and says so at notice;
#  3. with JOURNAL_STREAM naming stderr's device and inode every line is
#     "<N>repld: MESSAGE" (sd-daemon's priority, no timestamp); naming
#     another file, the timestamps stay;
#  4. log_level = "error" drops repld's own notice lines too.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_log_format
. "$(dirname "$0")/cluster_lib.sh"
T0=$SECONDS

LINE_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (fatal|error|warning|notice|info|debug) repld: '

# run_once N: start node N, wait until its admin socket answers, stop it
run_once() {
	start "$1"
	wait_status "$1" '"role":"replica"' "an answer on the admin socket"
	stop "$1"
	clean_stderr "$D/node$1.err" "node$1"
}

# 1 and 2: the format, and auto without RDMA
conf 1 replica 3000 1 2
sed -i 's/transport = "ofi:tcp";/transport = "auto";/' "$D/node1.conf"
run_once 1
[[ -s $D/node1.err ]] || fail "node1 logged nothing"
bad=$(grep -Evc "$LINE_RE" "$D/node1.err")
[[ $bad -eq 0 ]] ||
	fail "$bad line(s) not in the format: $(grep -Ev -m 3 "$LINE_RE" "$D/node1.err")"
grep -Eq 'Z notice repld: node 1 \(replica\) listening on' "$D/node1.err" ||
	fail "the listening line is not at notice"
grep -Eq 'Z info repld: ' "$D/node1.err" ||
	fail "log_level info let no info line through (librepl's)"
if grep -q "no RDMA device for 127.0.0.1: using tcp (ofi)" "$D/node1.err"; then
	! grep -Eq 'Z (error|fatal) ' "$D/node1.err" ||
		fail "auto without RDMA logged an error: $(grep -E -m 3 'Z (error|fatal) ' "$D/node1.err")"
	grep -Eq 'Z notice repld: no RDMA device for' "$D/node1.err" ||
		fail "the fallback to tcp is not said at notice"
	echo "$NAME: auto without RDMA: no error, a notice ($(grep -c . "$D/node1.err") lines, all in the format)"
else
	# a host with a device that serves 127.0.0.1 picks verbs: nothing to see
	ls /sys/class/infiniband/* >/dev/null 2>&1 ||
		fail "auto without an RDMA device did not say it uses tcp"
	echo "$NAME: this host has an RDMA device: the fallback is not tried"
fi

# 3: journald's stream
sed -i 's/transport = "auto";/transport = "ofi:tcp";/' "$D/node1.conf"
: > "$D/node1.err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$D/node1.err")
export JOURNAL_STREAM
run_once 1
unset JOURNAL_STREAM
bad=$(grep -Evc '^<[2-7]>repld: ' "$D/node1.err")
[[ $bad -eq 0 ]] ||
	fail "with JOURNAL_STREAM, $bad line(s) without a priority: $(grep -Ev -m 3 '^<[2-7]>repld: ' "$D/node1.err")"
grep -q '^<5>repld: node 1 (replica) listening' "$D/node1.err" ||
	fail "the listening line is not at <5> (notice)"
grep -q '^<6>repld: ' "$D/node1.err" || fail "no <6> (info) line"
echo "$NAME: JOURNAL_STREAM of stderr: $(grep -c . "$D/node1.err") lines, each <N>, no timestamp"

# another file's dev:ino (a redirected child's inherited variable)
: > "$D/other"
: > "$D/node1.err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$D/other") run_once 1
bad=$(grep -Evc "$LINE_RE" "$D/node1.err")
[[ $bad -eq 0 ]] || fail "JOURNAL_STREAM of another file changed the format"

# 4: log_level error
sed -i 's/log_level = "info";/log_level = "error";/' "$D/node1.conf"
: > "$D/node1.err"
run_once 1
! grep -Eq 'Z (warning|notice|info|debug) ' "$D/node1.err" ||
	fail "log_level error let through: $(grep -E -m 3 'Z (warning|notice|info|debug) ' "$D/node1.err")"
! grep -q "listening\|admin socket\|stopped" "$D/node1.err" ||
	fail "log_level error let repld's notice lines through"
echo "$NAME: log_level error: $(grep -c . "$D/node1.err") lines"
echo "$NAME: ok ($((SECONDS - T0)) s)"
