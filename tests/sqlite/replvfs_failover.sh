#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_failover.sh -- SQLite over librepl across failovers: three nodes
# (ofi tcp on loopback), quorum 2, so every COMMIT is durable on both
# replicas.  The application (replvfs_writer) runs on one node as the
# primary, each node with its own database file.  ROUNDS times (default
# 20):
#
#   1. the writer commits transactions (two tables, one id each, some of
#      several pages every 64th), logging each id whose COMMIT returned;
#   2. it is killed with SIGKILL, in the middle of its transactions;
#   3. the old primary's node restarts as a repld replica;
#   4. the next node's repld stops, and the writer starts there: opening
#      the database promotes that node's log (repl_open) and rebuilds the
#      database file from it; then integrity_check is ok, every
#      acknowledged transaction is there, and none is there in part
#      (replvfs_writer's check), or the test fails.
#
# Each replica keeps a copy of the database (sqlite_copy) in the file the
# application opens when that node is promoted.  At the end the last
# primary commits a little more, and both replicas' copies must reach its
# content (the same hash of every row).
#
# Skipped (77) without libsqlite3's loader (never: configure requires it).
NAME=replvfs_failover
WRITER=${REPLVFS_WRITER:-$PWD/tests/sqlite/replvfs_writer}
[[ -x $WRITER ]] || { echo "$NAME: $WRITER not built"; exit 99; }
ROUNDS=${ROUNDS:-20}
LOGSIZE=${LOGSIZE:-8M}
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS
ACKED=$D/acked

# conf_node N ROLE: its file, with its copy of the database as a replica
conf_node() {
	conf "$1" "$2" 3000 2
	echo "sqlite_copy = \"app$1.db\";" >> "$D/node$1.conf"
}
conf_node 1 primary
conf_node 2 replica
conf_node 3 replica
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"

# writer N ROUND [URI-EXTRA]: the application on node N, in the background
writer() {
	local n=$1 r=$2
	"$WRITER" "$EXT" "file:$D/app$n.db?vfs=repl&repl_conf=$D/node$n.conf&repl_timeout_ms=5000$3" \
		"$ACKED" ${4-} > "$D/writer.$r.out" 2> "$D/writer.$r.err" &
	wpid=$!
}

# until ROUND's writer has checked the database and acknowledged COUNT more
acked_more() {
	local r=$1 count=$2 base=$3 t
	for ((t = 0; t < 300; t++)); do
		kill -0 "$wpid" 2>/dev/null || {
			wait "$wpid"
			fail "round $r: the writer exited $?: $(cat "$D/writer.$r.out" "$D/writer.$r.err")"
		}
		(($(wc -l < "$ACKED") >= base + count)) && return 0
		sleep 0.05
	done
	fail "round $r: fewer than $count transactions acknowledged in 15 s: $(cat "$D/writer.$r.err")"
}

p=1
: > "$ACKED"
total_checked=0
for ((r = 1; r <= ROUNDS; r++)); do
	base=$(wc -l < "$ACKED")
	writer $p $r "$( ((r == 1)) && echo '&repl_bootstrap=1')"
	acked_more $r $((20 + RANDOM % 80)) "$base"
	grep -q "^checked: $base acknowledged present" "$D/writer.$r.out" ||
		fail "round $r: $(cat "$D/writer.$r.out")"
	kill -9 "$wpid"
	wait "$wpid" 2>/dev/null
	# the old primary's node: a replica again (its log's tail, if it had
	# one the others lack, is cut by the next primary)
	conf_node $p replica
	start $p
	wait_for $p "listening" "listening"
	q=$((p % 3 + 1))
	stop $q
	echo "$NAME: round $r: node$p killed after $(($(wc -l < "$ACKED") - base)) acknowledged; node$q next"
	p=$q
done
# the last primary checks everything, commits for a second and stays
base=$(wc -l < "$ACKED")
writer $p end "" "1 30"
acked_more end 10 "$base"
grep -q "^checked: $base acknowledged present" "$D/writer.end.out" ||
	fail "the last check: $(cat "$D/writer.end.out")"
for ((t = 0; t < 100; t++)); do
	want=$(grep '^hash' "$D/writer.end.out") && break
	sleep 0.1
done
[[ -n $want ]] || fail "the last primary printed no hash: $(cat "$D/writer.end.err")"
for n in 1 2 3; do
	((n == p)) && continue
	for ((t = 0; t < 100; t++)); do
		got=$("$WRITER" --hash "$D/app$n.db" 2> "$D/hash.err")
		[[ $got == "$want" ]] && break
		sleep 0.1
	done
	[[ $got == "$want" ]] || fail "node$n's copy: '$got', the primary's: '$want'"
done
echo "$NAME: both replicas' copies equal the last primary's database ($want)"
kill -TERM "$wpid"
for f in "$D"/writer.*.err "$D"/node*.err; do clean_stderr "$f" "$f"; done
echo "$NAME: $ROUNDS failovers, $base acknowledged transactions, none lost, none partial ($((SECONDS - T0)) s)"
echo "$NAME: ok ($((SECONDS - T0)) s)"
