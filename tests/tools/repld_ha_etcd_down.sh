#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_etcd_down.sh -- etcd gone under steady appends: three nodes with
# a coordinator (lease 1 s), one etcd, an appender through node1.  kill -9
# etcd for ETCD_DOWN_S seconds (default 30); meanwhile, sampled each
# second:
#   - acknowledgements go on: more in every second than in the one before;
#   - node1's coordinator says failover "paused", reachable false (within
#     3 s of the kill, and from then on);
#   - no promotion: node1 the primary of the same epoch, node2 and node3
#     replicas following it at that epoch, none began a campaign.
# Then etcd restarts on its data directory: node1 holds the leader key
# again (holds_leader true), failover "armed" on every node, still the
# same epoch; every acknowledged record is read back through node1.
set -u

NAME=repld_ha_etcd_down
LOGSIZE=${LOGSIZE:-64M}
ETCD_DOWN_S=${ETCD_DOWN_S:-30}
. "$(dirname "$0")/ha_lib.sh"
T0=$SECONDS

etcd_start "${ETCD_FLAGS[@]}"
ha_start_cluster
ep=$(jnum "$(status_json 1)" epoch)
camp=()
for n in 2 3; do camp[n]=$(cj "$n" coordinator.campaigns); done

load_start d 1 7
for ((t = 0; t < 100 && $(load_acks d) < 500; t++)); do sleep 0.1; done
(($(load_acks d) >= 500)) || fail "only $(load_acks d) acknowledged in 10 s"

# same_cluster WHEN: node1 the primary of epoch $ep, the others its replicas
same_cluster() {
	local n
	sj 1 role epoch fenced
	[[ "${v[*]}" == "primary $ep false" ]] || fail "$1: node1 is no longer the primary of epoch $ep: $st"
	for n in 2 3; do
		sj "$n" role following primary_node epoch coordinator.campaigns
		[[ "${v[*]}" == "replica true 1 $ep ${camp[n]}" ]] ||
			fail "$1: node$n is not node1's replica of epoch $ep, or campaigned: $st"
	done
}

etcd_kill
t_kill=$SECONDS
last=$(load_acks d)
paused=0
while ((SECONDS - t_kill < ETCD_DOWN_S)); do
	sleep 1
	now=$(load_acks d)
	((now > last)) ||
		fail "no acknowledgement in a second $((SECONDS - t_kill)) s after etcd's kill ($now in all)"
	[[ -e $D/load.d.rc ]] && fail "the appender ended: $(cat "$D/load.d.err")"
	last=$now
	sj 1 coordinator.failover coordinator.reachable
	if [[ "${v[*]}" == "paused false" ]]; then
		paused=1
	elif ((paused || SECONDS - t_kill > 3)); then
		fail "$((SECONDS - t_kill)) s after etcd's kill, node1's coordinator: ${v[*]} (not paused false): $st"
	fi
	same_cluster "$((SECONDS - t_kill)) s after etcd's kill"
done
((paused)) || fail "node1 never said failover paused while etcd was down"
echo "$NAME: etcd down ${ETCD_DOWN_S} s: appends went on ($(load_acks d) acknowledged), failover paused, no promotion"

t_restart=$(ms_now)
etcd_restart
t_back=$(ms_now)
# grep, not python: the poll is the measurement, under the appender's load
for ((t = 0; t < 150; t++)); do
	st=$(status_json 1)
	[[ $st == *'"reachable":true'* && $st == *'"failover":"armed"'* &&
	   $st == *'"holds_leader":true'* ]] && break
	sleep 0.1
done
t_held=$(ms_now)
[[ $st == *'"holds_leader":true'* ]] ||
	fail "node1 does not hold the leader key, armed, 15 s after etcd came back: $st"
ha_ready 1
same_cluster "after etcd came back"
echo "$NAME: etcd back: it answered $((t_back - t_restart)) ms after its restart began;" \
	"node1 held the leader key, failover armed, $((t_held - t_back)) ms after that"

load_stop d
[[ $lrc == 0 ]] || fail "the appender exited $lrc: $(head -n 3 "$D/load.d.err")"
: > "$D/acked"
load_pairs d 7
check_read 1
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok: all $checked acknowledged records read back through node1 ($((SECONDS - T0)) s)"
