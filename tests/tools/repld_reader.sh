#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_reader.sh -- readers (READ, replctl read) on a primary whose log is
# reused (retention.mode "auto").
#
#  1. A primary with a 16 MiB log and one replica (quorum 1) takes 50 times
#     its size (800 MiB, 16 KiB records) from `replctl append` while
#     `replctl read --follow` reads from the first of them (the appends
#     paced to keep it within 2 MiB, as a loaded machine may starve it): every append is
#     acknowledged (none REPL_E_FULL), the log's start moved, and the reader
#     got every record, byte for byte, in order (checksums of what was
#     appended and what was read), and status listed it while it read.
#     A reader paused (SIGSTOP) while 6 MiB are appended holds them (status
#     says the reader holds the release point) and then reads them all.
#  2. A reader from a released LSN is refused (RELEASED, exit 1), and
#     without --follow a read ends at the commit LSN (its last line).
#  3. A reader that stops reading (SIGSTOP) holds the log only up to
#     retention.reader_max_lag: appends go on past it without REPL_E_FULL,
#     it is counted lost, and once it reads again its stream ends with
#     READER_LOST (exit 1).  Without the limit the log would fill.
#  4. READ is refused on a replica (WRONG_ROLE).
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_reader
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
SIZE=16384
RECORDS=51200		# 50 x 16 MiB / 16 KiB

# lines of SIZE - 1 bytes (a record each: LF not counted): its number, then
# a filler that differs from record to record
gen() {	# FIRST COUNT
	awk -v first="$1" -v n="$2" -v size=$((SIZE - 1)) 'BEGIN {
		pad = ""; for (i = 0; i < size; i++) pad = pad sprintf("%c", 97 + i % 26);
		for (i = first; i < first + n; i++) {
			head = sprintf("%09d:", i);
			s = head substr(pad, (i % 26) + 1, size - length(head));
			print s;
		}
	}'
}

RETENTION='retention = { keep = "2M"; reader_max_lag = "8M"; };' LOGSIZE=16M \
	conf 1 primary 3000 1 2
LOGSIZE=16M conf 2 replica 3000 1 1
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2
wait_status 1 '"replicas_up":1' "the replica up"

# ---- 1. 50 x the log through it, a follower reading all of it ----
from=$(( $(jnum "$(status_json 1)" last_lsn) + 1 ))
"$CTL" -s "$(sock 1)" read --from "$from" --follow --count $RECORDS \
	--payload raw 2> "$D/read.err" | md5sum > "$D/read.md5" &
reader=$!
bg+=("$reader")
wait_status 1 '"readers":\[\{"id"' "the reader listed in status"
# in chunks of 2 MiB, each once the follower is within 2 MiB: a follower
# starved by a loaded machine would otherwise fall past reader_max_lag
# and be lost, which is step 3's case, not this one's
paced() {
	local c t lag
	for ((c = 1; c <= RECORDS; c += 128)); do
		for ((t = 0; t < 600; t++)); do
			lag=$(status_json 1 | grep -o '"lag_records":[0-9]*' | head -n 1 | cut -d: -f2)
			((${lag:-0} <= 128)) && break
			sleep 0.05
		done
		gen "$c" 128
	done
}
paced | tee >(md5sum > "$D/gen.md5") |
	"$CTL" -s "$(sock 1)" --timeout 30000 append > "$D/append.out" 2> "$D/append.err"
rc=$?
n=$(wc -l < "$D/append.out")
[[ $rc -eq 0 && $n -eq $RECORDS ]] ||
	fail "append of $RECORDS records: exit $rc, $n acknowledged: $(head -n 3 "$D/append.err")"
! grep -q "FULL" "$D/append.err" || fail "an append found the log full"
[[ $(head -n 1 "$D/append.out") -eq $from ]] ||
	fail "the first append got LSN $(head -n 1 "$D/append.out"), the reader reads from $from"
for ((i = 0; i < 600; i++)); do
	kill -0 "$reader" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$reader" 2>/dev/null && fail "the reader did not get $RECORDS records in 60 s"
wait "$reader"
rc=$?
[[ $rc -eq 0 ]] || fail "replctl read exit $rc: $(cat "$D/read.err")"
[[ -s $D/gen.md5 && $(cat "$D/read.md5") == "$(cat "$D/gen.md5")" ]] ||
	fail "what the reader read differs from what was appended: read $(cat "$D/read.md5"), appended $(cat "$D/gen.md5")"
st=$(status_json 1)
first=$(jnum "$st" first_lsn)
releases=$(jnum "$st" releases)
[[ $first -gt $from && ${releases:-0} -gt 0 ]] ||
	fail "the log's start did not move (first LSN $first, releases ${releases:-none})"
[[ $st == *'"readers":[]'* && $st == *'"readers_lost":0'* ]] ||
	fail "status after the reader: $st"
echo "$NAME: $RECORDS records of up to $SIZE B through a 16 MiB log, $releases releases;" \
	"the follower read all of them, equal ($(cut -c1-12 < "$D/read.md5"))"

