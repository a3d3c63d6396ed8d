#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_no_daemon.sh -- replctl when the daemon cannot be reached, and
# the admin socket's own rules:
#   1. no socket file: exit 4, naming the path, "No such file";
#   2. the admin socket is created mode 0600; the lone replica's status
#      exits 5 (it follows no primary), saying so;
#   3. a second repld on the same admin socket refuses to start (exit 1:
#      another daemon answers); one whose admin socket path is a plain
#      file too;
#   4. a stopped (SIGSTOP) daemon: exit 4 after --timeout, "no answer"
#      (append too: a STATUS gets no answer either);
#      promote --timeout 1000 too within 1.5 s (a change's longer default
#      does not override --timeout), also with the daemon's backlog full;
#      resumed, the daemon does not make the PROMOTE whose client gave up
#      and closed (it made it, and went down, before: its log had none);
#   5. a dead daemon (kill -9; its socket file stays): exit 4, "refused";
#      a repld started again takes the stale socket over;
#   6. a path that is no socket: exit 4;
#   7. -c FILE that does not load: exit 2 naming FILE:LINE;
#   8. --version: exit 0, "replctl VERSION", with no daemon at all.
# Every live command is tried in 1 and 5.  (Raw requests would need a
# UNIX socket client beyond bash: none here.)
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=replctl_no_daemon
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
LIVE=("status" "peers" "promote" "fence" "reload" "add 127.0.0.1:9"
	"remove 127.0.0.1:9" "release 1" "append" "bench --records 1" "--json status")

# answers WHAT: the lone replica answers status; it follows no primary,
# so its exit status is 5 (replctl(8)), not 4
answers() {
	local rc
	"$CTL" -s "$S" status > /dev/null 2> "$D/answers.err"
	rc=$?
	[[ $rc -eq 5 ]] || fail "$1: exit $rc, not 5: $(cat "$D/answers.err")"
	grep -q "follows no primary" "$D/answers.err" || fail "$1: $(cat "$D/answers.err")"
}

# unreachable SOCKET PATTERN WHAT: every live command exits 4 with a
# message naming SOCKET and matching PATTERN (grep -E)
unreachable() {
	local args rc
	for args in "${LIVE[@]}"; do
		"$CTL" -s "$1" $args <<< "x" > "$D/out" 2> "$D/err"
		rc=$?
		clean_stderr "$D/err" "replctl $args ($3)"
		[[ $rc -eq 4 ]] || fail "$3: replctl $args: exit $rc, not 4: $(cat "$D/err")"
		[[ ! -s $D/out ]] || fail "$3: replctl $args wrote: $(cat "$D/out")"
		grep -q -- "$1" "$D/err" || fail "$3: replctl $args: the path not named: $(cat "$D/err")"
		grep -Eq -- "$2" "$D/err" || fail "$3: replctl $args: no \"$2\": $(cat "$D/err")"
	done
}

# 1. no socket file
unreachable "$D/absent.sock" "No such file" "no socket file"
REPLD_SOCKET=$D/absent.sock "$CTL" status > /dev/null 2> "$D/err"
[[ $? -eq 4 ]] && grep -q "$D/absent.sock" "$D/err" ||
	fail "REPLD_SOCKET to no file: $(cat "$D/err")"
echo "$NAME: no socket file: $(cat "$D/err")"

# 2. a replica on its own: its socket is 0600
conf 2 replica
start 2
wait_for 2 "listening" "listening"
S=$(sock 2)
[[ -S $S ]] || fail "no admin socket $S"
mode=$(stat -c %a "$S")
[[ $mode == 600 ]] || fail "the admin socket's mode is $mode, not 600"
answers "status of the live replica"

# 3. a second daemon on the same admin socket: refused, the first unharmed
conf 3 replica
sed -i "s|^admin_socket = .*|admin_socket = \"$S\";|" "$D/node3.conf"
timeout 20 "$REPLD" -c "$D/node3.conf" 2> "$D/second.out"
rc=$?
[[ $rc -eq 1 ]] || fail "a second repld on $S: exit $rc, not 1: $(cat "$D/second.out")"
grep -q "another daemon answers on the admin socket $S" "$D/second.out" ||
	fail "a second repld: $(cat "$D/second.out")"
[[ -S $S ]] || fail "the refused daemon removed $S"
answers "the first daemon after the second"
echo "$NAME: a second daemon: $(cat "$D/second.out")"
: > "$D/plain"
sed -i "s|^admin_socket = .*|admin_socket = \"$D/plain\";|" "$D/node3.conf"
timeout 20 "$REPLD" -c "$D/node3.conf" 2> "$D/second.out"
rc=$?
[[ $rc -eq 1 ]] && grep -q "$D/plain exists and is not a socket" "$D/second.out" ||
	fail "repld on a plain file as its socket: exit $rc: $(cat "$D/second.out")"
[[ -f $D/plain ]] || fail "repld removed a plain file at its socket path"

# 4. a daemon that does not answer (stopped): --timeout, exit 4
kill -STOP "${pid[2]}"
t=$SECONDS
"$CTL" -s "$S" --timeout 300 status > /dev/null 2> "$D/err"
rc=$?
# an append left unanswered by a daemon that answers no STATUS either:
# unreachable (4), not "not acknowledged" (5)
echo "x" | "$CTL" -s "$S" --timeout 300 append > /dev/null 2> "$D/append.err"
arc=$?
kill -CONT "${pid[2]}"
clean_stderr "$D/append.err" "append to a stopped daemon"
[[ $arc -eq 4 ]] && grep -q "a STATUS gets no answer either" "$D/append.err" ||
	fail "append to a stopped daemon: exit $arc, not 4: $(cat "$D/append.err")"
