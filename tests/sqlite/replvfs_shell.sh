#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_shell.sh -- SQLite over librepl through the loadable extension:
# two repld replicas (ofi tcp on loopback, quorum 1), and the sqlite3
# shell as the primary, its database opened as
# file:app.db?vfs=repl&repl_conf=node1.conf.
#
#   1. the shell loads libreplvfs, bootstraps the cluster, creates a table
#      and commits 40 single-row transactions and one of 200 rows: each
#      COMMIT is one record in the log (RSQL, its client id the
#      transaction id 1, 2, ...), and both replicas hold every record;
#   2. PRAGMA integrity_check is ok and the rows are there; a rollback
#      journal (journal_mode=DELETE) is refused;
#   2b. the shell again, started as docs/sqlite.md gives it on the command
#      line (-cmd '.load ...' -cmd ".open '...'"), repl_commit=pipelined:
#      20 transactions, 20 records; the database given as the shell's
#      argument instead is opened before the load (no such vfs: repl);
#   3. Python's sqlite3 opens the same database again (a restart of the
#      primary: no bootstrap) through the extension and commits one more
#      transaction, with the next transaction id;
#   4. both replicas killed, its next COMMIT fails (disk I/O error: not
#      durable on the quorum within repl_timeout_ms), the row is not
#      visible (the connection's next read fails: the transaction is in
#      doubt), and the database takes no more writes.
# Skipped (77) without the sqlite3 shell or python3.
NAME=replvfs_shell
SQLITE3=${SQLITE3:-$(command -v sqlite3)}
[[ -n $SQLITE3 ]] || { echo "SKIP: $NAME: no sqlite3 shell (Debian: sqlite3)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS
DUMP=$D/dump

# node1 is the shell's: its file names the log and the two replicas
conf 1 primary
conf 2 replica
conf 3 replica
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
URI="file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf"

# 1. the shell: bootstrap, a table, 40 transactions and a large one
{
	echo ".load ${EXT%.so}"
	echo ".open '$URI&repl_bootstrap=1'"
	echo "PRAGMA journal_mode=WAL;"
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
	for ((i = 1; i <= 40; i++)); do
		echo "INSERT INTO t(v) VALUES('row $i');"
	done
	echo "BEGIN;"
	for ((i = 41; i <= 240; i++)); do
		echo "INSERT INTO t(v) VALUES('row $i, $(printf '%0100d' $i)');"
	done
	echo "COMMIT;"
	echo "SELECT count(*), sum(length(v)) FROM t;"
	echo "PRAGMA integrity_check;"
	echo "PRAGMA journal_mode=DELETE;"
} > "$D/shell.sql"
"$SQLITE3" -bail < "$D/shell.sql" > "$D/shell.out" 2> "$D/shell.err"
rc=$?
# the refused journal mode is the script's last line: -bail stops there
[[ $rc == 1 ]] || fail "sqlite3: exit $rc, not 1 (the refused journal_mode): $(cat "$D/shell.err")"
grep -q "a replicated database stays in WAL mode (journal_mode=DELETE refused)" "$D/shell.err" ||
	fail "journal_mode=DELETE was not refused: $(cat "$D/shell.err")"
out=$(tr '\n' ' ' < "$D/shell.out")
[[ $out == "wal 240|"*" ok " ]] || fail "the shell's answers: $out"

# every commit one record: 1 CREATE + 40 + 1 = 42, on the primary's log
# and on each replica's
"$CTL" dump "$D/node1.log" > "$DUMP" 2> "$D/dump.err" || fail "replctl dump: $(cat "$D/dump.err")"
n=$(grep -c '^ *[0-9]\+ .* 5253514c' "$DUMP")
[[ $n == 42 ]] || fail "the log holds $n RSQL records, not 42: $(tail -n 5 "$DUMP")"
for node in 2 3; do
	last=$(jnum "$(status_json $node)" last_lsn)
	[[ -n $last && $last -ge 43 ]] ||
		fail "node$node's log ends at LSN ${last:-?}, before the 42 transactions"
done
echo "$NAME: 42 transactions committed by the shell, 42 records, on both replicas ($((SECONDS - T0)) s)"

# 2b. the same, pipelined (repl_commit=pipelined): the wait runs in the
# connection's WAL hook, after the write lock; 20 more transactions.  The
# shell as docs/sqlite.md starts it ("Using it", "Failover"): a database
# given as its argument is opened before any -cmd has loaded the extension
"$SQLITE3" -cmd ".load ${EXT%.so}" "$URI" 'SELECT 1;' > /dev/null 2> "$D/arg.err" &&
	fail "sqlite3 opened a vfs=repl database given as its argument"
grep -q "no such vfs: repl" "$D/arg.err" ||
	fail "the database as the shell's argument: $(cat "$D/arg.err")"
{
	for ((i = 1; i <= 20; i++)); do
		echo "INSERT INTO t(v) VALUES('pipelined $i');"
	done
	echo "SELECT count(*) FROM t;"
} > "$D/pipe.sql"
"$SQLITE3" -bail -cmd ".load ${EXT%.so}" -cmd ".open '$URI&repl_commit=pipelined'" \
	< "$D/pipe.sql" > "$D/pipe.out" 2> "$D/pipe.err" ||
	fail "sqlite3, pipelined: $(cat "$D/pipe.err")"
[[ $(cat "$D/pipe.out") == 260 ]] || fail "pipelined: $(cat "$D/pipe.out") rows, not 260"
"$CTL" dump "$D/node1.log" > "$DUMP" 2> "$D/dump.err" || fail "replctl dump: $(cat "$D/dump.err")"
# the open rebuilt the file, a base, so the log may have been released up
# to its newest transaction (42), which stays: ids 42..62 at least, no gap
ids=$(grep '^ *[0-9]\+ .* 5253514c' "$DUMP" | awk '{ print $3 }')
n=$(echo "$ids" | wc -l)
echo "$ids" | awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 }
	END { exit bad || prev != 62 }' ||
	fail "after the pipelined ones the log's transaction ids are not a run ending at 62: $(echo $ids)"
