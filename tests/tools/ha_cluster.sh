# SPDX-License-Identifier: BSD-3-Clause
#
# ha_cluster.sh -- what the automatic-failover tests share (sourced after
# cluster_lib.sh, not run): one etcd on loopback in the test's directory
# and a three-node cluster whose files name it as their coordinator.
#
# Provides: ha_etcd_start [ETCD OPTION...] ($ETCD_URL, $ETCD_PID; killed at
# exit with the rest), ha_etcd_kill, ha_conf N ROLE LEASE_MS,
# ha_start_cluster LEASE_MS, wait_lines FILE N WHAT,
# ha_wait_replica_of N PRIMARY SECONDS WHAT, ha_check_acked NODE FILE WHAT,
# ha_idle_requests SECONDS.
# ENDPOINTS (default $ETCD_URL) is what the files list.  ETCD_TLS=DIR:
# etcd serves https with DIR/etcd.{pem,key}, asks for client certificates
# signed by DIR/ca.pem, and the files give each node DIR/ca.pem and
# DIR/primary.{pem,key} (coordinator.etcd.tls).

ETCD=${ETCD:-$(command -v etcd)}
ETCD_PORT=$((BASE + 20))	# and the next one: cluster_lib's nodes use 6

ha_etcd_start() {
	local u=http://127.0.0.1 i tls=()
	ETCD_URL=$u:$ETCD_PORT
	ETCD_CURL=()
	if [[ -n ${ETCD_TLS-} ]]; then
		ETCD_URL=https://127.0.0.1:$ETCD_PORT
		tls=(--cert-file "$ETCD_TLS/etcd.pem" --key-file "$ETCD_TLS/etcd.key"
			--client-cert-auth --trusted-ca-file "$ETCD_TLS/ca.pem")
		ETCD_CURL=(--cacert "$ETCD_TLS/ca.pem" --cert "$ETCD_TLS/primary.pem"
			--key "$ETCD_TLS/primary.key")
	fi
	"$ETCD" --name "$NAME" --data-dir "$D/etcd" "${tls[@]}" \
		--listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
		--listen-peer-urls "$u:$((ETCD_PORT + 1))" \
		--initial-advertise-peer-urls "$u:$((ETCD_PORT + 1))" \
		--initial-cluster "$NAME=$u:$((ETCD_PORT + 1))" \
		--heartbeat-interval=50 --election-timeout=500 \
		"$@" --logger zap --log-outputs "$D/etcd.log" >> "$D/etcd.out" 2>&1 &
	ETCD_PID=$!
	bg+=("$ETCD_PID")
	for ((i = 0; i < 100; i++)); do
		curl -sf --max-time 1 "${ETCD_CURL[@]}" "$ETCD_URL/version" > /dev/null &&
			return 0
		kill -0 "$ETCD_PID" 2>/dev/null || fail "etcd exited: $(tail -n 5 "$D/etcd.log")"
		sleep 0.1
	done
	fail "etcd did not answer /version in 10 s"
}

ha_etcd_kill() {
	kill -9 "$ETCD_PID" 2>/dev/null
	wait "$ETCD_PID" 2>/dev/null
}

# ha_conf N ROLE LEASE_MS: cluster_lib's file, failure detection in 500 ms,
# and the coordinator
ha_conf() {
	local tls=
	[[ -n ${ETCD_TLS-} ]] && tls="tls = { ca = \"$ETCD_TLS/ca.pem\"; cert = \"$ETCD_TLS/primary.pem\"; key = \"$ETCD_TLS/primary.key\"; };"
	conf "$1" "$2"
	sed -i 's/down_ms = 1000;/down_ms = 500;/' "$D/node$1.conf"
	cat >> "$D/node$1.conf" <<-EOF
	coordinator = {
		etcd = {
			endpoints = [ "${ENDPOINTS:-$ETCD_URL}" ];
			lease_ms = $3;
			$tls
		};
	};
	EOF
}

# the top-level fields come before the coordinator's object (whose members
# have a role too): the first match is the node's own.  No python3 per
# poll: its start is what a loaded machine makes slow.
role_of() {
	jstr "$(status_json "$1")" role
}

