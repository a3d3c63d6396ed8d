#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_membership.sh -- the membership of a running replvfs primary
# changed in SQL (docs/sqlite.md, "Changing the membership").  The
# application (Python's sqlite3, one process throughout) is node1, the
# primary of node2 and node3, quorum 1, a 2 MiB log; the replicas keep
# copies (sqlite_copy), so each holds the log for its copy.
#
#   1. node3 is killed for good: its hold keeps the log, which fills, and
#      COMMIT fails with SQLITE_FULL although node2 (the quorum) is up;
#   2. SELECT repl_member_remove('127.0.0.1', node3): the log is released
#      again and COMMITs go on, for several times the log's size, in the
#      same process (no reopen, no rebuild);
#   3. node4, a new repld (--reinit), joins with repl_member_add, made
#      before its repld starts, and streams; its empty copy (the log no
#      longer begins at LSN 1) is remade from the primary's image by
#      itself, then follows; COMMITs go on;
#   4. wrong arguments, wrong members and a use from a view give SQL
#      errors that say why;
#   5. the application opened again: with its old repld.conf (the old
#      peers) the open is refused, with the file's peers edited it opens;
#      pipelined, with repl_admin=1, node4 is removed with replctl on the
#      application's admin socket and added back in SQL while another
#      connection commits; replctl status answers there;
#   6. with every replica gone a change fails, neither membership opens
#      again, and the database takes no writes until opened again.
# Skipped (77) without python3.
NAME=replvfs_membership
command -v python3 > /dev/null || { echo "SKIP: $NAME: no python3"; exit 77; }
LOGSIZE=${LOGSIZE:-2M}
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS

conf_node() {	# N ROLE [PEER...]
	local n=$1 role=$2
	shift 2
	conf "$n" "$role" 3000 1 "$@"
	echo "sqlite_copy = \"app$n.db\";" >> "$D/node$n.conf"
}
conf_node 1 primary
conf_node 2 replica
conf_node 3 replica
for n in 2 3; do
	start $n
	wait_for $n "listening" "listening"
done
URI="file:$D/app1.db?vfs=repl&repl_conf=$D/node1.conf&repl_timeout_ms=5000"

# the application: one line in, one line out
cat > "$D/app.py" <<'EOF'
import json, sqlite3, sys, threading
import replvfs_load
ext, uri = sys.argv[1], sys.argv[2]
replvfs_load.load(ext)

def say(*a):
    print(*a, flush=True)

try:
    db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=10)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, p BLOB)")
except sqlite3.Error as e:
    say("openfailed", e)
    sys.exit(0)
say("ready")

def commit(n):
    """n transactions of two pages each; the first that fails ends them"""
    for i in range(n):
        try:
            db.execute("INSERT INTO t(p) VALUES(randomblob(6000))")
        except sqlite3.Error as e:
            return "failed %d %s" % (i, e)
    return "ok %d" % n

class Background(threading.Thread):
    """small transactions on a connection of its own until stopped"""
    def __init__(self):
        super().__init__()
        self.stop, self.n, self.errors = False, 0, []

    def run(self):
        self.c = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=10)
        while not self.stop:
            try:
                self.c.execute("INSERT INTO t(p) VALUES(randomblob(100))")
                self.n += 1
            except sqlite3.Error as e:
                self.errors.append(str(e))
        self.c.close()

bg = None
for line in sys.stdin:
    cmd, _, arg = line.strip().partition(" ")
    try:
        if cmd == "commit":
            say(commit(int(arg)))
        elif cmd == "sql":
            r = db.execute(arg).fetchone()
            say("row", r[0] if r else None)
        elif cmd == "json":
            # repl_status() must parse; arg is a Python expression of j
            j = json.loads(db.execute("SELECT repl_status()").fetchone()[0])
            say("json", json.dumps(eval(arg), separators=(",", ":")))
        elif cmd == "bgstart":
            bg = Background()
            bg.start()
            say("started")
        elif cmd == "bgstop":
            bg.stop = True
            bg.join()
            say("bg", bg.n, len(bg.errors), bg.errors[:1])
        elif cmd == "quit":
            db.close()
            say("bye")
            break
    except sqlite3.Error as e:
        say("error", e)
EOF

