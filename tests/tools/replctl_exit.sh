#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_exit.sh -- replctl exits as replctl(8)'s EXIT STATUS says, every
# documented status produced by a case of its own, against a primary
# (node1) and its one replica (node2), quorum 1:
#   0  --version; status of the primary with its replica streaming, and of
#      the replica following it; an append;
#   1  the daemon refuses (WRONG_ROLE);
#   2  usage: malformed numbers (the message names the option and the
#      value), HOST:PORT, --from after --to, an empty line to append --
#      the daemon is asked nothing (the primary's last LSN stays);
#   3  a log that cannot be read;
#   4  no daemon at the socket;
#   5  node2 killed: status of the primary (0 of its quorum of 1 streaming),
#      append and bench with --timeout 1000, and an append the daemon
#      itself answers REPL_E_TIMEDOUT after its 30 s; then node2 back
#      (status 0 again) and node1 killed: node2's status once it follows
#      no primary.
# And the global options before or after the command and its operands
# (status, status LOG, dump LOG).
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=replctl_exit
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2
wait_status 1 '"replicas_up":1' "the replica up"
wait_status 2 '"following":true' "the replica following"
S1=$(sock 1)
S2=$(sock 2)
echo "x" > "$D/in.x"
printf '\n' > "$D/in.empty"
head -c 65536 /dev/urandom > "$D/garbage"

# run CODE STDIN PATTERN ARGS...: replctl ARGS with stdin from $D/in.STDIN
# (- : /dev/null) must exit CODE, its stderr matching PATTERN (grep -E;
# "" : anything); stdout in $out
run() {
	local code=$1 in=$2 pat=$3 rc
	shift 3
	[[ $in == - ]] && in=/dev/null || in=$D/in.$in
	out=$("$CTL" "$@" < "$in" 2> "$D/run.err")
	rc=$?
	clean_stderr "$D/run.err" "replctl $*"
	[[ $rc -eq $code ]] ||
		fail "replctl $*: exit $rc, not $code: $(cat "$D/run.err")"
	[[ -z $pat ]] || grep -Eq -- "$pat" "$D/run.err" ||
		fail "replctl $*: exit $code without \"$pat\" on stderr: $(cat "$D/run.err")"
	# a failure says why; a success is quiet
	if [[ $code -eq 0 ]]; then
		[[ ! -s $D/run.err ]] || fail "replctl $*: exit 0 with: $(cat "$D/run.err")"
	else
		[[ -s $D/run.err ]] || fail "replctl $*: exit $code without a word"
	fi
}

