# SPDX-License-Identifier: BSD-3-Clause
#
# etcd_lib.sh -- one etcd on loopback for a test (sourced, not run): its own
# ports and data directory, killed by its PID at exit.  The sourcing script
# sets NAME, and ETCD_PORTS (default 2) for the ports it takes: etcd's
# client and peer ports are $PORT_BASE and $PORT_BASE + 1, the rest the
# test's own.  Without an etcd binary the test is skipped (exit 77).
#
# Provides: $D (the directory), $ETCD_URL (after etcd_start), etcd_start
# [ETCD OPTION...] (starts it, returns once /version answers, 10 s at most),
# etcd_log_tail (etcd's last lines, for a failure).
ETCD=${ETCD:-$(command -v etcd)}
[[ -n $ETCD && -x $ETCD ]] ||
	{ echo "SKIP: $NAME: no etcd binary (Debian: apt-get install etcd-server)"; exit 77; }

. "$(dirname "${BASH_SOURCE[0]}")/test_ports.sh"
test_ports "${ETCD_PORTS:-2}" || exit 99

D=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
etcd_pid=
etcd_cleanup() {
	[[ -n $etcd_pid ]] && kill -KILL "$etcd_pid" 2>/dev/null && wait "$etcd_pid" 2>/dev/null
	rm -rf "$D"
}
trap etcd_cleanup EXIT

etcd_log_tail() { tail -n "${1:-30}" "$D/etcd.out" "$D/etcd.log" 2>/dev/null; }

etcd_start() {
	local u=http://127.0.0.1 client=$PORT_BASE peer=$((PORT_BASE + 1)) i
	ETCD_URL=$u:$client
	"$ETCD" --name "$NAME" --data-dir "$D/data" \
		--listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
		--listen-peer-urls "$u:$peer" --initial-advertise-peer-urls "$u:$peer" \
		--initial-cluster "$NAME=$u:$peer" --initial-cluster-state new \
		"$@" --logger zap --log-outputs "$D/etcd.log" > "$D/etcd.out" 2>&1 &
	etcd_pid=$!
	# ready when /version answers (a few hundred ms)
	for ((i = 0; i < 100; i++)); do
		curl -sf --max-time 1 "$ETCD_URL/version" > /dev/null && return 0
		kill -0 "$etcd_pid" 2>/dev/null ||
			{ echo "$NAME: FAIL: etcd exited:"; etcd_log_tail 20; exit 1; }
		sleep 0.1
	done
	echo "$NAME: FAIL: etcd did not answer /version in 10 s"
	etcd_log_tail 20
	exit 1
}
