#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_etcd_cluster.sh -- a three-member etcd on loopback under the
# coordinator: three nodes (lease 1 s), each given all three members'
# endpoints, an appender through node1.
#   1. kill -9 etcd's leader: for 5 s, sampled every 0.5 s, acknowledgements
#      go on, node1 stays the primary of its epoch and no replica
#      campaigns; within 10 s the two members left elect a leader and node1
#      holds the leader key, armed, through a live member;
#   2. kill -9 node1 with two etcd members left: a replica is the primary
#      of a newer epoch within 20 s, and has records acknowledged.
# Every acknowledged record is read back through the new primary and is in
# its log with its payload and client id after the stop.
set -u

NAME=repld_ha_etcd_cluster
LOGSIZE=${LOGSIZE:-64M}
ETCD_PORTS=6
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_cluster_start 3 "${ETCD_FLAGS[@]}"
ha_start_cluster
ep=$(jnum "$(status_json 1)" epoch)
camp=()
for n in 2 3; do camp[n]=$(cj "$n" coordinator.campaigns); done
load_start e 1 41
for ((t = 0; t < 100 && $(load_acks e) < 500; t++)); do sleep 0.1; done
(($(load_acks e) >= 500)) || fail "only $(load_acks e) acknowledged in 10 s"

# 1. etcd's leader killed
led=$(etcd_leader)
((led != 0)) || fail "the etcd members agree on no leader"
etcd_kill "$led"
t_kill=$(ms_now)
last=$(load_acks e)
while (($(ms_now) - t_kill < 5000)); do
	sleep 0.5
	now=$(load_acks e)
	((now > last)) || fail "no acknowledgement in 0.5 s after etcd member $led (its leader) was killed"
	last=$now
	sj 1 role epoch
	[[ "${v[*]}" == "primary $ep" ]] || fail "node1 no longer the primary of epoch $ep: $st"
	for n in 2 3; do
		sj "$n" role epoch coordinator.campaigns
		[[ "${v[*]}" == "replica $ep ${camp[n]}" ]] || fail "node$n promoted or campaigned: $st"
	done
done
etcd_wait_leader "$led" 10 || fail "the two etcd members left elected no leader in 10 s"
for ((t = 0; t < 100; t++)); do
	sj 1 coordinator.holds_leader coordinator.failover coordinator.reachable coordinator.endpoint
	[[ "${v[*]:0:3}" == "true armed true" && ${v[3]} != "${ETCD_URLS[$led]}" ]] && break
	sleep 0.1
done
[[ "${v[*]:0:3}" == "true armed true" && ${v[3]} != "${ETCD_URLS[$led]}" ]] ||
	fail "node1 does not hold the leader key, armed, through a live etcd member: $st"
ha_ready 1
echo "$NAME: etcd member $led (the leader) killed: no failover, appends went on ($(load_acks e)), member $etcd_led leads now"

# 2. node1 killed, two etcd members left
kill -9 "${pid[1]}"
wait "${pid[1]}" 2>/dev/null
unset "pid[1]"
# (the bound is for a loaded machine: repld_ha_failover.sh measures)
new_primary "$ep" 20 2 3
((np != 0)) || fail "no replica the primary of a newer epoch 20 s after node1's kill: $(roles_line)"
echo "$NAME: node1 killed: node$np the primary of epoch $(jnum "$(status_json "$np")" epoch) within $np_ms ms"
load_start f "$np" 42
for ((t = 0; t < 100 && $(load_acks f) < 300; t++)); do sleep 0.1; done
(($(load_acks f) >= 300)) || fail "only $(load_acks f) acknowledged through node$np"

load_stop e
load_stop f
[[ $lrc == 0 ]] || fail "the appender through node$np exited $lrc: $(head -n 3 "$D/load.f.err")"
: > "$D/acked"
load_pairs e 41
load_pairs f 42
sort_acked
check_read "$np"
stop $((5 - np))
stop "$np"
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
check_acked all "$D/acked" "$D/node$np.log"
check_clients "$D/node$np.log"
echo "$NAME: ok: all $checked acknowledged records kept ($((SECONDS - T0)) s)"
