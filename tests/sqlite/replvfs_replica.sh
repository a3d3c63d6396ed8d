#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_replica.sh -- replicas that serve reads: two repld replicas with
# sqlite_copy (quorum 1) apply the committed transactions of their logs
# to a database file each, and plain SQLite reads those read-only.  The
# primary is a Python process through the extension.
#
#   1. 300 transactions or more (each one id into a and b, some of several
#      pages; on until each reader has 3 snapshots with rows) while a
#      reader of each copy checks in every read transaction that a
#      and b hold the same ids (a snapshot at a commit, never inside one);
#   2. both copies reach the primary's content (a hash of every row),
#      integrity_check ok, and the status says sqlite_copy "following";
#   3. node3 killed, 100 more transactions, node3 started again: its copy
#      is re-applied from its log and catches up; node2 restarted as well;
#   4. integrity_check of each copy is ok, and a write to it is refused
#      (it is opened read-only);
#   5. a write into node3's copy through a read-write connection: at its
#      next batch the copy says so, removes its marker (the file is no base
#      any more), lets go of its hold and asks the primary for an image; it
#      is remade from it (status: following, remakes 1, holding, marked),
#      equals the primary's database again, and follows three logs' worth
#      of transactions after it.
# Skipped (77) without python3.
NAME=replvfs_replica
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
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
wait_for 2 "sqlite_copy .*follows" "the copy followed"

