#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_release.sh -- the log of a replicated SQLite database is released
# behind its checkpoints, and held for a replica's copy (docs/sqlite.md,
# "Checkpoints and the log").  Three nodes, quorum 1, a 4 MiB log; the
# replicas keep copies (sqlite_copy).
#
#   1. the writer (replvfs_writer) commits for 4 s, several times what the
#      log holds: no COMMIT fails (without releases the log fills and one
#      fails with SQLITE_FULL); the replicas' logs no longer begin at their
#      first record; both copies are bases and reach the writer's hash;
#   2. node3 is killed under the writer: its copy holds the log, so with the writer going
#      on the log fills and a COMMIT fails with "database or disk is
#      full" (the hold holds), while node2's log keeps node3's records;
#      the space alarm, and the refusal, name node3's hold;
#   3. node3 comes back: its copy follows on from its base, with no gap,
#      and the writer, opened again, commits on (the log is released
#      again) and finds every acknowledged transaction;
#   4. failover onto node2, whose log was released: the open rebuilds the
#      database from node2's copy and its log; every acknowledged
#      transaction is there, and node1's and node3's copies follow;
#   5. node3's copy damaged (a third of its pages overwritten) under its
#      true-looking marker: opening the database there refuses the rebuild
#      (it fails integrity_check), says so, and leaves the file as it was
#      (without the check the open succeeded and served a malformed
#      database).
NAME=replvfs_release
WRITER=${REPLVFS_WRITER:-$PWD/tests/sqlite/replvfs_writer}
[[ -x $WRITER ]] || { echo "$NAME: $WRITER not built"; exit 99; }
LOGSIZE=${LOGSIZE:-4M}
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS
ACKED=$D/acked
: > "$ACKED"

conf_node() {	# N ROLE
	conf "$1" "$2" 3000 1
	echo "sqlite_copy = \"app$1.db\";" >> "$D/node$1.conf"
}
conf_node 1 primary
conf_node 2 replica
conf_node 3 replica
for n in 2 3; do
	start $n
	wait_for $n "listening" "listening"
done

# writer N TAG [URI-EXTRA] [SECONDS LINGER]: the application on node N
writer() {
	"$WRITER" "$EXT" "file:$D/app$1.db?vfs=repl&repl_conf=$D/node$1.conf&repl_timeout_ms=5000$3" \
		"$ACKED" ${4-} > "$D/writer.$2.out" 2> "$D/writer.$2.err" &
	wpid=$!
}
# the hash line of a writer that ran out its seconds
hash_of() {
	local t
	for ((t = 0; t < 300; t++)); do
		grep -q '^hash' "$D/writer.$1.out" && { grep '^hash' "$D/writer.$1.out"; return; }
		kill -0 "$wpid" 2>/dev/null || break
		sleep 0.1
	done
	fail "writer $1 printed no hash: $(tail -n 5 "$D/writer.$1.err")"
}
# until node N's copy hashes as WANT
copy_reaches() {
	local n=$1 want=$2 t got
	for ((t = 0; t < 150; t++)); do
		got=$("$WRITER" --hash "$D/app$n.db" 2> /dev/null)
		[[ $got == "$want" ]] && return 0
		sleep 0.1
	done
	fail "node$n's copy: '$got', the primary's: '$want'"
}
# copy_field N KEY: a number of node N's sqlite_copy object
copy_field() {
	status_json "$1" | grep -o '"sqlite_copy":{.*' | grep -o "\"$2\":[0-9]*" | cut -d: -f2
}

# 1. several logs' worth of transactions
writer 1 one "&repl_bootstrap=1" "4 3"
want=$(hash_of one)
acked=$(wc -l < "$ACKED")
bytes=$(stat -c %s "$D/app1.db")
((acked >= 1500)) || fail "only $acked transactions in 4 s: $(tail -n 3 "$D/writer.one.err")"
for n in 2 3; do copy_reaches $n "$want"; done
wait "$wpid" || fail "the writer exited $?: $(grep -v notice "$D/writer.one.err" | tail -n 5)"
for n in 2 3; do
	st=$(status_json $n)
	first=$(jnum "$st" first_lsn)
	((first > 100)) || fail "node$n's log still begins at LSN $first: nothing was released"
	base=$(copy_field $n base_lsn)
	((base >= first - 1)) || fail "node$n's copy is a base at $base, its log begins at $first"
done
echo "$NAME: $acked transactions (at least $((acked * 4)) KiB of pages, a $bytes-byte database) through a 4 MiB log; node2's log begins at LSN $first; copies equal ($((SECONDS - T0)) s)"

# 2. node3 down: its copy's hold keeps the log, which fills
writer 1 two "" "20 0"
for ((t = 0; t < 100; t++)); do
	grep -q '^checked' "$D/writer.two.out" && break
	sleep 0.1
