# SPDX-License-Identifier: BSD-3-Clause
#
# ha_lib.sh -- what the tests of repld's automatic failover on etcd share
# (sourced, not run): cluster_lib.sh's three loopback nodes, each with a
# coordinator block (repld.conf: coordinator.etcd), etcd from
# tests/lib/etcd_lib.sh in the same directory, tcp_proxy relays to cut a
# node from etcd or from its peers, background appenders whose every
# acknowledged record is checked on the primary afterwards.
#
# The sourcing script sets NAME first; ETCD_PORTS (default 2) as for
# etcd_lib.sh.  Environment: REPLD, REPLCTL, TCP_PROXY (the build tree's by
# default), LEASE_MS (the coordinator's lease_ms, default 1000), DOWN_MS
# (timeouts.down_ms, default 500), HEARTBEAT_MS (default 100),
# ETCD_TIMEOUT_MS (coordinator.etcd.timeout_ms, default 300: a silent etcd
# is noticed well within a lease).  Without python3 (the JSON of status)
# or an etcd binary the test is skipped (exit 77).
#
# One directory ($D, cluster_lib's, in /dev/shm) holds the nodes' and
# etcd's files (ETCD_DIR), and one exit trap kills, each by its PID, the
# background helpers, the proxies, etcd's members and the nodes, then
# removes it.
#
# Provides, beside cluster_lib's and etcd_lib's: hconf N ROLE [PROMOTE_WAIT
# [QUORUM [PEER...]]] (conf, then the timeouts and the coordinator block),
# ENDPOINTS[N] (node N's etcd endpoints, a quoted comma list; default every
# member's URL), VIEW[M] (the port every node's file names node M's control
# port at: a proxy's; a node that bootstraps the cluster cannot be
# behind one, as its membership names it at its listen address), ADDR[N] (the loopback address node N listens
# on, and its control connections leave from; 127.0.0.1 by default),
# CANDIDATE[N], NO_COORD[N] (1: no coordinator block),
# ha_start_nodes, ha_start_cluster, ha_ready P, jget JSON PATH..., cj N PATH..., sj N PATH..., ms_now,
# proxy_start NAME LISTEN TARGET [ONLY_FROM], proxy_mode NAME pass|blackhole|refuse,
# load_start TAG N CLIENT_ID, load_stop TAG, load_acks TAG, load_pairs TAG
# CLIENT_ID (appends its acknowledged records to $D/acked), check_read N,
# check_clients LOG..., primary_of N, new_primary EP SECONDS N..., roles_line.
command -v python3 > /dev/null ||
	{ echo "SKIP: $NAME: no python3 (Debian: python3), for status's JSON"; exit 77; }
. "$(dirname "${BASH_SOURCE[0]}")/cluster_lib.sh"
ETCD_DIR=$D
. "$(dirname "${BASH_SOURCE[0]}")/../lib/etcd_lib.sh"
PROXY=${TCP_PROXY:-./tests/tools/tcp_proxy}

LEASE_MS=${LEASE_MS:-1000}
DOWN_MS=${DOWN_MS:-500}
HEARTBEAT_MS=${HEARTBEAT_MS:-100}
ETCD_TIMEOUT_MS=${ETCD_TIMEOUT_MS:-300}
# etcd grants a lease no shorter than 1.5 election timeouts: 500 ms lets a
# TTL of 1 s be granted as asked
ETCD_FLAGS=(--heartbeat-interval=50 --election-timeout=500)

declare -A proxies=() ENDPOINTS=() VIEW=() ADDR=() CANDIDATE=() NO_COORD=()
ha_cleanup() {
	local p
	: > "$D/stop.gen"
	for p in "${proxies[@]}"; do kill -9 "$p" 2>/dev/null; done
	etcd_cleanup
	cleanup
}
trap ha_cleanup EXIT

# the proxies' ports: past cluster_lib's nodes (2 ports each, 4 at most)
PROXY_BASE=$((BASE + 16))

ms_now() { echo $((${EPOCHREALTIME/./} / 1000)); }

