#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_sigterm.sh -- SIGTERM to the primary with appends in flight.  Three
# nodes, quorum 1 (of 2 replicas).  Against node1, the primary, run at once:
#   - `replctl --json append` of "term-<n>" lines (n = 1, 2, ...): one
#     reply per line, so the k-th reply is "term-k"'s;
#   - `replctl append` of "plain-<n>" lines: the LSNs only, the i-th
#     printed one "plain-i"'s (replies come in order, and nothing is
#     acknowledged after a failure -- checked on the --json one);
#   - `replctl bench --seconds 5 --json` (16-byte records: the log, 32M,
#     must not fill: nothing releases it).
# Then SIGTERM: node1 exits 0; the clients end (some records refused with
# STOPPING, or their outcome unknown: fine).  After node2 and node3 stop
# too, replctl dump (offline) shows every acknowledged record with its
# payload in node1's log, and each in at least one replica's log.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_sigterm
LOGSIZE=${LOGSIZE:-32M}
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS

acks() { grep -c '"ok":true' "$D/term.out" 2>/dev/null; }

# gen PREFIX: PREFIX-1, PREFIX-2, ... about 2500 lines a second, until
# $D/stop.gen
gen() {
	local i=0 j
	while [[ ! -e $D/stop.gen ]]; do
		for ((j = 0; j < 25; j++)); do
			echo "$1-$((++i))"
		done
		sleep 0.01
	done
}

start_cluster

S=$(sock 1)
( gen term | "$CTL" -s "$S" --json append > "$D/term.out" 2> "$D/term.err"
  echo $? > "$D/term.rc" ) &
bg+=($!)
( gen plain | "$CTL" -s "$S" append > "$D/plain.out" 2> "$D/plain.err"
  echo $? > "$D/plain.rc" ) &
bg+=($!)
( "$CTL" -s "$S" --json bench --seconds 5 --size 16 --depth 8 > "$D/bench.out" 2> "$D/bench.err"
  echo $? > "$D/bench.rc" ) &
bg+=($!)

# a good part in, then SIGTERM while all three are busy
for ((t = 0; t < 200; t++)); do
	(($(acks) >= 2000)) && break
	for f in term plain bench; do
		[[ -e $D/$f.rc ]] && fail "$f ended early ($(cat "$D/$f.rc")): $(head -n 3 "$D/$f.err")"
	done
	sleep 0.1
done
(($(acks) >= 2000)) || fail "only $(acks) acknowledged in 20 s"
[[ -e $D/bench.rc ]] && fail "bench ended before SIGTERM: $(cat "$D/bench.err")"
kill -TERM "${pid[1]}"
exited 1 "node1 still running 10 s after SIGTERM"
clean_stderr "$D/node1.err" "node1 after SIGTERM (exit $rc)"
[[ $rc -eq 0 ]] || fail "node1 exited $rc after SIGTERM, not 0"
touch "$D/stop.gen"
for f in term plain bench; do
	for ((t = 0; t < 100; t++)); do
		[[ -e $D/$f.rc ]] && break
		sleep 0.1
	done
	[[ -e $D/$f.rc ]] || fail "$f still running 10 s after node1 stopped"
	r=$(cat "$D/$f.rc")
	# 5: a record in flight whose outcome the stop left unknown
	[[ $r -eq 0 || $r -eq 1 || $r -eq 4 || $r -eq 5 ]] ||
		fail "$f exited $r: $(head -n 3 "$D/$f.err")"
	clean_stderr "$D/$f.err" "$f"
	echo "$NAME: $f: exit $r: $(head -n 1 "$D/$f.err")"
done
stop 2
stop 3
for n in 2 3; do clean_stderr "$D/node$n.err" "node$n"; done

# the acknowledged records, LSN and payload
grep -vq '^{"ok":' "$D/term.out" &&
	fail "append --json printed what is no reply: $(grep -vm1 '^{"ok":' "$D/term.out")"
awk '/"ok":false/ { f = 1 } f && /"ok":true/ { exit 1 }' "$D/term.out" ||
	fail "an acknowledgement after a failure: $(grep -m3 '"ok":false' "$D/term.out")"
awk '/"ok":true/ { match($0, /"lsn":[0-9]+/)
	print substr($0, RSTART + 6, RLENGTH - 6), "term-" NR }' "$D/term.out" > "$D/acked"
grep -vq '^[0-9][0-9]*$' "$D/plain.out" &&
	fail "append printed what is no LSN: $(grep -vm1 '^[0-9][0-9]*$' "$D/plain.out")"
awk '{ print $1, "plain-" NR }' "$D/plain.out" >> "$D/acked"
sort -n -o "$D/acked" "$D/acked"
nt=$(grep -c '"ok":true' "$D/term.out")
np=$(wc -l < "$D/plain.out")
((nt >= 2000 && np >= 1000)) || fail "acknowledged: $nt term, $np plain"

check_acked all "$D/acked" "$D/node1.log"
check_acked any "$D/acked" "$D/node2.log" "$D/node3.log"
echo "$NAME: ok: all $checked acknowledged records ($nt term, $np plain) in" \
	"node1's log and a replica's; $(grep -c '"ok":false' "$D/term.out") refused;" \
	"bench: $(grep -o '"records":[0-9]*' "$D/bench.out") ($((SECONDS - T0)) s)"
