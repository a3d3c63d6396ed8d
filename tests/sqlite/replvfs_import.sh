#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_import.sh -- an existing SQLite database replicated: one repld
# replica with sqlite_copy, quorum 1, and the sqlite3 shell.
#
#   1. plain sqlite3 makes a database in rollback-journal mode, 500 rows;
#   2. a -wal holding frames beside it is refused at the first start
#      (checkpoint first), and nothing is in the log;
#   3. once checkpointed, the first start (repl_bootstrap=1) through the
#      extension makes the file the log's first transaction (id 1, every
#      page): the rows are there, the database is in WAL mode, one more
#      row commits as transaction 2;
#   4. the replica's copy holds all 501 rows;
#   5. the primary's file is damaged; the next open rebuilds it from the
#      log: 501 rows, integrity_check ok.
# Skipped (77) without the sqlite3 shell or python3.
NAME=replvfs_import
SQLITE3=${SQLITE3:-$(command -v sqlite3)}
[[ -n $SQLITE3 ]] || { echo "SKIP: $NAME: no sqlite3 shell (Debian: sqlite3)"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
echo 'sqlite_copy = "copy.db";' >> "$D/node2.conf"
start 2
wait_for 2 "listening" "listening"
URI="file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf"
# through URI [SQL]: the shell with the extension loaded, the database opened
through() {
	printf ".load %s\n.open '%s'\n%s\n" "${EXT%.so}" "$1" "$2" | "$SQLITE3" -bail
}

# 1. a plain database
{
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
	echo "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)"
	echo "INSERT INTO t SELECT i, printf('row %d %0200d', i, i) FROM n;"
} | "$SQLITE3" "$D/app.db" || fail "plain sqlite3"

# 2. with frames in a -wal it is refused
# a -wal with frames: a copy of it taken before the checkpoint at close
"$SQLITE3" "$D/app.db" "PRAGMA journal_mode=WAL;" > /dev/null || fail "plain sqlite3, WAL mode"
python3 - "$D/app.db" <<'EOF' || fail "a -wal with frames could not be made"
import os, sqlite3, sys, shutil
p = sys.argv[1]
w = sqlite3.connect(p, isolation_level=None)
w.execute("PRAGMA wal_autocheckpoint=0")
w.execute("INSERT INTO t VALUES(2000, 'in the wal')")
shutil.copy(p + "-wal", p + "-wal.kept")
w.execute("DELETE FROM t WHERE id = 2000")
w.close()
os.rename(p + "-wal.kept", p + "-wal")
EOF
through "$URI&repl_bootstrap=1" "SELECT count(*) FROM t;" \
	> "$D/refused.out" 2> "$D/refused.err" && fail "opened with frames in its -wal: $(cat "$D/refused.out")"
grep -q "unable to open" "$D/refused.err" || fail "the refusal: $(cat "$D/refused.err")"
[[ -s $D/app.db-wal ]] || fail "the refused start changed the -wal"
echo "$NAME: a database whose -wal holds frames is refused at the first start"

[[ ! -e $D/node1.log ]] || fail "the refused first start made a log"

# 3. checkpointed, then the first start imports it
"$SQLITE3" "$D/app.db" "PRAGMA wal_checkpoint(TRUNCATE);" > /dev/null || fail "checkpoint"
"$SQLITE3" "$D/app.db" "DELETE FROM t WHERE id = 2000; PRAGMA journal_mode=DELETE;" > /dev/null
rm -f "$D/app.db-wal" "$D/app.db-shm"
pages=$(($(stat -c %s "$D/app.db") / 4096))
out=$(through "$URI&repl_bootstrap=1" \
	"SELECT count(*) FROM t; PRAGMA journal_mode; INSERT INTO t VALUES(501, 'through replvfs'); SELECT count(*) FROM t;" \
	2> "$D/import.err" | tr '\n' ' ')
[[ $out == "500 wal 501 " ]] || fail "the first start: '$out' $(cat "$D/import.err")"
"$CTL" dump "$D/node1.log" > "$D/dump" 2> "$D/dump.err" || fail "replctl dump: $(cat "$D/dump.err")"
mapfile -t recs < <(grep '5253514c' "$D/dump")
[[ ${#recs[@]} == 2 ]] || fail "the log holds ${#recs[@]} transactions, not 2: ${recs[*]}"
echo "$NAME: the $pages pages became the log's first transaction; 501 rows through replvfs"

# 4. the replica's copy
for ((t = 0; t < 100; t++)); do
	n=$("$SQLITE3" "file:$D/copy.db?mode=ro" "SELECT count(*) FROM t" 2>/dev/null)
	[[ $n == 501 ]] && break
	sleep 0.1
done
[[ $n == 501 ]] || fail "the replica's copy holds ${n:-no} rows, not 501"

# 5. the primary's file damaged: rebuilt from the log at the next open
dd if=/dev/zero of="$D/app.db" bs=4096 seek=1 count=2 conv=notrunc 2> /dev/null
out=$(through "$URI" "SELECT count(*) FROM t; PRAGMA integrity_check;" \
	2> "$D/rebuild.err" | tr '\n' ' ')
[[ $out == "501 ok " ]] || fail "after the damage: '$out' $(cat "$D/rebuild.err")"
echo "$NAME: a damaged database file is rebuilt from the log at open"
for f in "$D"/*.err; do clean_stderr "$f" "$f"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