# hconf N ROLE [...]: conf N ROLE ...; then down_ms and heartbeat_ms, the
# peers' ports as VIEW says, and (unless NO_COORD[N]) the coordinator
hconf() {
	local n=$1 m eps f
	conf "$@"
	f=$D/node$n.conf
	sed -i -e "s/^\([[:space:]]*\)down_ms = [0-9]*;/\1down_ms = $DOWN_MS;/" \
		-e "s/^\([[:space:]]*\)heartbeat_ms = [0-9]*;/\1heartbeat_ms = $HEARTBEAT_MS;/" "$f"
	[[ -n ${ADDR[$n]-} ]] &&
		sed -i "s/^\([[:space:]]*\)address = \"127.0.0.1\";\$/\1address = \"${ADDR[$n]}\";/" "$f"
	for m in 1 2 3 4; do
		[[ $m == "$n" ]] && continue
		if [[ -n ${VIEW[$m]-} ]]; then
			sed -i "/^[[:space:]]*peers = /s/control_port = $(cport "$m"); }/control_port = ${VIEW[$m]}; }/" "$f"
		elif [[ -n ${ADDR[$m]-} ]]; then
			sed -i "/^[[:space:]]*peers = /s/address = \"127.0.0.1\"; control_port = $(cport "$m"); }/address = \"${ADDR[$m]}\"; control_port = $(cport "$m"); }/" "$f"
		fi
	done
	[[ ${NO_COORD[$n]-0} == 1 ]] && return 0
	if [[ -n ${ENDPOINTS[$n]-} ]]; then
		eps=${ENDPOINTS[$n]}
	else
		eps=$(printf '"%s", ' "${ETCD_URLS[@]:1}")
		eps=${eps%, }
	fi
	cat >> "$f" <<-EOF
	coordinator = {
		etcd = {
			endpoints = [ $eps ];
			prefix = "/rpma-repl-test/";
			lease_ms = $LEASE_MS;
			timeout_ms = $ETCD_TIMEOUT_MS;
		};
		candidate = ${CANDIDATE[$n]-true};
	};
	EOF
}

# jget JSON PATH...: one line per PATH (a.b[2].c): a string as it is, a
# number, true/false, null, an object or array as compact JSON; "" where
# the path leads nowhere (or the JSON does not parse)
jget() {
	python3 - "$@" <<-'PY'
	import json, re, sys
	GONE = object()
	try:
	    doc = json.loads(sys.argv[1])
	except ValueError:
	    doc = GONE
	for path in sys.argv[2:]:
	    v = doc
	    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
	        if part.startswith("["):
	            i = int(part[1:-1])
	            v = v[i] if isinstance(v, list) and i < len(v) else GONE
	        else:
	            v = v.get(part, GONE) if isinstance(v, dict) else GONE
	    if v is GONE:
	        print("")
	    elif isinstance(v, bool):
	        print("true" if v else "false")
	    elif v is None:
	        print("null")
	    elif isinstance(v, (dict, list)):
	        print(json.dumps(v, separators=(",", ":")))
	    else:
	        print(v)
	PY
}

# cj N PATH...: jget of node N's status now (its status in $st)
cj() {
	local n=$1
	shift
	st=$(status_json "$n")
	jget "$st" "$@"
}

# sj N PATH...: node N's status in $st, and the PATHs' values in the
# array v (one element per PATH, "" where it leads nowhere)
sj() {
	local n=$1
	shift
	st=$(status_json "$n")
	mapfile -t v < <(jget "$st" "$@")
}

# primary_of N: the node id node N's status says is the primary: itself
# if it is one, the primary it follows if a replica that follows one, else 0
primary_of() {
	local r
	r=($(cj "$1" role node_id following primary_node))
	if [[ ${r[0]-} == primary ]]; then echo "${r[1]}"
	elif [[ ${r[2]-} == true ]]; then echo "${r[3]}"
	else echo 0; fi
}

# new_primary EP SECONDS N...: until one of nodes N... is the primary of an
# epoch newer than EP; its number in $np (0 after SECONDS without), in ms
# since the call in $np_ms.  Its status is read with grep, not python: the
# poll runs while the machine is busiest.
new_primary() {
	local ep=$1 lim=$(($2 * 1000)) t0 n s
	shift 2
	t0=$(ms_now)
	np=0
	while ((np == 0 && $(ms_now) - t0 < lim)); do
		for n in "$@"; do
			s=$(status_json "$n")
			[[ $(jstr "$s" role) == primary && $(jnum "$s" epoch) -gt $ep ]] &&
				{ np=$n; break; }
		done
		((np)) || sleep 0.1
	done
	np_ms=$(($(ms_now) - t0))
}

