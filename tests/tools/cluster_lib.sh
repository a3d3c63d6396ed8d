# SPDX-License-Identifier: BSD-3-Clause
#
# cluster_lib.sh -- what the tests of repld and replctl against a live
# three-node loopback cluster share (sourced, not run): the approach of
# repld_cluster.sh (ofi:tcp on 127.0.0.1, ports from the pid, file backend
# in /dev/shm, a conf file per node, waits on conditions, a cleanup trap).
#
# The sourcing script sets NAME first.  Environment: REPLD (the daemon),
# REPLCTL (the tool), defaults the build tree's.  RETENTION: the retention
# line of conf (default: mode "checkpointer", so nothing is released unless
# a test says so: the tests look for every acknowledged record in the logs).
# LOGSIZE: each node's log size
# (default 4M).
#
# Provides: $D (the directory), $REPLD, $CTL, pid[N], bg (background
# helpers' pids, killed on exit), fail, cport N, sock N, conf N ROLE
# [PROMOTE_WAIT_MS] [QUORUM] [PEERS...], start N [ARG...], wait_for, wait_count,
# exited, stop, up, start_cluster, status_json N, jnum JSON KEY, jstr JSON
# KEY, wait_status N REGEX WHAT, clean_stderr FILE WHAT.

REPLD=${REPLD:-./tools/repld/repld}
CTL=${REPLCTL:-./tools/replctl/replctl}
[[ -x $REPLD ]] || { echo "$NAME: $REPLD not built"; exit 99; }
[[ -x $CTL ]] || { echo "$NAME: $CTL not built"; exit 99; }
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lt_unwrap.sh"
lt_unwrap REPLD
lt_unwrap CTL
D=$(mktemp -d "/dev/shm/$NAME.XXXXXX") || exit 99
declare -A pid=()
bg=()
cleanup() {
	local p
	# line generators (gen in the tests) end when this file exists
	: > "$D/stop.gen"
	for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	# KEEP_DIR: the nodes' files and logs outlive the test there
	[[ -n ${KEEP_DIR-} ]] && rm -rf "$KEEP_DIR" && cp -r "$D" "$KEEP_DIR"
	rm -rf "$D"
}
trap cleanup EXIT

