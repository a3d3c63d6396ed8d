#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_full_resync.sh -- a replica that joins empty while the primary's
# 256 MiB log is nearly full gets the whole ring in one catch-up batch, on
# one link that stays up: that batch is sized to fit the link's send queue
# (primary.h: link_sq_depth), so no post finds the queue full and drops the
# link.  Then every record the primary keeps matches on both replicas
# (replctl verify), and the link is caught up and streaming.
NAME=repld_full_resync
LOGSIZE=256M
. "$(dirname "$0")/cluster_lib.sh"
T0=$SECONDS

start_cluster

# node 3 loses its disk; the others go on and fill the log
kill -9 "${pid[3]}"; wait "${pid[3]}" 2>/dev/null; unset "pid[3]"
rm -f "$D/node3.log"
"$CTL" -s "$(sock 1)" bench --records 880 --size 262144 > "$D/bench.out" 2>&1 ||
	fail "bench: exit $?: $(cat "$D/bench.out")"
st=$(status_json 1)
used=$(jnum "$st" used_bytes)
(( used >= 200 * 1024 * 1024 )) || fail "the log holds only $used bytes"
c3=$(grep -c "" "$D/node1.err")

# node 3 rejoins empty: one batch of the whole ring
start 3 --reinit
wait_status 1 '"replicas_up":2' "node 3 up again" 120
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