[[ $rc -eq 4 ]] && grep -q "no answer in 300 ms" "$D/err" ||
	fail "a stopped daemon: exit $rc: $(cat "$D/err")"
((SECONDS - t < 5)) || fail "--timeout 300 took $((SECONDS - t)) s"
answers "status after SIGCONT"
echo "$NAME: a stopped daemon: $(cat "$D/err")"

# 4b. --timeout bounds a change too (promote waits longer by default), and
# the connect: with the stopped daemon's backlog full, connect() would block
ms() { echo $(($(date +%s%N) / 1000000)); }
# timed_promote WHAT: promote --timeout 1000 must exit 4 within 1.5 s
timed_promote() {
	local t0 el
	t0=$(ms)
	timeout 10 "$CTL" -s "$S" --timeout 1000 promote > /dev/null 2> "$D/err"
	rc=$?
	el=$(($(ms) - t0))
	clean_stderr "$D/err" "promote --timeout 1000 ($1)"
	[[ $rc -eq 4 ]] || fail "$1: promote --timeout 1000: exit $rc after $el ms, not 4: $(cat "$D/err")"
	# the bound, not the machine: loaded hosts add a second to start-up
	((el < 3000)) || fail "$1: promote --timeout 1000 took $el ms"
	grep -q "no answer in 1000 ms" "$D/err" || fail "$1: promote: $(cat "$D/err")"
	echo "$NAME: $1: promote --timeout 1000 exit 4 in $el ms: $(cat "$D/err")"
}
kill -STOP "${pid[2]}"
timed_promote "a stopped daemon"
# the listen backlog is 16: 20 waiting clients fill it
for ((i = 0; i < 20; i++)); do
	"$CTL" -s "$S" --timeout 30000 status > /dev/null 2>&1 &
	bg+=($!)
done
sleep 1
timed_promote "a stopped daemon with its backlog full"
kill -CONT "${pid[2]}"
for p in "${bg[@]}"; do wait "$p" 2>/dev/null; done
bg=()
answers "status after the full backlog"
# the promote of the first try reached the stopped daemon's socket; its
# client gave up and closed: resumed, the daemon does not make it
wait_for 2 "PROMOTE from a client that hung up before it was served: not done" \
	"the stale PROMOTE dropped"

# 5. a dead daemon: its socket file stays, nobody listens
kill -9 "${pid[2]}"
wait "${pid[2]}" 2>/dev/null
unset "pid[2]"
[[ -S $S ]] || fail "the killed daemon's socket file is gone"
unreachable "$S" "refused" "a dead daemon"
echo "$NAME: a dead daemon: $(cat "$D/err")"
# a daemon started again takes the stale socket over
: > "$D/node2.err"
start 2
wait_for 2 "listening" "listening again"
"$CTL" -s "$S" --json status > "$D/out" 2> /dev/null
rc=$?
[[ $rc -eq 5 ]] || fail "status after the restart: exit $rc, not 5"
[[ $(jstr "$(cat "$D/out")" role) == replica ]] || fail "after the restart: $(cat "$D/out")"
stop 2
[[ ! -e $S ]] || fail "a clean stop left $S behind"

# 6. not a socket: a plain file, a directory
for p in "$D/plain" "$D"; do
	"$CTL" -s "$p" status > /dev/null 2> "$D/err"
	rc=$?
	[[ $rc -eq 4 ]] && grep -q -- "$p" "$D/err" || fail "-s $p: exit $rc: $(cat "$D/err")"
done
echo "$NAME: not a socket: $(cat "$D/err")"

# 7. -c FILE that does not load: exit 2 with FILE:LINE, nothing reached
conf 1 primary
line=$(grep -n '^quorum' "$D/node1.conf" | cut -d: -f1)
sed -i 's/^quorum = 1;/quorum = "one";/' "$D/node1.conf"
for args in "status" "append" "promote"; do
	"$CTL" -c "$D/node1.conf" $args < /dev/null > /dev/null 2> "$D/err"
	rc=$?
	clean_stderr "$D/err" "replctl -c bad $args"
	[[ $rc -eq 2 ]] || fail "-c a bad file $args: exit $rc, not 2: $(cat "$D/err")"
	grep -q "$D/node1.conf:$line:" "$D/err" ||
		fail "-c a bad file: no $D/node1.conf:$line: in $(cat "$D/err")"
done
echo "$NAME: -c a bad file: $(cat "$D/err")"
"$CTL" -c "$D/missing.conf" status > /dev/null 2> "$D/err"
rc=$?
[[ $rc -eq 2 ]] && grep -q "$D/missing.conf" "$D/err" ||
	fail "-c a missing file: exit $rc: $(cat "$D/err")"

# 8. the version, with no daemon
out=$("$CTL" --version 2>&1)
rc=$?
[[ $rc -eq 0 && $out =~ ^replctl\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
	fail "replctl --version: exit $rc: $out"
echo "$NAME: $out"

echo "$NAME: ok ($((SECONDS - T0)) s)"
