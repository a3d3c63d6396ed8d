# SPDX-License-Identifier: BSD-3-Clause
#
# etcd_lib.sh -- etcd on loopback for a test (sourced, not run): one member
# or a cluster of several, its own ports and data directories, each member
# killed by its PID at exit.  The sourcing script sets NAME, and ETCD_PORTS
# (default 2) for the ports it takes: member i's client and peer ports are
# $PORT_BASE + 2 (i - 1) and the one after (one etcd: $PORT_BASE and
# $PORT_BASE + 1), the rest the test's own.  Without an etcd binary the test
# is skipped (exit 77).
#
# ETCD_DIR: a directory the sourcing script owns (and removes) already; then
# etcd's files go there, $D is left alone and no trap is set: the script's
# own exit trap calls etcd_cleanup.  Without it: $D, a new directory, and an
# exit trap that kills etcd and removes $D.
#
# Provides: $D (without ETCD_DIR), $ETCD_URL (after etcd_start: member 1's
# client URL), etcd_start [ETCD OPTION...] (one member; returns once
# /version answers, 10 s at most), etcd_cluster_start N [ETCD OPTION...]
# (N members, 1..9; returns once each answers and a leader is elected),
# $ETCD_URLS (the members' client URLs, an array, index 1..N), etcd_kill
# [I] (kill -9 member I, default 1), etcd_restart [I] (start it again on
# its data directory, as it was started; returns once it answers),
# etcd_alive I, etcd_leader (the member number of the leader, as the live
# members agree on it; 0 when none), etcd_wait_leader [EXCEPT] [SECONDS]
# (until a live member other than EXCEPT leads; its number in $etcd_led),
# etcd_cleanup, etcd_log_tail (etcd's last lines, for a failure).
ETCD=${ETCD:-$(command -v etcd)}
[[ -n $ETCD && -x $ETCD ]] ||
	{ echo "SKIP: $NAME: no etcd binary (Debian: apt-get install etcd-server)"; exit 77; }

. "$(dirname "${BASH_SOURCE[0]}")/test_ports.sh"
test_ports "${ETCD_PORTS:-2}" || exit 99
ETCD_BASE=$PORT_BASE

if [[ -n ${ETCD_DIR-} ]]; then
	ED=$ETCD_DIR
else
	D=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
	ED=$D
fi
declare -A etcd_pids=()
ETCD_URLS=()
ETCD_OPTS=()
ETCD_MEMBERS=0
ETCD_CLUSTER=
ETCD_URL=
etcd_cleanup() {
	local p
	for p in "${etcd_pids[@]}"; do
		kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	etcd_pids=()
	[[ -n ${ETCD_DIR-} ]] || rm -rf "$D"
}
[[ -n ${ETCD_DIR-} ]] || trap etcd_cleanup EXIT

# member i's files: etcd.log, etcd.out, data for one etcd (as before the
# clusters), etcdI.* for a cluster's member I
etcd_file() {	# I WHAT
	if ((ETCD_MEMBERS == 1)); then echo "$ED/etcd.$2"; else echo "$ED/etcd$1.$2"; fi
}

etcd_log_tail() {
	local i
	for ((i = 1; i <= ETCD_MEMBERS; i++)); do
		tail -n "${1:-30}" "$(etcd_file "$i" out)" "$(etcd_file "$i" log)" 2>/dev/null
	done
}

etcd_alive() { [[ -n ${etcd_pids[$1]-} ]] && kill -0 "${etcd_pids[$1]}" 2>/dev/null; }

# etcd_run I STATE: member I in the background ("new" or "existing")
etcd_run() {
	local i=$1 u=http://127.0.0.1 client peer data
	client=$((ETCD_BASE + 2 * (i - 1)))
	peer=$((client + 1))
	if ((ETCD_MEMBERS == 1)); then data=$ED/data; else data=$ED/etcd$i.data; fi
	"$ETCD" --name "$NAME$i" --data-dir "$data" \
		--listen-client-urls "$u:$client" --advertise-client-urls "$u:$client" \
		--listen-peer-urls "$u:$peer" --initial-advertise-peer-urls "$u:$peer" \
		--initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$2" \
		--initial-cluster-token "$NAME" \
		"${ETCD_OPTS[@]}" --logger zap --log-outputs "$(etcd_file "$i" log)" \
		>> "$(etcd_file "$i" out)" 2>&1 &
	etcd_pids[$i]=$!
}

