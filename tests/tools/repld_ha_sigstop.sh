#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_sigstop.sh -- a primary that stops answering but lives: three
# nodes with a coordinator (lease 1 s), one etcd, an appender through node1.
# SIGSTOP node1 past its lease, until a replica is the primary of a newer
# epoch (20 s at most).  SIGCONT node1: a record sent to it after that is not
# acknowledged (replctl append fails); node1 does not exit (HA mode) but
# becomes a replica following the new primary at its epoch.  Every record
# acknowledged at all -- by node1 before and after the stop, by the new
# primary -- is read back through the new primary, and after the stop is in
# every node's log with its payload.
set -u

NAME=repld_ha_sigstop
LOGSIZE=${LOGSIZE:-64M}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_start "${ETCD_FLAGS[@]}"
ha_start_cluster
ep=$(jnum "$(status_json 1)" epoch)
load_start s 1 11
for ((t = 0; t < 100 && $(load_acks s) < 500; t++)); do sleep 0.1; done
(($(load_acks s) >= 500)) || fail "only $(load_acks s) acknowledged in 10 s"

kill -STOP "${pid[1]}"
new_primary "$ep" 20 2 3
((np != 0)) || { kill -CONT "${pid[1]}"; fail "no replica promoted while node1 was stopped: $(roles_line)"; }
nep=$(jnum "$(status_json "$np")" epoch)
echo "$NAME: node$np the primary of epoch $nep within $np_ms ms of node1's SIGSTOP"
# given every node, replctl finds the primary (node1, stopped, does not
# answer its STATUS and is passed over; the replica comes last, so a
# replctl that took one -s of the three would not reach the primary)
out=$(echo "via-any-node" | "$CTL" -s "$(sock 1)" -s "$(sock "$np")" \
	-s "$(sock $((5 - np)))" --json append --client-id 14 2>> "$D/ctl.err")
[[ $out == *'"ok":true'* ]] ||
	fail "replctl given every node did not append through node$np: $out"
load_start n "$np" 12
for ((t = 0; t < 100 && $(load_acks n) < 100; t++)); do sleep 0.1; done
kill -CONT "${pid[1]}"

# a record sent to node1 after SIGCONT is not acknowledged
out=$(echo "after-cont" | "$CTL" -s "$(sock 1)" --timeout 5000 --json append --client-id 13 2> "$D/late.err")
rc=$?
((rc != 0)) && [[ $out != *'"ok":true'* ]] ||
	fail "node1 acknowledged a record sent after SIGCONT: exit $rc: $out"
echo "$NAME: node1 after SIGCONT: append exit $rc: $(head -n 1 "$D/late.err")"
# its refusals name the new primary as soon as node1 knows of it (the
# leader key read again, or following it): WRONG_ROLE or REPL_E_FENCED
for ((t = 0; t < 50; t++)); do
	out=$(echo "after-cont-$t" | "$CTL" -s "$(sock 1)" --timeout 2000 --json \
		append --client-id 13 2>> "$D/late.err")
	[[ $out != *'"ok":true'* ]] || fail "node1 acknowledged a record after SIGCONT: $out"
	[[ $out == *"\"primary_node\":$np,"* ]] && break
	sleep 0.1
done
[[ $out == *"\"primary_node\":$np,"* && $out == *'"primary_address":"127.0.0.1:'* ]] ||
	fail "node1's refusals do not name node$np as the primary: $out"
echo "$NAME: node1 refuses with: $out"

# node1 lives on as the new primary's replica
wait_status 1 '"role":"replica"' "node1 a replica after SIGCONT" 20
kill -0 "${pid[1]}" 2>/dev/null || fail "node1 exited"
wait_status 1 "\"following\":true.*\"primary_node\":$np" "node1 following node$np" 20
[[ $(jnum "$st" epoch) == "$nep" ]] || fail "node1 is not at epoch $nep: $st"
ha_ready "$np"

load_stop s
load_stop n
[[ $lrc == 0 ]] || fail "the appender through node$np exited $lrc: $(head -n 3 "$D/load.n.err")"
: > "$D/acked"
load_pairs s 11
load_pairs n 12
sort_acked
check_read "$np"
wait_status "$np" '"lag_records":0,.*"lag_records":0' "the replicas caught up" 30
stop "$np"
for n in 1 2 3; do [[ $n == "$np" ]] || stop "$n"; done
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
check_acked all "$D/acked" "$D/node$np.log"
check_clients "$D/node$np.log"
for n in 1 2 3; do [[ $n == "$np" ]] || check_acked all "$D/acked" "$D/node$n.log"; done
echo "$NAME: ok: node$np took over from a stopped node1, which rejoined; all $checked acknowledged records kept ($((SECONDS - T0)) s)"
