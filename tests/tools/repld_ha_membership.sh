#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_ha_membership.sh -- the membership in etcd: three repld nodes with a
# coordinator (lease 1 s) beside one etcd on loopback.
#
#   1. the primary writes its log's membership to PREFIX<uuid>/membership:
#      configuration epoch 1, the three nodes by node id (read from etcd
#      itself, and status says "applied");
#   2. a fourth node started; replctl add node4, then replctl remove node3:
#      each written to etcd first (epochs 3 and 5), then carried to the
#      logs; node4's id, learned by the primary, is written back; node3's
#      status says it is removed (status --json "removed", a REMOVED line);
#   3. records are appended, and the primary killed (SIGKILL): node2
#      (whose file still lists the first three nodes) or node4, whichever
#      wins the leader key, takes over, promoting over the membership its
#      log holds as etcd names it (two peers); every acknowledged record is
#      read back through it;
#   4. node1 rejoins as a replica; then a change put into the key by hand,
#      as a primary that died before carrying it leaves one (epoch 7: node3
#      back), is carried by the primary by itself;
#   5. a key two changes ahead, which no primary may carry, is left as it
#      is, and replctl remove is refused (CHANGE_PENDING, exit 1) while it
#      is there: nothing changes; a value that does not parse is replaced
#      by the primary's own.
#   6. node1, switched over to, is stopped with every other node and
#      started again from its file, which still names the first three
#      nodes: it takes etcd's membership (epoch 7, four nodes) as its
#      log's, and leads again once the others are back (without it the
#      start was refused: the file is not the log's membership).
# Without an etcd binary it is skipped (77).
NAME=repld_ha_membership
ETCD=${ETCD:-$(command -v etcd)}
[[ -n $ETCD && -x $ETCD ]] ||
	{ echo "SKIP: $NAME: no etcd binary (Debian: apt-get install etcd-server)"; exit 77; }
FIRST_ACK=${FIRST_ACK:-./tests/tools/first_ack}
[[ -x $FIRST_ACK ]] || { echo "$NAME: $FIRST_ACK not built"; exit 99; }
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/ha_cluster.sh"
T0=$SECONDS

# the membership key's value, as etcd holds it ("" when absent)
KEY=$(printf '/rpma-repl/%s/membership' "$UUID" | base64 -w0)
ms_key() {
	curl -sf --max-time 2 -X POST "$ETCD_URL/v3/kv/range" -d "{\"key\":\"$KEY\"}" |
		grep -o '"value":"[^"]*"' | cut -d'"' -f4 | base64 -d
}
ms_put() {
	curl -sf --max-time 2 -X POST "$ETCD_URL/v3/kv/put" \
		-d "{\"key\":\"$KEY\",\"value\":\"$(printf '%s' "$1" | base64 -w0)\"}" > /dev/null ||
		fail "cannot put the membership key"
}
# the coordinator's membership object in node N's status
ms_status() {
	status_json "$1" | grep -o '"membership":{"state":[^]]*]' | head -n 1
}
# wait_ms N REGEX SECONDS WHAT: until node N's membership object matches
wait_ms() {
	local t s
	for ((t = 0; t < $3 * 10; t++)); do
		s=$(ms_status "$1")
		[[ $s =~ $2 ]] && return 0
		sleep 0.1
	done
	fail "$4: node$1's coordinator.membership is not /$2/ after $3 s: $s"
}

ha_etcd_start
ha_start_cluster 1000

# 1. seeded from the log
wait_ms 1 '"state":"applied","config_epoch":1,"quorum":1' 10 "seeding"
v=$(ms_key)
for n in 1 2 3; do
	[[ $v == *"{\"node_id\":$n,\"ctl_addr\":\"127.0.0.1:$(cport $n)\"}"* ]] ||
		fail "etcd's membership key does not name node$n by node id: $v"
done
[[ $v == *'"config_epoch":1,'* ]] || fail "etcd's membership key is not epoch 1: $v"
echo "$NAME: etcd holds the membership: $v"

# 2. an addition and a removal, through etcd
ha_conf 4 replica 1000
start 4
wait_for 4 "listening" "listening"
"$CTL" -s "$(sock 1)" add "127.0.0.1:$(cport 4)" > "$D/add.out" 2>&1 ||
	fail "replctl add node4: $(cat "$D/add.out")"
grep -q "membership of configuration epoch 3 (4 nodes, quorum 1) written to etcd" "$D/node1.err" ||
	fail "node1's log does not say it wrote the addition to etcd first"
wait_ms 1 '"state":"applied","config_epoch":3' 10 "the addition"
v=$(ms_key)
[[ $v == *'"config_epoch":3,'* && $v == *"\"ctl_addr\":\"127.0.0.1:$(cport 4)\"}"* ]] ||
	fail "after the addition etcd's key is not epoch 3 with node4: $v"
"$CTL" -s "$(sock 1)" remove "127.0.0.1:$(cport 3)" > "$D/remove.out" 2>&1 ||
	fail "replctl remove node3: $(cat "$D/remove.out")"
v=$(ms_key)
[[ $v == *'"config_epoch":5,'* && $v != *"$(cport 3)"* ]] ||
	fail "after the removal etcd's membership key is not epoch 5 without node3: $v"
wait_ms 1 '"state":"applied","config_epoch":5' 10 "the removal"
wait_ms 2 '"state":"applied","config_epoch":5' 10 "node2 holding the removal"
grep -q "carrying it" "$D/node1.err" &&
	fail "node1 carried its own change a second time: $(grep "carr" "$D/node1.err")"
