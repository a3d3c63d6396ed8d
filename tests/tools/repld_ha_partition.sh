#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_partition.sh -- cuts of the primary through loopback proxies:
# three nodes with a coordinator (lease 1 s), one etcd; node1, the primary,
# listens on 127.0.0.2 and reaches etcd through a tcp_proxy; every node's
# file names node2's and node3's control ports at proxies that cut only
# what comes from 127.0.0.2 (a primary's control connections leave from its
# listen address), so node1 can be cut from a replica while the other
# replica still reaches it; an appender through node1.
#   1. node1 cut from etcd only (its proxy blackholed) for 3 leases: its
#      coordinator says reachable false, failover paused; the leader key
#      lapses (the replicas read no leader) but their links are up: no
#      campaign, no promotion, appends go on; the proxy passes again: node1
#      holds the leader key again, armed.
#   2. node1 cut from etcd and from node3 for 3 leases: the leader key is
#      gone and node3's link is down, but node2 reports link_up: node3 must
#      not campaign; no promotion, appends go on (quorum 1: node2); both
#      pass again: node3 follows node1 again, node1 holds the leader key.
#   3. node1 cut from etcd and from both replicas: a replica takes the
#      leader key and is the primary of a newer epoch within 20 s; an
#      appender through it has records acknowledged.  What is not cut:
#      the way to node1's own control port (a membership names a node at
#      its listen address, so no relay can stand there), which the
#      promotion fences it through, and the data connections node1 opened
#      to the replicas' data ports (a replica names its own).  Healed:
#      node1, still running, follows the new primary at its epoch.
#      (repld_ha_sigstop.sh covers a primary silent both ways.)
# Every record acknowledged by either primary is read back through the new
# one, and is in every node's log with its payload after the stop.
set -u

NAME=repld_ha_partition
LOGSIZE=${LOGSIZE:-64M}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_start "${ETCD_FLAGS[@]}"
proxy_start etcd "$PROXY_BASE" "${ETCD_URL##*:}"
# node1 listens on an address of its own, so that the relays to the
# replicas can cut what comes from it alone
ADDR[1]=127.0.0.2
proxy_start n12 $((PROXY_BASE + 1)) "$(cport 2)" "${ADDR[1]}"
proxy_start n13 $((PROXY_BASE + 2)) "$(cport 3)" "${ADDR[1]}"
ENDPOINTS[1]="\"http://127.0.0.1:$PROXY_BASE\""
VIEW[2]=$((PROXY_BASE + 1))
VIEW[3]=$((PROXY_BASE + 2))
ha_start_cluster
ep=$(jnum "$(status_json 1)" epoch)
camp=()
for n in 2 3; do camp[n]=$(cj "$n" coordinator.campaigns); done
load_start c 1 31
for ((t = 0; t < 100 && $(load_acks c) < 500; t++)); do sleep 0.1; done
(($(load_acks c) >= 500)) || fail "only $(load_acks c) acknowledged in 10 s"

# no_failover WHEN: node1 the primary of $ep; node2 (and node3 unless
# CUT3) its replica; neither campaigned
no_failover() {
	local n
	sj 1 role epoch
	[[ "${v[*]}" == "primary $ep" ]] || fail "$1: node1 no longer the primary of epoch $ep: $st"
	for n in 2 3; do
		sj "$n" role epoch coordinator.campaigns following primary_node
		[[ "${v[*]:0:3}" == "replica $ep ${camp[n]}" ]] ||
			fail "$1: node$n promoted or campaigned: $st"
		[[ $n == 3 && ${CUT3:-0} == 1 ]] && continue
		[[ "${v[*]:3:2}" == "true 1" ]] || fail "$1: node$n does not follow node1: $st"
	done
}

# cut_for WHAT: 3 leases, each 200 ms: acknowledgements grow, no failover,
# node1's coordinator paused and unreachable (after its timeout and a
# renewal); the replicas see the leader key gone at least once
cut_for() {
	local t0=$(ms_now) last=$(load_acks c) now gone=0 paused=0
	while (($(ms_now) - t0 < 3 * LEASE_MS)); do
		sleep 0.2
		no_failover "$1"
		sj 1 coordinator.reachable coordinator.failover
		[[ "${v[*]}" == "false paused" ]] && paused=1
		sj 2 coordinator.leader
		[[ ${v[0]} == null ]] && gone=1
	done
	now=$(load_acks c)
	((now > last)) || fail "$1: no acknowledgement during the cut"
	((paused)) || fail "$1: node1 never said reachable false, failover paused"
	((gone)) || fail "$1: node2 still read a leader after 3 leases of node1 cut from etcd"
}

# 1. node1 cut from etcd only
proxy_mode etcd blackhole
cut_for "node1 cut from etcd"
proxy_mode etcd pass
ha_ready 1
no_failover "etcd reachable again"
echo "$NAME: node1 cut from etcd for 3 leases: no failover, appends went on ($(load_acks c)), the key taken back"

# 2. and node3 cut from node1
proxy_mode etcd blackhole
proxy_mode n13 blackhole
CUT3=1
wait_status 3 '"following":false' "node3's link down" 10
cut_for "node1 cut from etcd, node3 from node1"
sj 3 coordinator.campaigns
[[ ${v[0]} == "${camp[3]}" ]] || fail "node3 campaigned while node2 reported link_up: $st"
proxy_mode n13 pass
proxy_mode etcd pass
CUT3=0
wait_status 1 '"replicas_up":2' "node3 up again" 20
ha_ready 1
no_failover "both cuts healed"
echo "$NAME: node3 cut from node1 with the leader key gone: it did not campaign"

# 3. node1 cut from everything
for x in etcd n12 n13; do proxy_mode "$x" blackhole; done
# (the bound is for a loaded machine: repld_ha_failover.sh measures)
new_primary "$ep" 20 2 3
((np != 0)) || fail "node1 cut from all: no replica the primary of a newer epoch in 20 s: $(roles_line)"
nep=$(jnum "$(status_json "$np")" epoch)
echo "$NAME: node1 cut from all: node$np the primary of epoch $nep within $np_ms ms"
load_start n "$np" 32
for ((t = 0; t < 100 && $(load_acks n) < 300; t++)); do sleep 0.1; done
(($(load_acks n) >= 300)) || fail "only $(load_acks n) acknowledged through node$np"
for x in etcd n12 n13; do proxy_mode "$x" pass; done
wait_status 1 "\"role\":\"replica\".*\"following\":true.*\"primary_node\":$np" \
	"node1 following node$np once healed" 30
kill -0 "${pid[1]}" 2>/dev/null || fail "node1 exited"
[[ $(jnum "$st" epoch) == "$nep" ]] || fail "node1 is not at epoch $nep: $st"
ha_ready "$np"
echo "$NAME: healed: node1 the replica of node$np"

load_stop c
load_stop n
[[ $lrc == 0 ]] || fail "the appender through node$np exited $lrc: $(head -n 3 "$D/load.n.err")"
: > "$D/acked"
load_pairs c 31
load_pairs n 32
sort_acked
check_read "$np"
wait_status "$np" '"lag_records":0,.*"lag_records":0' "the replicas caught up" 30
stop "$np"
for n in 1 2 3; do [[ $n == "$np" ]] || stop "$n"; done
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
check_acked all "$D/acked" "$D/node$np.log"
check_clients "$D/node$np.log"
for n in 1 2 3; do [[ $n == "$np" ]] || check_acked all "$D/acked" "$D/node$n.log"; done
echo "$NAME: ok: all $checked acknowledged records kept ($((SECONDS - T0)) s)"