done
kill -9 "${pid[3]}"
wait "${pid[3]}" 2>/dev/null
# its last base, as its marker says once it is down (the status before the
# kill may be a base older than the hold the primary last heard of)
hold3=$(od -An -tu8 -j24 -N8 "$D/app3.db-repl-base" | tr -d ' ')
wait "$wpid"
rc=$?
[[ $rc == 3 ]] || fail "with node3 down the writer exited $rc, not 3 (a COMMIT refused): $(tail -n 3 "$D/writer.two.err")"
grep -q "database or disk is full" "$D/writer.two.err" ||
	fail "the refused COMMIT: $(tail -n 3 "$D/writer.two.err")"
# before it filled, the space alarm named the hold; the refusal names it too
grep -A 3 "space alarm: the log is [0-9]*% full" "$D/writer.two.err" |
	grep -q "replica 2 ([a-z]*) holds the log from LSN [0-9]* for its copy" ||
	fail "no space alarm naming node3's hold: $(grep -m 3 -A 3 'space alarm' "$D/writer.two.err")"
grep -A 3 "not appended: The log is full" "$D/writer.two.err" |
	grep -q "replica 2 (down) holds the log from LSN [0-9]* for its copy" ||
	fail "the refusal does not name node3's hold: $(grep -m 1 -A 3 'not appended' "$D/writer.two.err")"
first=$(jnum "$(status_json 2)" first_lsn)
((first <= hold3)) || fail "node2's log begins at $first, past node3's hold at $hold3"
echo "$NAME: node3 down: the log filled and a COMMIT was refused; node2's log begins at $first, node3's copy holds from $hold3"

# 3. node3 back: its copy follows from its base, the writer goes on
start 3
wait_for 3 "listening" "listening"
writer 1 three "" "2 3"
want=$(hash_of three)
grep -q "^checked: .* acknowledged present" "$D/writer.three.out" ||
	fail "node1's open: $(cat "$D/writer.three.out")"
for n in 2 3; do copy_reaches $n "$want"; done
[[ $(status_json 3 | grep -o '"state":"[a-z]*"' | tail -n 1) == '"state":"following"' ]] ||
	fail "node3's copy: $(status_json 3 | grep -o '"sqlite_copy":{.*')"
wait "$wpid" || fail "writer three exited $?"
first=$(jnum "$(status_json 3)" first_lsn)
((first > hold3)) || fail "node3's log still begins at $first: the log was not released again"
echo "$NAME: node3 back: its copy caught up from its base, the log released again (node3 begins at $first)"

# 4. failover onto node2, its log released: the rebuild starts from its copy
base=$(copy_field 2 base_lsn)
first=$(jnum "$(status_json 2)" first_lsn)
((first > 1)) || fail "node2's log begins at 1"
stop 2
conf_node 1 replica
start 1
wait_for 1 "listening" "listening"
n_acked=$(wc -l < "$ACKED")
writer 2 four "" "2 3"
want=$(hash_of four)
grep -q "^checked: $n_acked acknowledged present" "$D/writer.four.out" ||
	fail "node2's open: $(cat "$D/writer.four.out") $(tail -n 3 "$D/writer.four.err")"
for n in 1 3; do copy_reaches $n "$want"; done
wait "$wpid" || fail "writer four exited $?"
echo "$NAME: failover onto node2 (its log begins at LSN $first, its copy a base at $base): $n_acked acknowledged present; copies equal"

# 5. a damaged base is not trusted: the rebuild is checked before it replaces anything
stop 3
conf_node 2 replica
start 2
wait_for 2 "listening" "listening"
size=$(stat -c %s "$D/app3.db")
dd if=/dev/urandom of="$D/app3.db" bs=4096 seek=$((size / 4096 / 3)) \
	count=$((size / 4096 / 3)) conv=notrunc status=none
before=$(md5sum < "$D/app3.db")
writer 3 five "" "1 0"
wait "$wpid"
rc=$?
((rc != 0)) || fail "node3's open over a damaged base succeeded: $(cat "$D/writer.five.out")"
grep -q "rebuilt from the log fails PRAGMA integrity_check" "$D/writer.five.err" ||
	fail "node3's open over a damaged base: $(tail -n 5 "$D/writer.five.err")"
[[ $(md5sum < "$D/app3.db") == "$before" ]] || fail "node3's database file was replaced"
[[ -f $D/app3.db-repl-rebuild ]] || fail "the rebuilt file was not kept for inspection"
echo "$NAME: a damaged base: the rebuild fails integrity_check, the open is refused, the file left as it was"
for f in "$D"/writer.[a-z]*.err "$D"/node*.err; do clean_stderr "$f" "$f"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
