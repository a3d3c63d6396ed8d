#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_archive.sh -- a replvfs database in the archive (docs/sqlite.md,
# "Backup and restore"): the primary is a Python process through the
# extension; node2, a repld replica with sqlite_copy, archives (segments
# published every 100 ms, a base of its copy every 500 ms).
#
#   1. 300 numbered transactions (each inserts row N, 'row-N'), in three
#      bursts with pauses between, each one's LSN taken with
#      repl_last_commit_lsn() and its time; a time T is taken in the
#      pause after transaction 200;
#   2. node2's status shows archive.last_base_lsn and last_base_ms, and
#      the archive reaches the last transaction;
#   3. replctl restore --database to the LSN of transaction 150, to T,
#      and --latest: each DIR/replvfs.db passes integrity_check and holds
#      exactly rows 1..150, 1..200, 1..300 with their contents; --latest
#      starts from a base;
#   4. to the last transaction before the oldest base: made from the
#      archive's first record; after replctl archive prune --keep-bases 2 (the
#      records before the older of the two newest bases gone) the same
#      restore fails (exit 1) saying why, and --latest still works.
# RESTORE_BIG=MB: then a database of about MB MiB is committed too, and the
# time of its restore (--latest, from a base) printed (not asserted).
# Skipped (77) without python3.
set -u
NAME=replvfs_archive
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
BIG=${RESTORE_BIG:-0}
((BIG > 0)) && LOGSIZE=256M
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
cat >> "$D/node2.conf" <<EOF
sqlite_copy = "copy2.db";
archive = { target = "arch"; publish_ms = 100; base_every_ms = 500;
	$( ((BIG > 0)) && echo 'max_hold = "192M";' ) };
EOF
start 2
wait_for 2 "listening" "listening"