fail() {
	local f
	echo "$NAME: FAIL: $*"
	for f in "$D"/*.err; do
		[[ -s $f ]] || continue
		echo "--- $f (last 15 lines)"
		tail -n 15 "$f"
	done
	exit 1
}

# a sanitizer report is a failure whatever the exit code
# (or a crash: the sanitizers' handler prints "terminated with signal")
SAN="AddressSanitizer\|runtime error\|LeakSanitizer\|ThreadSanitizer\|terminated with signal"
clean_stderr() {	# FILE WHAT
	! grep -q "$SAN" "$1" 2>/dev/null ||
		fail "$2: sanitizer report or crash: $(grep -m 3 -A 4 "$SAN" "$1")"
}

# ports no other test holds (tests/lib/test_ports.sh)
. "$(dirname "${BASH_SOURCE[0]}")/../lib/test_ports.sh"
test_ports 32 || exit 99
BASE=$PORT_BASE
cport() { echo $((BASE + 2 * ($1 - 1))); }
sock() { echo "$D/node$1.sock"; }
UUID=$(cat /proc/sys/kernel/random/uuid 2>/dev/null) ||
	UUID=$(printf '%08x-%04x-4%03x-8%03x-%012x' $RANDOM$RANDOM $RANDOM \
		$((RANDOM % 4096)) $((RANDOM % 4096)) $RANDOM$RANDOM$RANDOM)

RETENTION_DEFAULT='retention = { mode = "checkpointer"; };'

# conf N ROLE [PROMOTE_WAIT_MS] [QUORUM] [PEER...]: $D/nodeN.conf; the peers
# are node numbers, by default the other two nodes
conf() {
	local n=$1 role=$2 wait=${3:-3000} quorum=${4:-1} peers=() m list=()
	shift $(($# < 4 ? $# : 4))
	if [[ $# -gt 0 ]]; then
		list=("$@")
	else
		for m in 1 2 3; do [[ $m -eq $n ]] || list+=("$m"); done
	fi
	for m in "${list[@]}"; do
		peers+=("{ address = \"127.0.0.1\"; control_port = $(cport "$m"); }")
	done
	local IFS=,
	cat > "$D/node$n.conf" <<-EOF
	node_id = $n;
	role = "$role";
	cluster_uuid = "$UUID";
	listen = {
		address = "127.0.0.1";
		control_port = $(cport "$n");
		data_port = $(($(cport "$n") + 1));
	};
	transport = "ofi:tcp";
	log = {
		backend = "file";
		path = "node$n.log";
		size = "${LOGSIZE:-4M}";
	};
	peers = ( ${peers[*]} );
	quorum = $quorum;
	timeouts = {
		heartbeat_ms = 100;
		down_ms = 1000;
		promote_wait_ms = $wait;
	};
	admin_socket = "node$n.sock";
	log_level = "info";
	${RETENTION-$RETENTION_DEFAULT}
	EOF
}

# start N [OPTION...]: in the background, its stderr in $D/nodeN.err.  A
# node without a log yet is started with --bootstrap until the cluster's
# first primary has started (the first start of a new cluster), with
# --reinit after it (a node joining, or one whose log was deleted), unless
# AUTO_INIT=0 (a test that gives those options itself).
start() {
	local n=$1 make=() log
	shift
	log=$(sed -n 's/^[[:space:]]*path = "\(.*\)";/\1/p' "$D/node$n.conf")
	[[ $log == /* ]] || log=$D/${log:-node$n.log}
	if [[ ${AUTO_INIT:-1} == 1 && ! -e $log && $* != *--reinit* &&
	      $* != *--bootstrap* ]]; then
		if [[ -e $D/bootstrapped ]]; then make=(--reinit); else make=(--bootstrap); fi
	fi
	grep -q 'role = "primary"' "$D/node$n.conf" && : > "$D/bootstrapped"
	"$REPLD" -c "$D/node$n.conf" "${make[@]}" "$@" 2>> "$D/node$n.err" &
	pid[$n]=$!
}

# wait_for N PATTERN WHAT [SECONDS]: until nodeN's stderr matches (10 s)
wait_for() {
	wait_count "$1" "$2" 1 "$3" "${4:-10}"
}

# wait_count N PATTERN COUNT WHAT [SECONDS]: until nodeN's stderr has COUNT
# lines matching
wait_count() {
	local t lim=$((${5:-10} * 10)) c
	for ((t = 0; t < lim; t++)); do
		c=$(grep -c -- "$2" "$D/node$1.err" 2>/dev/null)
		[[ ${c:-0} -ge $3 ]] && return 0
		kill -0 "${pid[$1]}" 2>/dev/null || fail "node$1 exited before $4"
		sleep 0.1
	done
	fail "node$1: no $4 in $((lim / 10)) s"
}

# exited N WHAT: node N must end within 10 s (else fail with WHAT); its
# exit code in $rc
exited() {
	local n=$1 t
	for ((t = 0; t < 100; t++)); do
		kill -0 "${pid[$n]}" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "${pid[$n]}" 2>/dev/null && fail "$2"
	wait "${pid[$n]}"
	rc=$?
	unset "pid[$n]"
}

# stop N: SIGTERM, then it must exit 0 within 10 s
stop() {
	kill -TERM "${pid[$1]}"
	exited "$1" "node$1 still running 10 s after SIGTERM"
	[[ $rc -eq 0 ]] || fail "node$1 exited $rc after SIGTERM"
}

up() {	# N REPLICA: the primary node N sees node REPLICA's replica up
	wait_for "$1" "replica 127.0.0.1:$(cport "$2") is up" "replica node$2 up"
}

# start_cluster: node1 the primary of node2 and node3 (files written here),
# the replicas first; returns once the primary sees both streaming
start_cluster() {
	conf 1 primary
	conf 2 replica
	conf 3 replica
	start 2
	start 3
	wait_for 2 "listening" "listening"
	wait_for 3 "listening" "listening"
	start 1
	up 1 2
	up 1 3
	wait_status 1 '"replicas_up":2' "both replicas up"
	echo "$NAME: cluster up ($((SECONDS - T0)) s)"
}

# status_json N: the node's status --json line on stdout (exit as replctl's)
status_json() {
	"$CTL" -s "$(sock "$1")" --json status 2>> "$D/ctl.err"
}

# jnum JSON KEY: a top-level number (the first such key: give top-level
# keys that precede the replicas array); jstr for a string
jnum() { grep -o "\"$2\":-\?[0-9]*" <<< "$1" | head -n 1 | cut -d: -f2; }
jstr() { grep -o "\"$2\":\"[^\"]*\"" <<< "$1" | head -n 1 | cut -d: -f2- | tr -d '"'; }

# wait_status N REGEX WHAT [SECONDS]: until node N's status --json matches
# REGEX (a bash regex); the last status in $st
wait_status() {
	local t lim=$((${4:-10} * 10))
	for ((t = 0; t < lim; t++)); do
		st=$(status_json "$1")
		[[ $st =~ $2 ]] && return 0
		sleep 0.1
	done
	fail "node$1: $3 not seen in $((lim / 10)) s; its status: $st"
}

# nreplicas JSON: how many replicas a primary's status lists
nreplicas() { grep -o '"address":' <<< "$1" | wc -l; }

# check_acked MODE PAIRS LOG...: PAIRS holds "LSN PAYLOAD" lines (acknowledged
# records, in acknowledgement order); each LOG (of a stopped node) is dumped
# offline.  MODE all: every LOG holds every record with exactly its payload;
# any: for each record at least one LOG does.  The LSNs must increase.
# Fails with the first mismatches; "checked N" in $checked.
check_acked() {
	local mode=$1 pairs=$2 log i=0 files=() out
	shift 2
	for log in "$@"; do
		i=$((i + 1))
		"$CTL" dump --payload hex "$log" > "$D/dump.$i" 2> "$D/dump.$i.err" ||
			fail "replctl dump $log: exit $?: $(cat "$D/dump.$i.err")"
		clean_stderr "$D/dump.$i.err" "replctl dump $log"
		files+=("$D/dump.$i")
	done
	out=$(awk -v mode="$mode" -v nlogs=$i '
		BEGIN { for (c = 32; c < 127; c++) ord[sprintf("%c", c)] = c }
		FNR == 1 { f++ }
		f <= nlogs {
			if ($1 ~ /^[0-9]+$/ && NF == 8 && $7 == "ok")
				have[f, $1] = $8
			next
		}
		{
			lsn = $1 + 0; p = $2; h = ""
			for (j = 1; j <= length(p); j++)
				h = h sprintf("%02x", ord[substr(p, j, 1)])
			n++
			if (lsn <= last) {
				print "BAD: LSN " lsn " acknowledged after LSN " last
				bad++
			}
			last = lsn
			ok = 0
			for (g = 1; g <= nlogs; g++) {
				if (!((g, $1) in have)) {
					if (mode == "all" && bad++ < 5)
						print "BAD: log " g " lacks LSN " lsn " (" p ")"
				} else if (have[g, $1] != h) {
					if (mode == "all" && bad++ < 5)
						print "BAD: log " g " LSN " lsn " holds " have[g, $1] \
							", not " h " (" p ")"
				} else {
					ok++
				}
			}
			if (mode == "any" && ok == 0 && bad++ < 5)
				print "BAD: no log holds LSN " lsn " with " p
		}
		END { print "checked " n + 0 " bad " bad + 0 }' "${files[@]}" "$pairs")
	[[ $out == *BAD* ]] && fail "acknowledged records not in the log ($*):
$out"
	checked=$(awk '/^checked/ { print $2 }' <<< "$out")
}