# node3, left out by etcd's key (its log may never get the change), says so
wait_status 3 '"removed":true' "node3 saying it is removed" 10
"$CTL" -s "$(sock 3)" status > "$D/removed.out" 2>&1
grep -q "^REMOVED   from the membership" "$D/removed.out" ||
	fail "replctl status of the removed node3 does not say it: $(cat "$D/removed.out")"
[[ $(status_json 2) == *'"removed":false'* ]] || fail "node2 says it is removed: $(status_json 2)"
echo "$NAME: added node4, removed node3: $v ($((SECONDS - T0)) s)"

# 3. appends, then the primary killed: node2 takes over
seq 1 30 | sed 's/^/record /' | "$CTL" -s "$(sock 1)" append > "$D/lsn" 2> "$D/append.err" ||
	fail "appends through node1: $(cat "$D/append.err")"
paste -d' ' "$D/lsn" <(seq 1 30 | sed 's/^/record /') > "$D/acked"
kill -9 "${pid[1]}"
wait "${pid[1]}" 2>/dev/null
unset 'pid[1]'
out=$("$FIRST_ACK" 15000 77 "$(sock 2)" "$(sock 4)") ||
	fail "neither node2 nor node4 acknowledged within 15 s of node1's kill: $(grep -hi "promot\|refused" "$D/node2.err" "$D/node4.err" | tail -n 3)"
read -r won ms lsn <<< "$out"
# either member may win the leader key: P is the one that did
P=$((won == 1 ? 2 : 4))
echo "$lsn first" >> "$D/acked.extra"
grep -q "promoting over the membership this log holds, as etcd's key names it (configuration epoch 5: 2 peers, quorum 1)" \
	"$D/node$P.err" || fail "node$P did not promote over the key's membership"
ha_check_acked $P "$D/acked" "after the failover"
echo "$NAME: node$P took over in $ms ms, over etcd's membership; 30 records kept"

# 4. node1 back; a change left in the key is carried
start 1
ha_wait_replica_of 1 $P 30 "node1's rejoin"
wait_ms $P '"state":"applied","config_epoch":5' 10 "node$P as primary"
ms_put "{\"config_epoch\":7,\"quorum\":1,\"nodes\":[{\"node_id\":2,\"ctl_addr\":\"127.0.0.1:$(cport 2)\"},{\"node_id\":1,\"ctl_addr\":\"127.0.0.1:$(cport 1)\"},{\"node_id\":4,\"ctl_addr\":\"127.0.0.1:$(cport 4)\"},{\"node_id\":0,\"ctl_addr\":\"127.0.0.1:$(cport 3)\"}]}"
wait_ms $P '"state":"applied","config_epoch":7' 20 "carrying the key's change"
grep -q "holds a change to configuration epoch 7 (4 nodes, quorum 1) not in this primary's log (5): carrying it" \
	"$D/node$P.err" || fail "node$P's log does not say it carried the key's change"
# the new node's id is learned and written back
for ((t = 0; t < 100; t++)); do
	v=$(ms_key)
	[[ $v == *"{\"node_id\":3,\"ctl_addr\":\"127.0.0.1:$(cport 3)\"}"* ]] && break
	sleep 0.1
done
[[ $v == *"{\"node_id\":3,"* ]] || fail "node3's id is not in etcd's key after the change: $v"
echo "$NAME: the key's change (node3 back) carried: $v ($((SECONDS - T0)) s)"

# 5. a key two changes ahead: left alone, and changes refused meanwhile
ms_put "{\"config_epoch\":11,\"quorum\":0,\"nodes\":[{\"node_id\":$P,\"ctl_addr\":\"127.0.0.1:$(cport $P)\"}]}"
wait_ms $P '"state":"pending","config_epoch":11' 10 "a key ahead"
"$CTL" -s "$(sock $P)" remove "127.0.0.1:$(cport 3)" > "$D/refused.out" 2>&1
rc=$?
[[ $rc == 1 ]] || fail "replctl remove with the key ahead: exit $rc, not 1: $(cat "$D/refused.out")"
grep -q "CHANGE_PENDING" "$D/refused.out" || fail "the refusal does not say CHANGE_PENDING: $(cat "$D/refused.out")"
st=$(status_json $P)
[[ $(jnum "$st" config_epoch) == 7 ]] || fail "the refused change changed the log: $st"
grep -q "etcd's membership key holds configuration epoch 11 and this primary's log 7: not the next change" \
	"$D/node$P.err" || fail "node$P does not report the key it cannot carry"
echo "$NAME: a key two changes ahead is left; replctl remove refused: $(head -n 1 "$D/refused.out")"

# a value that is no membership: the primary writes its own again
ms_put '{"config_epoch":"eleven"}'
wait_ms $P '"state":"applied","config_epoch":7' 10 "a key that does not parse"
echo "$NAME: a key that does not parse is replaced by the log's membership"

# 6. a restart from a file the changes left behind
"$CTL" -s "$(sock $P)" switchover --to 1 > "$D/sw.out" 2>&1 ||
	fail "switchover to node1: $(cat "$D/sw.out")"
wait_status 1 '"role":"primary"' "node1 the primary after the switchover" 20
for n in 2 3 4; do stop $n; done
stop 1
start 1
wait_for 1 "starting with the membership etcd's key holds (configuration epoch 7, as this node's log: 3 peers, quorum 1), not the file's" \
	"node1 starting with etcd's membership"
for n in 2 3 4; do start $n; done
wait_status 1 '"role":"primary".*"config_epoch":7' "node1 leading again under epoch 7" 30
echo "record after the restart" | "$CTL" -s "$(sock 1)" append > /dev/null 2> "$D/append.err" ||
	fail "append through node1 after its restart: $(cat "$D/append.err")"
echo "$NAME: node1 restarted from a stale file took etcd's membership and leads"

for n in 1 2 3 4; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
