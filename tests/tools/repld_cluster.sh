#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_cluster.sh -- repld as the three nodes of a cluster on this host
# (ofi:tcp, file backend in /dev/shm, quorum 1), each from its own file:
#   1. two replicas, then the primary: the primary sees both replicas up;
#   2. --check: a good file is "ok" (exit 0), a bad one names FILE:LINE
#      (exit 2);
#   3. SIGTERM stops each node with exit 0 within 10 s;
#   4. the primary restarts with one replica reachable: itself and it are
#      the 2 of 3 nodes a promotion needs;
#   5. a replica promoted in its place fences it: exit 3;
#   6. with no replica running it refuses to promote: exit 4, naming them.
#
# Environment: REPLD (the daemon; ./tools/repld/repld of the build tree).
set -u

NAME=repld_cluster
REPLD=${REPLD:-./tools/repld/repld}
[[ -x $REPLD ]] || { echo "$NAME: $REPLD not built"; exit 99; }
D=$(mktemp -d "/dev/shm/$NAME.XXXXXX") || exit 99
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
		echo "--- $f (last 15 lines)"
		tail -n 15 "$f"
	done
	exit 1
}

# below the ephemeral ports (32768 and up), from the pid: parallel runs differ
BASE=$((20000 + ($$ * 6) % 12000))
ctl() { echo $((BASE + 2 * ($1 - 1))); }
UUID=$(cat /proc/sys/kernel/random/uuid 2>/dev/null) ||
	UUID=$(printf '%08x-%04x-4%03x-8%03x-%012x' $RANDOM$RANDOM $RANDOM \
		$((RANDOM % 4096)) $((RANDOM % 4096)) $RANDOM$RANDOM$RANDOM)

# conf N ROLE [PROMOTE_WAIT_MS]: $D/nodeN.conf; every node lists the other two
conf() {
	local n=$1 role=$2 wait=${3:-3000} peers=() m
	for m in 1 2 3; do
		[[ $m -eq $n ]] && continue
		peers+=("{ address = \"127.0.0.1\"; control_port = $(ctl $m); }")
	done
	cat > "$D/node$n.conf" <<-EOF
	node_id = $n;
	role = "$role";
	cluster_uuid = "$UUID";
	listen = {
		address = "127.0.0.1";
		control_port = $(ctl $n);
		data_port = $(($(ctl $n) + 1));
	};
	transport = "ofi:tcp";
	log = {
		backend = "file";
		path = "node$n.log";
		size = "4M";
	};
	peers = ( ${peers[0]}, ${peers[1]} );
	quorum = 1;
	timeouts = {
		heartbeat_ms = 100;
		down_ms = 1000;
		promote_wait_ms = $wait;
	};
	admin_socket = "node$n.sock";
	log_level = "info";
	EOF
}

start() {	# N: in the background, its stderr in $D/nodeN.err
	"$REPLD" -c "$D/node$1.conf" 2>> "$D/node$1.err" &
	pid[$1]=$!
}

# wait_for N PATTERN WHAT: until nodeN's stderr matches (10 s)
wait_for() {
	local t
	for ((t = 0; t < 100; t++)); do
		grep -q -- "$2" "$D/node$1.err" 2>/dev/null && return 0
		kill -0 "${pid[$1]}" 2>/dev/null || fail "node$1 exited before $3"
		sleep 0.1
	done
	fail "node$1: no $3 in 10 s"
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
	wait_for "$1" "replica 127.0.0.1:$(ctl "$2") is up" "replica node$2 up"
}

T0=$SECONDS
conf 1 primary
conf 2 replica
conf 3 replica

# 1. the cluster comes up
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
start 1
up 1 2
up 1 3
echo "$NAME: primary up, both replicas streaming ($((SECONDS - T0)) s)"

# 2. --check
out=$("$REPLD" -c "$D/node1.conf" --check 2>&1)
rc=$?
[[ $rc -eq 0 && $out == "$D/node1.conf: ok" ]] ||
	fail "--check of a good file: exit $rc, \"$out\""
sed 's/^quorum = 1;/quorum = 3;/' "$D/node1.conf" > "$D/bad.conf"
out=$("$REPLD" -c "$D/bad.conf" --check 2>&1 >/dev/null)
rc=$?
[[ $rc -eq 2 && $out =~ ^"$D/bad.conf":[0-9]+:\ .*quorum ]] ||
	fail "--check of a bad file: exit $rc, \"$out\""
"$REPLD" --bogus 2>/dev/null
rc=$?
[[ $rc -eq 2 ]] || fail "a bad option: exit $rc"
echo "$NAME: --check ok: \"$out\""

# 3. a clean stop: the primary first (it drains its replicas)
stop 1
stop 2
stop 3
echo "$NAME: all three stopped with exit 0 ($((SECONDS - T0)) s)"

# 4. one replica of two: itself and node2 are the 2 of 3 nodes needed
: > "$D/node1.err"
start 2
wait_for 2 "listening" "listening"
start 1
wait_for 1 "is the primary of epoch" "promotion"
up 1 2
stop 1
stop 2
echo "$NAME: promoted with one replica of two ($((SECONDS - T0)) s)"

# 5. node2 promotes itself over node3: node1 learns it is fenced (exit 3)
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
: > "$D/node1.err"
start 1
up 1 2
up 1 3
stop 2
conf 2 primary
start 2
wait_for 2 "is the primary of epoch" "promotion"
exited 1 "node1 not fenced 10 s after node2's promotion"
[[ $rc -eq 3 ]] || fail "fenced node1 exited $rc, not 3"
grep -q "repld: fenced" "$D/node1.err" || fail "node1 did not say it was fenced"
stop 2
stop 3
echo "$NAME: node1 fenced by node2's promotion: exit 3 ($((SECONDS - T0)) s)"

# 6. alone: refused, naming the replicas it could not reach
conf 1 primary 500
: > "$D/node1.err"
start 1
exited 1 "a primary alone still running after 10 s"
[[ $rc -eq 4 ]] || fail "a primary alone exited $rc, not 4"
for m in 2 3; do
	grep -q "127.0.0.1:$(ctl $m) not fenced" "$D/node1.err" ||
		fail "the refusal does not name node$m (127.0.0.1:$(ctl $m))"
done
echo "$NAME: alone: exit 4: $(grep -m1 'repld: promotion refused' "$D/node1.err")"
echo "$NAME: ok ($((SECONDS - T0)) s)"
