#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_shapes.sh -- the shapes of SQLite's WAL traffic that a simple
# workload never makes, each checked against a repld replica's copy
# (sqlite_copy, quorum 1) and against the database rebuilt from the log
# at the next open.  For each page size in PAGE_SIZES (512 4096 65536) a
# new two-node cluster, and a Python primary through the extension that:
#
#   1. small:  20 single-row transactions;
#   2. spill:  with a cache of 10 pages, one transaction that inserts 400
#      rows of 3000 bytes (SQLite spills pages to the -wal before COMMIT)
#      and then rewrites them all (it overwrites the spilled frames in
#      place and, at COMMIT, rewrites the checksums of frames already
#      written: frame headers after the commit frame's page);
#      then one that spills and rolls back, and one whose savepoint
#      rolls back after spilling (the next frames go over rolled-back ones);
#   3. large:  one transaction of 3 MB;
#   4. too large: one of 20 MB, more than the 16 MiB ring: its COMMIT
#      fails with SQLITE_FULL ("database or disk is full"), the content
#      is unchanged,
#      and the next transaction commits;
#   5. checkpoints while another connection holds a read snapshot:
#      PASSIVE (partial), RESTART (busy while the reader reads, then
#      complete: the -wal restarts), TRUNCATE; the reader's snapshot does
#      not move;
#   5b. journal_size_limit: the first commit after a RESTART cuts the
#      -wal behind its frames, and the next transactions grow it again
#      over the part cut (the VFS reads each record's pages from the -wal
#      through a mapping: sqlite/rv_wal_map.h; step 4's -wal outgrows its
#      first 8 MiB);
#   6. a DELETE of most rows and a VACUUM (the database file shrinks).
#
# After every step the replica's copy must reach the primary's content (a
# hash of every row) and pass integrity_check; at the end the database is
# opened again through the extension (rebuilt from the log), must pass
# integrity_check and hold the same content.
# Skipped (77) without python3.
NAME=replvfs_shapes
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
LOGSIZE=${LOGSIZE:-16M}
PAGE_SIZES=${PAGE_SIZES:-512 4096 65536}
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS

cat > "$D/shapes.py" <<'EOF'
import hashlib, os, sqlite3, sys, time
import replvfs_load
ext, uri, copy, page_size, mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
replvfs_load.load(ext)

def content(c):
    m = hashlib.sha256()
    n = 0
    for i, g, p in c.execute("SELECT id, g, p FROM t ORDER BY id"):
        m.update(b"%d %d %d " % (i, g, len(p)))
        m.update(p)
        n += 1
    return "%d:%s" % (n, m.hexdigest()[:16])

def fail(why):
    print("FAIL", why, flush=True)
    sys.exit(1)

def same_copy(step, want, secs=30):
    t = time.monotonic()
    got = None
    while time.monotonic() - t < secs:
        try:
            c = sqlite3.connect("file:%s?mode=ro" % copy, uri=True, timeout=10)
            got = content(c)
            if got == want:
                ic = c.execute("PRAGMA integrity_check").fetchone()[0]
                c.close()
                if ic != "ok":
                    fail("%s: the copy's integrity_check: %s" % (step, ic))
                print("step", step, want, flush=True)
                return
            c.close()
        except sqlite3.Error as e:
            got = str(e)
        time.sleep(0.1)
    fail("%s: the copy holds %s, the primary %s" % (step, got, want))

db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=10)
if mode == "reopen":
    ic = db.execute("PRAGMA integrity_check").fetchone()[0]
    print("reopened", ic, content(db), flush=True)
    sys.exit(0)

db.execute("PRAGMA page_size=%d" % page_size)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, g INT, p BLOB)")
if db.execute("PRAGMA page_size").fetchone()[0] != page_size:
    fail("page_size is %d" % db.execute("PRAGMA page_size").fetchone()[0])

def small(n, g=1):
    for _ in range(n):
        db.execute("INSERT INTO t(g, p) VALUES(?, randomblob(40))", (g,))

# 1. small
small(20)
same_copy("small", content(db))

# 2. spill: frames spilled, rewritten in place, checksums rewritten
db.execute("PRAGMA cache_size=10")
db.execute("BEGIN")
for _ in range(400):
    db.execute("INSERT INTO t(g, p) VALUES(2, randomblob(3000))")
db.execute("UPDATE t SET p = randomblob(3000) WHERE g = 2")
db.execute("COMMIT")
small(3)
same_copy("spill", content(db))

def rows(n, size, g):
    return ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) "
            "INSERT INTO t(g, p) SELECT %d, randomblob(%d) FROM n" % (n, g, size))

# 2b. spilled, then rolled back; a savepoint rolled back after spilling
before = content(db)
db.execute("BEGIN")
db.execute(rows(400, 3000, 6))
db.execute("ROLLBACK")
if content(db) != before:
    fail("rollback: the content changed")
db.execute("BEGIN")
db.execute(rows(50, 3000, 6))
db.execute("SAVEPOINT s")
db.execute(rows(400, 3000, 7))
db.execute("ROLLBACK TO s")
db.execute(rows(20, 100, 6))
db.execute("COMMIT")
db.execute("PRAGMA cache_size=-2000")
small(3)
same_copy("rollback", content(db))

# 3. large
db.execute("BEGIN")
db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
           "INSERT INTO t(g, p) SELECT 3, randomblob(1000) FROM n")
db.execute("COMMIT")
same_copy("large", content(db))

