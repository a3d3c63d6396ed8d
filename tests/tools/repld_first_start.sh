#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_first_start.sh -- a first start that fails leaves nothing behind,
# and --check sees missing directories (repld(8), repld.conf(5)):
#   1. --bootstrap where the log cannot be made whole (a 4 MiB log under
#      a 1 MiB file size limit, ulimit -f, as on a full filesystem), of the
#      replica and of the primary: exit 1, "the log FILE made by this start
#      is removed again", and no file is left where the log goes (a
#      replica left an empty log before);
#   2. then a start without --bootstrap is refused (exit 5) saying the log
#      does not exist and how it is made;
#   3. --bootstrap again, with room: the cluster starts (the replica
#      streams);
#   4. --check of a file whose log directory, or admin socket's directory,
#      does not exist: exit 2, naming the setting and the directory; one
#      the systemd unit makes (under /var/lib/repld/): a note, exit 0.
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_first_start
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS

LOGSIZE=4M conf 1 primary 3000 1 2
LOGSIZE=4M conf 2 replica 3000 1 1

# no_room N: node N's --bootstrap with no room for its log (exit 1),
# nothing left where the log goes
no_room() {
	local n=$1 rc
	: > "$D/run.err"
	(
		trap '' XFSZ
		ulimit -f 1024
		exec timeout 20 "$REPLD" -c "$D/node$n.conf" --bootstrap
	) 2> "$D/run.err"
	rc=$?
	clean_stderr "$D/run.err" "node$n's bootstrap without room"
	[[ $rc -eq 1 ]] ||
		fail "node$n's bootstrap without room for its log: exit $rc, not 1: $(cat "$D/run.err")"
	grep -q "node$n.log made by this start is removed again" "$D/run.err" ||
		fail "node$n's failed bootstrap does not say its log is removed: $(cat "$D/run.err")"
	[[ ! -e $D/node$n.log ]] ||
		fail "node$n's failed bootstrap left $(stat -c '%s bytes' "$D/node$n.log") at the log's path"
}

# 1. no room for the log, on the replica and on the primary
no_room 2
no_room 1
echo "$NAME: a bootstrap with no room for the log, replica and primary: exit 1, nothing left behind"

# 2. a plain start says why it cannot start
for n in 2 1; do
	: > "$D/run.err"
	timeout 20 "$REPLD" -c "$D/node$n.conf" 2> "$D/run.err"
	rc=$?
	clean_stderr "$D/run.err" "node$n's plain start"
	[[ $rc -eq 5 ]] && grep -q "does not exist.*--bootstrap" "$D/run.err" ||
		fail "node$n's plain start after the failed bootstrap: exit $rc: $(cat "$D/run.err")"
done
echo "$NAME: then a start without --bootstrap: exit 5, the log does not exist"

# 3. the bootstrap again, with room
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2
wait_status 1 '"replicas_up":1' "the replica up after the retried bootstrap"
stop 1
echo "$NAME: --bootstrap again: the cluster started"

# 4. --check of missing directories
sed "s|^\([[:space:]]*\)path = \"node1.log\";|\1path = \"$D/no-such-dir/node1.log\";|" \
	"$D/node1.conf" > "$D/nolog.conf"
grep -q "no-such-dir" "$D/nolog.conf" || fail "could not edit log.path"
out=$("$REPLD" -c "$D/nolog.conf" --check 2>&1)
rc=$?
[[ $rc -eq 2 && $out == *"nolog.conf: log.path: the directory $D/no-such-dir does not exist"* ]] ||
	fail "--check of a log in a missing directory: exit $rc: $out"
sed "s|^admin_socket = .*|admin_socket = \"$D/no-such-dir/node1.sock\";|" \
	"$D/node1.conf" > "$D/nosock.conf"
grep -q "no-such-dir" "$D/nosock.conf" || fail "could not edit admin_socket"
out=$("$REPLD" -c "$D/nosock.conf" --check 2>&1)
rc=$?
[[ $rc -eq 2 && $out == *"nosock.conf: admin_socket: the directory $D/no-such-dir does not exist"* ]] ||
	fail "--check of an admin socket in a missing directory: exit $rc: $out"
# a directory the systemd unit makes at its start: a note, and ok
unitdir=/var/lib/repld/first-start-test-$$
[[ ! -e $unitdir ]] || fail "$unitdir exists"
sed "s|^\([[:space:]]*\)path = \"node1.log\";|\1path = \"$unitdir/node1.log\";|" \
	"$D/node1.conf" > "$D/unit.conf"
out=$("$REPLD" -c "$D/unit.conf" --check 2>&1)
rc=$?
[[ $rc -eq 0 && $out == *"unit.conf: note: log.path: the directory $unitdir does not exist yet; the systemd unit makes it at its start"*"unit.conf: ok"* ]] ||
	fail "--check of a log under /var/lib/repld/: exit $rc: $out"
echo "$NAME: --check names a missing log directory and socket directory (exit 2), and notes one the unit makes"

stop 2
for n in 1 2; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
