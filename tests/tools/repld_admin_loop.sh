#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_admin_loop.sh -- the admin socket's loop (one thread for every
# appending connection) keeps each connection's order and never waits on
# one client:
#   1. a connection that appends, asks STATUS and appends again in one
#      write gets its answers in request order (it leaves the loop for a
#      thread of its own at the STATUS, after its acks);
#   2. a connection that sends 20000 appends and reads nothing (its acks
#      fill its socket) does not hold up another client's append (answered
#      within 2 s), and then reads all 20000 acks in order;
#   3. records of 1 B to 1 MiB on one connection, in writes cut anywhere,
#      on the loop and then on a thread: acknowledged in order, and the
#      log holds each byte for byte (a large one is received into a
#      buffer of its own, its first bytes left in the request buffer);
#   4. 8 replctl bench clients at once: every record acknowledged once.
#
# Environment: REPLD, REPLCTL, ADMIN_CLIENT (the build tree's by default).
set -u

NAME=repld_admin_loop
LOGSIZE=${LOGSIZE:-32M}		# step 3 keeps 10 MiB of large records
. "$(dirname "$0")/cluster_lib.sh"
AC=${ADMIN_CLIENT:-./tests/tools/admin_client}
[[ -x $AC ]] || { echo "$NAME: $AC not built"; exit 99; }

T0=$SECONDS
start_cluster
base=$(jnum "$(status_json 1)" last_lsn)
"$AC" mixed "$(sock 1)" || fail "mixed requests on one connection"
"$AC" stall "$(sock 1)" 20000 || fail "a client that reads nothing"
"$AC" large "$(sock 1)" || fail "large records, cut anywhere"
pids=()
for ((i = 0; i < 8; i++)); do
	"$CTL" -s "$(sock 1)" --json bench --records 500 --size 64 > "$D/b$i.json" 2>> "$D/ctl.err" &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a bench client: exit $?"; done
for ((i = 0; i < 8; i++)); do
	grep -q '"records":500,"failed":0' "$D/b$i.json" || fail "bench client $i: $(cat "$D/b$i.json")"
done
st=$(status_json 1)
last=$(jnum "$st" last_lsn)
# 5 + 1 (mixed), 20000 + 1 (stall), 28 (large), 8 x 500 (bench) after the first
want=$((base + 5 + 1 + 20000 + 1 + 28 + 4000))
((last == want)) || fail "last LSN $last, not $want (from $base)"
echo "$NAME: 8 bench clients: 4000 acknowledged, last LSN $last"
for n in 1 2 3; do stop "$n"; clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
