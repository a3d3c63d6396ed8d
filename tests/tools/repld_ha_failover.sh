#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_failover.sh -- automatic failover on etcd, HA_ROUNDS times (20 by
# default): three repld nodes with a coordinator (lease 1 s) beside one
# etcd on loopback.  First, idle for 2 s, no node's coordinator sends etcd
# more than a few requests per tick (coordinator.etcd_requests).  Each round:
#
#   1. appends go through the primary (one replctl append fed a line per
#      record, each line "round R record I", written to a file before it is
#      sent), the acknowledged LSNs noted;
#   2. the primary is killed (SIGKILL); tests/tools/first_ack, started at
#      once, appends through the survivors until one acknowledges: the
#      failover time, from the kill to the first acknowledgement by the
#      new primary;
#   3. every acknowledged record, of this round and all before, is read
#      back through the new primary (replctl read): the same LSN, the same
#      bytes;
#   4. the killed node is restarted (no --bootstrap) and must rejoin as a
#      replica following the new primary before the next round.
#
# Then the failover times' table (p50, p99, max) is printed, and the test
# fails when p99 is above FAILOVER_P99_MS (2000), when any acknowledged
# record is missing or different, or on a sanitizer report.
# Without an etcd binary it is skipped (77).
NAME=repld_ha_failover
ETCD=${ETCD:-$(command -v etcd)}
[[ -n $ETCD && -x $ETCD ]] ||
	{ echo "SKIP: $NAME: no etcd binary (Debian: apt-get install etcd-server)"; exit 77; }
ROUNDS=${HA_ROUNDS:-20}
P99_MS=${FAILOVER_P99_MS:-2000}
LOGSIZE=${LOGSIZE:-16M}
FIRST_ACK=${FIRST_ACK:-./tests/tools/first_ack}
[[ -x $FIRST_ACK ]] || { echo "$NAME: $FIRST_ACK not built"; exit 99; }
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/ha_cluster.sh"
T0=$SECONDS

ha_etcd_start
ha_start_cluster 1000
ha_idle_requests 2

primary=1
: > "$D/acked"
times=()
for ((r = 1; r <= ROUNDS; r++)); do
	# 1. appends through the primary, until it dies.  gen writes each line
	# to lines.R before it hands it to replctl, so lines.R holds every line
	# replctl has read; it ends at its first write after replctl has gone.
	gen() {
		local i=0 line
		while :; do
			line="round $r record $((++i))"
			echo "$line" >&3
			echo "$line" 2>/dev/null || return 0
			sleep 0.002
		done
	}
	gen 3> "$D/lines.$r" | "$CTL" -s "$(sock $primary)" --timeout 10 \
		append --client-id "$r" > "$D/lsn.$r" 2> "$D/append.$r.err" &
	app=$!
	bg+=($app)
	wait_lines "$D/lsn.$r" 20 "round $r: 20 acknowledgements from node$primary"

	# 2. the kill, and the first acknowledgement after it
	kill -9 "${pid[$primary]}"
	others=($(for n in 1 2 3; do [[ $n == "$primary" ]] || echo $n; done))
	out=$("$FIRST_ACK" 15000 $((1000 + r)) $(for n in "${others[@]}"; do sock $n; done)) ||
		fail "round $r: no node acknowledged within 15 s of the kill"
	read -r idx ms _ <<< "$out"
	times+=("$ms")
	wait "${pid[$primary]}" 2>/dev/null
	unset "pid[$primary]"
	old=$primary
	# the node that acknowledged, and it says so
	primary=${others[idx - 1]}
	[[ $(role_of "$primary") == primary ]] ||
		fail "round $r: node$primary acknowledged but its status says $(role_of "$primary")"
	kill "$app" 2>/dev/null
	wait "$app" 2>/dev/null
	# line i of the input was acknowledged as the i-th LSN printed
	n=$(wc -l < "$D/lsn.$r")
	paste -d' ' "$D/lsn.$r" <(head -n "$n" "$D/lines.$r") >> "$D/acked"
	echo "$NAME: round $r: node$old killed after $n acknowledgements; node$primary" \
		"acknowledged $ms ms later (at $((SECONDS - T0)) s)"

	# 3. every acknowledged record, through the new primary
	ha_check_acked "$primary" "$D/acked" "round $r"

	# 4. the old primary back, as a replica of the new one
	start "$old"
	ha_wait_replica_of "$old" "$primary" 30 "round $r"
	[[ -n ${VERBOSE:-} ]] && echo "$NAME: round $r: node$old rejoined (at $((SECONDS - T0)) s)"
	clean_stderr "$D/node$old.err" "node$old"
done

for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
read -r p50 p99 max < <(printf '%s\n' "${times[@]}" | sort -n | awk '
	{ v[NR] = $1 }
	END {
		i50 = int((NR * 50 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
		print v[i50], v[i99], v[NR]
	}')
echo "$NAME: failover time, kill -9 of the primary to the first acknowledgement" \
	"by the new one, lease 1 s, $ROUNDS rounds:"
printf '%s:   %8s %8s %8s %8s\n' "$NAME" rounds p50_ms p99_ms max_ms
printf '%s:   %8s %8s %8s %8s\n' "$NAME" "$ROUNDS" "$p50" "$p99" "$max"
echo "$NAME: $(wc -l < "$D/acked") acknowledged records, all on the last primary"
[[ $p99 -le $P99_MS ]] || fail "failover p99 $p99 ms is above $P99_MS ms"
echo "$NAME: ok ($((SECONDS - T0)) s)"
