#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_switchover.sh -- planned changes of primary under load: three
# nodes with a coordinator (lease 1 s), one etcd, an appender through the
# primary all along (restarted on each new primary).
#   1. `replctl --json switchover` through a replica's socket: exit 0, the
#      reply names from (the primary), to and epoch; a new primary of a
#      newer epoch, the old one its replica;
#   2. `replctl switchover --to N` through the primary's socket: node N
#      becomes the primary;
#   3. `replctl failover --to N`: node N becomes the primary;
#   4. refusals, exit 1: switchover --to the primary itself (BAD_TARGET);
#      switchover on a node without a coordinator (NO_COORDINATOR).
# All along, `replctl -s 1 -s 2 -s 3 read --follow` follows the primary
# across the three moves: it prints every committed record once, in LSN
# order, the same as a read through the last primary.
# Every acknowledged record is read back through the last primary, and is
# in its log with its payload and client id after the stop.
set -u

NAME=repld_ha_switchover
LOGSIZE=${LOGSIZE:-64M}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_start "${ETCD_FLAGS[@]}"
ha_start_cluster
: > "$D/acked"
p=1 k=0
"$CTL" -s "$(sock 1)" -s "$(sock 2)" -s "$(sock 3)" --json read --follow \
	> "$D/follow.out" 2> "$D/follow.err" &
fpid=$!

# steady TAG: an appender through the primary $p, 300 acknowledged first
steady() {
	k=$((k + 1))
	load_start "w$k" "$p" $((20 + k))
	for ((t = 0; t < 100 && $(load_acks "w$k") < 300; t++)); do sleep 0.1; done
	(($(load_acks "w$k") >= 300)) || fail "only $(load_acks "w$k") acknowledged through node$p"
}

# moved WHAT VIA CMD...: replctl CMD through node VIA's socket, exit 0 and
# ok; then a primary of a newer epoch other than $p (TO: that node, if
# given as $to), the old one its replica; the appender's records kept
moved() {
	local what=$1 via=$2 ep out rc n np=0
	shift 2
	ep=$(jnum "$(status_json "$p")" epoch)
	out=$("$CTL" -s "$(sock "$via")" --json "$@" 2> "$D/sw.err")
	rc=$?
	[[ $rc == 0 && $(jget "$out" ok) == true ]] ||
		fail "$what: replctl $* exit $rc: $out $(cat "$D/sw.err")"
	mapfile -t v < <(jget "$out" from to epoch)
	[[ ${v[0]} == "$p" && ${v[2]} == "$ep" ]] ||
		fail "$what: the reply names from ${v[0]} epoch ${v[2]}, not $p and $ep: $out"
	[[ $to == 0 || ${v[1]} == "$to" ]] || fail "$what: the reply names to ${v[1]}, not $to: $out"
	new_primary "$ep" 20 $(((p % 3) + 1)) $((((p + 1) % 3) + 1))
	((np != 0)) || fail "$what: no new primary in 20 s: $(roles_line)"
	[[ $to == 0 || $np == "$to" ]] || fail "$what: node$np the primary, not node$to"
	load_stop "w$k"
	load_pairs "w$k" $((20 + k))
	wait_status "$p" "\"role\":\"replica\".*\"following\":true.*\"primary_node\":$np" \
		"$what: node$p the replica of node$np" 20
	kill -0 "${pid[$p]}" 2>/dev/null || fail "$what: node$p exited"
	ha_ready "$np"
	echo "$NAME: $what: node$p to node$np ($(load_acks "w$k") acknowledged before)"
	p=$np
}

steady
via=$((p % 3 + 1))
to=0 moved "switchover" "$via" switchover
steady
to=$((p % 3 + 1))
moved "switchover --to $to" "$p" switchover --to "$to"
steady
to=$((p % 3 + 1))
moved "failover --to $to" "$(((p + 1) % 3 + 1))" failover --to "$to"
steady

# refusals
out=$("$CTL" -s "$(sock $((p % 3 + 1)))" --json switchover --to "$p" 2>/dev/null)
rc=$?
[[ $rc == 1 && $(jget "$out" error) == BAD_TARGET ]] ||
	fail "switchover --to the primary: exit $rc, $out (not 1, BAD_TARGET)"
NO_COORD[4]=1
hconf 4 replica 3000 1 1 2
start 4 --bootstrap
wait_for 4 "listening" "node4 listening"
out=$("$CTL" -s "$(sock 4)" --json switchover 2>/dev/null)
rc=$?
[[ $rc == 1 && $(jget "$out" error) == NO_COORDINATOR ]] ||
	fail "switchover without a coordinator: exit $rc, $out (not 1, NO_COORDINATOR)"
stop 4
echo "$NAME: refused: --to the primary (BAD_TARGET), no coordinator (NO_COORDINATOR)"

load_stop "w$k"
load_pairs "w$k" $((20 + k))
# the follower went on across the moves, up to the last commit
commit=$(jnum "$(status_json "$p")" commit_lsn)
for ((t = 0; t < 100; t++)); do
	last=$(grep '"payload"' "$D/follow.out" | tail -n 1 | sed -n 's/^{"lsn":\([0-9]*\),.*/\1/p')
	[[ -n $last ]] && ((last >= commit)) && break
	sleep 0.1
done
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
[[ -n $last ]] && ((last >= commit)) ||
	fail "the follower stopped at LSN ${last:-none}, not $commit: $(tail -n 3 "$D/follow.err")"
"$CTL" -s "$(sock "$p")" --json read > "$D/all.out" 2>> "$D/follow.err" ||
	fail "replctl read through node$p failed: $(tail -n 2 "$D/follow.err")"
grep '"payload"' "$D/follow.out" > "$D/follow.rec"
grep '"payload"' "$D/all.out" | awk -v last="$last" \
	'{ l = $0; sub(/^{"lsn":/, "", l); sub(/,.*/, "", l); if (l + 0 <= last) print }' > "$D/all.rec"
cmp -s "$D/follow.rec" "$D/all.rec" ||
	fail "the follower's records differ from a read through node$p: $(diff "$D/follow.rec" "$D/all.rec" | head -n 4)"
moves=$(grep -c "following the next primary" "$D/follow.err")
((moves >= 3)) || fail "the follower moved $moves times, not 3: $(cat "$D/follow.err")"
echo "$NAME: replctl read --follow given the three nodes: $(wc -l < "$D/follow.rec") records to LSN $last across $moves moves, the same as a read through node$p"
sort_acked
check_read "$p"
stop "$p"
for n in 1 2 3; do [[ $n == "$p" ]] || stop "$n"; done
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
check_acked all "$D/acked" "$D/node$p.log"
check_clients "$D/node$p.log"
echo "$NAME: ok: three planned moves under load, all $checked acknowledged records kept ($((SECONDS - T0)) s)"
