#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# coord_leader_live.sh -- one etcd on loopback (its own ports and data dir), then
# coord_leader_live's cases against it; etcd is killed by its PID at exit.
# Its election timeout is short (500 ms, heartbeat 50 ms) because etcd
# raises a lease's TTL to 1.5 election timeouts at least: so a TTL of 1 s
# is granted as asked, and the takeover cases stay short.
set -u

NAME=coord_leader_live
PROG=${COORD_LEADER_LIVE:-./tests/engine/coord_leader_live}
ETCD=${ETCD:-$(command -v etcd)}
[[ -n $ETCD && -x $ETCD ]] ||
	{ echo "SKIP: $NAME: no etcd binary (Debian: apt-get install etcd-server)"; exit 77; }

. "$(dirname "${BASH_SOURCE[0]}")/../lib/test_ports.sh"
test_ports 2 || exit 99
client=$PORT_BASE peer=$((PORT_BASE + 1))

D=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
epid=
cleanup() {
	[[ -n $epid ]] && kill -KILL "$epid" 2>/dev/null && wait "$epid" 2>/dev/null
	rm -rf "$D"
}
trap cleanup EXIT

u=http://127.0.0.1
"$ETCD" --name "$NAME" --data-dir "$D/data" \
	--listen-client-urls "$u:$client" --advertise-client-urls "$u:$client" \
	--listen-peer-urls "$u:$peer" --initial-advertise-peer-urls "$u:$peer" \
	--initial-cluster "$NAME=$u:$peer" --initial-cluster-state new \
	--heartbeat-interval=50 --election-timeout=500 \
	--logger zap --log-outputs "$D/etcd.log" > "$D/etcd.out" 2>&1 &
epid=$!

# ready when /version answers (a few hundred ms; 10 s at most)
for ((i = 0; i < 100; i++)); do
	curl -sf --max-time 1 "$u:$client/version" > /dev/null && break
	kill -0 "$epid" 2>/dev/null || { echo "$NAME: FAIL: etcd exited:"; tail -n 20 "$D/etcd.out" "$D/etcd.log"; exit 1; }
	sleep 0.1
done
curl -sf --max-time 1 "$u:$client/version" ||
	{ echo "$NAME: FAIL: etcd did not answer /version in 10 s"; tail -n 20 "$D/etcd.log"; exit 1; }
echo

timeout 60 "$PROG" "$u:$client"
rc=$?
((rc == 0)) || { echo "$NAME: etcd's log:"; tail -n 30 "$D/etcd.log"; }
exit $rc
