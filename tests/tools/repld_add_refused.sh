#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_add_refused.sh -- a membership change the primary cannot make must
# leave it serving under its old configuration (replctl(8), add/remove).
# A primary (node1) and two replicas (node2, node3; quorum 1), records
# appended, then:
#
#   A. both replicas killed (SIGKILL): `replctl add` of a fourth address
#      is refused before the primary closes its log (a promotion needs
#      n - k + 1 = 2 nodes of the current configuration, and only the
#      primary is reachable): exit 1, the message names both replicas.
#      The primary still runs, still the primary of the same membership;
#      once the replicas are back, appends are acknowledged again and
#      every record appended before is still read.
#   B. both replicas stopped (SIGSTOP) just before `replctl add`: their
#      links still stream when the primary checks, so it closes its log,
#      and then neither the new nor the old configuration can be promoted
#      (the replicas do not answer). The command fails (exit 1) saying the
#      primary retries; the daemon does not exit: status says "down",
#      changing state, with a reopen object counting failed attempts, and
#      appends, changes and reloads are refused with REOPENING (a reload
#      must not swap the membership being reopened). Once the replicas go on
#      (SIGCONT) it reopens the old configuration by itself and serves
#      again: appends acknowledged, every record read, the membership
#      unchanged.
#
# At the end every acknowledged record is in all three logs.  (A primary
# whose change failed and that could not reopen the old configuration
# either used to exit with status 4, which systemd does not restart.)
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_add_refused
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
P2=127.0.0.1:$(cport 2)
P3=127.0.0.1:$(cport 3)
P4=127.0.0.1:$(cport 4)		# a node that never runs

# live N ARG...: replctl on node N; its output in out, err, rc
live() {
	local n=$1
	shift
	out=$("$CTL" -s "$(sock "$n")" --timeout 60000 "$@" 2> "$D/live.err")
	rc=$?
	err=$(cat "$D/live.err")
	clean_stderr "$D/live.err" "replctl $*"
}

# append_some TAG N: records TAG-1..TAG-N on node1, each acknowledged;
# "LSN PAYLOAD" lines added to $D/acked
append_some() {
	local i
	for ((i = 1; i <= $2; i++)); do echo "$1-$i"; done > "$D/in.$1"
	"$CTL" -s "$(sock 1)" --timeout 20000 append < "$D/in.$1" > "$D/lsn.$1" \
		2> "$D/append.err" ||
		fail "append $1: exit $?: $(cat "$D/append.err")"
	(( $(wc -l < "$D/lsn.$1") == $2 )) || fail "append $1: $(cat "$D/lsn.$1")"
	paste -d ' ' "$D/lsn.$1" "$D/in.$1" >> "$D/acked"
}

# every acknowledged record, read from the primary with its payload
all_readable() {	# WHAT
	local lsn p
	"$CTL" -s "$(sock 1)" --timeout 20000 read --from 0 > "$D/read.out" \
		2> "$D/read.err" || fail "$1: read: exit $?: $(cat "$D/read.err")"
	while read -r lsn p; do
		grep -q "^$lsn ${#p} $p\$" "$D/read.out" ||
			fail "$1: LSN $lsn ($p) not read: $(head -n 5 "$D/read.out")"
	done < "$D/acked"
}

# alive N WHAT: node N still runs a second later
alive() {
	sleep 1
	kill -0 "${pid[$1]}" 2>/dev/null || {
		wait "${pid[$1]}"
		fail "$2: node$1 exited with status $?"
	}
}

start_cluster
append_some a 20
st=$(status_json 1)
ce=$(jnum "$st" config_epoch)

# --- A. both replicas down: refused up front -------------------------------
kill -KILL "${pid[2]}" "${pid[3]}"
wait "${pid[2]}" "${pid[3]}" 2>/dev/null
unset "pid[2]" "pid[3]"
wait_status 1 '"replicas_up":0' "both replicas down"
live 1 add "$P4"
echo "$NAME: A: add with both replicas down: exit $rc: $out$err"
alive 1 "a refused add"
[[ $rc -eq 1 ]] || fail "A: add with both replicas down: exit $rc (want 1): $out $err"
[[ $err == *"$P2"* && $err == *"$P3"* ]] ||
	fail "A: the refusal does not name the unreachable replicas: $err"