# 4. too large for the ring
before = content(db)
try:
    db.execute("BEGIN")
    db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) "
               "INSERT INTO t(g, p) SELECT 4, randomblob(1000) FROM n")
    db.execute("COMMIT")
    fail("a 20 MB transaction committed in a 16 MiB ring")
except sqlite3.Error as e:
    refused = str(e)
if db.in_transaction:
    db.execute("ROLLBACK")
if content(db) != before:
    fail("too large: the content changed: %s, was %s" % (content(db), before))
small(2)
same_copy("too-large(%s)" % refused.replace(" ", "_"), content(db))

# 5. checkpoints under a read snapshot
r = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=10)
r.execute("BEGIN")
seen = content(r)
small(20, 5)
busy, log, done = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
if busy != 0 or not (0 <= done < log):
    fail("PASSIVE under a reader: busy %d, log %d, checkpointed %d" % (busy, log, done))
busy, log, done = db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
if busy != 1:
    fail("RESTART under a reader: busy %d, log %d, checkpointed %d" % (busy, log, done))
if content(r) != seen:
    fail("the reader's snapshot moved")
r.execute("COMMIT")
busy, log, done = db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
if busy != 0 or done != log:
    fail("RESTART: busy %d, log %d, checkpointed %d" % (busy, log, done))
small(10, 5)
same_copy("restart", content(db))
r.execute("BEGIN")
seen = content(r)
small(5, 5)
r.execute("COMMIT")
busy, log, done = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
if busy != 0 or log != 0:
    fail("TRUNCATE: busy %d, log %d, checkpointed %d" % (busy, log, done))
if os.path.getsize(uri.split("?")[0][len("file:"):] + "-wal") != 0:
    fail("TRUNCATE left a -wal")
small(10, 5)
r.close()
same_copy("truncate", content(db))

# 5b. journal_size_limit: the -wal cut behind a generation's first commit
wal = uri.split("?")[0][len("file:"):] + "-wal"
db.execute("PRAGMA journal_size_limit=0")
db.execute(rows(200, 1000, 8))
grown = os.path.getsize(wal)
busy, log, done = db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()
if busy != 0 or done != log:
    fail("RESTART before the cut: busy %d, log %d, checkpointed %d" % (busy, log, done))
small(1, 8)
cut = os.path.getsize(wal)
if cut >= grown:
    fail("journal_size_limit: the -wal stayed %d bytes (was %d)" % (cut, grown))
db.execute(rows(200, 1000, 8))
small(3, 8)
db.execute("PRAGMA journal_size_limit=-1")
same_copy("size-limit(%d_to_%d_bytes)" % (grown, cut), content(db))

# 6. the file shrinks
pages = db.execute("PRAGMA page_count").fetchone()[0]
db.execute("DELETE FROM t WHERE g IN (2, 3)")
db.execute("VACUUM")
if db.execute("PRAGMA page_count").fetchone()[0] >= pages:
    fail("VACUUM did not shrink the file (%d pages)" % pages)
small(3)
same_copy("vacuum", content(db))
print("done", content(db), flush=True)
db.close()
EOF

for ps in $PAGE_SIZES; do
	# a new cluster for each page size: node1 the application, node2 a
	# replica with a copy
	UUID=$(cat /proc/sys/kernel/random/uuid)
	rm -rf "$D"/node[12].log "$D"/copy2.db* "$D"/app.db* "$D/bootstrapped"
	conf 1 primary 3000 1 2
	conf 2 replica 3000 1 1
	echo 'sqlite_copy = "copy2.db";' >> "$D/node2.conf"
	: > "$D/node2.err"
	start 2
	wait_for 2 "listening" "listening"
	wait_for 2 "sqlite_copy .*follows" "the copy followed"
	URI="file:$D/app.db?vfs=repl&repl_conf=$D/node1.conf&repl_timeout_ms=10000"
	python3 "$D/shapes.py" "$EXT" "$URI&repl_bootstrap=1" "$D/copy2.db" "$ps" run \
		> "$D/py.$ps.out" 2> "$D/py.$ps.err" ||
		fail "page size $ps: $(tail -n 1 "$D/py.$ps.out") $(tail -n 5 "$D/py.$ps.err")"
	last=$(sed -n 's/^done //p' "$D/py.$ps.out")
	[[ -n $last ]] || fail "page size $ps: no end: $(cat "$D/py.$ps.out")"
	grep -q '^step too-large(database_or_disk_is_full)' "$D/py.$ps.out" ||
		fail "page size $ps: the transaction larger than the ring: $(grep too-large "$D/py.$ps.out")"
	python3 "$D/shapes.py" "$EXT" "$URI" "$D/copy2.db" "$ps" reopen \
		> "$D/reopen.$ps.out" 2> "$D/reopen.$ps.err" ||
		fail "page size $ps: reopen: $(cat "$D/reopen.$ps.out") $(tail -n 5 "$D/reopen.$ps.err")"
	[[ $(cat "$D/reopen.$ps.out") == "reopened ok $last" ]] ||
		fail "page size $ps: rebuilt from the log: $(cat "$D/reopen.$ps.out"), the primary had $last"
	echo "$NAME: page size $ps: $(grep -c '^step' "$D/py.$ps.out") steps, the copy and the rebuilt database equal ($last)"
	clean_stderr "$D/py.$ps.err" python3
	clean_stderr "$D/reopen.$ps.err" python3
	clean_stderr "$D/node2.err" node2
	stop 2
done
echo "$NAME: ok ($((SECONDS - T0)) s)"
