#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# verbs_repld.sh -- repld and replctl over verbs: a primary and a replica
# in one machine on its RDMA device (Soft-RoCE in the rig), the replica's
# log on PMem (the pmem backend on the rig's device-dax: fsdax cannot be
# registered without ODP), the primary's memory + a file; once per flush
# method, the second run restarting both on the logs of the first:
#   gpspm  the replica's CPU persists each flushed range;
#   apm    an RDMA read after the writes (the replica declares direct
#          writes to PMem; the pmem backend is what makes that true).
# Each run: the replica and then the primary start from their files;
# replctl status shows the replica streaming over verbs with that flush
# method and the pmem backend; 2000 records are appended through the admin
# socket (bench) and 20 more from a script (append); verify finds both
# copies equal (over both runs' records in the second); the replica says
# it holds the last acknowledged record durably; SIGTERM stops both with
# exit 0.
#
# Needs an RDMA device and the rig's environment (RPMA_TESTING_IP, the
# address on the device; vm-devdax, which gives /dev/dax0.0): elsewhere it
# exits 77 with the reason.  In the rig it finds repld and replctl in /files, else
# in the build tree (./tools/...).
set -u

NAME=verbs_repld
if [[ -x /files/repld ]]; then
	REPLD=/files/repld REPLCTL=/files/replctl
else
	REPLD=./tools/repld/repld REPLCTL=./tools/replctl/replctl
fi
IP=${RPMA_TESTING_IP:-}
if [[ -z $IP ]] || ! ls /sys/class/infiniband/ 2>/dev/null | grep -q .; then
	echo "$NAME: SKIP: no RDMA device here (RPMA_TESTING_IP unset or no" \
		"/sys/class/infiniband entry): runs in the rig, make check-rdma"
	exit 77
fi
if ! DAX=$(vm-devdax 2>/dev/null) || [[ ! -c $DAX ]]; then
	echo "$NAME: SKIP: no device-dax (vm-devdax, the rig's tool, gave none)"
	exit 77
fi
for p in "$REPLD" "$REPLCTL"; do
	[[ -x $p ]] || { echo "$NAME: $p not built"; exit 99; }
done

