#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_archive_failover.sh -- the archiving node becomes the primary
# (repld.conf(5), archive.on = "any"): three nodes, node2 archiving; 2000
# records appended through node1; node1 fenced and node2 promoted; 2000
# more through node2, which now archives its own log: the archive reaches
# node2's commit point without a gap; with the target failing, node2's
# retention is held by the archive (held_by "archive") and its log keeps
# the records after the archiver's hold; the target back, it catches up;
# replctl restore --latest holds every acknowledged record, byte for byte.
# With archive.on = "replica" the same run leaves a gap or an archive that
# stops at the failover (shown by ARCHIVE_ON=replica: the test then fails).
set -u

NAME=repld_archive_failover
LOGSIZE=8M
RETENTION='retention = { mode = "auto"; keep = "1M"; };'
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/archive_lib.sh"
T0=$SECONDS
PAD=$(printf '%0600d' 0)
command -v python3 > /dev/null ||
	{ echo "SKIP: $NAME: no python3 (Debian: python3), for status's JSON"; exit 77; }

# arch N KEY...: node N's status' archive.KEY values, one per line
# (held_by: its retention's)
arch() {
	local n=$1 k p=()
	shift
	for k; do
		[[ $k == held_by ]] && p+=(retention.held_by) || p+=("archive.$k")
	done
	js "$n" "${p[@]}"
}

# caught_up P SECONDS: until node2's archive reaches primary P's commit point
caught_up() {
	local t commit v
	for ((t = 0; t < $2 * 10; t++)); do
		commit=$(jnum "$(status_json "$1")" commit_lsn)
		mapfile -t v < <(arch 2 archived_lsn gap_at)
		[[ ${v[0]-} == "$commit" && ${v[1]} == null ]] && return 0
		sleep 0.1
	done
	fail "node2's archive did not reach node$1's commit point $commit in $2 s: ${v[*]-}"
}

append_lines() {	# N FROM TO: through node N, noted in $D/acked
	seq "$2" "$3" | sed "s/^/rec /; s/\$/ $PAD/" > "$D/lines.$2"
	"$CTL" -s "$(sock "$1")" append < "$D/lines.$2" > "$D/lsn.$2" 2> "$D/append.$2.err" ||
		fail "append $2..$3 through node$1: $(cat "$D/append.$2.err")"
	paste -d' ' "$D/lsn.$2" "$D/lines.$2" >> "$D/acked"
}

: > "$D/acked"
conf 1 primary
conf 2 replica
conf 3 replica
echo "archive = { target = \"archive\"; on = \"${ARCHIVE_ON:-any}\"; segment_bytes = \"64K\"; publish_ms = 100; };" >> "$D/node2.conf"
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1
wait_status 1 '"replicas_up":2' "both replicas up"
append_lines 1 1 2000
caught_up 1 20
echo "$NAME: 2000 records archived by node2 as a replica ($((SECONDS - T0)) s)"

# node2 becomes the primary
"$CTL" -s "$(sock 1)" fence > "$D/fence.out" 2>&1 || fail "fence node1: $(cat "$D/fence.out")"
wait_status 1 '"role":"replica"' "node1 a replica after fence"
"$CTL" -s "$(sock 2)" promote > "$D/promote.out" 2>&1 || fail "promote node2: $(cat "$D/promote.out")"
wait_status 2 '"role":"primary"' "node2 the primary"
wait_status 2 '"replicas_up":2' "node2's replicas up" 20
append_lines 2 2001 4000
caught_up 2 20
[[ $(arch 2 state) == archiving ]] || fail "node2, the primary, does not archive: $(arch 2 state)"
echo "$NAME: node2 promoted, archives its own log: no gap ($((SECONDS - T0)) s)"

# the target failing while node2 is the primary: its retention holds
mv "$D/archive/seg" "$D/archive/seg.away" && : > "$D/archive/seg" ||
	fail "cannot take the archive's seg/ away"
append_lines 2 4001 8000
for ((t = 0; t < 100; t++)); do
	[[ $(arch 2 state) == failing ]] && break
	sleep 0.1
done
mapfile -t v < <(arch 2 state holding hold_lsn held_by)
[[ ${v[0]} == failing && ${v[1]} == true ]] || fail "node2 with the target failing: ${v[*]}"
first=$(jnum "$(status_json 2)" first_lsn)
((first <= v[2] + 1)) || fail "node2 released past its archiver's hold: its log from $first, held after ${v[2]}"
[[ ${v[3]} == archive ]] || fail "node2's retention is held by '${v[3]}', not archive"
# the hold keeps what is not published: records taken but not published
# are lost with a failed publish
a=$(arch 2 archived_lsn)
[[ ${v[2]} == "$a" ]] || fail "node2 holds after LSN ${v[2]}, not after the archive's end $a"
echo "$NAME: target failing: node2 holds after LSN ${v[2]}, its log from $first, held by ${v[3]} ($((SECONDS - T0)) s)"
rm "$D/archive/seg" && mv "$D/archive/seg.away" "$D/archive/seg"
caught_up 2 30

restored "$D/archive"
echo "$NAME: ok ($((SECONDS - T0)) s)"
