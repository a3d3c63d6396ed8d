#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_archive_away.sh -- the archiving replica away, and what the primary
# keeps for it (docs/replication.md, "The archive's hold"; repld.conf(5)
# retention.replica_max_hold).  Three nodes, node2 archiving, node1 the
# primary, retention keep 1M of an 8M log, replica_max_hold 4M:
#   1. node2 killed: node1 releases no further than node2's hold (rule 3);
#   2. node1 restarted while node2 is still down: a primary that has not
#      seen node2 since it started cannot know its hold, so it releases
#      nothing ("unseen_replica"; the code before released past the hold,
#      and the archive got a gap); node2 back, its archive catches up with
#      no gap and a restore holds every acknowledged record;
#   3. node2 killed again and the log past replica_max_hold: node1 releases
#      past node2's hold (appends never fail with a full log), says so
#      (replica_holds_dropped, the log), and node2, back, says the gap.
set -u

NAME=repld_archive_away
LOGSIZE=8M
RETENTION='retention = { mode = "auto"; keep = "1M"; replica_max_hold = "4M"; };'
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/archive_lib.sh"
T0=$SECONDS
PAD=$(printf '%0600d' 0)
command -v python3 > /dev/null ||
	{ echo "SKIP: $NAME: no python3 (Debian: python3), for status's JSON"; exit 77; }

# caught_up SECONDS: until node2's archive reaches node1's commit point
caught_up() {
	local t commit v
	for ((t = 0; t < $1 * 10; t++)); do
		commit=$(jnum "$(status_json 1)" commit_lsn)
		mapfile -t v < <(js 2 archive.archived_lsn archive.gap_at)
		[[ ${v[0]-} == "$commit" && ${v[1]} == null ]] && return 0
		sleep 0.1
	done
	fail "node2's archive did not reach node1's commit point $commit in $1 s: ${v[*]-}"
}

next=1
append_n() {	# COUNT: through node1, noted in $D/acked
	local to=$((next + $1 - 1))
	seq "$next" "$to" | sed "s/^/rec /; s/\$/ $PAD/" > "$D/lines.$next"
	"$CTL" -s "$(sock 1)" append < "$D/lines.$next" > "$D/lsn.$next" 2> "$D/append.$next.err" ||
		fail "append $next..$to: $(cat "$D/append.$next.err")"
	paste -d' ' "$D/lsn.$next" "$D/lines.$next" >> "$D/acked"
	next=$((to + 1))
}

# settle: node1's retention passes every 20 ms: let several go by (a
# release it should not make would be made by then)
settle() { sleep 0.5; }

: > "$D/acked"
conf 1 primary
conf 2 replica
conf 3 replica
echo 'archive = { target = "archive"; segment_bytes = "64K"; publish_ms = 100; };' >> "$D/node2.conf"
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1
wait_status 1 '"replicas_up":2' "both replicas up"
append_n 2000
caught_up 20
echo "$NAME: 2000 records archived ($((SECONDS - T0)) s)"

# 1. node2 down: its last hold keeps node1's log
a=$(js 2 archive.archived_lsn)
kill -9 "${pid[2]}"; wait "${pid[2]}" 2>/dev/null; unset "pid[2]"
wait_status 1 '"replicas_up":1' "node2 down"
append_n 1500
settle
mapfile -t v < <(js 1 first_lsn retention.held_by retention.used_percent retention.held_by_replica)
((v[0] <= a + 1)) || fail "node1 released past the hold of node2, which is down: its log from ${v[0]}, node2 archived up to $a"
[[ ${v[1]} == replica && ${v[3]} == "127.0.0.1:$(cport 2) (its readers hold from LSN "* ]] ||
	fail "node1's retention is held by '${v[1]}' of '${v[3]}', not node2's readers"
echo "$NAME: node2 down, archived up to $a: node1's log from ${v[0]}, held by ${v[1]}: ${v[3]}, ${v[2]}% used ($((SECONDS - T0)) s)"

# 2. node1 restarted: it has not seen node2, whose hold it cannot know
stop 1
start 1
wait_status 1 '"role":"primary"' "node1 the primary again"
wait_status 1 '"replicas_up":1' "node3 back with node1"
append_n 2000
settle
mapfile -t v < <(js 1 first_lsn retention.held_by retention.unseen_replicas)
((v[0] <= a + 1)) || fail "node1, restarted, released past the hold of node2, which it has not seen: its log from ${v[0]}, node2 archived up to $a (held by ${v[1]})"
[[ ${v[1]} == unseen_replica && ${v[2]} == 1 ]] ||
	fail "node1's retention: held by '${v[1]}', unseen_replicas ${v[2]} (want unseen_replica, 1); its log from ${v[0]}"
"$CTL" -s "$(sock 1)" status > "$D/status.txt" 2>&1
grep -q "1 replicas not seen yet" "$D/status.txt" ||
	fail "replctl status does not say a replica is not seen yet: $(grep retention "$D/status.txt")"
echo "$NAME: node1 restarted: its log from ${v[0]}, held by ${v[1]} ($((SECONDS - T0)) s)"
start 2
wait_status 1 '"replicas_up":2' "node2 back"
caught_up 30
wait_status 1 '"unseen_replicas":0' "node2 seen"
restored "$D/archive"
echo "$NAME: node2 back: no gap; $(tail -n 1 "$D/restore.out") ($((SECONDS - T0)) s)"

# 3. node2 away for longer than replica_max_hold keeps
kill -9 "${pid[2]}"; wait "${pid[2]}" 2>/dev/null; unset "pid[2]"
wait_status 1 '"replicas_up":1' "node2 down again"
for ((i = 0; i < 8; i++)); do append_n 1000; done
settle
mapfile -t v < <(js 1 first_lsn retention.replica_holds_dropped log_full)
[[ ${v[1]} -ge 1 && ${v[2]} == false ]] ||
	fail "node1 past replica_max_hold: replica_holds_dropped ${v[1]}, log_full ${v[2]}"
grep -q "more than retention.replica_max_hold (4194304), and replica 127.0.0.1:$(cport 2) is down" "$D/node1.err" ||
	fail "node1's log does not name node2 past replica_max_hold"
echo "$NAME: node2 away past replica_max_hold: node1's log from ${v[0]}, ${v[1]} holds dropped, not full ($((SECONDS - T0)) s)"
start 2
wait_status 1 '"replicas_up":2' "node2 back again"
for ((t = 0; t < 300; t++)); do
	g=$(js 2 archive.gap_at)
	[[ $g != null ]] && break
	sleep 0.1
done
[[ $g != null ]] || fail "node2's archiver does not say the gap"
echo "$NAME: node2 back: its archiver says the gap at LSN $g ($((SECONDS - T0)) s)"
for n in 1 2 3; do stop "$n"; clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
