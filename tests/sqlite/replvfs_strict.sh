#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_strict.sh -- repl_commit=strict with commits in flight: writers
# go on, readers wait.  The primary is a Python process (quorum 1, two
# repld replicas on loopback).  With both replicas stopped (SIGSTOP), so
# that no commit can become durable:
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
# Skipped (77) without python3.
NAME=replvfs_strict
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
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

cat > "$D/probe.py" <<'EOF'
import json, os, signal, sqlite3, sys, threading, time
import replvfs_load
ext, uri, mode, boot = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
pids = [int(p) for p in sys.argv[5:]]
replvfs_load.load(ext)
uri += "&repl_commit=" + mode + ("&repl_bootstrap=1" if boot else "")

def connect():
    c = sqlite3.connect(uri, uri=True, isolation_level=None,
                        check_same_thread=False, timeout=60)
    return c

first = connect()
if boot:
    first.execute("PRAGMA journal_mode=WAL")
    first.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
    first.execute("INSERT INTO t(v) VALUES('before')")
n0 = first.execute("SELECT count(*) FROM t").fetchone()[0]
a, b, r = connect(), connect(), connect()
r.execute("SELECT count(*) FROM t").fetchone()
lsn0 = json.loads(first.execute("SELECT repl_status()").fetchone()[0])["sqlite"]["appended_lsn"]
out = {}

def write(name, c):
    try:
        c.execute("INSERT INTO t(v) VALUES(?)", (name,))
        out[name] = "ok"
    except sqlite3.Error as e:
        out[name] = "error: %s" % e
    out[name + "_at"] = time.monotonic()

def read():
    try:
        out["count"] = r.execute("SELECT count(*) FROM t").fetchone()[0]
    except sqlite3.Error as e:
        out["count"] = "error: %s" % e
    out["read_at"] = time.monotonic()

for p in pids:
    os.kill(p, signal.SIGSTOP)
ts = [threading.Thread(target=write, args=("A", a)),
      threading.Thread(target=write, args=("B", b)),
      threading.Thread(target=read)]
for t in ts:
    t.start()
    time.sleep(0.5)
time.sleep(1)
lsn1 = json.loads(first.execute("SELECT repl_status()").fetchone()[0])["sqlite"]["appended_lsn"]
cont = time.monotonic()
for p in pids:
    os.kill(p, signal.SIGCONT)
for t in ts:
    t.join()
print("n0=%d appended=%d A=%s B=%s count=%s read_before_cont=%d" % (
    n0, lsn1 - lsn0, out["A"], out["B"], out["count"],
    1 if out["read_at"] < cont else 0))
for c in (a, b, r, first):
    c.close()
EOF

probe() {
	python3 "$D/probe.py" "$EXT" "$URI" "$1" "$2" "${pid[2]}" "${pid[3]}" \
		> "$D/$1.out" 2> "$D/$1.err" || fail "python3, $1: $(cat "$D/$1.err")"
	cat "$D/$1.out"
}

s=$(probe strict 1)
echo "$NAME: strict: $s"
[[ $s == *"A=ok B=ok"* ]] || fail "strict: a COMMIT failed: $s"
[[ $s == *" appended=2 "* ]] ||
	fail "strict: the second writer did not append while the first's record was in flight: $s"
[[ $s == *"read_before_cont=0"* ]] ||
	fail "strict: the reader answered before the records could be durable: $s"
[[ $s == "n0=1 "*"count=3 "* ]] || fail "strict: the reader counted other than 3 rows: $s"

p=$(probe pipelined 0)
echo "$NAME: pipelined: $p"
[[ $p == *"A=ok B=ok"* ]] || fail "pipelined: a COMMIT failed: $p"
[[ $p == *"read_before_cont=1"* && $p == "n0=3 "* && $p != *"count=3 "* ]] ||
	fail "pipelined: the reader did not see a row in flight (the probe sees nothing): $p"

clean_stderr "$D/strict.err" "python3, strict"
clean_stderr "$D/pipelined.err" "python3, pipelined"
for n in 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok"
