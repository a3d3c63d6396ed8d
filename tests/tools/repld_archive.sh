#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_archive.sh -- continuous backup (repld.conf(5), archive; repld(8),
# BACKUP AND RESTORE): three nodes, node2 archiving to a directory while
# it is a replica (segments of 64K, published every 100 ms), the primary
# releasing its log as it fills (retention auto, keep 1M of an 8M log;
# records of 600 bytes).
#
#   1. 3000 records appended through node1 (their LSNs noted); node2's
#      status reaches archived_lsn = the commit point, with no gap;
#      replctl archive list and verify agree;
#   2. node2 killed with SIGKILL at a random point of 1000 more appends,
#      then restarted, KILL_ROUNDS times (default 3): its archiver resumes
#      where the archive ends, and the archive again reaches the commit
#      point without a gap -- the primary kept what the archiving replica
#      held while it was down;
#   3. the target failing (its seg/ directory replaced by a file; on S3
#      the server stopped with SIGSTOP) while 4000 more records are
#      appended: the archiver is "failing" and holds
#      the log, and the primary releases nothing it holds; the target
#      back, it catches up without a gap;
#   4. replctl restore --latest: the restored log (replctl dump, offline)
#      holds every acknowledged record at its LSN with its exact bytes;
#      --to-lsn N ends at N; a point the archive does not hold is refused
#      (exit 1); bad usage exits 2.
# Every node's process is ended by cluster_lib's trap.
#
# ARCHIVE_TARGET_URL=s3://BUCKET/PREFIX (with the AWS variables of
# repld.conf(5) and S3RVER_PID, the server's process) archives to S3
# instead of a directory: repld_archive_s3.sh runs it so.
set -u

NAME=repld_archive
LOGSIZE=8M
RETENTION='retention = { mode = "auto"; keep = "1M"; };'
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/archive_lib.sh"
T0=$SECONDS
# the target as repld.conf names it (a directory relative to it) and as
# replctl does
TARGET_CONF=${ARCHIVE_TARGET_URL:-archive}
ARCH=${ARCHIVE_TARGET_URL:-$D/archive}
if [[ $ARCH == s3://* ]]; then
	[[ -n ${S3RVER_PID-} ]] || { echo "$NAME: ARCHIVE_TARGET_URL on S3 needs S3RVER_PID"; exit 99; }
fi
# 600 bytes a record: 6500 of them fill half the log, past what it keeps
PAD=$(printf '%0600d' 0)
MPORT=$((BASE + 21))		# node2's /health and /metrics
command -v python3 > /dev/null ||
	{ echo "SKIP: $NAME: no python3 (Debian: python3), for status's JSON"; exit 77; }

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
	    print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)
	PY
}

# caught_up SECONDS: until node2's archive reaches node1's commit point
caught_up() {
	local t commit v
	for ((t = 0; t < $1 * 10; t++)); do
		commit=$(jnum "$(status_json 1)" commit_lsn)
		mapfile -t v < <(arch archived_lsn gap_at state)
		[[ ${v[0]-} == "$commit" && ${v[1]} == null ]] && return 0
		sleep 0.1
	done
	fail "node2's archive did not reach the commit point $commit in $1 s: ${v[*]-}"
}

# append_lines FROM TO: lines "rec I" appended through node1; "LSN rec I" noted
append_lines() {
	seq "$1" "$2" | sed "s/^/rec /; s/\$/ $PAD/" > "$D/lines.$1"
	"$CTL" -s "$(sock 1)" append < "$D/lines.$1" > "$D/lsn.$1" 2> "$D/append.$1.err" ||
		fail "append $1..$2: $(cat "$D/append.$1.err")"
	paste -d' ' "$D/lsn.$1" "$D/lines.$1" >> "$D/acked"
}

start_cluster_archive() {
	conf 1 primary
	conf 2 replica
	conf 3 replica
	cat >> "$D/node2.conf" <<-EOF
	archive = { target = "$TARGET_CONF"; segment_bytes = "64K"; publish_ms = 100; ${ARCHIVE_EXTRA-} };
	metrics_listen = "127.0.0.1:$MPORT";
	EOF
	start 2
	start 3
	wait_for 2 "listening" "listening"
	wait_for 3 "listening" "listening"
	start 1
	wait_status 1 '"replicas_up":2' "both replicas up"
}

: > "$D/acked"
start_cluster_archive
append_lines 1 3000
caught_up 20
"$CTL" archive verify "$ARCH" > "$D/verify.out" 2>&1 ||
	fail "archive verify: exit $?: $(cat "$D/verify.out")"
"$CTL" archive list "$ARCH" > "$D/list.out" 2>&1 ||
	fail "archive list: exit $?: $(cat "$D/list.out")"
last=$(tail -n 1 "$D/acked" | cut -d' ' -f1)
grep -q "restorable up to LSN $last\$" "$D/list.out" ||
	fail "archive list does not say restorable up to LSN $last: $(tail -n 1 "$D/list.out")"