# etcd_answers I SECONDS: until member I's /version answers
etcd_answers() {
	local i=$1 t
	for ((t = 0; t < $2 * 10; t++)); do
		curl -sf --max-time 1 "${ETCD_URLS[$i]}/version" > /dev/null && return 0
		etcd_alive "$i" ||
			{ echo "$NAME: FAIL: etcd member $i exited:"; etcd_log_tail 20; exit 1; }
		sleep 0.1
	done
	echo "$NAME: FAIL: etcd member $i did not answer /version in $2 s"
	etcd_log_tail 20
	exit 1
}

# etcd_members_set N: the names, URLs and --initial-cluster of N members
etcd_members_set() {
	local i u=http://127.0.0.1 list=()
	ETCD_MEMBERS=$1
	(($1 >= 1 && $1 <= 9 && 2 * $1 <= ${ETCD_PORTS:-2})) ||
		{ echo "$NAME: $1 etcd members need ETCD_PORTS >= $((2 * $1))"; exit 99; }
	for ((i = 1; i <= $1; i++)); do
		ETCD_URLS[i]=$u:$((ETCD_BASE + 2 * (i - 1)))
		list+=("$NAME$i=$u:$((ETCD_BASE + 2 * (i - 1) + 1))")
	done
	ETCD_CLUSTER=$(IFS=,; echo "${list[*]}")
	ETCD_URL=${ETCD_URLS[1]}
}

etcd_start() {
	ETCD_OPTS=("$@")
	etcd_members_set 1
	etcd_run 1 new
	# ready when /version answers (a few hundred ms)
	etcd_answers 1 10
}

etcd_cluster_start() {
	local n=$1 i
	shift
	ETCD_OPTS=("$@")
	etcd_members_set "$n"
	for ((i = 1; i <= n; i++)); do etcd_run "$i" new; done
	for ((i = 1; i <= n; i++)); do etcd_answers "$i" 20; done
	etcd_wait_leader 0 20 ||
		{ echo "$NAME: FAIL: no etcd leader elected in 20 s"; etcd_log_tail 20; exit 1; }
}

etcd_kill() {
	local i=${1:-1}
	[[ -n ${etcd_pids[$i]-} ]] || return 0
	kill -KILL "${etcd_pids[$i]}" 2>/dev/null
	wait "${etcd_pids[$i]}" 2>/dev/null
	unset "etcd_pids[$i]"
}

etcd_restart() {
	local i=${1:-1}
	etcd_kill "$i"
	etcd_run "$i" existing
	etcd_answers "$i" 20
}

# etcd_status I: member I's maintenance status, "MEMBER_ID LEADER_ID" (the
# grpc gateway prints uint64s as strings); nothing when it does not answer
etcd_status() {
	local out id leader
	out=$(curl -sf --max-time 1 -X POST -d '{}' \
		"${ETCD_URLS[$1]}/v3/maintenance/status" 2>/dev/null) || return 1
	id=$(grep -o '"member_id":"[0-9]*"' <<< "$out" | head -n 1 | tr -dc 0-9)
	leader=$(grep -o '"leader":"[0-9]*"' <<< "$out" | head -n 1 | tr -dc 0-9)
	[[ -n $id && -n $leader ]] && echo "$id $leader"
}

etcd_leader() {
	local i s ids=() leaders=() l=
	for ((i = 1; i <= ETCD_MEMBERS; i++)); do
		etcd_alive "$i" || continue
		s=$(etcd_status "$i") || continue
		ids[i]=${s% *}
		leaders[i]=${s#* }
	done
	# the leader all live members that answered name, and that is one of them
	for i in "${!leaders[@]}"; do
		[[ -z $l ]] && l=${leaders[i]}
		[[ ${leaders[i]} == "$l" && $l != 0 ]] || { echo 0; return; }
	done
	for i in "${!ids[@]}"; do
		[[ ${ids[i]} == "$l" ]] && { echo "$i"; return; }
	done
	echo 0
}

etcd_wait_leader() {
	local except=${1:-0} t
	for ((t = 0; t < ${2:-10} * 10; t++)); do
		etcd_led=$(etcd_leader)
		((etcd_led != 0 && etcd_led != except)) && return 0
		sleep 0.1
	done
	return 1
}
