#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_bench_counts.sh -- replctl bench's counts per acknowledged append
# (replctl(8), bench) against a three-node cluster: the daemon it counts
# is the primary (its pid), and both have context switches; --pid 0
# counts replctl alone, --pid of no process is a usage error.  Where the
# raw_syscalls tracepoint may be used (tracefs, and root or
# perf_event_paranoid <= -1), system calls too, and replctl's are an
# append's three -- its line and record in one sendmsg, the answer's poll
# and read -- at 64 B and, when net.core.wmem_max lets the socket hold a
# record (1 MiB), at 1 MiB; without the tracepoint that part exits 77.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=replctl_bench_counts
LOGSIZE=${LOGSIZE:-160M}	# 100 records of 1 MiB, kept
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
start_cluster
S=$(sock 1)
# bench SIZE RECORDS: its --json line in $out, its counts in $mine, $its
bench() {
	out=$("$CTL" -s "$S" --json bench --records "$2" --size "$1" --depth 1 \
		2> "$D/err") || fail "bench --size $1: exit $?: $(cat "$D/err")"
	clean_stderr "$D/err" "bench --size $1"
	mine=$(grep -o '"replctl":{[^}]*}' <<< "$out")
	its=$(grep -o '"repld":{[^}]*}' <<< "$out")
	[[ -n $mine ]] || fail "bench --size $1: no per_append.replctl: $out"
	[[ -n $its ]] || fail "bench --size $1: no per_append.repld: $out"
}
num() { grep -o "\"$2\":[0-9.]*" <<< "$1" | cut -d: -f2; }
# within LOW HIGH VALUE
within() { awk -v l="$1" -v h="$2" -v v="$3" 'BEGIN { exit !(v != "" && v >= l && v <= h) }'; }

bench 64 3000
[[ $(num "$its" pid) == "${pid[1]}" ]] ||
	fail "the daemon counted is not the primary (pid ${pid[1]}): $its"
within 0.01 1000 "$(num "$mine" context_switches)" || fail "replctl's switches: $mine"
within 0.01 1000 "$(num "$its" context_switches)" || fail "repld's switches: $its"
echo "$NAME: 64 B: replctl $mine, repld $its"
# --pid 0: replctl's counts alone; a pid that is no process: usage
out=$("$CTL" -s "$S" --json bench --records 100 --size 64 --pid 0 2> "$D/err") ||
	fail "bench --pid 0: exit $?: $(cat "$D/err")"
grep -q '"per_append":{"replctl":{[^}]*}}' <<< "$out" || fail "bench --pid 0: $out"
"$CTL" -s "$S" bench --records 10 --pid 2147483647 > /dev/null 2> "$D/err"
rc=$?
((rc == 2)) && grep -q 'no such process' "$D/err" || fail "bench --pid of no process: exit $rc: $(cat "$D/err")"
if [[ -z $(num "$mine" syscalls) ]]; then
	"$CTL" -s "$S" bench --records 10 --size 64 --depth 1 2>&1 | grep 'per append' >&2
	for n in 1 2 3; do stop "$n"; done
	echo "$NAME: the system calls are not counted here: that part is not tried"
	exit 77
fi
within 1 100000 "$(num "$its" syscalls)" || fail "repld's syscalls: $its"
# 3 an append; what is not (threads, the progress's naps) spread over all
within 2.9 3.6 "$(num "$mine" syscalls)" ||
	fail "replctl: not 3 syscalls per 64 B append: $mine"
if (($(cat /proc/sys/net/core/wmem_max) >= (1 << 20) + 64)); then
	# per append beyond a run's own calls (threads, a sanitizer's): the
	# difference of two runs; a record sent in turns with the daemon's
	# reads took a dozen
	bench 1048576 20
	few=$(num "$mine" syscalls)
	bench 1048576 100
	more=$(awk -v a="$few" -v b="$(num "$mine" syscalls)" 'BEGIN { printf "%.2f", (b * 100 - a * 20) / 80 }')
	echo "$NAME: 1 MiB: replctl $mine ($more each beyond the run's own), repld $its"
	within 2.5 5 "$more" ||
		fail "replctl: a 1 MiB append not in one send: $more syscalls each (20 appends: $few each; 100: $mine)"
else
	echo "$NAME: net.core.wmem_max $(cat /proc/sys/net/core/wmem_max) holds no" \
		"1 MiB record in a socket: its sends are not counted"
fi
for n in 1 2 3; do stop "$n"; clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