# ---- 1b. a reader that pauses within reader_max_lag misses nothing ----
from=$(( $(jnum "$(status_json 1)" last_lsn) + 1 ))
"$CTL" -s "$(sock 1)" read --from "$from" --follow --count 384 --payload raw \
	2> "$D/pause.err" | md5sum > "$D/pause.md5" &
paused=$!
bg+=("$paused")
wait_status 1 '"readers":\[\{"id"' "the pausing reader listed"
kill -STOP "$paused"
# 6 MiB: past keep (2M) plus the eighth that makes a release due, within 8M
gen 1 384 | tee >(md5sum > "$D/gen2.md5") |
	"$CTL" -s "$(sock 1)" append > /dev/null 2> "$D/append1b.err" ||
	fail "append past a paused reader: $(head -n 3 "$D/append1b.err")"
wait_status 1 '"held_by":"reader"' "the retention held by the paused reader"
kill -CONT "$paused"
wait "$paused" || fail "the paused reader: $(cat "$D/pause.err")"
[[ $(cat "$D/pause.md5") == "$(cat "$D/gen2.md5")" ]] ||
	fail "the paused reader missed or changed records"
echo "$NAME: a reader paused over 6 MiB of appends held them, and read them all"

# ---- 2. released records, and a read that ends ----
first=$(jnum "$(status_json 1)" first_lsn)
out=$("$CTL" -s "$(sock 1)" read --from 2 2>&1)
rc=$?
[[ $rc -eq 1 && $out == *RELEASED* && $out == *"$first"* ]] ||
	fail "read from the released LSN 2 (the log starts at $first): exit $rc: $out"
commit=$(jnum "$(status_json 1)" commit_lsn)
out=$("$CTL" -s "$(sock 1)" --json read --from $((commit - 2)) 2>&1)
rc=$?
[[ $rc -eq 0 && $(grep -c '"lsn"' <<< "$out") -eq 3 &&
   $(tail -n 1 <<< "$out") == *'"end":true'*"\"next\":$((commit + 1))"* ]] ||
	fail "read --from $((commit - 2)) (commit $commit): exit $rc: $(cut -c1-200 <<< "$out")"
hex=$("$CTL" -s "$(sock 1)" read --from $commit --payload hex 2>&1)
txt=$("$CTL" -s "$(sock 1)" read --from $commit 2>&1)
read -r l1 n1 p1 <<< "$hex"
read -r l2 n2 p2 <<< "$txt"
[[ $l1 == "$commit" && $l2 == "$commit" && $n1 == "$n2" && ${#p2} -eq $n2 &&
   $p1 == "$(printf '%s' "$p2" | od -An -tx1 | tr -d ' \n')" ]] ||
	fail "read --payload hex and text of LSN $commit differ: $(cut -c1-80 <<< "$hex") / $(cut -c1-80 <<< "$txt")"
out=$("$CTL" -s "$(sock 1)" read --from 12x 2>&1)
rc=$?
[[ $rc -eq 2 && $out == *'"12x"'* ]] || fail "read --from 12x: exit $rc: $out"
echo "$NAME: a read from a released LSN is refused; one without --follow ends at the commit LSN"

# ---- 3. a stuck reader holds at most reader_max_lag ----
from=$(( $(jnum "$(status_json 1)" last_lsn) + 1 ))
"$CTL" -s "$(sock 1)" read --from "$from" --follow > /dev/null 2> "$D/stuck.err" &
stuck=$!
bg+=("$stuck")
wait_status 1 '"readers":\[\{"id"' "the second reader listed"
kill -STOP "$stuck"
gen 1 4096 | "$CTL" -s "$(sock 1)" --timeout 30000 append > "$D/append2.out" \
	2> "$D/append2.err"
rc=$?
[[ $rc -eq 0 && $(wc -l < "$D/append2.out") -eq 4096 ]] ||
	fail "appends past a stuck reader: exit $rc: $(head -n 3 "$D/append2.err")"
wait_status 1 '"readers_lost":1' "the stuck reader counted lost"
grep -q "reader [0-9]* lost" "$D/node1.err" || fail "no log line for the lost reader"
kill -CONT "$stuck"
for ((i = 0; i < 400; i++)); do
	kill -0 "$stuck" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$stuck" 2>/dev/null && fail "the lost reader's stream did not end"
wait "$stuck"
rc=$?
[[ $rc -eq 1 ]] && grep -q "READER_LOST" "$D/stuck.err" ||
	fail "the lost reader: exit $rc: $(cat "$D/stuck.err")"
echo "$NAME: a stuck reader held the log only up to reader_max_lag, then READER_LOST"

# ---- 4. not on a replica ----
out=$("$CTL" -s "$(sock 2)" read --from 1 2>&1)
rc=$?
[[ $rc -eq 1 && $out == *WRONG_ROLE* ]] || fail "read on the replica: exit $rc: $out"

stop 1
stop 2
for n in 1 2; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
