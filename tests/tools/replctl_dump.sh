#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_dump.sh -- replctl's offline commands on a real log: a replica
# and a primary with quorum 1 (tests/engine/repl-node, crash backend) write a
# small ring past a lap, then stop.  dump lists exactly the LSNs status
# reports, every CRC ok; --from/--to bound it; --json lines parse; a
# damaged record ends the listing there; a truncated, garbage or missing
# file exits 3, a usage error 2; and the image is never written.
set -u

NAME=replctl_dump
NODE=${REPL_NODE:-./tests/engine/repl-node}
CTL=${REPLCTL:-./tools/replctl/replctl}
[[ -x $NODE && -x $CTL ]] || { echo "$NAME: $NODE or $CTL not built"; exit 99; }
D=$(mktemp -d "/dev/shm/$NAME.XXXXXX") || exit 99
rpid=0
cleanup() {
	[[ $rpid != 0 ]] && kill -9 $rpid 2>/dev/null
	wait 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

fail() {
	echo "$NAME: FAIL: $*"
	for f in "$D"/*.err; do [[ -s $f ]] && { echo "--- $f"; tail -n 15 "$f"; }; done
	exit 1
}

# a sanitizer report is a failure whatever the exit code
clean_stderr() {	# file what
	! grep -q "AddressSanitizer\|runtime error\|LeakSanitizer" "$1" ||
		fail "$2: sanitizer report: $(head -n 5 "$1")"
}

# a 256 KiB ring: about 750 records a lap; the primary releases all but
# 400 when it is full, so at 1000 the log kept spans the lap's end
SIZE=$((8192 + 256 * 1024))
. "$(dirname "$0")/../lib/test_ports.sh"
test_ports 2 || exit 99
PORT=$PORT_BASE
"$NODE" replica "$D/r" $SIZE $PORT $((PORT + 1)) > "$D/r.out" 2> "$D/r.err" &
rpid=$!
for ((t = 0; t < 100; t++)); do
	grep -q ready "$D/r.out" && break
	kill -0 $rpid 2>/dev/null || fail "the replica did not start"
	sleep 0.1
done
grep -q ready "$D/r.out" || fail "the replica not ready in 10 s"
REPL_NODE_BOOTSTRAP=1 REPL_NODE_TIMEOUT_MS=1500 timeout 60 "$NODE" primary "$D/p" $SIZE 7 1000 1 "$D/acked" \
	127.0.0.1:$PORT 2> "$D/p.err" || fail "the primary failed"
kill -TERM $rpid
wait $rpid || fail "the replica did not stop cleanly"
rpid=0

# repl-node's status opens the log (it marks it open and closed): first
for log in p r; do
	"$NODE" status "$D/$log" > "$D/$log.node" || fail "repl-node status $log"
done
sum0=$(md5sum "$D/p" "$D/r" | cut -d' ' -f1)

for log in p r; do
	# status: the LSN range, in both forms
	"$CTL" status "$D/$log" > "$D/st" 2> "$D/st.err" || fail "status $log: exit $?"
	clean_stderr "$D/st.err" "status $log"
	first=$(awk '$1 == "first" { print $3 }' "$D/st")
	last=$(awk '$1 == "last" { print $3 }' "$D/st")
	[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ ]] || fail "status $log: no range: $(cat "$D/st")"
	(( last == 1000 && first > 1 )) ||
		fail "status $log: $first..$last, want a released head and 1000"
	[[ $(cat "$D/$log.node") == "first $first last $last "* ]] ||
		fail "status $log disagrees with repl-node status"

	# dump: exactly first..last, in order, every CRC ok
	"$CTL" dump --payload none "$D/$log" > "$D/dump" 2> "$D/dump.err" ||
		fail "dump $log: exit $?"
	clean_stderr "$D/dump.err" "dump $log"
	awk -v f=$first -v l=$last '
		$1 ~ /^[0-9]+$/ && NF == 8 {
			laps[$6] = 1
			if ($1 != f + n) { print "LSN " $1 " where " f + n " was due"; bad = 1; exit }
			if ($7 != "ok") { print "LSN " $1 " CRC " $7; bad = 1; exit }
			n++
		}
		END {
			if (!bad && n != l - f + 1) print n " records, not " l - f + 1
			else if (!bad && length(laps) != 2) print "not across a lap"
		}' \
		"$D/dump" > "$D/check"
	[[ -s $D/check ]] && fail "dump $log: $(cat "$D/check")"
	grep -q "^end: $((last - first + 1)) records listed; LSN $((last + 1)) .*the end of the log" \
		"$D/dump" || fail "dump $log: no clean end line: $(tail -n 1 "$D/dump")"
	# every node by node id: the primary (node 1, no control port) and
	# the replica (a new repl-node log's node id is its control port)
	grep -q "^membership: config epoch 1, k 1 of 2 nodes$" "$D/dump" ||
		fail "dump $log: membership: $(grep membership "$D/dump")"
	grep -Eq "^  node 1 +\(no address\) +incarnation [0-9a-f]{16} new$" "$D/dump" ||
		fail "dump $log: no entry of node 1: $(grep -A2 membership "$D/dump")"
	grep -Eq "^  node $PORT +127.0.0.1:$PORT +incarnation [0-9a-f]{16} new$" "$D/dump" ||
		fail "dump $log: no entry of node $PORT: $(grep -A2 membership "$D/dump")"

	# --from/--to
	from=$((first + 10)) to=$((first + 20))
	"$CTL" dump --from $from --to $to "$D/$log" > "$D/part" || fail "dump --from --to: exit $?"
	lsns=$(awk '$1 ~ /^[0-9]+$/ && NF == 8 { print $1 }' "$D/part" | tr '\n' ' ')
	[[ $lsns == "$(seq -s ' ' $from $to) " ]] || fail "dump --from $from --to $to: $lsns"

	# --json: one object per line, the same records
	"$CTL" dump --json "$D/$log" > "$D/json" || fail "dump --json: exit $?"
	n=$(grep -c '"type":"record".*"crc_ok":true' "$D/json")
	(( n == last - first + 1 )) || fail "dump --json $log: $n records"
	"$CTL" status --json "$D/$log" >> "$D/json" || fail "status --json: exit $?"
	grep -q '"membership":{"config_epoch":1,"version":2,"k":1,"k_old":0,"joint":false,"from_joint":false,"nodes":\[{"node_id":1,"host":"","port":0,' "$D/json" ||
		fail "status --json $log: membership: $(grep -o '"membership".*' "$D/json" | head -n 1)"
	grep -q '{"node_id":'$PORT',"host":"127.0.0.1","port":'$PORT',"incarnation":"[0-9a-f]*","new":true,"old":false}\]}' "$D/json" ||
		fail "status --json $log: no replica entry: $(grep -o '"membership".*' "$D/json" | head -n 1)"
	if command -v python3 >/dev/null; then
		python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' < "$D/json" ||
			fail "dump --json $log: not JSON lines"
	fi
done

[[ $(md5sum "$D/p" "$D/r" | cut -d' ' -f1) == "$sum0" ]] || fail "dump or status wrote the log"

# a damaged record ends the listing there, said so, exit 0
mid=$((first + 100))
off=$("$CTL" dump --from $mid --to $mid "$D/p" | awk -v m=$mid '$1 == m { print $5 }')
[[ $off =~ ^[0-9]+$ ]] || fail "no offset for LSN $mid"
cp "$D/p" "$D/bad"
printf '\xff\xfe' | dd of="$D/bad" bs=1 seek=$((8192 + off + 40)) conv=notrunc status=none
"$CTL" dump "$D/bad" > "$D/dump" 2> "$D/dump.err" || fail "dump of a damaged log: exit $?"
clean_stderr "$D/dump.err" "dump of a damaged log"
tail -n 1 "$D/dump" | grep -q "^end: $((mid - first)) records listed; LSN $mid at ring offset $off .*CRC mismatch" ||
	fail "damaged record: $(tail -n 1 "$D/dump")"
echo "$NAME: damaged: $(tail -n 1 "$D/dump")"

# not a log: exit 3 with a message, no sanitizer report
head -c 20000 "$D/p" > "$D/trunc"
head -c $SIZE /dev/urandom > "$D/garbage"
: > "$D/empty"
for f in trunc garbage empty missing; do
	for cmd in dump status; do
		"$CTL" $cmd "$D/$f" > /dev/null 2> "$D/err"
		rc=$?
		clean_stderr "$D/err" "$cmd $f"
		(( rc == 3 )) || fail "$cmd of a $f file: exit $rc, not 3"
		grep -q "^replctl $cmd: .*$f" "$D/err" || fail "$cmd $f: message: $(cat "$D/err")"
	done
	echo "$NAME: $f: $(cat "$D/err")"
done

# usage errors: exit 2
for args in "" "frob" "dump" "dump --from x $D/p" "dump --payload raw $D/p" \
	"dump --from 9 --to 3 $D/p" "dump $D/p $D/r" "dump --backend dram $D/p" \
	"status $D/p $D/r" "status --bogus $D/p"; do
	"$CTL" $args > /dev/null 2> "$D/err"
	rc=$?
	clean_stderr "$D/err" "replctl $args"
	(( rc == 2 )) || fail "replctl $args: exit $rc, not 2"
done

echo "$NAME: ok ($first..$last)"