# roles_line: each node's role, epoch and coordinator's view, for a failure
roles_line() {
	local n out=
	for n in 1 2 3; do
		[[ -n ${pid[$n]-} ]] || { out+="node$n: not running; "; continue; }
		out+="node$n: $(cj "$n" role epoch following primary_node \
			coordinator.failover coordinator.holds_leader \
			coordinator.leader.node_id coordinator.campaigns | tr '\n' ' '); "
	done
	echo "$out"
}

# ha_ready P [SECONDS]: node P is the primary, holds the leader key with
# failover armed and sees the three members; every other running node
# follows it and reads P as the leader
ha_ready() {
	local p=$1 lim=$((${2:-20} * 10)) t n ok v
	for ((t = 0; t < lim; t++)); do
		ok=1
		st=$(status_json "$p")
		mapfile -t v < <(jget "$st" role coordinator.holds_leader coordinator.failover \
			'coordinator.members[2].node_id')
		[[ ${#v[@]} == 4 && -n ${v[3]} && "${v[*]:0:3}" == "primary true armed" ]] || ok=0
		for n in 1 2 3; do
			((ok)) || break
			[[ $n == "$p" || -z ${pid[$n]-} ]] && continue
			v=($(cj "$n" role following primary_node coordinator.leader.node_id coordinator.failover))
			[[ "${v[*]-}" == "replica true $p $p armed" ]] || ok=0
		done
		((ok)) && return 0
		sleep 0.1
	done
	fail "node$p not the armed primary that all follow in $((lim / 10)) s: $(roles_line)"
}

# ha_start_nodes: node1 the primary of node2 and node3 (files by hconf),
# the replicas first; returns once node1 streams to both
ha_start_nodes() {
	hconf 1 primary
	hconf 2 replica
	hconf 3 replica
	start 2
	start 3
	wait_for 2 "listening" "listening"
	wait_for 3 "listening" "listening"
	start 1
	wait_status 1 '"replicas_up":2' "both replicas up" 20
}

# ha_start_cluster: etcd up already; ha_start_nodes, then until ha_ready 1
ha_start_cluster() {
	ha_start_nodes
	ha_ready 1
	echo "$NAME: cluster up, node1 the leader ($((SECONDS - T0)) s)"
}

# proxy_start NAME LISTEN [ADDR:]TARGET [ONLY_FROM]: a tcp_proxy, in pass
# mode; with ONLY_FROM, its modes cut only the connections from there
proxy_start() {
	local i only=()
	[[ -x $PROXY ]] || { echo "$NAME: $PROXY not built"; exit 99; }
	[[ -n ${4-} ]] && only=(--only-from "$4")
	"$PROXY" "${only[@]}" "$2" "$3" "$D/proxy.$1.pid" > "$D/proxy.$1.out" 2>&1 &
	proxies[$1]=$!
	for ((i = 0; i < 50; i++)); do
		grep -q "mode pass" "$D/proxy.$1.out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "proxy $1 ($2 to $3) did not start: $(cat "$D/proxy.$1.out")"
}

# proxy_mode NAME pass|blackhole|refuse: switch, and wait for its line
proxy_mode() {
	local sig c i
	case $2 in pass) sig=USR2 ;; blackhole) sig=USR1 ;; refuse) sig=HUP ;; esac
	c=$(grep -c "mode $2" "$D/proxy.$1.out")
	kill -"$sig" "${proxies[$1]}"
	for ((i = 0; i < 50; i++)); do
		(($(grep -c "mode $2" "$D/proxy.$1.out") > c)) && return 0
		sleep 0.05
	done
	fail "proxy $1 did not switch to $2"
}

# gen TAG: TAG-1, TAG-2, ... about 2500 lines a second, until $D/stop.gen
# or $D/stop.TAG
gen() {
	local i=0 j
	while [[ ! -e $D/stop.gen && ! -e $D/stop.$1 ]]; do
		for ((j = 0; j < 25; j++)); do
			echo "$1-$((++i))"
		done
		sleep 0.01
	done
}

