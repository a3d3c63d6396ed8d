#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_quorum.sh -- a replica that stops answering (SIGSTOP, not a crash:
# its sockets stay open) is marked down after the timeout; with quorum 2 of
# 2 acknowledgements stop, and the primary says which replica is down and
# why; when it answers again it catches up and they resume.  With quorum 1
# of 2 they never stop.
set -u

NODE=${REPL_NODE:-./tools/repl-node}
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
RANDOM=$SEED
echo "repl_quorum: seed $SEED"
[[ -x $NODE ]] || { echo "repl_quorum: $NODE not built"; exit 99; }
D=$(mktemp -d /dev/shm/repl-quorum.XXXXXX) || exit 99
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -n ${KEEP:-} ]] || rm -rf "$D"
}
trap cleanup EXIT
fail() {
	echo "repl_quorum: FAIL: $*"
	for f in "$D"/*.err; do echo "--- $f (last 15 lines)"; tail -n 15 "$f"; done
	exit 1
}

# the control channel runs over TLS, as in production: a CA for this run
sh "$(dirname "$0")/make-test-ca.sh" "$D/tls" >/dev/null || {
	rc=$?; [[ $rc -eq 77 ]] && echo "repl_quorum: SKIP: no openssl command"; exit $rc; }
export REPL_NODE_TLS_DIR=$D/tls

SIZE=$((8192 + 2 * 1024 * 1024))
BASE=$((20000 + RANDOM % 12000))	# below the ephemeral ports (32768 and up)
CTL=($BASE $((BASE + 2)))
DATA=($((BASE + 1)) $((BASE + 3)))
TIMEOUT_MS=1000
export REPL_NODE_TIMEOUT_MS=$TIMEOUT_MS

rpid=(0 0)
start_replica() {
	local i=$1 t
	"$NODE" replica "$D/r$i" $SIZE ${CTL[$i]} ${DATA[$i]} > "$D/r$i.out" 2>> "$D/r$i.err" &
	rpid[$i]=$!
	pids+=($!)
	for ((t = 0; t < 100; t++)); do
		grep -q ready "$D/r$i.out" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "replica $i not ready"
}
ppid=0
start_primary() {	# quorum
	"$NODE" primary "$D/p" $SIZE $SEED 1000000000 $1 "$D/acked" \
		127.0.0.1:${CTL[0]} 127.0.0.1:${CTL[1]} 2>> "$D/p.err" &
	ppid=$!
	pids+=($!)
}
acked() { [[ -s $D/acked ]] && tail -n 1 "$D/acked" || echo 0; }
wait_acked() {
	local want=$1 t
	for ((t = 0; t < 300; t++)); do
		(( $(acked) >= want )) && return 0
		sleep 0.1
	done
	fail "no progress past LSN $want (acked $(acked))"
}

start_replica 0
start_replica 1

echo "repl_quorum: quorum 2 of 2"
start_primary 2
wait_acked 2000
kill -STOP ${rpid[1]}
sleep $(( 2 * TIMEOUT_MS / 1000 + 1 ))
a1=$(acked)
sleep 2
a2=$(acked)
(( a2 == a1 )) || fail "acknowledgements went on ($a1 -> $a2) without a quorum"
grep -q "replica 1 down: " "$D/p.err" ||
	fail "the primary did not say which replica is down and why"
echo "repl_quorum: blocked at LSN $a1; the primary says:"
grep "replica 1 down" "$D/p.err" | tail -n 1
kill -CONT ${rpid[1]}
wait_acked $(( a1 + 2000 ))
echo "repl_quorum: resumed after the replica answered again (acked $(acked))"
kill -TERM $ppid
wait $ppid || fail "the primary did not stop cleanly"

echo "repl_quorum: quorum 1 of 2"
start_primary 1
wait_acked $(( $(acked) + 1000 ))
kill -STOP ${rpid[1]}
a1=$(acked)
wait_acked $(( a1 + 3000 ))
echo "repl_quorum: went on without replica 1 ($a1 -> $(acked))"
kill -CONT ${rpid[1]}
wait_acked $(( $(acked) + 1000 ))
kill -TERM $ppid
wait $ppid || fail "the primary did not stop cleanly"
kill -TERM ${rpid[0]} ${rpid[1]}
wait ${rpid[0]} ${rpid[1]}
"$NODE" verify $SEED "$D/acked" "$D/p" "$D/r0" "$D/r1" || fail "verification"
echo "repl_quorum: ok"