mkfifo "$D/py.in"
cat > "$D/primary.py" <<'EOF'
import sqlite3, sys, time
import replvfs_load
ext, uri = sys.argv[1], sys.argv[2]
replvfs_load.load(ext)
db = sqlite3.connect(uri, uri=True, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
n = 0
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "commit":
        out = []
        for _ in range(int(cmd[1])):
            n += 1
            db.execute("BEGIN")
            db.execute("INSERT INTO t VALUES(?, ?)", (n, "row-%d" % n))
            db.execute("COMMIT")
            lsn = db.execute("SELECT repl_last_commit_lsn()").fetchone()[0]
            out.append("%d:%d:%d" % (n, lsn, int(time.time() * 1000)))
        print("committed", " ".join(out), flush=True)
    elif cmd[0] == "now":
        time.sleep(0.3)
        t = int(time.time() * 1000)
        time.sleep(0.3)
        print("now", t, flush=True)
    elif cmd[0] == "big":
        # about MB MiB in transactions of 1 MiB (rows of 64 KiB)
        db.execute("CREATE TABLE big(id INTEGER PRIMARY KEY, p BLOB)")
        for _ in range(int(cmd[1])):
            db.execute("BEGIN")
            for _ in range(16):
                db.execute("INSERT INTO big(p) VALUES(randomblob(65536))")
            db.execute("COMMIT")
        print("big", db.execute("SELECT repl_last_commit_lsn()").fetchone()[0],
              flush=True)
    elif cmd[0] == "quit":
        print("bye", flush=True)
        break
db.close()
EOF
python3 "$D/primary.py" "$EXT" "file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf&repl_bootstrap=1" \
	< "$D/py.in" > "$D/py.out" 2> "$D/py.err" &
bg+=($!)
exec 5> "$D/py.in"
ans_n=0
ask() {	# CMD...: its answer line in $ans (SECS, default 30, at most)
	local t
	echo "$*" >&5
	ans_n=$((ans_n + 1))
	for ((t = 0; t < ${SECS:-30} * 20; t++)); do
		(($(wc -l < "$D/py.out") >= ans_n)) && break
		sleep 0.05
	done
	ans=$(sed -n "${ans_n}p" "$D/py.out")
	[[ -n $ans ]] || fail "python: no answer to '$*': $(cat "$D/py.err")"
}
declare -A LSN=()
commit() {
	local x
	ask commit "$1"
	[[ $ans == "committed "* ]] || fail "commit: $ans"
	for x in ${ans#committed }; do
		IFS=: read -r i l ms <<< "$x"
		LSN[$i]=$l
	done
}

# 1. three bursts; T in the pause after transaction 200
commit 100
sleep 1
commit 100
ask now
T=${ans#now }
commit 100
echo "$NAME: 300 transactions, LSN ${LSN[1]}..${LSN[300]}; T = $T ms (between" \
	"LSN ${LSN[200]} and ${LSN[201]})"

# arch KEY...: node2's status' archive.KEY values, one per line
arch() {
	python3 - "$(status_json 2)" "$@" <<-'PY'
	import json, sys
	try:
	    a = json.loads(sys.argv[1]).get("archive") or {}
	except ValueError:
	    a = {}
	for k in sys.argv[2:]:
	    v = a.get(k, "")
	    print("null" if v is None else v)
	PY
}
# archived LSN: until the archive holds it and a base at or past FROM
archived() {	# LSN BASE_FROM
	local t v
	for ((t = 0; t < 300; t++)); do
		mapfile -t v < <(arch archived_lsn last_base_lsn last_base_ms)
		[[ ${v[0]:-0} =~ ^[0-9]+$ && ${v[0]} -ge $1 && ${v[1]} =~ ^[0-9]+$ &&
		   ${v[1]} -ge $2 && ${v[2]} =~ ^[0-9]+$ ]] && return 0
		sleep 0.1
	done
	fail "the archive did not reach LSN $1 with a base at $2 or later: ${v[*]}"
}

# 2. the archive holds every transaction, and a base
archived "${LSN[300]}" "${LSN[201]}"
mapfile -t v < <(arch last_base_lsn last_base_ms)
echo "$NAME: archived; the last base at LSN ${v[0]}, published at ${v[1]} ms"

# rows DB N: integrity_check ok, exactly rows 1..N, each its text
rows() {
	python3 - "$1" "$2" <<-'PY'
	import sqlite3, sys
	c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
	n = int(sys.argv[2])
	ic = c.execute("PRAGMA integrity_check").fetchone()[0]
	got = c.execute("SELECT count(*), coalesce(max(id), 0), coalesce(sum(id), 0), "
	                "sum(v != 'row-' || id) FROM t").fetchone()
	want = (n, n, n * (n + 1) // 2, 0)
	print("ok" if ic == "ok" and got == want else
	      "integrity_check %s; count, max, sum, wrong texts %r, want %r" % (ic, got, want))
	PY
}
# restore NAME N POINT...: restored into $D/NAME, its rows 1..N
restore() {
	local name=$1 n=$2 r
	shift 2
	"$CTL" --json restore --archive "$D/arch" "$@" --database "$D/$name" \
		> "$D/$name.out" 2>&1 || fail "restore $*: $(cat "$D/$name.out")"
	r=$(rows "$D/$name/replvfs.db" "$n")
	[[ $r == ok ]] || fail "restore $*: $r"
	echo "$NAME: restore $*: rows 1..$n, integrity ok: $(cat "$D/$name.out")"
}

# 3. to a transaction, to a time, the latest
restore mid 150 --to-lsn "${LSN[150]}"
[[ $(jnum "$(cat "$D/mid.out")" to_lsn) == "${LSN[150]}" ]] ||
	fail "--to-lsn ${LSN[150]}: $(cat "$D/mid.out")"
restore at-t 200 --to-time "$T"
[[ $(jnum "$(cat "$D/at-t.out")" to_lsn) == "${LSN[200]}" ]] ||
	fail "--to-time $T ends elsewhere than transaction 200: $(cat "$D/at-t.out")"
restore latest 300 --latest
base=$(jnum "$(cat "$D/latest.out")" base_lsn)
[[ -n $base ]] || fail "--latest did not start from a base: $(cat "$D/latest.out")"

# 4. before any base: from the archive's first record; then pruned
first=$("$CTL" archive list "$D/arch" | awk '$1 == "base" { print $2; exit }')
echo "$NAME: bases: $("$CTL" archive list "$D/arch" | grep -c '^base')," \
	"the oldest at LSN ${first:-?}"
[[ $first =~ ^[0-9]+$ ]] || fail "no base in the archive"
for ((i = 300; i > 0; i--)); do ((${LSN[$i]} < first)) && break; done
if ((i > 0)); then
	restore early $i --to-lsn "${LSN[$i]}"
	grep -q '"base_lsn":null' "$D/early.out" || fail "a restore before any base used one"
	early=$i
else
	echo "$NAME: the oldest base is before transaction 1: no restore before it"
fi
"$CTL" archive prune --keep-bases 2 "$D/arch" > "$D/prune.out" 2>&1 ||
	fail "prune: $(cat "$D/prune.out")"
"$CTL" restore --archive "$D/arch" --to-lsn "${LSN[${early:-1}]}" --database "$D/gone" \
	> "$D/gone.out" 2>&1
rc=$?
[[ $rc == 1 ]] && grep -q "no base at or before\|is not in it" "$D/gone.out" ||
	fail "a restore before the oldest base after prune: exit $rc: $(cat "$D/gone.out")"
echo "$NAME: after prune, before the oldest base: exit 1: $(cat "$D/gone.out")"
restore pruned 300 --latest

# the timing run
if ((BIG > 0)); then
	SECS=600 ask big "$BIG"
	[[ $ans == "big "* ]] || fail "big: $ans"
	last=${ans#big }
	commit 10
	archived "${LSN[310]}" "$last"
	ls -la "$D/copy2.db" "$D/arch"/* | tail -n 5
	t=$(date +%s%N)
	"$CTL" --json restore --archive "$D/arch" --latest --database "$D/big" \
		> "$D/big.out" 2>&1 || fail "big restore: $(cat "$D/big.out")"
	t=$((($(date +%s%N) - t) / 1000000))
	echo "$NAME: restore of a $(($(stat -c %s "$D/big/replvfs.db") >> 20)) MiB" \
		"database: $t ms: $(cat "$D/big.out")"
	r=$(rows "$D/big/replvfs.db" 310)
	[[ $r == ok ]] || fail "big restore: $r"
fi

ask quit
clean_stderr "$D/node2.err" node2
clean_stderr "$D/py.err" "the primary"
echo "$NAME: PASS ($((SECONDS - T0)) s)"
