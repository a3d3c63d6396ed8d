#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_full_resync.sh -- a replica that joins empty while the primary's
# 256 MiB log is nearly full gets the whole ring in one catch-up batch, on
# one link that stays up: that batch is sized to fit the link's send queue
# (primary.h: link_sq_depth), so no post finds the queue full and drops the
# link.  Then every record the primary keeps matches on both replicas
# (replctl verify), and the link is caught up and streaming.
#
# While node 3 is down the primary releases its first records: `replctl
# status` says node 3's next record was released past and that it needs
# a full resync.  While node 3 catches up, the primary's status is sampled as fast as
# replctl answers: its replicas[] entry has catchup_total_bytes > 0,
# catchup_done_bytes that never shrink nor pass the total and grow over
# the samples, catchup_eta_ms a number once some bytes were received (0
# once all were), and `replctl status` says "catching up: N% (... of ...)".
# Once it is caught up the three fields are null and it streams.
NAME=repld_full_resync
LOGSIZE=256M
. "$(dirname "$0")/cluster_lib.sh"
T0=$SECONDS
command -v python3 > /dev/null ||
	{ echo "SKIP: $NAME: no python3 (Debian: python3), for status's JSON"; exit 77; }

# node 1's status (ARG: --json) into FILE, over and over until told
sample() {	# FILE [ARG]
	while [[ ! -e $D/stop.sample ]]; do
		"$CTL" -s "$(sock 1)" $2 status >> "$1" 2>> "$D/ctl.err"
	done
}
# node 3 runs a quarter of the time (well within down_ms), so that its
# catch-up lasts long enough to be seen several times
pace() {
	while [[ ! -e $D/stop.sample ]]; do
		kill -STOP "${pid[3]}"; sleep 0.15
		kill -CONT "${pid[3]}"; sleep 0.05
	done
}

start_cluster

# node 3 loses its disk; the others go on and fill the log
kill -9 "${pid[3]}"; wait "${pid[3]}" 2>/dev/null; unset "pid[3]"
rm -f "$D/node3.log"
"$CTL" -s "$(sock 1)" bench --records 880 --size 262144 > "$D/bench.out" 2>&1 ||
	fail "bench: exit $?: $(cat "$D/bench.out")"
st=$(status_json 1)
used=$(jnum "$st" used_bytes)
(( used >= 200 * 1024 * 1024 )) || fail "the log holds only $used bytes"

# the primary releases its first records: node 3, down, would resume
# from one it no longer has, and `replctl status` says it needs a full
# resync (a few records: the log stays nearly full)
"$CTL" -s "$(sock 1)" release 10 > "$D/release.out" 2>&1 ||
	fail "release 10: exit $?: $(cat "$D/release.out")"
for ((t = 0; t < 50; t++)); do
	first=$(jnum "$(status_json 1)" first_lsn)
	((first > 2)) && break
	sleep 0.1
done
((first > 2)) || fail "release 10 left the log's start at LSN $first"
"$CTL" -s "$(sock 1)" status > "$D/released.txt" 2>&1
row=$(grep "127.0.0.1:$(cport 3) " "$D/released.txt" | head -n 1)
[[ $row == *"released past (its next record, LSN "[0-9]*", is gone here): a full resync when it is back"* ]] ||
	fail "replctl status of node 3 released past: $(cat "$D/released.txt")"
echo "$NAME: log start at LSN $first; node 3: ${row##*released past}"
c3=$(grep -c "" "$D/node1.err")

# node 3 rejoins empty: one batch of the whole ring
sample "$D/samples.json" --json &
bg+=($!)
sample "$D/samples.txt" &
bg+=($!)
start 3 --reinit
pace &
bg+=($!)
wait_status 1 '"replicas_up":2' "node 3 up again" 120
wait_status 1 '"lag_records":0,.*"lag_records":0' "node 3 caught up" 60
: > "$D/stop.sample"
wait "${bg[@]: -3}"

