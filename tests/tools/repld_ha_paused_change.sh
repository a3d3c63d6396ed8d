#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_paused_change.sh -- a primary paused between writing a membership
# change to etcd and carrying it out: three nodes with a coordinator (lease
# 1 s), an appender through node1.  `replctl add` of a fourth address to
# node1, which stops itself (SIGSTOP, the debug builds' REPLD_TEST_STOP_AT
# hook) right after its proposal is in etcd.  A replica takes over (and
# carries the change left in etcd, as the new primary does); node1 is
# resumed.  It must not carry the change (its promotion would fence the new
# primary): the add fails with NOT_LEADER, node1 rejoins as a replica of the
# new primary, which stays the primary and is never fenced; every
# acknowledged record is kept.  Skipped (77) in a build without the hook (a release
# build).
set -u

NAME=repld_ha_paused_change
LOGSIZE=${LOGSIZE:-64M}
grep -q "define RPMA_DEBUG_FAULT_INJECTION 1" ./config.h 2>/dev/null ||
	{ echo "SKIP: $NAME: not a debug build (REPLD_TEST_STOP_AT is compiled into debug builds only)"; exit 77; }
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_start "${ETCD_FLAGS[@]}"
export REPLD_TEST_STOP_AT=membership-proposed
ha_start_cluster
ep=$(jnum "$(status_json 1)" epoch)
load_start s 1 11
for ((t = 0; t < 100 && $(load_acks s) < 300; t++)); do sleep 0.1; done
(($(load_acks s) >= 300)) || fail "only $(load_acks s) acknowledged in 10 s"

# the add: node1 proposes in etcd, then stops itself
"$CTL" -s "$(sock 1)" --timeout 90000 add "127.0.0.1:$(cport 4)" \
	> "$D/add.out" 2> "$D/add.err" &
addpid=$!
bg+=("$addpid")
stopped=0
for ((t = 0; t < 100; t++)); do
	[[ $(awk '{ print $3 }' "/proc/${pid[1]}/stat" 2>/dev/null) == T ]] && { stopped=1; break; }
	sleep 0.1
done
((stopped)) || fail "node1 did not stop after its proposal: $(tail -n 3 "$D/node1.err")"
grep -q "stopping at membership-proposed" "$D/node1.err" ||
	fail "node1 stopped, but not at its hook"
echo "$NAME: node1 stopped after proposing the add ($((SECONDS - T0)) s)"

new_primary "$ep" 20 2 3
((np != 0)) || { kill -CONT "${pid[1]}"; fail "no replica promoted while node1 was stopped: $(roles_line)"; }
ha_ready_np() {	# node np holds the key, armed (node1 is still stopped)
	local t v
	for ((t = 0; t < 100; t++)); do
		v=($(cj "$np" role coordinator.holds_leader coordinator.failover))
		[[ "${v[*]-}" == "primary true armed" ]] && return 0
		sleep 0.1
	done
	fail "node$np not the armed primary: $(roles_line)"
}
ha_ready_np
nep=$(jnum "$(status_json "$np")" epoch)
echo "$NAME: node$np the primary of epoch $nep within $np_ms ms; resuming node1"
kill -CONT "${pid[1]}"

# the add must fail: node1's lease ran out while it was stopped
for ((t = 0; t < 600; t++)); do
	kill -0 "$addpid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$addpid" 2>/dev/null && fail "replctl add still running 60 s after SIGCONT"
wait "$addpid"
arc=$?
((arc == 1)) || fail "replctl add: exit $arc, want 1: $(cat "$D/add.out" "$D/add.err")"
grep -q "NOT_LEADER\|leader key" "$D/add.err" ||
	fail "replctl add failed, but not for the leader key: $(cat "$D/add.err")"
echo "$NAME: the add refused after SIGCONT: $(head -n 1 "$D/add.err")"

# node1 rejoins as a replica of node$np, which stays the primary (its
# own carry of the change node1 left in etcd may take it to a newer epoch
# meanwhile, each promotion its own): never fenced, by node1 or anyone
wait_status 1 "\"following\":true.*\"primary_node\":$np" "node1 following node$np" 30
kill -0 "${pid[1]}" 2>/dev/null || fail "node1 exited"
v=($(cj "$np" role fenced))
[[ "${v[*]-}" == "primary false" ]] ||
	fail "node$np is not the primary any more (fenced by node1's change?): $(roles_line)"
grep -q "this primary is fenced\|fenced: a newer primary" "$D/node$np.err" &&
	fail "node$np was fenced: $(grep -m1 "fenced" "$D/node$np.err")"
grep -q "reconfiguring:" "$D/node1.err" &&
	fail "node1 began the change's promotion after SIGCONT: $(grep -m1 "reconfiguring:" "$D/node1.err")"
grep -q "is the primary of epoch" <(sed -n '/stopping at membership-proposed/,$p' "$D/node1.err") &&
	fail "node1 became a primary again after SIGCONT"

load_stop s
: > "$D/acked"
load_pairs s 11
load_start n "$np" 12
for ((t = 0; t < 100 && $(load_acks n) < 100; t++)); do sleep 0.1; done
load_stop n
[[ $lrc == 0 ]] || fail "the appender through node$np exited $lrc: $(head -n 3 "$D/load.n.err")"
load_pairs n 12
sort_acked
check_read "$np"
wait_status "$np" '"lag_records":0,.*"lag_records":0' "the replicas caught up" 30
stop "$np"
for n in 1 2 3; do [[ $n == "$np" ]] || stop "$n"; done
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
for n in 1 2 3; do check_acked all "$D/acked" "$D/node$n.log"; done
echo "$NAME: ok: node1, paused after its proposal, changed nothing and rejoined node$np; all $checked acknowledged records kept ($((SECONDS - T0)) s)"