live 1 status
[[ $out == "node 1 (primary) "* ]] || fail "A: status after the refused add: $out $err"
st=$(status_json 1)
[[ $st == *'"role":"primary"'* && $st == *'"changing":false'* ]] ||
	fail "A: not the primary after the refused add: $st"
[[ $st != *"$P4"* ]] && (( $(nreplicas "$st") == 2 )) ||
	fail "A: the refused add changed the membership: $st"
(( $(jnum "$st" config_epoch) == ce )) || fail "A: config_epoch moved: $st"
grep -q "membership change refused" "$D/node1.err" ||
	fail "A: the daemon's log does not say it refused"
start 2
start 3
wait_status 1 '"replicas_up":2' "A: both replicas back" 20
append_some b 20
all_readable "A"
echo "$NAME: A ok: refused up front, the primary served on ($((SECONDS - T0)) s)"

# --- B. the replicas stop answering after the check: the reopen retries -----
# The links stream for timeouts.down_ms (1 s) after the stop: the add's
# check must come within it.  Should it come later (a loaded host), the add
# is refused up front as in A: then once more.
for try in 1 2 3; do
	kill -STOP "${pid[2]}" "${pid[3]}"
	live 1 add "$P4"
	echo "$NAME: B: add with both replicas stopped: exit $rc: $out$err"
	alive 1 "a change neither configuration could be promoted after"
	[[ $rc -eq 1 && $err == *"nothing changed"* ]] || break
	kill -CONT "${pid[2]}" "${pid[3]}"
	wait_status 1 '"replicas_up":2' "B: both replicas up before try $((try + 1))" 20
done
[[ $rc -eq 1 && $err == *"retries"* ]] ||
	fail "B: add with both replicas stopped: exit $rc (want 1, and the retry said): $out $err"
st=$(status_json 1)
[[ $st == *'"role":"down"'* && $st == *'"changing":true'* &&
   $st == *'"reopen":{'* ]] || fail "B: status while the log is closed: $st"
live 1 append <<< "while-closed"
[[ $rc -eq 1 && -z $out && $err == *REOPENING* ]] ||
	fail "B: append while the log is closed: exit $rc, out \"$out\", err \"$err\""
# a change, and a reload of a file naming another membership
cp "$D/node1.conf" "$D/node1.conf.was"
conf 1 primary 3000 1 2 3 4
for cmd in "add $P4" "reload"; do
	live 1 $cmd
	[[ $rc -eq 1 && $err == *REOPENING* ]] ||
		fail "B: $cmd while the log is closed: exit $rc: $out $err"
done
mv "$D/node1.conf.was" "$D/node1.conf"
wait_status 1 '"attempts":[1-9]' "B: a failed reopen attempt counted" 30
live 1 status
[[ $rc -eq 5 && $out == *"reopening"* ]] ||
	fail "B: status text while the log is closed: exit $rc: $out $err"
n_fail=$(grep -c "reopening the log under the old membership failed" "$D/node1.err")
kill -CONT "${pid[2]}" "${pid[3]}"
wait_status 1 '"role":"primary"' "B: the primary serving again" 60
wait_status 1 '"replicas_up":2' "B: both replicas up again" 20
[[ $st == *'"changing":false'* && $st != *'"reopen"'* ]] ||
	fail "B: status once serving again: $st"
[[ $st != *"$P4"* ]] && (( $(nreplicas "$st") == 2 )) ||
	fail "B: the failed add changed the membership: $st"
(( $(jnum "$st" config_epoch) == ce )) || fail "B: config_epoch moved: $st"
append_some c 20
all_readable "B"
echo "$NAME: B ok: the old configuration reopened by itself after $n_fail" \
	"failed attempts ($((SECONDS - T0)) s)"

stop 1
stop 2
stop 3
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
check_acked all "$D/acked" "$D/node1.log" "$D/node2.log" "$D/node3.log"
echo "$NAME: ok: $checked acknowledged records in all three logs ($((SECONDS - T0)) s)"