ha_start_cluster() {
	local t
	ha_conf 1 primary "$1"
	ha_conf 2 replica "$1"
	ha_conf 3 replica "$1"
	start 2
	start 3
	wait_for 2 "listening" "listening"
	wait_for 3 "listening" "listening"
	start 1
	up 1 2
	up 1 3
	for ((t = 0; t < 100; t++)); do
		[[ $(status_json 1) == *'"holds_leader":true'* ]] && break
		sleep 0.1
	done
	[[ $(status_json 1) == *'"holds_leader":true'* ]] ||
		fail "node1 does not hold the leader key 10 s after it started"
	echo "$NAME: cluster up, node1 holds the leader key ($((SECONDS - T0)) s)"
}

# ha_idle_requests SECONDS: the cluster idle (lease 1 s, a tick of 100 ms),
# each node's coordinator sends etcd a tick's few requests and no more: the
# keys read (one range: the leader key, the members, a pending switchover;
# then the leader's lease's TTL) and the renewals due (a third of a lease
# each); at most 3 per tick, and 10 more
ha_idle_requests() {
	local n a b ms lim
	declare -A was=() at=()
	for n in 1 2 3; do
		at[$n]=${EPOCHREALTIME/./}
		was[$n]=$(jnum "$(status_json $n)" etcd_requests)
	done
	sleep "$1"
	for n in 1 2 3; do
		b=$(jnum "$(status_json $n)" etcd_requests)
		# the window between the two reads, a loaded machine's slow ones too
		ms=$(( (${EPOCHREALTIME/./} - ${at[$n]}) / 1000 ))
		lim=$((ms / 100 * 3 + 10))
		a=${was[$n]}
		[[ -n $a && -n $b ]] || fail "node$n's status has no coordinator.etcd_requests"
		echo "$NAME: idle: node$n sent etcd $((b - a)) requests in $ms ms"
		# each tick reads the keys: none counted is a counter broken
		((b - a >= ms / 500)) || fail "idle, node$n counted $((b - a)) etcd requests in $ms ms"
		((b - a <= lim)) || fail "idle, node$n sent etcd $((b - a)) requests in $ms ms (at most $lim)"
	done
}

# wait_lines FILE N WHAT: until FILE has N lines (10 s)
wait_lines() {
	local t
	for ((t = 0; t < 100; t++)); do
		[[ -e $1 && $(wc -l < "$1") -ge $2 ]] && return 0
		sleep 0.1
	done
	fail "no $3 in 10 s (have $(cat "$1" 2>/dev/null | wc -l))"
}

# ha_wait_replica_of N PRIMARY SECONDS WHAT: N a replica following PRIMARY
ha_wait_replica_of() {
	local t got s
	for ((t = 0; t < $3 * 10; t++)); do
		s=$(status_json "$1")
		got="$(jstr "$s" role) $(grep -o '"following":[a-z]*' <<< "$s" | head -n 1 | cut -d: -f2) $(jnum "$s" primary_node)"
		[[ $got == "replica true $2" ]] && return 0
		sleep 0.1
	done
	fail "$4: node$1 is not a replica following node$2 after $3 s (role, following, primary: $got)"
}

# ha_check_acked NODE FILE WHAT: every "LSN BYTES" line of FILE is a record
# the primary NODE reads back with that LSN and those bytes
ha_check_acked() {
	local out=$D/read.out missing
	"$CTL" -s "$(sock "$1")" read --from 0 --payload text > "$out" 2>> "$D/ctl.err" ||
		fail "$3: replctl read through node$1 failed: $(tail -n 2 "$D/ctl.err")"
	# the read's lines are "LSN LEN BYTES": compare "LSN BYTES"
	missing=$(awk 'NR == FNR { lsn = $1; sub(/^[^ ]+ [^ ]+ /, ""); have[lsn " " $0] = 1; next }
		!($0 in have)' "$out" "$2")
	[[ -z $missing ]] ||
		fail "$3: acknowledged records not on node$1 as acknowledged: $(head -n 3 <<< "$missing")"
}
