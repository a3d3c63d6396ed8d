#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_refused.sh -- starts that the log refuses exit 5, which the systemd
# unit does not restart (repld(8) EXIT STATUS), on a two-node cluster:
#   1. the primary's file says another membership than its log stores
#      (quorum 0 instead of 1), without --reconfigure: exit 5, "refused to
#      start: the log stores another membership ..."; with --reconfigure
#      it starts;
#   2. the file's cluster_uuid is not the log's (another cluster's log):
#      the primary and the replica each exit 5, "refused to start: the log
#      PATH belongs to another cluster ...", and the logs are unchanged.
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_refused
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS

# run N WHAT [ARG...]: repld on nodeN.conf in the foreground; exit in $rc
run() {
	local n=$1 what=$2
	shift 2
	: > "$D/run.err"
	timeout 20 "$REPLD" -c "$D/node$n.conf" "$@" 2> "$D/run.err"
	rc=$?
	clean_stderr "$D/run.err" "$what"
}

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2
stop 1
echo "$NAME: a primary and a replica bootstrapped ($((SECONDS - T0)) s)"

# 1. another membership than the stored one
conf 1 primary 3000 0 2
run 1 "another membership"
((rc == 5)) || fail "another membership: exit $rc, not 5: $(tail -n 3 "$D/run.err")"
grep -q " error repld: refused to start: the log stores another membership than 1 peers with quorum 0: make the configuration say the stored one, or start with --reconfigure" "$D/run.err" ||
	fail "another membership: no such message: $(tail -n 3 "$D/run.err")"
: > "$D/node1.err"
start 1 --reconfigure
wait_for 1 "is the primary of epoch" "the primary with --reconfigure"
stop 1
echo "$NAME: another membership: exit 5; with --reconfigure it starts ($((SECONDS - T0)) s)"

# 2. another cluster's log
stop 2
other=$(cat /proc/sys/kernel/random/uuid)
for n in 1 2; do
	sed -i "s/^cluster_uuid = .*/cluster_uuid = \"$other\";/" "$D/node$n.conf"
	sums[n]=$(md5sum < "$D/node$n.log")
done
for n in 2 1; do
	run "$n" "node$n on another cluster's log"
	((rc == 5)) || fail "node$n on another cluster's log: exit $rc, not 5: $(tail -n 3 "$D/run.err")"
	grep -qF "refused to start: the log $D/node$n.log belongs to another cluster (its cluster id is not cluster_uuid $other): give log.path this node's own log, or cluster_uuid its cluster's" "$D/run.err" ||
		fail "node$n on another cluster's log: no such message: $(tail -n 3 "$D/run.err")"
	[[ $(md5sum < "$D/node$n.log") == "${sums[n]}" ]] ||
		fail "node$n's log changed when it was refused"
done
echo "$NAME: another cluster's log: the primary and the replica exit 5 ($((SECONDS - T0)) s)"

echo "$NAME: ok ($((SECONDS - T0)) s)"
