#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_where.sh -- where the primary is and read-your-writes, in SQL:
# node1 the sqlite3 shell through the extension (the primary), node2 and
# node3 repld replicas that keep a copy (sqlite_copy), quorum 1.
#
#   1. on the primary, after 10 transactions: repl_role() is "primary",
#      repl_primary() names node 1 at its control address, repl_lsn() is
#      the committed LSN (at least the 11 records of the transactions);
#   2. while the primary runs, another sqlite3 shell opens node2's copy
#      read-only with repl_conf=node2.conf in its URI: repl_wait(L, 10000)
#      is 1 (L the primary's repl_lsn()), then the 10 rows are there;
#      repl_role() is "replica", repl_primary() names node 1, repl_lsn()
#      is at least L; repl_wait(L + 10^9, 200) is 0 after about 200 ms;
#   3. refusals, as SQL errors naming the function: a database neither
#      opened by the repl VFS nor named with repl_conf; repl_wait('x').
# Skipped (77) without the sqlite3 shell.
NAME=replvfs_where
SQLITE3=${SQLITE3:-$(command -v sqlite3)}
[[ -n $SQLITE3 ]] || { echo "SKIP: $NAME: no sqlite3 shell (Debian: sqlite3)"; exit 77; }
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS

conf 1 primary
conf 2 replica
conf 3 replica
for n in 2 3; do echo "sqlite_copy = \"copy$n.db\";" >> "$D/node$n.conf"; done
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
URI="file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf"

# 2, run by the primary's shell while it holds the database
cat > "$D/replica.sh" <<EOS
#!/bin/bash
L=\$(cat "$D/lsn.txt")
"$SQLITE3" -bail -cmd ".load ${EXT%.so}" \\
	-cmd ".open 'file:$D/copy2.db?mode=ro&repl_conf=$D/node2.conf'" \\
	> "$D/replica.out" 2> "$D/replica.err" <<EOQ
SELECT repl_wait(\$L, 10000);
SELECT count(*) FROM t;
SELECT repl_role(), repl_primary(), repl_lsn() >= \$L;
SELECT repl_wait(\$L + 1000000000, 200);
EOQ
echo "exit \$?" >> "$D/replica.out"
EOS
chmod +x "$D/replica.sh"

# 1. the primary
{
	echo ".load ${EXT%.so}"
	echo ".open '$URI&repl_bootstrap=1'"
	echo "PRAGMA journal_mode=WAL;"
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
	for ((i = 1; i <= 10; i++)); do
		echo "INSERT INTO t(v) VALUES('row $i');"
	done
	echo "SELECT repl_role(), repl_primary();"
	echo ".once $D/lsn.txt"
	echo "SELECT repl_lsn();"
	echo ".system $D/replica.sh"
} > "$D/primary.sql"
"$SQLITE3" -bail < "$D/primary.sql" > "$D/primary.out" 2> "$D/primary.err" ||
	fail "the primary's shell: $(cat "$D/primary.err")"
out=$(tr '\n' ' ' < "$D/primary.out")
[[ $out == "wal primary|{\"node_id\":1,\"address\":\"127.0.0.1:$(cport 1)\"} " ]] ||
	fail "on the primary: $out"
L=$(cat "$D/lsn.txt")
[[ $L =~ ^[0-9]+$ ]] && ((L >= 11)) || fail "the primary's repl_lsn() is \"$L\", not at least 11"
echo "$NAME: the primary says primary, node 1, committed LSN $L"

# 2. what the copy's reader saw
mapfile -t r < "$D/replica.out"
[[ ${r[0]} == 1 && ${r[1]} == 10 ]] ||
	fail "node2's copy: repl_wait then count: ${r[*]}: $(cat "$D/replica.err")"
[[ ${r[2]} == "replica|{\"node_id\":1,\"address\":\"127.0.0.1:$(cport 1)\"}|1" ]] ||
	fail "node2's copy: role, primary, lsn: ${r[2]}"
[[ ${r[3]} == 0 && ${r[4]} == "exit 0" ]] ||
	fail "node2's copy: a wait past the end: ${r[3]} (${r[4]}): $(cat "$D/replica.err")"
echo "$NAME: node2's copy waited for LSN $L, read the 10 rows, names node 1 as the primary"

# 3. refusals
# (a database given as the shell's argument opens before the load: .open)
echo "SELECT repl_role();" | "$SQLITE3" -bail -cmd ".load ${EXT%.so}" -cmd ".open $D/plain.db" \
	> /dev/null 2> "$D/plain.err" && fail "repl_role() on a plain database succeeded"
grep -q "repl_role: this connection's main database is neither one the repl VFS opened nor a copy opened with repl_conf=FILE in its URI" \
	"$D/plain.err" || fail "repl_role() on a plain database: $(cat "$D/plain.err")"
echo "SELECT repl_wait('x');" | "$SQLITE3" -bail -cmd ".load ${EXT%.so}" \
	-cmd ".open 'file:$D/copy3.db?mode=ro&repl_conf=$D/node3.conf'" \
	> /dev/null 2> "$D/bad.err" && fail "repl_wait('x') succeeded"
grep -q "repl_wait: takes an LSN" "$D/bad.err" || fail "repl_wait('x'): $(cat "$D/bad.err")"
echo "$NAME: refusals name the function"

stop 2
stop 3
echo "$NAME: ok ($((SECONDS - T0)) s)"