D=$(mktemp -d /tmp/$NAME.XXXXXX) || exit 99
declare -A pid=()
cleanup() {
	for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT
fail() {
	echo "$NAME: FAIL: $*"
	for f in "$D"/*.err; do
		[[ -s $f ]] || continue
		echo "--- $f (last 20 lines)"
		tail -n 20 "$f"
	done
	exit 1
}

UUID=$(cat /proc/sys/kernel/random/uuid)
ctl() { "$REPLCTL" -s "$D/node$1.sock" "${@:2}"; }

# conf N ROLE PEER_PORT FLUSH LOG-GROUP
conf() {
	cat > "$D/node$1.conf" <<-EOF
	node_id = $1;
	role = "$2";
	cluster_uuid = "$UUID";
	listen = { address = "$IP"; control_port = $((7500 + 10 * $1)); data_port = $((7501 + 10 * $1)); };
	transport = "verbs";
	flush_method = "$4";
	log = $5;
	peers = ( { address = "$IP"; control_port = $3; } );
	quorum = 1;
	timeouts = { heartbeat_ms = 100; down_ms = 2000; promote_wait_ms = 10000; };
	admin_socket = "$D/node$1.sock";
	log_level = "notice";
	EOF
}
start() {	# N [OPTION...]
	local n=$1
	shift
	"$REPLD" -c "$D/node$n.conf" "$@" 2>> "$D/node$n.err" &
	pid[$n]=$!
}
wait_for() {	# N PATTERN WHAT
	local t
	for ((t = 0; t < 300; t++)); do
		grep -q -- "$2" "$D/node$1.err" 2>/dev/null && return 0
		kill -0 "${pid[$1]}" 2>/dev/null || fail "node$1 exited before $3"
		sleep 0.1
	done
	fail "node$1: no $3 in 30 s"
}
stop() {
	local t
	kill -TERM "${pid[$1]}"
	for ((t = 0; t < 150; t++)); do
		kill -0 "${pid[$1]}" 2>/dev/null || break
		sleep 0.1
	done
	wait "${pid[$1]}"
	rc=$?
	unset "pid[$1]"
	[[ $rc -eq 0 ]] || fail "node$1 exited $rc after SIGTERM"
}

run=0
for flush in gpspm apm; do
	run=$((run + 1))
	conf 1 primary 7520 "$flush" \
		"{ backend = \"file\"; path = \"$D/node1.log\"; size = \"16M\"; }"
	conf 2 replica 7510 "$flush" \
		"{ backend = \"pmem\"; path = \"$DAX\"; size = \"16M\"; }"
	# the first run is the cluster's first start (the device held other
	# tests' bytes: the replica makes it anew); the second reopens both
	boot=() init=()
	(( run == 1 )) && boot=(--bootstrap) init=(--reinit)
	start 2 "${init[@]}"
	wait_for 2 listening "listening"
	start 1 "${boot[@]}"
	wait_for 1 "is the primary of epoch" "promotion"
	st=
	for ((t = 0; t < 100; t++)); do
		st=$(ctl 1 --json status 2>/dev/null)
		[[ $st == *'"state":"streaming"'* ]] && break
		sleep 0.1
	done
	[[ $st == *'"state":"streaming"'* ]] || fail "$flush: the replica does not stream: $st"
	for want in '"transport":"verbs"' "\"flush_method\":\"$flush\"" '"backend":"pmem"'; do
		# the replica's entry (after "replicas") must say it
		[[ ${st#*\"replicas\"} == *"$want"* ]] ||
			fail "$flush: the replica's status lacks $want: $st"
	done
	ctl 1 bench --records 2000 --size 256 --depth 16 > "$D/bench.out" ||
		fail "$flush: bench: $(cat "$D/bench.out")"
	grep -q "records/s" "$D/bench.out" || fail "$flush: bench said: $(cat "$D/bench.out")"
	seq 1 20 | sed "s/^/$flush-/" | ctl 1 append > "$D/acked" ||
		fail "$flush: append exited $?"
	[[ $(wc -l < "$D/acked") -eq 20 ]] || fail "$flush: $(wc -l < "$D/acked") of 20 acknowledged"
	ctl 1 verify > "$D/verify.out" || fail "$flush: verify: $(cat "$D/verify.out")"
	grep -q "0 mismatched, ok" "$D/verify.out" || fail "$flush: verify said: $(cat "$D/verify.out")"
	# the replica's own account (device-dax is not readable offline)
	last=$(tail -n 1 "$D/acked")
	rs=$(ctl 2 --json status)
	durable=$(grep -o '"durable_lsn":[0-9]*' <<< "$rs" | cut -d: -f2)
	(( durable >= last )) || fail "$flush: the replica's durable LSN $durable < $last: $rs"
	(( run == 1 )) || grep -q '"first_lsn":1,' <<< "$rs" ||
		fail "$flush: the first run's records are gone after the restart: $rs"
	stop 1
	stop 2
	echo "$NAME: $flush: streaming over verbs to a pmem replica," \
		"$(sed -n 's/.*in [0-9.]* s: \([0-9]*\) records\/s.*/\1/p' "$D/bench.out")" \
		"records/s; verify: $(grep -c '0 mismatched, ok' "$D/verify.out") of 1 replica equal" \
		"over LSN $(sed -n 's/^verified LSN \([0-9.]*\) .*/\1/p' "$D/verify.out"); replica durable to $durable"
	for n in 1 2; do
		if grep -q "Sanitizer\|runtime error" "$D/node$n.err"; then
			fail "$flush: node$n reported a sanitizer error"
		fi
	done
	: > "$D/node1.err"
	: > "$D/node2.err"
done
echo "$NAME: ok"