# the primary: commands on stdin, a line each, answers on stdout
mkfifo "$D/py.in"
cat > "$D/primary.py" <<'EOF'
import hashlib, sqlite3, sys, threading, time
import replvfs_load
ext, uri, d = sys.argv[1], sys.argv[2], sys.argv[3]
replvfs_load.load(ext)
db = sqlite3.connect(uri, uri=True, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE a(id INTEGER PRIMARY KEY, p BLOB)")
db.execute("CREATE TABLE b(id INTEGER PRIMARY KEY, v INT)")
next_id = 1

def content(c):
    m = hashlib.sha256()
    for t in ("a", "b"):
        for row in c.execute("SELECT * FROM %s ORDER BY id" % t):
            m.update(repr(row).encode())
    return m.hexdigest()

def commit(n):
    global next_id
    for _ in range(n):
        i = next_id
        db.execute("BEGIN")
        db.execute("INSERT INTO a VALUES(?, randomblob(?))", (i, 9000 if i % 16 == 0 else 50))
        db.execute("INSERT INTO b VALUES(?, ?)", (i, i * 7))
        db.execute("COMMIT")
        next_id += 1

def open_copy(n):
    c = sqlite3.connect("file:%s/copy%d.db?mode=ro" % (d, n), uri=True,
                        isolation_level=None, timeout=10)
    return c

bad = []
snapshots = [0, 0]
stop = False
def reader(n):
    c = None
    while not stop:
        try:
            if c is None:
                c = open_copy(n)
            c.execute("BEGIN")
            na = c.execute("SELECT count(*), coalesce(max(id), 0) FROM a").fetchone()
            nb = c.execute("SELECT count(*), coalesce(max(id), 0) FROM b").fetchone()
            c.execute("COMMIT")
            if na != nb:
                bad.append("copy%d: a %r, b %r in one read transaction" % (n, na, nb))
            if na[0] > 0:
                snapshots[n - 2] += 1
        except sqlite3.Error as e:
            # a copy not made yet has no tables: not a snapshot
            if "no such table" not in str(e):
                bad.append("copy%d: %s" % (n, e))
            if c is not None:
                c.close()
                c = None
            time.sleep(0.01)

def wait_copies(nodes, want, secs=20):
    t = time.monotonic()
    while time.monotonic() - t < secs:
        got = []
        for n in nodes:
            try:
                c = open_copy(n)
                got.append(content(c))
                c.close()
            except sqlite3.Error as e:
                got.append(str(e))
        if all(g == want for g in got):
            return "equal"
        time.sleep(0.1)
    return "differ: %r" % got

for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "readers":
        threads = [threading.Thread(target=reader, args=(n,)) for n in (2, 3)]
        for t in threads:
            t.start()
        print("readers", flush=True)
    elif cmd[0] == "commit":
        commit(int(cmd[1]))
        print("committed", next_id - 1, flush=True)
    elif cmd[0] == "commit-while-read":
        # N transactions at least, and on until each reader took SNAPS
        # snapshots with rows in them, MAX at most: how many a loaded
        # machine lets the readers take is not a property of the copy
        n, want, most = int(cmd[1]), int(cmd[2]), int(cmd[3])
        commit(n)
        while min(snapshots) < want and next_id - 1 < most:
            commit(1)
        print("committed", next_id - 1, flush=True)
    elif cmd[0] == "bulk":
        # N transactions of SIZE bytes each into a table of their own
        db.execute("CREATE TABLE IF NOT EXISTS bulk(id INTEGER PRIMARY KEY, p BLOB)")
        try:
            for _ in range(int(cmd[1])):
                db.execute("INSERT INTO bulk(p) VALUES(randomblob(?))", (int(cmd[2]),))
            print("bulk ok", flush=True)
        except sqlite3.Error as e:
            print("bulk failed:", e, flush=True)
    elif cmd[0] == "stop-readers":
        stop = True
        for t in threads:
            t.join()
        print("snapshots", min(snapshots), "bad", len(bad), *bad[:3], flush=True)
    elif cmd[0] == "wait":
        nodes = [int(x) for x in cmd[1:]]
        print(wait_copies(nodes, content(db)), flush=True)
    elif cmd[0] == "check":
        c = open_copy(int(cmd[1]))
        ic = c.execute("PRAGMA integrity_check").fetchone()[0]
        try:
            c.execute("INSERT INTO b VALUES(0, 0)")
            w = "written"
        except sqlite3.Error as e:
            w = "refused: %s" % e
        print(ic, "|", w, flush=True)
        c.close()
    elif cmd[0] == "quit":
        print("bye", flush=True)
        break
db.close()
EOF
python3 "$D/primary.py" "$EXT" "file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf&repl_bootstrap=1" \
	"$D" < "$D/py.in" > "$D/py.out" 2> "$D/py.err" &
bg+=($!)
exec 5> "$D/py.in"
# ask CMD...: one command, its answer line in $ans (30 s at most)
ans_n=0
ask() {
	local t
	echo "$*" >&5
	ans_n=$((ans_n + 1))
	for ((t = 0; t < 600; t++)); do
		(($(wc -l < "$D/py.out") >= ans_n)) && break
		sleep 0.05
	done
	ans=$(sed -n "${ans_n}p" "$D/py.out")
	[[ -n $ans ]] || fail "python: no answer to '$*': $(cat "$D/py.err")"
}

# 1. transactions while both copies are read
ask readers
ask commit-while-read 300 3 5000
[[ $ans == "committed "* ]] || fail "commit: $ans"
base=${ans#committed }
ask stop-readers
[[ $ans == "snapshots "*" bad 0" ]] || fail "readers of the copies: $ans"
snaps=$(cut -d' ' -f2 <<< "$ans")
((snaps >= 3)) || fail "the readers took only $snaps snapshots in $base transactions"
echo "$NAME: $base transactions; the readers of each copy took $snaps+ snapshots, none inside a transaction"

# 2. both copies reach the primary's content
ask wait 2 3
[[ $ans == equal ]] || fail "the copies: $ans"
for n in 2 3; do
	ask check $n
	[[ $ans == "ok | refused:"*readonly* ]] || fail "copy$n: integrity_check, a write: $ans"
done
j=$(status_json 2)
[[ $j == *'"sqlite_copy":{'*'"state":"following"'* ]] || fail "node2's status: $j"
applied=$(grep -o '"applied_lsn":[0-9]*' <<< "$j" | cut -d: -f2)
((applied >= 300)) || fail "node2's copy applied LSN $applied"
echo "$NAME: both copies hold the primary's content (applied LSN $applied)"

# 3. node3 killed, 100 more, node3 back; node2 restarted
kill -9 "${pid[3]}"
wait "${pid[3]}" 2>/dev/null
unset 'pid[3]'
ask commit 100
[[ $ans == "committed $((base + 100))" ]] || fail "commit with node3 down: $ans"
start 3
stop 2
start 2
ask commit 10
ask wait 2 3
[[ $ans == equal ]] || fail "after node3's catch-up and node2's restart: $ans"
echo "$NAME: node3 killed and back, node2 restarted: both copies caught up"

# 4. the copies after it all: whole, and read-only
for n in 2 3; do
	ask check $n
	[[ $ans == "ok | refused:"*readonly* ]] || fail "copy$n: integrity_check, a write: $ans"
done

# 5. a foreign write into a copy: it is no base any more, and it is remade
python3 - "$D/copy3.db" <<'PY' || fail "the write into copy3"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("INSERT INTO b VALUES(-1, -7)")
c.close()
PY
ask commit 20
# remaking, then following again once the primary's image is in
for ((t = 0; t < 600; t++)); do
	j=$(status_json 3)
	[[ $j == *'"sqlite_copy":{'*'"state":"following"'*'"remakes":1'* ]] && break
	sleep 0.1
done
[[ $j == *'"state":"following"'*'"remakes":1'* ]] ||
	fail "node3's copy after a foreign write is not remade within 60 s: $j"
[[ $j == *'"holding":true'* ]] || fail "node3's remade copy does not hold: $j"
[[ -e $D/copy3.db-repl-base ]] || fail "node3's remade copy has no marker"
grep -q "replvfs copy: .*written by another process.*remaking it from the primary's image" \
	"$D/node3.err" || fail "node3's log does not say why its copy is remade"
grep -q "replvfs copy: .*remade from the primary's image" "$D/node3.err" ||
	fail "node3's log does not say its copy was remade"
ask commit 20
[[ $ans == "committed $((base + 150))" ]] || fail "commit after node3's copy was remade: $ans"
ask wait 2 3
[[ $ans == equal ]] || fail "the copies after node3's was remade: $ans"
ask check 3
[[ $ans == "ok | refused:"*readonly* ]] || fail "copy3 remade: integrity_check, a write: $ans"
# three logs' worth: the remade copy's hold moves with it
ask bulk 60 204800
[[ $ans == "bulk ok" ]] || fail "12 MB through a 4 MiB log past a remade copy: $ans"
ask wait 2 3
[[ $ans == equal ]] || fail "the copies after 12 MB: $ans"
echo "$NAME: a write into node3's copy: its marker removed, the copy remade from the primary's image, equal again"
ask quit
exec 5>&-
clean_stderr "$D/py.err" python3
for n in 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
