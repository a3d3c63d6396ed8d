#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_restore_bootstrap.sh -- a restored log starts a new cluster
# (repld(8), "Backup and restore"; repl_restore_open(3)):
#   1. a log is restored (tests/tools/restore_log: LSNs 1001..1400, two
#      epoch starts among them, of the new cluster's id) where node 1's
#      log goes; nodes 2 and 3 start new (--bootstrap, no log); node 1
#      starts with --bootstrap over the restored log: it says so, leads
#      from LSN 1001, writes its epoch start at 1401 in an epoch above the
#      log's, stores configuration epoch 1, and both replicas stream;
#   2. appends go on at LSN 1402; `replctl read` returns the restored
#      records with the same bytes, then the new one; once the replicas
#      caught up (a full resync from the log's checkpoint) `replctl
#      verify` finds both equal to the primary;
#   3. --bootstrap is still refused (exit 5) over an ordinary log: node 1's
#      own now (the bootstrap took the restore's mark away), node 2's, and
#      a restored log on a node whose role is replica.
#
# Environment: REPLD, REPLCTL (cluster_lib.sh), RESTORE_LOG (the build
# tree's tests/tools/restore_log by default).
set -u

NAME=repld_restore_bootstrap
. "$(dirname "$0")/cluster_lib.sh"
T0=$SECONDS
RESTORE=${RESTORE_LOG:-./tests/tools/restore_log}
[[ -x $RESTORE ]] || { echo "$NAME: $RESTORE not built"; exit 99; }
lt_unwrap RESTORE

FIRST=1001
COUNT=400
LAST=$((FIRST + COUNT - 1))
SIZE=$((4 << 20))

conf 1 primary
conf 2 replica
conf 3 replica

# 1. the restore, then the new cluster on it
"$RESTORE" "$D/node1.log" $SIZE "$UUID" 1 $FIRST $COUNT > "$D/expected.json" \
	2> "$D/restore.err" || fail "restore_log: exit $?: $(cat "$D/restore.err")"
clean_stderr "$D/restore.err" "restore_log"
[[ $(wc -l < "$D/expected.json") -eq $((COUNT - 2)) ]] ||
	fail "restore_log printed $(wc -l < "$D/expected.json") records, not $((COUNT - 2))"
"$CTL" dump "$D/node1.log" > "$D/dump.restored" 2>&1 ||
	fail "replctl dump of the restored log: exit $?: $(head -n 5 "$D/dump.restored")"

start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1 --bootstrap
wait_for 1 "is a restored log" "the restored log taken"
up 1 2
up 1 3
wait_status 1 '"replicas_up":2' "both replicas up" 30
first=$(jnum "$st" first_lsn)
last=$(jnum "$st" last_lsn)
epoch=$(jnum "$st" epoch)
cepoch=$(jnum "$st" config_epoch)
[[ $first == "$FIRST" ]] || fail "the new cluster's log starts at LSN $first, not $FIRST"
[[ $last == $((LAST + 1)) ]] ||
	fail "the new cluster's last LSN is $last, not $((LAST + 1)) (its epoch start): $st"
((epoch > 0x20002)) || fail "the new cluster's epoch $epoch is not above the log's (131074)"
[[ $cepoch == 1 ]] || fail "configuration epoch $cepoch, not 1: $st"
echo "$NAME: the restored log (LSNs $FIRST..$LAST) bootstrapped a cluster: epoch $epoch," \
	"epoch start at $last ($((SECONDS - T0)) s)"

# 2. appends go on; the records read back; the replicas equal
lsn=$(echo "after the restore" | "$CTL" -s "$(sock 1)" append 2> "$D/append.err") ||
	fail "append: exit $?: $(cat "$D/append.err")"
[[ $lsn == $((LAST + 2)) ]] || fail "the first append got LSN $lsn, not $((LAST + 2))"
"$CTL" -s "$(sock 1)" --json read > "$D/read.json" 2> "$D/read.err" ||
	fail "read: exit $?: $(cat "$D/read.err")"
head -n $((COUNT - 2)) "$D/read.json" > "$D/read.restored"
cmp -s "$D/expected.json" "$D/read.restored" ||
	fail "replctl read differs from the restored records: $(diff "$D/expected.json" "$D/read.restored" | head -n 6)"
sed -n "$((COUNT - 1))p" "$D/read.json" | grep -q "^{\"lsn\":$((LAST + 2)),\"len\":17," ||
	fail "the appended record is not next in replctl read: $(sed -n "$((COUNT - 1)),\$p" "$D/read.json")"
wait_status 1 '"lag_records":0,.*"lag_records":0' "both replicas caught up" 30
"$CTL" -s "$(sock 1)" verify > "$D/verify.out" 2>&1 ||
	fail "verify: exit $?: $(cat "$D/verify.out")"
grep -q "127.0.0.1:$(cport 2)" "$D/verify.out" && grep -q "127.0.0.1:$(cport 3)" "$D/verify.out" ||
	fail "verify does not name both replicas: $(cat "$D/verify.out")"
echo "$NAME: $((COUNT - 2)) restored records read back byte for byte, the append at" \
	"LSN $lsn; verify: $(tail -n 1 "$D/verify.out")"
stop 1
stop 2
stop 3
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done

# 3. still refused: --bootstrap over an ordinary log
refused() {	# N WHAT PATTERN
	local rc
	: > "$D/run.err"
	timeout 20 "$REPLD" -c "$D/node$1.conf" --bootstrap 2> "$D/run.err"
	rc=$?
	clean_stderr "$D/run.err" "node$1's $2"
	[[ $rc -eq 5 ]] || fail "node$1's $2: exit $rc, not 5: $(cat "$D/run.err")"
	grep -q "$3" "$D/run.err" ||
		fail "node$1's $2 does not say \"$3\": $(cat "$D/run.err")"
}
refused 1 "second bootstrap" "node1.log exists: start without --bootstrap"
refused 2 "bootstrap over a replica's log" "node2.log exists: start without --bootstrap"
rm -f "$D/node3.log"
"$RESTORE" "$D/node3.log" $SIZE "$UUID" 3 $FIRST $COUNT > /dev/null 2> "$D/restore.err" ||
	fail "restore_log for node 3: exit $?: $(cat "$D/restore.err")"
refused 3 "bootstrap of a replica over a restored log" "bootstraps only a node whose role is"
echo "$NAME: --bootstrap over an existing log still refused (exit 5): the one a bootstrap" \
	"took, a replica's, a restored one on a replica ($((SECONDS - T0)) s)"