# app_start URI: the application in the background (a coprocess)
app_start() {
	coproc APP { exec python3 "$D/app.py" "$EXT" "$1" 2>> "$D/app.err"; }
	app_pid=$APP_PID
	bg+=("$app_pid")
	app_read
}
app_read() {
	read -r -t 60 reply <&"${APP[0]}" || fail "the application did not answer"
}
# app LINE: one command, its answer in $reply
app() {
	echo "$*" >&"${APP[1]}"
	app_read
}
# app_error SQL WANT: the statement fails with an error message holding WANT
app_error() {
	app sql "$1"
	[[ $reply == "error "*"$2"* ]] || fail "$1: '$reply', not an error with '$2'"
	echo "$NAME:   $1 -> ${reply#error }"
}
# copy_field N KEY: a field of node N's sqlite_copy object
copy_field() {
	status_json "$1" | grep -o '"sqlite_copy":{.*' | grep -o "\"$2\":[0-9a-z]*" | head -n 1 |
		cut -d: -f2
}
# wait_json EXPR WANT [SECONDS]: until the application's repl_status()
# gives WANT for EXPR
wait_json() {
	local t
	for ((t = 0; t < ${3:-15} * 10; t++)); do
		app json "$1"
		[[ $reply == "json $2" ]] && return 0
		sleep 0.1
	done
	fail "repl_status(): $1 is '${reply#json }', not '$2' after ${3:-15} s"
}

app_start "$URI&repl_bootstrap=1"
[[ $reply == ready ]] || fail "the first open: $reply"
app commit 50
[[ $reply == "ok 50" ]] || fail "the first transactions: $reply"
# node3's copy a base: from now on it holds the records after it
for ((t = 0; t < 50; t++)); do
	hold3=$(copy_field 3 base_lsn)
	((${hold3:-0} > 0)) && break
	sleep 0.1
done
((${hold3:-0} > 0)) || fail "node3's copy marked no base: $(status_json 3)"
echo "$NAME: the application commits; node3's copy is a base at LSN $hold3 ($((SECONDS - T0)) s)"

# 1. node3 lost: its hold keeps the log, which fills
kill -9 "${pid[3]}"
wait "${pid[3]}" 2>/dev/null
unset "pid[3]"
app commit 2000
[[ $reply == "failed "*"database or disk is full"* ]] ||
	fail "with node3 gone 2000 transactions through a 2 MiB log: '$reply', not SQLITE_FULL"
filled=$(cut -d' ' -f2 <<< "$reply")
app commit 3
[[ $reply == "failed 0 "*"database or disk is full"* ]] || fail "the log full, then: '$reply'"
app json "[(r['address'],r['state'],r['holds']) for r in j['replicas']]"
[[ $reply == "json [[\"127.0.0.1:$(cport 2)\",\"streaming\",true],[\"127.0.0.1:$(cport 3)\",\"down\",true]]" ]] ||
	fail "repl_status() with node3 down: $reply"
