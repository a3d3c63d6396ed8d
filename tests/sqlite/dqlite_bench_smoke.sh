#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# dqlite_bench_smoke.sh -- dqlite-bench (tools/bench/dqlite_bench.c), the
# dqlite rows of sqlite-vs, works: a 3-node cluster (3 voters) in a
# directory under /dev/shm, 200 transactions at c=1, then one second at
# c=4.  Each run prints its one line, which parses: the label, clients as
# asked, commits at least the transactions asked for (1 at c=4), p50_us
# above 0; no node process outlives a run and nothing is left in the
# directory's parent.  Skipped (77) when dqlite-bench was not built
# (configure found no dqlite: Debian libdqlite-dev).
NAME=dqlite_bench_smoke
BENCH=${DQLITE_BENCH:-$PWD/tools/bench/dqlite-bench}
[[ -x $BENCH ]] || { echo "SKIP: $NAME: $BENCH not built (no libdqlite-dev at configure)"; exit 77; }
[[ -d /dev/shm && -w /dev/shm ]] || { echo "SKIP: $NAME: no writable /dev/shm"; exit 77; }
. "$(dirname "$0")/../lib/test_ports.sh"
test_ports 8 || exit 99
# a sanitizer build's leak report is not this test's subject
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
D=$(mktemp -d /dev/shm/dqlite-bench-smoke.XXXXXX) || exit 99
trap 'rm -rf "$D"' EXIT
fail() { echo "FAIL: $NAME: $*" >&2; exit 1; }

# check LINE CLIENTS MIN_COMMITS
check() {
	local line=$1 c=$2 min=$3 re
	re='^smoke clients=([0-9]+) commits=([0-9]+) p50_us=([0-9]+) p90_us=([0-9]+) '
	re+='p99_us=([0-9]+) max_us=([0-9]+) rate=([0-9]+)/s busy=([0-9]+)$'
	[[ $line =~ $re ]] || fail "c=$c: the line does not parse: '$line'"
	((BASH_REMATCH[1] == c)) || fail "c=$c: clients=${BASH_REMATCH[1]}"
	((BASH_REMATCH[2] >= min)) || fail "c=$c: $((BASH_REMATCH[2])) commits, fewer than $min"
	((BASH_REMATCH[3] > 0)) || fail "c=$c: p50_us is 0"
	((BASH_REMATCH[3] <= BASH_REMATCH[5] && BASH_REMATCH[5] <= BASH_REMATCH[6])) ||
		fail "c=$c: percentiles out of order: '$line'"
	echo "$NAME: $line"
}

# run PORT DIR ARGS...: its stdout, after its exit status is checked
run() {
	local port=$1 dir=$2 out rc
	shift 2
	out=$(timeout 60 "$BENCH" --nodes 3 --port "$port" --label smoke "$@" "$dir" 2> "$D/err")
	rc=$?
	[[ $rc == 0 ]] || fail "dqlite-bench $* exited $rc: $(tail -n 5 "$D/err")"
	# the nodes are its children: none may be left, in the directory's
	# parent nothing but the directory itself
	pgrep -f -- "--port $port " > /dev/null && fail "a node of the run on port $port is still running"
	[[ -d $dir/n1 && -d $dir/n2 && -d $dir/n3 ]] || fail "no node data in $dir"
	echo "$out"
}

line=$(run "$PORT_BASE" "$D/c1" --records 200 --warmup 20) || exit 1
check "$line" 1 200
line=$(run "$((PORT_BASE + 4))" "$D/c4" --clients 4 --seconds 1 --warmup 20) || exit 1
check "$line" 4 1
[[ $(ls "$D") == $'c1\nc4\nerr' ]] || fail "unexpected files in $D: $(ls "$D" | tr '\n' ' ')"
echo "PASS: $NAME"
