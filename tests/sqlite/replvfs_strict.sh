#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_strict.sh -- repl_commit=strict with commits in flight: writers
# go on, readers wait.  The primary is replvfs_strict_probe (quorum 1, two
# repld replicas on loopback), each writer and the reader a thread with a
# connection of its own.  With both replicas stopped (SIGSTOP), so that no
# commit can become durable:
#
#   - writer A commits a row; 0.5 s later writer B, on its own connection,
#     commits another;
#   - 0.5 s later reader R, on a third connection, counts the rows;
#   - 1 s later the log's appended LSN is read (repl_status) and the
#     replicas are continued (SIGCONT).
#
# Strict:
#   - both records were appended while the replicas were stopped (B did
#     not wait for A's flush: the appended LSN moved by 2);
#   - R's answer came after the SIGCONT, and counts both rows: it saw no
#     transaction before it was durable;
#   - both COMMITs return ok.
# The same with repl_commit=pipelined, where R is documented to read the
# rows before they are durable: R's answer must come before the SIGCONT
# and count at least A's row.  This shows the probe sees what it looks
# for; strict's assertion is the one that matters.
NAME=replvfs_strict
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"

conf 1 primary
conf 2 replica
conf 3 replica
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
URI="file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf&repl_timeout_ms=30000"

PROBE=$PWD/tests/sqlite/replvfs_strict_probe
[[ -x $PROBE ]] || { echo "$NAME: $PROBE not built"; exit 99; }
# probe MODE BOOT: its line in $D/MODE.out
probe() {
	"$PROBE" "$EXT" "$URI" "$1" "$2" "${pid[2]}" "${pid[3]}" \
		> "$D/$1.out" 2> "$D/$1.err" || fail "the probe, $1: $(cat "$D/$1.err")"
}

probe strict 1
s=$(cat "$D/strict.out")
echo "$NAME: strict: $s"
[[ $s == *"A=ok B=ok"* ]] || fail "strict: a COMMIT failed: $s"
[[ $s == *" appended=2 "* ]] ||
	fail "strict: the second writer did not append while the first's record was in flight: $s"
[[ $s == *"read_before_cont=0"* ]] ||
	fail "strict: the reader answered before the records could be durable: $s"
[[ $s == "n0=1 "*"count=3 "* ]] || fail "strict: the reader counted other than 3 rows: $s"

probe pipelined 0
p=$(cat "$D/pipelined.out")
echo "$NAME: pipelined: $p"
[[ $p == *"A=ok B=ok"* ]] || fail "pipelined: a COMMIT failed: $p"
[[ $p == *"read_before_cont=1"* && $p == "n0=3 "* && $p != *"count=3 "* ]] ||
	fail "pipelined: the reader did not see a row in flight (the probe sees nothing): $p"

clean_stderr "$D/strict.err" "the probe, strict"
clean_stderr "$D/pipelined.err" "the probe, pipelined"
for n in 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok"