app json "(j['role'],j['quorum'],j['config_epoch'],j['first_lsn'],j['sqlite']['released_lsn'])"
before=${reply#json }
echo "$NAME: node3 killed: after $filled more transactions COMMIT fails with SQLITE_FULL, node2 streaming (role, quorum, config_epoch, first_lsn, released_lsn: $before) ($((SECONDS - T0)) s)"

# 2. node3 removed: the log is released, COMMITs go on
t1=$SECONDS
app sql "SELECT repl_member_remove('127.0.0.1', $(cport 3))"
[[ $reply == "row membership now 1 replicas, quorum 1 (configuration epoch "*")" ]] ||
	fail "repl_member_remove: $reply"
echo "$NAME: repl_member_remove: ${reply#row } ($((SECONDS - t1)) s)"
app commit 1200
[[ $reply == "ok 1200" ]] || fail "after the remove, 1200 transactions (about 5 logs): $reply"
app json "(j['role'],j['quorum'],j['config_joint'],len(j['replicas']),j['replicas'][0]['state'])"
[[ $reply == 'json ["primary",1,false,1,"streaming"]' ]] || fail "repl_status() after the remove: $reply"
app json "(j['first_lsn'],j['sqlite']['released_lsn'],j['sqlite']['base_lsn'],j['last_lsn'])"
after=${reply#json }
first=$(tr -d '[]' <<< "$after" | cut -d, -f1)
((first > $(tr -d '[]' <<< "$before" | cut -d, -f4))) ||
	fail "the log was not released past where it was full: before $before, now $after"
echo "$NAME: 1200 transactions (about 9 MiB) after the remove; first_lsn, released_lsn, base_lsn, last_lsn: $after ($((SECONDS - T0)) s)"

# 3. node4 joins: added while its repld is not up yet (so that the
# primary releases nothing until it has seen it), its copy seeded from
# node2's under a read transaction (the applier waits), then started
conf_node 4 replica 1 2
t1=$SECONDS
app sql "SELECT repl_member_add('127.0.0.1', $(cport 4))"
[[ $reply == "row membership now 2 replicas, quorum 1 (configuration epoch "*")" ]] ||
	fail "repl_member_add: $reply"
echo "$NAME: repl_member_add: ${reply#row } ($((SECONDS - t1)) s)"
app json "[(r['state'],r['seen']) for r in j['replicas']]"
[[ $reply == 'json [["streaming",true],["down",false]]' ]] || fail "repl_status() after the add: $reply"
# with an empty copy: the log was released, so the copy cannot be made
# from it; it asks the primary for the database's image and is remade
start 4 --reinit
wait_for 4 "listening" "listening"
# the image is about 8 MiB through a 2 MiB log: the database's checkpoints
# make room for it as it commits on
for ((t = 0; t < 300; t++)); do
	app commit 5
	j=$(status_json 4)
	[[ $j == *'"sqlite_copy":{'*'"state":"following"'*'"remakes":'[1-9]* ||
	   $j == *'"sqlite_copy":{'*'"state":"failed"'* ]] && break
	sleep 0.2
done
[[ $j == *'"state":"following"'*'"remakes":1'* && $j == *'"holding":true'* ]] ||
	fail "node4's empty copy over a released log is not remade in 60 s: $j"
grep -q "this copy has no base: it cannot be made from the log alone; remaking it from the primary's image" \
	"$D/node4.err" || fail "node4's log does not say why its copy is remade"
[[ -e $D/app4.db-repl-base ]] || fail "node4's remade copy has no marker"
# the primary's side: an image written whole, its pin ended
wait_json "(j['sqlite']['images'] >= 1, j['sqlite']['image_pin_lsn'], j['sqlite']['image_active'])" \
	"[true,0,false]"
echo "$NAME: node4 with an empty copy over a released log: remade from the primary's image ($(grep -o 'the image at LSN [^)]*)' "$D/node4.err"))"
wait_json "[(r['address'],r['state'],r['member'],r['seen']) for r in j['replicas']]" \
	"[[\"127.0.0.1:$(cport 2)\",\"streaming\",true,true],[\"127.0.0.1:$(cport 4)\",\"streaming\",true,true]]"
app commit 300
[[ $reply == "ok 300" ]] || fail "after the add: $reply"
app sql "SELECT count(*) || ' ' || max(id) FROM t"
want=${reply#row }
for n in 2 4; do
	for ((t = 0; t < 100; t++)); do
		got=$(python3 -c '
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=10)
print(c.execute("SELECT count(*) || \" \" || max(id) FROM t").fetchone()[0],
      c.execute("PRAGMA integrity_check").fetchone()[0])' "$D/app$n.db" 2>&1)
		[[ $got == "$want ok" ]] && break
		sleep 0.1
	done
	[[ $got == "$want ok" ]] || fail "node$n's copy: '$got', the primary: '$want'"
done
echo "$NAME: node4 streams; its remade copy follows: both copies hold the primary's $want rows ($((SECONDS - T0)) s)"
app sql "SELECT repl_status()"
echo "$NAME: repl_status(): ${reply#row }"

# 4. errors
app_error "SELECT repl_member_remove('127.0.0.1', 1)" "repl_member_remove: 127.0.0.1:1 is not a member"
app_error "SELECT repl_member_add('127.0.0.1', $(cport 2))" "127.0.0.1:$(cport 2) is a member already"
app_error "SELECT repl_member_add('127.0.0.1', $(cport 1))" "127.0.0.1:$(cport 1) is this node"
app_error "SELECT repl_member_remove('127.0.0.1', $(cport 2), 2)" "a quorum of 2 with 1 replicas: it must be 0..1"
app_error "SELECT repl_member_add('127.0.0.1')" "takes 2 or 3 arguments"
app_error "SELECT repl_member_add('127.0.0.1', 'x')" "the port (argument 2)"
app_error "SELECT repl_member_add('127.0.0.1', 70000)" "the port (argument 2)"
app_error "SELECT repl_member_add('127.0.0.1', 7000, 9)" "the quorum (argument 3)"
app_error "SELECT repl_member_add(1, 7000)" "the host (argument 1)"
app_error "SELECT repl_member_add('no such host', 7000)" 'the host "no such host" is not a host name or an IP address'
app_error "SELECT repl_status(1)" "takes no arguments"
app sql "CREATE VIEW v AS SELECT repl_member_remove('127.0.0.1', $(cport 2))"
app_error "SELECT * FROM v" "unsafe use of repl_member_remove()"
app json "(j['quorum'],[r['address'] for r in j['replicas']])"
[[ $reply == "json [1,[\"127.0.0.1:$(cport 2)\",\"127.0.0.1:$(cport 4)\"]]" ]] ||
	fail "the refused calls changed the membership: $reply"

# 5. opened again: the old file's peers are not the log's membership;
# then, pipelined, node4 removed and added back while another connection
# commits
app quit
[[ $reply == bye ]] || fail "quit: $reply"
wait "$app_pid" 2>/dev/null
app_start "$URI"
[[ $reply == "openfailed "* ]] || fail "the open with node1.conf's old peers: $reply"
wait "$app_pid" 2>/dev/null
conf_node 1 primary 2 4
app_start "$URI&repl_commit=pipelined&repl_admin=1"
[[ $reply == ready ]] || fail "the open with node1.conf's peers edited: $reply $(tail -n 3 "$D/app.err")"
app commit 20
[[ $reply == "ok 20" ]] || fail "after the reopen: $reply"
echo "$NAME: opened again: refused with the old peers in node1.conf, opens with them edited ($((SECONDS - T0)) s)"
app bgstart
sleep 0.5
out=$("$CTL" -s "$(sock 1)" remove "127.0.0.1:$(cport 4)" 2>&1) ||
	fail "replctl remove on the application's socket: exit $?: $out"
[[ $out == "membership now 1 replicas, quorum 1 "* ]] || fail "replctl remove: $out"
sleep 0.5
app sql "SELECT repl_member_add('127.0.0.1', $(cport 4))"
[[ $reply == "row membership now 2 replicas, quorum 1 "* ]] || fail "adding node4 back under commits: $reply"
wait_json "[r['state'] for r in j['replicas']]" '["streaming","streaming"]'
app bgstop
[[ $reply == "bg "*" 0 []" ]] || fail "the other connection's commits: $reply"
n_bg=$(cut -d' ' -f2 <<< "$reply")
((n_bg > 10)) || fail "the other connection committed only $n_bg transactions"
echo "$NAME: pipelined, node4 removed (replctl remove on the application's admin socket) and added back (repl_member_add) while another connection committed $n_bg transactions, none failed ($((SECONDS - T0)) s)"

# replctl against the application's socket: status, and what it does not serve
st=$(status_json 1) || fail "replctl --json status on the application's socket: exit $?: $st"
[[ $(jstr "$st" role) == primary && $(jnum "$st" quorum) == 1 && $(nreplicas "$st") == 2 &&
   $st == *'"sqlite":{'*'"released_lsn":'* ]] || fail "replctl --json status: $st"
out=$("$CTL" -s "$(sock 1)" status 2>&1) || fail "replctl status: exit $?: $out"
[[ $out == "node 1 (primary) at 127.0.0.1:$(cport 1)"* ]] || fail "replctl status: $out"
sed "s/^/$NAME:   /" <<< "$out"
out=$("$CTL" -s "$(sock 1)" add "127.0.0.1:$(cport 2)" 2>&1)
[[ $? == 1 && $out == *"REPL_E_INVAL: 127.0.0.1:$(cport 2) is a member already"* ]] ||
	fail "replctl add of a member: $out"
out=$("$CTL" -s "$(sock 1)" fence 2>&1)
[[ $? == 1 && $out == *"WRONG_ROLE: FENCE: a replvfs primary"* ]] || fail "replctl fence: $out"
app quit
wait "$app_pid" 2>/dev/null
[[ ! -e $(sock 1) ]] || fail "the application's admin socket outlived the database"
echo "$NAME: replctl status, add and fence on the application's admin socket ($((SECONDS - T0)) s)"

# 6. a change that cannot take: every replica gone, neither the new
# membership nor the old one opens again; the database takes no writes
app_start "$URI"
[[ $reply == ready ]] || fail "the open for step 6: $reply"
for n in 2 4; do
	kill -9 "${pid[$n]}"
	wait "${pid[$n]}" 2>/dev/null
	unset "pid[$n]"
done
app sql "SELECT repl_member_remove('127.0.0.1', $(cport 4))"
[[ $reply == "error repl_member_remove: the new membership did not take: fewer than n - k + 1 nodes reachable"*"nor did the old one open again"*"takes no more writes until opened again" ]] ||
	fail "a change with no replica up: $reply"
app commit 1
[[ $reply == "failed 0 disk I/O error" ]] || fail "a COMMIT with the log closed: $reply"
app_error "SELECT repl_status()" "repl_status: the log is closed"
app_error "SELECT repl_member_add('127.0.0.1', $(cport 3))" "the log is closed"
app quit
[[ $reply == bye ]] || fail "closing the database with its log closed: $reply"
wait "$app_pid" 2>/dev/null
echo "$NAME: with no replica up a change fails, the log stays closed, COMMIT fails with SQLITE_IOERR until the database is opened again ($((SECONDS - T0)) s)"

for f in "$D"/*.err; do clean_stderr "$f" "$f"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