# /health and /metrics say the same
if command -v curl > /dev/null; then
	h=$(curl -s "http://127.0.0.1:$MPORT/health")
	python3 -c 'import json,sys; a=json.loads(sys.argv[1])["archive"]; sys.exit(not (a["state"] == "archiving" and a["archived_lsn"] == int(sys.argv[2]) and a["gap_at"] is None and a["lag_records"] == 0))' \
		"$h" "$last" || fail "/health of node2: $h"
	curl -s "http://127.0.0.1:$MPORT/metrics" > "$D/metrics"
	grep -q "^repld_archive_archived_lsn $last\$" "$D/metrics" ||
		fail "/metrics of node2: $(grep '^repld_archive' "$D/metrics")"
	grep -q "^repld_archive_gap 0\$" "$D/metrics" || fail "/metrics of node2: a gap"
fi
echo "$NAME: 3000 records archived: $(tail -n 1 "$D/list.out") ($((SECONDS - T0)) s)"

# 2. the archiving node killed at a random point of appends, KILL_ROUNDS
# times (3; 20 by hand), then restarted: no gap each time
next=3001
for ((k = 1; k <= ${KILL_ROUNDS:-3}; k++)); do
	append_lines $next $((next + 999)) &
	appender=$!
	sleep "0.$((RANDOM % 8 + 1))"
	kill -9 "${pid[2]}"; wait "${pid[2]}" 2>/dev/null; unset "pid[2]"
	wait "$appender" || fail "appends while node2 was killed"
	start 2
	wait_status 1 '"replicas_up":2' "node2 back" 30
	caught_up 30
	next=$((next + 1000))
done
echo "$NAME: node2 killed ${KILL_ROUNDS:-3} times at random points: archived to $(arch archived_lsn), no gap ($((SECONDS - T0)) s)"

# 3. the target failing (its segments' directory replaced by a file: root
# writes through modes; S3: the server stopped, the archiver's requests
# time out): failing, holding; back: caught up, no gap
if [[ $ARCH == s3://* ]]; then
	kill -STOP "$S3RVER_PID" || fail "cannot stop the S3 server"
else
	mv "$D/archive/seg" "$D/archive/seg.away" && : > "$D/archive/seg" ||
		fail "cannot take the archive's seg/ away"
fi
append_lines $next $((next + 3999))
next=$((next + 4000))
for ((t = 0; t < 100; t++)); do
	[[ $(arch state) == failing ]] && break
	sleep 0.1
done
mapfile -t v < <(arch state holding failures last_error)
[[ ${v[0]} == failing && ${v[1]} == true && ${v[2]} -gt 0 && -n ${v[3]} ]] ||
	fail "with the target failing: ${v[*]}"
out=$("$CTL" -s "$(sock 2)" status 2>&1)
grep -q "^archive   .*: failing, .*holding the log after LSN .*; last error: " <<< "$out" ||
	fail "replctl status of node2 does not say failing and holding: $out"
# the primary keeps what the archiver holds: its log still has the next
# record to archive, while 4000 records (2.4M) passed what it keeps (1M)
hold=$(arch hold_lsn)
first=$(jnum "$(status_json 1)" first_lsn)
((first <= hold + 1)) ||
	fail "node1 released past node2's archive hold: its log from LSN $first, held after $hold"
echo "$NAME: target failing: node2 ${v[0]}, holding after LSN $hold, ${v[2]} failures; node1's log from LSN $first ($((SECONDS - T0)) s)"
# the outage lasts OUTAGE_S (1; 60 by hand) with the archiver retrying
sleep "${OUTAGE_S:-1}"
if [[ $ARCH == s3://* ]]; then
	kill -CONT "$S3RVER_PID" || fail "cannot continue the S3 server"
else
	rm "$D/archive/seg" && mv "$D/archive/seg.away" "$D/archive/seg" ||
		fail "cannot put the archive's seg/ back"
fi
caught_up 30
echo "$NAME: target back: caught up, no gap ($((SECONDS - T0)) s)"

# 4. restore: every acknowledged record, its bytes at its LSN
restored "$ARCH"
mid=$(sed -n 1000p "$D/acked" | cut -d' ' -f1)
"$CTL" --json restore --archive "$ARCH" --to-lsn "$mid" "$D/restored-mid" > "$D/restore-mid.out" 2>&1 ||
	fail "restore --to-lsn $mid: exit $?: $(cat "$D/restore-mid.out")"
[[ $(jnum "$(cat "$D/restore-mid.out")" to_lsn) == "$mid" ]] ||
	fail "restore --to-lsn $mid: $(cat "$D/restore-mid.out")"
"$CTL" dump --json --payload none "$D/restored-mid/repl.log" | tail -n 2 > "$D/mid.tail"
grep -q "\"lsn\":$mid," "$D/mid.tail" || fail "the log restored to $mid ends elsewhere: $(cat "$D/mid.tail")"
"$CTL" restore --archive "$ARCH" --to-lsn 99999999 "$D/restored-far" > "$D/far.out" 2>&1
rc=$?
[[ $rc == 1 ]] || fail "restore past the archive: exit $rc, not 1: $(cat "$D/far.out")"
[[ ! -e $D/restored-far/repl.log ]] || fail "a refused restore left a log"
"$CTL" restore --archive "$ARCH" --latest --to-lsn 5 "$D/x" > /dev/null 2>&1
rc=$?
[[ $rc == 2 ]] || fail "restore with two points: exit $rc, not 2"
echo "$NAME: ok: $(cat "$D/restore.out") ($((SECONDS - T0)) s)"