# its progress while it caught up: node 3 is the second replica
python3 - "$D/samples.json" "$(cport 3)" > "$D/progress.out" <<'PY' ||
import json, sys
port = ":" + sys.argv[2]
seen = []
for line in open(sys.argv[1]):
    if not line.strip():
        continue
    st = json.loads(line)
    r = [r for r in st["replicas"] if r["address"].endswith(port)][0]
    for k in ("catchup_total_bytes", "catchup_done_bytes", "catchup_eta_ms"):
        if k not in r:
            sys.exit("no %s in replicas[]: %s" % (k, sorted(r)))
    if r["catchup_total_bytes"] is None:
        if r["catchup_done_bytes"] is not None or r["catchup_eta_ms"] is not None:
            sys.exit("done or eta without a total: %s" % r)
        continue
    total, done = r["catchup_total_bytes"], r["catchup_done_bytes"]
    if total <= 0 or done is None or done > total:
        sys.exit("done %s of total %s" % (done, total))
    eta = r["catchup_eta_ms"]
    if (eta is None) != (done == 0) or (done == total and eta != 0):
        sys.exit("time left %s with %s of %s done" % (eta, done, total))
    if seen and (total != seen[-1][0] or done < seen[-1][1]):
        sys.exit("from %s to %s" % (seen[-1], (total, done)))
    seen.append((total, done))
if len(set(d for _, d in seen)) < 2:
    sys.exit("no growth seen in %d samples while catching up: %s" % (len(seen), seen[:5]))
print("%d samples while catching up, done %d..%d of %d bytes" %
      (len(seen), seen[0][1], seen[-1][1], seen[-1][0]))
PY
	fail "catch-up progress: $(cat "$D/progress.out")"
echo "$NAME: $(cat "$D/progress.out")"
line=$(grep -m 1 "catching up: [0-9]*% ([0-9.]* [KMG]*i*B of [0-9.]* [KMG]*i*B), " "$D/samples.txt") ||
	fail "replctl status never said how far node 3 had come: $(grep "$(cport 3)" "$D/samples.txt" | sort | uniq -c | head -n 5)"
echo "$NAME: replctl status said: ${line##* catching up:}"
status_json 1 > "$D/after.json"
python3 - "$D/after.json" "$(cport 3)" > "$D/after.out" <<'PY' ||
import json, sys
r = [r for r in json.load(open(sys.argv[1]))["replicas"]
     if r["address"].endswith(":" + sys.argv[2])][0]
for k in ("catchup_total_bytes", "catchup_done_bytes", "catchup_eta_ms"):
    if r[k] is not None:
        sys.exit("%s is %s once caught up" % (k, r[k]))
if r["link_state"] != "streaming":
    sys.exit("link_state %s once caught up" % r["link_state"])
PY
	fail "after the catch-up: $(cat "$D/after.out")"
after=$(tail -n +"$((c3 + 1))" "$D/node1.err")
! grep -q "queue full\|cannot post" <<< "$after" ||
	fail "the catch-up dropped its link: $(grep -m 3 "queue full\|cannot post" <<< "$after")"
# up once: after its disk was lost, the link came up a single time
ups=$(grep -c "replica 127.0.0.1:$(cport 3) is up" <<< "$after")
[[ $ups == 1 ]] || fail "node 3's link came up $ups times, not once"

# a record more, then the whole log compared on both replicas
echo "after the resync" | "$CTL" -s "$(sock 1)" append > /dev/null ||
	fail "append after the resync: exit $?"
wait_status 1 '"lag_records":0,.*"lag_records":0' "both replicas caught up" 30
"$CTL" -s "$(sock 1)" verify > "$D/verify.out" 2>&1 ||
	fail "verify: exit $?: $(cat "$D/verify.out")"
stop 1
stop 2
stop 3
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: $((used >> 20)) MiB resynced on one link; verify: $(tail -n 1 "$D/verify.out") ($((SECONDS - T0)) s)"
