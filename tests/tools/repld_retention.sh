#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_retention.sh -- the daemon's log does not fill.
#
#  1. mode "auto": a primary with a 16 MiB log and one replica (quorum 1)
#     takes 50 times its size in 64 KiB records (800 MiB): every append is
#     acknowledged (none REPL_E_FULL), the log's start moved, status shows
#     the releases, and the replica holds what the primary holds (verify).
#     Without the retention the log filled after 16 MiB.
#  2. RELEASE is refused in mode "auto" (exit 1, BAD_REQUEST).
#  3. mode "checkpointer": nothing is released before a RELEASE: the log
#     fills (REPL_E_FULL), the space alarm is raised and names the
#     checkpointer; while it is full the truth is told: status --json has
#     "log_full":true and counts the refused appends, `replctl status`
#     exits 5 naming the full log, and (with curl) /primary answers 503
#     with "can_acknowledge":false and the reason, /metrics has
#     repld_log_full 1; `replctl release LSN` lets the daemon release up
#     to it, appends go on, the alarm clears, and each of those says so.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_retention
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
SIZE=65536
RECORDS=12800		# 50 x 16 MiB / 64 KiB

# retention.keep: 2M (default: a quarter of the log); mode auto
RETENTION='retention = { keep = "2M"; };' LOGSIZE=16M conf 1 primary 3000 1 2
LOGSIZE=16M conf 2 replica 3000 1 1
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2
wait_status 1 '"replicas_up":1' "the replica up"

# ---- 1. auto: 50 x the log through it ----
last0=$(jnum "$(status_json 1)" last_lsn)	# the epoch's own record
"$CTL" -s "$(sock 1)" --json bench --size $SIZE --records $RECORDS --depth 8 \
	> "$D/bench.out" 2> "$D/bench.err"
rc=$?
st=$(status_json 1)
last=$(jnum "$st" last_lsn)
commit=$(jnum "$st" commit_lsn)
first=$(jnum "$st" first_lsn)
[[ $rc -eq 0 && $last -eq $((last0 + RECORDS)) && $commit -eq $last ]] ||
	fail "bench through the 16 MiB log: exit $rc, last LSN $last, commit $commit, want $((last0 + RECORDS)): $(tr '\r' '\n' < "$D/bench.err" | tail -n 3)"
! grep -q "REPL_E_FULL\|FULL" "$D/bench.err" ||
	fail "an append found the log full: $(grep -m 2 FULL "$D/bench.err")"
releases=$(grep -o '"releases":[0-9]*' <<< "$st" | cut -d: -f2)
[[ $first -gt 1 && ${releases:-0} -gt 0 ]] ||
	fail "the log's start did not move (first LSN $first, releases ${releases:-none}): $st"
[[ $st == *'"space_alarm":false'* && $st == *'"mode":"auto"'* ]] ||
	fail "status after the run: $st"
"$CTL" -s "$(sock 1)" --json verify > "$D/verify.out" 2>> "$D/ctl.err" ||
	fail "verify: exit $?: $(cat "$D/verify.out")"
echo "$NAME: auto: $RECORDS records of $SIZE B through a 16 MiB log," \
	"$releases releases, log starts at LSN $first; the replica equal"

# ---- 2. RELEASE needs the checkpointer mode ----
out=$("$CTL" -s "$(sock 1)" release 5 2>&1)
rc=$?
[[ $rc -eq 1 && $out == *checkpointer* ]] ||
	fail "release in mode auto: exit $rc: $out"
out=$("$CTL" -s "$(sock 1)" release 5x 2>&1)
rc=$?
[[ $rc -eq 2 ]] || fail "release 5x: exit $rc (want 2, usage): $out"
out=$("$CTL" -s "$(sock 2)" release 5 2>&1)
rc=$?
[[ $rc -eq 1 && $out == *WRONG_ROLE* ]] ||
	fail "release on the replica: exit $rc: $out"
echo "$NAME: RELEASE refused in mode auto and on a replica"

# ---- 3. checkpointer ----
stop 1
sed -i 's/^retention = .*/retention = { mode = "checkpointer"; keep = 0; alarm_percent = 80; };/' \
	"$D/node1.conf"
grep -q checkpointer "$D/node1.conf" || fail "could not set the checkpointer mode"
MPORT=$((BASE + 20))
echo "metrics_listen = \"127.0.0.1:$MPORT\";" >> "$D/node1.conf"
start 1
up 1 2
wait_status 1 '"replicas_up":1' "the replica up again"
# 16 MiB of 64 KiB records cannot all fit: some fail once it is full
last_b=$(jnum "$(status_json 1)" last_lsn)
"$CTL" -s "$(sock 1)" --json --timeout 5000 bench --size $SIZE --records 300 \
	> "$D/bench2.out" 2> "$D/bench2.err"