# load_start TAG N CLIENT_ID: `replctl --json append` of TAG-k lines through
# node N with that client id, in the background: the k-th reply is
# TAG-k's; $D/load.TAG.{out,err,rc}
load_start() {
	rm -f "$D/stop.$1" "$D/load.$1.rc"
	( gen "$1" | "$CTL" -s "$(sock "$2")" --json append --client-id "$3" \
		> "$D/load.$1.out" 2> "$D/load.$1.err"
	  echo $? > "$D/load.$1.rc" ) &
	bg+=($!)
}

# load_acks TAG: how many it has had acknowledged so far (0 before its
# first reply)
load_acks() {
	local c
	c=$(grep -c '"ok":true' "$D/load.$1.out" 2>/dev/null)
	echo "${c:-0}"
}

# load_stop TAG: no more lines; the appender must end within 20 s (its
# last records acknowledged, or refused); its exit code in $lrc
load_stop() {
	local t
	: > "$D/stop.$1"
	for ((t = 0; t < 200; t++)); do
		[[ -e $D/load.$1.rc ]] && break
		sleep 0.1
	done
	[[ -e $D/load.$1.rc ]] || fail "appender $1 still running 20 s after its last line"
	lrc=$(cat "$D/load.$1.rc")
	clean_stderr "$D/load.$1.err" "appender $1"
}

# load_pairs TAG CLIENT_ID: its acknowledged records, "LSN PAYLOAD CLIENT"
# lines, appended to $D/acked; none acknowledged after a failure
load_pairs() {
	grep -vq '^{"ok":' "$D/load.$1.out" &&
		fail "appender $1 printed what is no reply: $(grep -vm1 '^{"ok":' "$D/load.$1.out")"
	awk '/"ok":false/ { f = 1 } f && /"ok":true/ { exit 1 }' "$D/load.$1.out" ||
		fail "appender $1: an acknowledgement after a failure"
	awk -v tag="$1" -v cid="$2" '/"ok":true/ { match($0, /"lsn":[0-9]+/)
		print substr($0, RSTART + 6, RLENGTH - 6), tag "-" NR, cid }' \
		"$D/load.$1.out" >> "$D/acked"
}

# check_read N: every record of $D/acked ("LSN PAYLOAD ...") is among the
# committed records `replctl read` gets from node N, the primary, with
# exactly its payload; "checked C" in $checked
check_read() {
	local out
	timeout 120 "$CTL" -s "$(sock "$1")" --timeout 60000 read --from 0 --payload hex \
		> "$D/read.out" 2> "$D/read.err" ||
		fail "replctl read through node$1: exit $?: $(head -n 3 "$D/read.err")"
	out=$(awk '
		BEGIN { for (c = 32; c < 127; c++) ord[sprintf("%c", c)] = c }
		FNR == NR { have[$1] = $3; next }
		{
			h = ""
			for (j = 1; j <= length($2); j++)
				h = h sprintf("%02x", ord[substr($2, j, 1)])
			n++
			if (!($1 in have)) {
				if (bad++ < 5) print "BAD: LSN " $1 " (" $2 ") is not there"
			} else if (have[$1] != h) {
				if (bad++ < 5) print "BAD: LSN " $1 " holds " have[$1] ", not " h " (" $2 ")"
			}
		}
		END { print "checked " n + 0 " bad " bad + 0 }' "$D/read.out" "$D/acked")
	[[ $out == *BAD* ]] && fail "acknowledged records not read back through node$1:
$out"
	checked=$(awk '/^checked/ { print $2 }' <<< "$out")
}

# check_clients LOG...: after check_acked all "$D/acked" LOG... (its dumps
# in $D/dump.I): every acknowledged record carries its appender's client id
check_clients() {
	local i=0 log out
	for log in "$@"; do
		i=$((i + 1))
		out=$(awk 'FNR == NR { if ($1 ~ /^[0-9]+$/ && NF == 8) cid[$1] = $3; next }
			($1 in cid) && cid[$1] != $3 && bad++ < 5 {
				print "BAD: LSN " $1 " (" $2 ") has client id " cid[$1] ", not " $3 }
			END { print "bad " bad + 0 }' "$D/dump.$i" "$D/acked")
		[[ $out == *BAD* ]] && fail "client ids in $log:
$out"
	done
	return 0
}

# sorted acknowledged records: check_acked wants rising LSNs
sort_acked() { sort -n -k1,1 -o "$D/acked" "$D/acked"; }