# table CODE|STDIN|PATTERN|ARGS lines on stdin ($S1, $S2, $D expanded)
table() {
	local code in pat args n=0
	while IFS='|' read -r code in pat args; do
		[[ -z $code || $code == \#* ]] && continue
		args=${args//\$S1/$S1}
		args=${args//\$S2/$S2}
		args=${args//\$D/$D}
		# shellcheck disable=SC2086
		run "$code" "$in" "$pat" $args
		n=$((n + 1))
	done
	echo "$NAME: $n cases"
}

last=$(jnum "$(status_json 1)" last_lsn)
table <<'EOF'
0|-||--version
0|-||-s $S1 status
0|-||-s $S2 status
0|-||status -s $S2 --json
0|x||-s $S1 append
# 1: the daemon refuses
1|x|WRONG_ROLE|-s $S2 append
1|-|WRONG_ROLE|-s $S2 fence
1|-|WRONG_ROLE|-s $S1 promote
1|-|WRONG_ROLE|-s $S2 verify
# 2: usage, found before any request
2|-|--from: "abc" is not a number|-s $S1 verify --from abc
2|-|--to: "5x" is not a number|-s $S1 verify --to 5x
2|-|verify: --from 10 is after --to 5|-s $S1 verify --from 10 --to 5
2|-|"foo" is not HOST:PORT|-s $S1 add foo
2|-|"127.0.0.1:0" is not HOST:PORT|-s $S1 remove 127.0.0.1:0
2|-|"127.0.0.1:65536" is not HOST:PORT|-s $S1 add 127.0.0.1:65536
2|-|":7400" is not HOST:PORT|-s $S1 add :7400
2|-|"127.0.0.1:74x" is not HOST:PORT|-s $S1 add 127.0.0.1:74x
2|-|--quorum: 9 is out of range \(0..8\)|-s $S1 add 127.0.0.1:9 --quorum 9
2|-|--quorum: "x" is not a number|-s $S1 remove 127.0.0.1:9 --quorum x
2|-|release: LSN: "x" is not a number|-s $S1 release x
2|-|--records: "1e3" is not a number|-s $S1 bench --records 1e3
2|-|--depth: 2000 is out of range \(1..1024\)|-s $S1 bench --depth 2000
2|-|--clients: 0 is out of range|-s $S1 bench --clients 0
2|-|--seconds: "-1" is not a number|-s $S1 bench --seconds -1
2|-|--timeout: "x" is not a number|-s $S1 --timeout x status
2|-|--timeout: 0 is out of range|status --timeout 0 -s $S1
2|x|--client-id: "-1" is not a number|-s $S1 append --client-id -1
2|empty|line 1 is empty|-s $S1 append
2|-|append --whole: stdin holds nothing|-s $S1 append --whole
2|-|unknown command 'frob'|-s $S1 frob
2|-|unknown option '--bogus'|-s $S1 status --bogus
2|-|--json takes no value|-s $S1 status --json=1
2|-|status takes at most one operand|status $D/a $D/b
2|-|--from: "x" is not a number|dump --from x $D/node1.log
2|-|--from is past --to|dump --from 9 --to 3 $D/node1.log
2|-|-s and -c name the socket twice|-s $S1 -c $D/node1.conf status
# 3: a log that cannot be read
3|-|cannot open|status $D/absent.log
3|-|replctl dump: |dump $D/garbage
3|-|replctl status: |--json status $D/garbage
# 4: no daemon
4|-|No such file|-s $D/absent.sock status
4|x|No such file|-s $D/absent.sock append
4|-|No such file|bench -s $D/absent.sock --records 1
EOF
st=$(status_json 1)
[[ $(jnum "$st" last_lsn) == $((last + 1)) ]] ||
	fail "the usage errors reached the daemon: last LSN $(jnum "$st" last_lsn), want $((last + 1)) (one append)"

# the daemon's version, in status's table and its JSON, is replctl's
ver=$("$CTL" --version | cut -d' ' -f2)
out=$("$CTL" -s "$S1" status 2>&1)
[[ $(head -n 1 <<< "$out") == "node 1 (primary) at 127.0.0.1:$(cport 1), repld $ver" ]] ||
	fail "status names no version $ver: $(head -n 1 <<< "$out")"
[[ $(jstr "$(status_json 2)" version) == "$ver" ]] || fail "status --json: no version $ver"

# the global options before or after the command and its operands
for args in "--json status" "status --json" "status -s $S1 --json" \
	"--json --timeout 5000 status" "status --timeout=5000 --json"; do
	# shellcheck disable=SC2086
	out=$("$CTL" -s "$S1" $args 2> "$D/err") || fail "replctl $args: exit $?: $(cat "$D/err")"
	[[ $out == '{"ok":true,'* && $(jstr "$out" role) == primary ]] ||
		fail "replctl $args: not the JSON status: $out"
done
for args in "--json status $D/node1.log" "status $D/node1.log --json" \
	"status --json $D/node1.log" "-s $S1 status $D/node1.log --json"; do
	# shellcheck disable=SC2086
	out=$("$CTL" $args 2> "$D/err") || fail "replctl $args: exit $?: $(cat "$D/err")"
	[[ $out == '{"first_lsn":'*'"membership":{'* ]] || fail "replctl $args: $out"
done
a=$("$CTL" --json dump --payload none "$D/node1.log" | tail -n 1)
b=$("$CTL" dump "$D/node1.log" --payload none --json | tail -n 1)
[[ $a == '{"type":"end",'* && $a == "$b" ]] || fail "dump --json before/after: $a / $b"
echo "$NAME: global options before and after the command ok"

# 5: the replica killed -- the primary cannot acknowledge
kill -9 "${pid[2]}"
wait "${pid[2]}" 2>/dev/null
unset "pid[2]"
wait_status 1 '"replicas_up":0' "the primary seeing its replica down"
# the daemon's own answer after APPEND_WAIT_MS (30 s): REPL_E_TIMEDOUT
t_slow=$SECONDS
( echo "slow" | "$CTL" -s "$S1" --timeout 40000 append > "$D/slow.out" 2> "$D/slow.err"
  echo $? > "$D/slow.rc" ) &
bg+=($!)
table <<'EOF'
5|-|status: the primary cannot acknowledge appends: 0 of its quorum of 1 replicas streaming|-s $S1 status
5|-|0 of its quorum of 1|status --json -s $S1
5|x|record 1 and later: .*no answer in 1000 ms.*not acknowledged durable, the outcome unknown \(it answers, as the primary with 0 replicas streaming for a quorum of 1\)|-s $S1 --timeout 1000 append
5|-|bench: client 0: .*not acknowledged durable|-s $S1 --timeout 1000 bench --records 10
EOF
[[ $out == '{"records":0,'* || $out == "" || $out == "bench: 0 records"* ]] ||
	fail "bench without a quorum counted something: $out"
for ((t = 0; t < 450; t++)); do
	[[ -s $D/slow.rc ]] && break
	sleep 0.1
done
rc=$(cat "$D/slow.rc" 2>/dev/null)
clean_stderr "$D/slow.err" "the slow append"
[[ $rc == 5 ]] && grep -q "REPL_E_TIMEDOUT" "$D/slow.err" ||
	fail "an append the daemon answered REPL_E_TIMEDOUT: exit ${rc:-none}, not 5: $(cat "$D/slow.err")"
[[ ! -s $D/slow.out ]] || fail "an append not acknowledged printed an LSN: $(cat "$D/slow.out")"
echo "$NAME: REPL_E_TIMEDOUT after $((SECONDS - t_slow)) s: exit 5"

# the replica back: the primary can acknowledge again (0)
start 2
up 1 2
wait_status 1 '"replicas_up":1' "the replica up again"
wait_status 2 '"following":true' "the replica following again"
run 0 - "" -s "$S1" status
run 0 - "" -s "$S2" status
# the primary killed: the replica follows no primary (5), once it noticed
kill -9 "${pid[1]}"
wait "${pid[1]}" 2>/dev/null
unset "pid[1]"
wait_status 2 '"following":false' "the replica dropping its silent primary"
run 5 - "status: the replica follows no primary now" -s "$S2" status
[[ $out == "node 2 (replica)"*"following no primary now"* ]] ||
	fail "the replica's status text: $out"
stop 2
clean_stderr "$D/node2.err" "node2"
echo "$NAME: ok ($((SECONDS - T0)) s)"