wait_status 1 '"space_alarm":true' "the space alarm"
[[ $(jstr "$st" held_by) == checkpointer || $st == *'"held_by":"checkpointer"'* ]] ||
	fail "the alarm does not name the checkpointer: $st"
grep -q "space alarm: .*checkpointer" "$D/node1.err" ||
	fail "no space alarm line naming the checkpointer in the log"
grep -q "FULL" "$D/bench2.err" ||
	fail "appends to a log nothing released did not fail: $(tr '\r' '\n' < "$D/bench2.err" | tail -n 2)"
# bench counts what was acknowledged, not what was answered
acked=$(grep -o '"records":[0-9]*' "$D/bench2.out" | cut -d: -f2)
nfail=$(grep -o '"failed":[0-9]*' "$D/bench2.out" | cut -d: -f2)
[[ -n $acked && $acked -eq $(( $(jnum "$st" last_lsn) - last_b )) && ${nfail:-0} -ge 1 ]] ||
	fail "bench reported $acked acknowledged, $nfail failed; the log took $(( $(jnum "$st" last_lsn) - last_b )): $(cat "$D/bench2.out")"
# full: status, replctl's exit code, /primary and /metrics say so
[[ $st == *'"log_full":true'* && $(jnum "$st" appends_full) -ge 1 ]] ||
	fail "a full log's status says otherwise: $st"
out=$("$CTL" -s "$(sock 1)" status 2>&1)
rc=$?
[[ $rc -eq 5 && $out == *"log is full"* && $out == *"FULL: appends refused"* ]] ||
	fail "replctl status on a full log: exit $rc: $out"
http() {	# PATH: "CODE BODY"
	local code
	code=$(curl -s -o "$D/http.body" -w '%{http_code}' "http://127.0.0.1:$MPORT$1")
	echo "$code $(cat "$D/http.body")"
}
if command -v curl > /dev/null; then
	h=$(http /primary)
	[[ $h == "503 "*'"can_acknowledge":false'*'"log_full":true'*"the log is full"* ]] ||
		fail "/primary on a full log: $h"
	h=$(http /metrics)
	[[ $h == *$'\nrepld_log_full 1\n'* && $h == *$'\nrepld_can_acknowledge 0\n'* ]] ||
		fail "/metrics on a full log: $(grep -E '^repld_(log_full|can_ack)' "$D/http.body")"
else
	echo "$NAME: no curl: /primary and /metrics not asked (Debian: curl)"
fi
first0=$(jnum "$st" first_lsn)
commit=$(jnum "$st" commit_lsn)
out=$("$CTL" -s "$(sock 1)" release "$commit" 2>&1) ||
	fail "release $commit: exit $?: $out"
wait_status 1 '"space_alarm":false' "the alarm cleared after the release"
first=$(jnum "$st" first_lsn)
[[ ( $first -eq 0 || $first -gt $first0 ) && $st == *"\"checkpoint_lsn\":$commit"* ]] ||
	fail "release $commit moved the start from $first0 to $first: $st"
# --records and --seconds together: whichever ends first
"$CTL" -s "$(sock 1)" --json bench --size 4096 --records 200 --seconds 60 \
	> "$D/bench3.out" 2> "$D/bench3.err" ||
	fail "appends after the release: $(tr '\r' '\n' < "$D/bench3.err" | tail -n 2)"
grep -q '"records":200,"failed":0' "$D/bench3.out" ||
	fail "bench --records 200 --seconds 60: $(cat "$D/bench3.out")"
grep -q "space alarm cleared" "$D/node1.err" || fail "no line saying the alarm cleared"
st=$(status_json 1)
[[ $st == *'"log_full":false'* ]] || fail "the log took appends again, but: $st"
out=$("$CTL" -s "$(sock 1)" status 2>&1) || fail "replctl status after the release: exit $?: $out"
if command -v curl > /dev/null; then
	h=$(http /primary)
	[[ $h == "200 "*'"can_acknowledge":true'*'"log_full":false'* ]] ||
		fail "/primary after the release: $h"
fi
echo "$NAME: checkpointer: the log filled and raised the alarm; release $commit" \
	"moved its start from $first0 to $first (0: all released), appends went on"

stop 1
stop 2
for n in 1 2; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
