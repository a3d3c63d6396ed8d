#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_cluster.sh -- one primary and two replicas as real processes (ofi tcp,
# crash backend in /dev/shm), killed at random moments:
#   1. SIGKILL a replica KILLS times while the primary appends; each is
#      restarted and catches up;
#   2. SIGKILL the primary KILLS times and restart it (a new epoch each
#      time); replicas holding records past its log are truncated;
#   3. keep a replica down until the ring has lapped past its position, then
#      restart it: a full resync while appends continue;
#   4. with all stopped, leave records on a replica that its primary never
#      had (as a primary crashing before its local persist would): the
#      next catch-up truncates them.
# Then the primary stops cleanly and `repl_node verify` checks that every
# acknowledged LSN is on the primary and on both replicas, each record
# byte-exact, and that the replicas' rings are byte-identical to the
# primary's over what they hold.  At least APPENDS records in all.
#
# Environment: SEED (printed), KILLS (20), APPENDS (100000),
# REPL_NODE (the node program).
set -u

NODE=${REPL_NODE:-./tools/repl-node}
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
KILLS=${KILLS:-20}
APPENDS=${APPENDS:-100000}
RANDOM=$SEED
echo "repl_cluster: seed $SEED (rerun with SEED=$SEED)"

[[ -x $NODE ]] || { echo "repl_cluster: $NODE not built"; exit 99; }
D=$(mktemp -d /dev/shm/repl-cluster.XXXXXX) || exit 99
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

fail() {
	echo "repl_cluster: FAIL: $*"
	for f in "$D"/*.err; do echo "--- $f (last 15 lines)"; tail -n 15 "$f"; done
	exit 1
}

# a 2 MiB ring: a lap is about 6,000 records of these sizes
# the control channel runs over TLS, as in production: a CA for this run
sh "$(dirname "$0")/make-test-ca.sh" "$D/tls" >/dev/null || {
	rc=$?; [[ $rc -eq 77 ]] && echo "repl_cluster: SKIP: no openssl command"; exit $rc; }
export REPL_NODE_TLS_DIR=$D/tls

SIZE=$((8192 + 2 * 1024 * 1024))
BASE=$((20000 + RANDOM % 12000))	# below the ephemeral ports (32768 and up)
CTL=($BASE $((BASE + 2)))
DATA=($((BASE + 1)) $((BASE + 3)))
export REPL_NODE_TIMEOUT_MS=${REPL_NODE_TIMEOUT_MS:-1500}

rpid=(0 0)
start_replica() {
	local i=$1 t
	: > "$D/r$i.out"
	"$NODE" replica "$D/r$i" $SIZE ${CTL[$i]} ${DATA[$i]} > "$D/r$i.out" 2>> "$D/r$i.err" &
	rpid[$i]=$!
	pids+=($!)
	for ((t = 0; t < 100; t++)); do
		grep -q ready "$D/r$i.out" 2>/dev/null && return 0
		kill -0 ${rpid[$i]} 2>/dev/null || fail "replica $i did not start"
		sleep 0.1
	done
	fail "replica $i not ready in 10 s"
}

ppid=0
start_primary() {
	"$NODE" primary "$D/p" $SIZE $SEED 1000000000 1 "$D/acked" \
		127.0.0.1:${CTL[0]} 127.0.0.1:${CTL[1]} 2>> "$D/p.err" &
	ppid=$!
	pids+=($!)
}

acked() {
	[[ -s $D/acked ]] && tail -n 1 "$D/acked" || echo 0
}

# wait until the acknowledged LSN passes $1 (the cluster makes progress)
wait_acked() {
	local want=$1 t
	for ((t = 0; t < 600; t++)); do
		(( $(acked) >= want )) && return 0
		kill -0 $ppid 2>/dev/null || fail "the primary died (acked $(acked))"
		sleep 0.1
	done
	fail "no progress past LSN $want in 60 s (acked $(acked))"
}

pause() {	# a random pause of 50..$1 ms
	sleep "$(printf '0.%03d' $((50 + RANDOM % ($1 - 50))))"
}

start_replica 0
start_replica 1
start_primary
wait_acked 1000

echo "repl_cluster: 1. killing a replica $KILLS times"
for ((k = 0; k < KILLS; k++)); do
	pause 400
	i=$((RANDOM % 2))
	kill -9 ${rpid[$i]}
	wait ${rpid[$i]} 2>/dev/null
	pause 300
	start_replica $i
done
wait_acked $(( $(acked) + 2000 ))

echo "repl_cluster: 2. killing the primary $KILLS times (acked $(acked))"
for ((k = 0; k < KILLS; k++)); do
	pause 400
	kill -9 $ppid
	wait $ppid 2>/dev/null
	start_primary
	wait_acked $(( $(acked) + 200 ))
done

echo "repl_cluster: 3. a replica down for more than a lap (acked $(acked))"
kill -9 ${rpid[1]}
wait ${rpid[1]} 2>/dev/null
wait_acked $(( $(acked) + 15000 ))
resyncs_before=$(grep -c "full resync" "$D/p.err")
start_replica 1
for ((t = 0; t < 300; t++)); do
	(( $(grep -c "full resync" "$D/p.err") > resyncs_before )) && break
	sleep 0.1
done
(( $(grep -c "full resync" "$D/p.err") > resyncs_before )) ||
	fail "the replica did not get a full resync"
wait_acked $(( $(acked) > APPENDS ? $(acked) + 3000 : APPENDS ))

stop_all() {
	kill -TERM $ppid
	wait $ppid || fail "the primary did not stop cleanly"
	kill -TERM ${rpid[0]} ${rpid[1]}
	wait ${rpid[0]} ${rpid[1]}
}
stop_all

echo "repl_cluster: 4. records on a replica that were never committed"
"$NODE" forge "$D/r0" 50 || fail "cannot forge records"
drops_before=$(grep -c "dropping its LSNs" "$D/p.err")
start_replica 0
start_replica 1
start_primary
wait_acked $(( $(acked) + 1000 ))
(( $(grep -c "dropping its LSNs" "$D/p.err") > drops_before )) ||
	fail "the uncommitted records were not truncated"
stop_all

echo "repl_cluster: $(acked) records acknowledged;" \
	"$(grep -c 'is up, resuming' "$D/p.err") catch-ups," \
	"$(grep -c 'full resync' "$D/p.err") full resyncs," \
	"$(grep -c 'dropping its LSNs' "$D/p.err") truncations of uncommitted records"
"$NODE" verify $SEED "$D/acked" "$D/p" "$D/r0" "$D/r1" || fail "verification"
echo "repl_cluster: ok"