((n >= 21 && n <= 62)) || fail "after the pipelined ones the log holds $n RSQL records, not 21 to 62"
echo "$NAME: 20 pipelined transactions, ids up to 62 ($n records kept)"

# 3. Python, the same database again: the log is reopened as the primary;
# 4. then both replicas killed: the next COMMIT is not durable, and fails
python3 - "$EXT" "$URI&repl_timeout_ms=1500" "${pid[2]}" "${pid[3]}" \
	> "$D/py.out" 2> "$D/py.err" <<'EOF' || fail "python3: $(cat "$D/py.err")"
import os, signal, sqlite3, sys, time
import replvfs_load
ext, uri = sys.argv[1], sys.argv[2]
replvfs_load.load(ext)
db = sqlite3.connect(uri, uri=True, isolation_level=None)
db.execute("INSERT INTO t(v) VALUES('from python')")
print(db.execute("SELECT count(*) FROM t").fetchone()[0])
print(db.execute("PRAGMA integrity_check").fetchone()[0])
for p in sys.argv[3:]:
    os.kill(int(p), signal.SIGKILL)
time.sleep(0.5)
t0 = time.monotonic()
try:
    db.execute("INSERT INTO t(v) VALUES('never acknowledged')")
    print("committed")
except sqlite3.Error as e:
    print("refused after %.1f s: %s" % (time.monotonic() - t0, e))
try:
    print(db.execute("SELECT count(*) FROM t").fetchone()[0])
except sqlite3.Error as e:
    print("unreadable: %s" % e)
try:
    db.execute("INSERT INTO t(v) VALUES('after')")
    print("committed")
except sqlite3.Error as e:
    print("refused: %s" % e)
db.close()
EOF
mapfile -t py < "$D/py.out"
[[ ${py[0]} == 261 && ${py[1]} == ok ]] || fail "python's answers: ${py[*]}"
"$CTL" dump "$D/node1.log" > "$DUMP" 2> "$D/dump.err" || fail "replctl dump: $(cat "$D/dump.err")"
# its record's client id is the next transaction id, 63
# (the one after transaction 62's: what came before may have been released)
[[ $(grep '^ *[0-9]\+ .* 5253514c' "$DUMP" | awk '$3 == 62 { getline; print $3 }') == 63 ]] ||
	fail "python's transaction is not transaction 63: $(grep 5253514c "$DUMP" | tail -n 3)"
echo "$NAME: python committed transaction 63 through the extension"
[[ ${py[2]} == "refused after"*"disk I/O error"* ]] ||
	fail "a COMMIT with no replica was not refused: ${py[2]}"
# strict: the connection's next read waits for what it wrote, in doubt
[[ ${py[3]} == "unreadable: disk I/O error" ]] ||
	fail "the refused transaction is visible: ${py[3]}"
[[ ${py[4]} == "refused: disk I/O error" ]] ||
	fail "the database took a write after a commit in doubt: ${py[4]}"
echo "$NAME: replicas killed: COMMIT ${py[2]}; not visible; later writes refused"
unset 'pid[2]' 'pid[3]'

clean_stderr "$D/shell.err" "sqlite3"
for n in 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
clean_stderr "$D/py.err" "python3"
clean_stderr "$D/pipe.err" "sqlite3, pipelined"
clean_stderr "$D/arg.err" "sqlite3, the database as its argument"
echo "$NAME: ok ($((SECONDS - T0)) s)"
