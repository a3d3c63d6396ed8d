#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_archive.sh -- one archiver at a time, chosen through etcd
# (repld.conf(5), archive; ha/coord_archiver.c): three nodes with a
# coordinator (lease 1 s), node2 and node3 both with an archive group on
# one target.  Exactly one of them holds the log-archiver key and
# archives; the other says "standby".  The archiving node is killed with
# SIGKILL while records are appended: the other takes the key once the
# dead one's lease ends and goes on from where the archive ends -- no gap,
# and every acknowledged record restored byte for byte.  The killed node
# back (on standby, holding nothing), the archiving node is made the
# primary by a switchover: with archive.on = "replica" it gives the key
# up, holding its log until the node on standby, its whole-log hold
# heard, has taken the archive over -- again no gap.  Without etcd or
# python3 it is skipped (77).
set -u

NAME=repld_ha_archive
RETENTION='retention = { mode = "auto"; keep = "1M"; };'
LOGSIZE=${LOGSIZE:-8M}
. "$(dirname "$0")/ha_lib.sh"
. "$(dirname "$0")/archive_lib.sh"
T0=$SECONDS
PAD=$(printf '%0300d' 0)

# arch N KEY...: node N's status' archive.KEY values, one per line
arch() {
	local n=$1
	shift
	cj "$n" $(printf 'archive.%s ' "$@")
}

append_lines() {	# N FROM TO: through node N, noted in $D/acked
	seq "$2" "$3" | sed "s/^/rec /; s/\$/ $PAD/" > "$D/lines.$2"
	"$CTL" -s "$(sock "$1")" append < "$D/lines.$2" > "$D/lsn.$2" 2> "$D/append.$2.err" ||
		fail "append $2..$3 through node$1: $(cat "$D/append.$2.err")"
	paste -d' ' "$D/lsn.$2" "$D/lines.$2" >> "$D/acked"
}

# archiver_of: the node (2 or 3) that archives; the other must be on standby
archiver_of() {
	local t s2 s3
	for ((t = 0; t < 100; t++)); do
		s2=$(arch 2 state) s3=$(arch 3 state)
		[[ $s2 == archiving && $s3 == standby ]] && { echo 2; return; }
		[[ $s3 == archiving && $s2 == standby ]] && { echo 3; return; }
		sleep 0.1
	done
	fail "not one archiver and one standby: node2 '$s2', node3 '$s3'"
}

caught_up() {	# N SECONDS [P]: until node N's archive reaches primary P's commit point
	local t commit v
	for ((t = 0; t < $2 * 10; t++)); do
		commit=$(jnum "$(status_json "${3:-1}")" commit_lsn)
		mapfile -t v < <(arch "$1" archived_lsn gap_at)
		[[ ${v[0]-} == "$commit" && ${v[1]} == null ]] && return 0
		sleep 0.1
	done
	fail "node$1's archive did not reach the commit point $commit in $2 s: ${v[*]-}"
}

: > "$D/acked"
etcd_start "${ETCD_FLAGS[@]}"
hconf 1 primary
hconf 2 replica
hconf 3 replica
for n in 2 3; do
	echo 'archive = { target = "archive"; segment_bytes = "64K"; publish_ms = 100; };' >> "$D/node$n.conf"
done
mkdir -p "$D/archive"
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1
wait_status 1 '"replicas_up":2' "both replicas up" 20
ha_ready 1
append_lines 1 1 2000
a=$(archiver_of)
b=$((5 - a))
caught_up "$a" 20
# a standby holds nothing while another node has the key
for ((t = 0; t < 50; t++)); do
	[[ $(arch "$b" holding) == false ]] && break
	sleep 0.1
done
[[ $(arch "$b" holding) == false ]] || fail "node$b, on standby while node$a archives, holds the log"
echo "$NAME: node$a archives, node$b on standby, holding nothing ($((SECONDS - T0)) s)"

# the archiver killed during appends: the other takes over, no gap
append_lines 1 2001 4000 &
appender=$!
sleep 0.3
kill -9 "${pid[$a]}"; wait "${pid[$a]}" 2>/dev/null; unset "pid[$a]"
wait "$appender" || fail "appends while node$a was killed"
for ((t = 0; t < 100; t++)); do
	[[ $(arch "$b" state) == archiving ]] && break
	sleep 0.1
done
[[ $(arch "$b" state) == archiving ]] || fail "node$b did not take over the archive: $(arch "$b" state last_error)"
append_lines 1 4001 5000
caught_up "$b" 30
echo "$NAME: node$a killed, node$b archives on: no gap ($((SECONDS - T0)) s)"

# the archiving node promoted: node$a, back, takes the archive over
start "$a"
wait_status 1 '"replicas_up":2' "node$a back" 20
for ((t = 0; t < 100; t++)); do
	[[ $(arch "$a" state) == standby && $(arch "$a" holding) == false ]] && break
	sleep 0.1
done
[[ $(arch "$a" state) == standby ]] || fail "node$a, back, is not on standby: $(arch "$a" state)"
"$CTL" -s "$(sock 1)" switchover --to "$b" --wait 30 > "$D/sw.out" 2>&1 ||
	fail "switchover to node$b: exit $?: $(cat "$D/sw.out")"
wait_status "$b" '"replicas_up":2' "node$b's replicas up" 20
append_lines "$b" 5001 12000
for ((t = 0; t < 200; t++)); do
	[[ $(arch "$a" state) == archiving ]] && break
	sleep 0.1
done
[[ $(arch "$a" state) == archiving ]] ||
	fail "node$a did not take the archive over from node$b, promoted: $(arch "$a" state last_error)"
caught_up "$a" 30 "$b"
echo "$NAME: node$b promoted, node$a archives on: no gap ($((SECONDS - T0)) s)"

restored "$D/archive"
echo "$NAME: ok ($((SECONDS - T0)) s)"
