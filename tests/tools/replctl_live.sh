#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_live.sh -- every live replctl command against a running
# three-node loopback cluster (repld, ofi:tcp, file backend in /dev/shm):
#   1. status: the table names the primary and both replicas streaming;
#      --json has "role":"primary" and replicas_up 2; a replica's says
#      replica (table and --json, with its peers);
#   2. peers, on the primary and on a replica;
#   3. append: N lines -> N increasing LSNs, then commit_lsn >= the last;
#      --json: one reply per record;
#   4. bench --records 2000: p50, p99, records/s; --json "records":2000;
#   5. fence: the primary serves as a replica; appends to it exit 1 with
#      WRONG_ROLE;
#   6. promote node2: it is the primary;
#   7. remove a replica: one fewer, config_epoch up; add it back;
#   8. reload (replctl reload and SIGHUP) after editing the primary's file;
#      a file that does not load: exit 1 naming FILE:LINE, nothing changes;
#   9. usage errors: exit 2 (an empty line to append too);
#  10. every node stops cleanly; the acknowledged records are in the
#      final primary's log (dump, offline).
# verify: both replicas match; a replica or a frozen replica fails it;
# --from after --to is a usage error.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=replctl_live
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
P2=127.0.0.1:$(cport 2)
P3=127.0.0.1:$(cport 3)
P1=127.0.0.1:$(cport 1)

# live CMD...: replctl against node N's socket; stdout in $out, stderr in
# $err, exit code in $rc
live() {
	local n=$1
	shift
	out=$("$CTL" -s "$(sock "$n")" "$@" 2> "$D/live.stderr")
	rc=$?
	err=$(cat "$D/live.stderr")
	clean_stderr "$D/live.stderr" "replctl $*"
}

# the cluster: node1 the primary, node2 and node3 replicas
start_cluster

# 1. status
live 1 status
[[ $rc -eq 0 ]] || fail "status: exit $rc: $err"
grep -q "^node 1 (primary) at $P1" <<< "$out" || fail "status: no primary line: $out"
grep -q ", 2 replicas up" <<< "$out" || fail "status: not 2 replicas up: $out"
for a in "$P2" "$P3"; do
	grep -Eq "^$a +streaming +yes " <<< "$out" ||
		fail "status: replica $a not streaming: $out"
done
live 1 --json status
[[ $rc -eq 0 ]] || fail "--json status: exit $rc: $err"
[[ $(wc -l <<< "$out") -eq 1 ]] || fail "--json status: not one line: $out"
[[ $out == '{"ok":true,'*'"role":"primary"'* ]] || fail "--json status: $out"
[[ $(jnum "$out" replicas_up) == 2 && $(jnum "$out" node_id) == 1 &&
   $(jstr "$out" role) == primary && $(jnum "$out" quorum) == 1 ]] ||
	fail "--json status: replicas_up/node_id/quorum: $out"
[[ $out == *'"fenced":false'* && $out == *'"state":"streaming"'*'"state":"streaming"'* ]] ||
	fail "--json status: fenced or states: $out"
for k in epoch config_epoch first_lsn last_lsn durable_lsn commit_lsn; do
	[[ $(jnum "$out" $k) =~ ^[0-9]+$ ]] || fail "--json status: no $k: $out"
done
CE0=$(jnum "$out" config_epoch)
# the option after the command works too
live 1 status --json
[[ $rc -eq 0 && $(jstr "$out" role) == primary ]] || fail "status --json: exit $rc: $out"
live 2 status
[[ $rc -eq 0 ]] || fail "replica status: exit $rc: $err"
grep -q "^node 2 (replica) at $P2" <<< "$out" || fail "replica status: $out"
grep -q "REPLICA" <<< "$out" && fail "replica status lists replicas: $out"
echo "$NAME: status ok"

# 2. peers
live 1 peers
[[ $rc -eq 0 ]] || fail "peers: exit $rc: $err"
for a in "$P2" "$P3"; do
	grep -Eq "^$a +streaming +yes +[0-9]+" <<< "$out" || fail "peers: $a: $out"
done
live 2 peers
[[ $rc -eq 0 ]] || fail "replica peers: exit $rc: $err"
grep -q "^PEER" <<< "$out" && grep -q "^$P1 *\$" <<< "$out" &&
	grep -q "^$P3 *\$" <<< "$out" || fail "replica peers: $out"
live 2 --json peers
[[ $rc -eq 0 && $(jstr "$out" role) == replica &&
   $out == *'"peers":[{"address":"'"$P1"'"},{"address":"'"$P3"'"}]'* ]] ||
	fail "replica --json peers: $out"
echo "$NAME: peers ok"

# 3. append
: > "$D/acked"
N=50
seq 1 $N | sed 's/^/live-/' > "$D/in"
live 1 append < "$D/in"
[[ $rc -eq 0 ]] || fail "append: exit $rc: $err"
[[ -z $err ]] || fail "append: stderr: $err"
[[ $(wc -l <<< "$out") -eq $N ]] || fail "append: $(wc -l <<< "$out") LSNs for $N lines"
awk 'NR > 1 && $1 <= prev { bad = 1 } $1 !~ /^[0-9]+$/ { bad = 1 } { prev = $1 }
	END { exit bad }' <<< "$out" || fail "append: LSNs not increasing: $out"
paste -d' ' <(echo "$out") "$D/in" >> "$D/acked"
last=$(tail -n 1 <<< "$out")
st=$(status_json 1)
(( $(jnum "$st" commit_lsn) >= last && $(jnum "$st" last_lsn) >= last )) ||
	fail "after append up to LSN $last: $st"
# --json: one reply per record; empty lines skipped with --skip-empty
printf 'json-1\n\njson-2\n' | {
	"$CTL" -s "$(sock 1)" append --json --skip-empty > "$D/out" 2> "$D/live.stderr"
	echo $? > "$D/rc"
}
out=$(cat "$D/out")
[[ $(cat "$D/rc") -eq 0 && $(wc -l <<< "$out") -eq 2 ]] || fail "--json append: $out"
grep -vq '^{"ok":true,"lsn":[0-9]*}$' <<< "$out" && fail "--json append: $out"
l1=$(jnum "$(head -n 1 <<< "$out")" lsn)
l2=$(jnum "$(tail -n 1 <<< "$out")" lsn)
((l1 > last && l2 > l1)) || fail "--json append: LSNs $l1 $l2 after $last"
printf '%s json-1\n%s json-2\n' $l1 $l2 >> "$D/acked"
# without it an empty line is refused, named by its number: exit 2; the
# lines before it are appended, none after it
printf 'empty-1\n\nempty-2\n' > "$D/in.empty"
live 1 append < "$D/in.empty"
[[ $rc -eq 2 && $out =~ ^[0-9]+$ && $err == *"line 2 is empty"* ]] ||
	fail "append of an empty line: exit $rc, out \"$out\", err \"$err\""
echo "$out empty-1" >> "$D/acked"
(( out > l2 )) || fail "append before an empty line: LSN $out after $l2"
st=$(status_json 1)
(( $(jnum "$st" last_lsn) == out )) || fail "a record after the empty line was appended: $st"
# --client-id, and an empty stdin (nothing to do)
live 1 append --client-id 7 <<< "client-7"
[[ $rc -eq 0 && $out =~ ^[0-9]+$ ]] || fail "append --client-id: exit $rc: $out $err"
echo "$out client-7" >> "$D/acked"
CID_LSN=$out
live 1 append < /dev/null
[[ $rc -eq 0 && -z $out ]] || fail "append of nothing: exit $rc: $out $err"
echo "$NAME: append ok: $N LSNs up to $last"

# 4. bench
live 1 bench --records 2000
[[ $rc -eq 0 ]] || fail "bench: exit $rc: $err"
[[ $out == *"bench: 2000 records"* && $out == *p50* && $out == *p99* &&
   $out == *records/s* ]] || fail "bench: $out"
live 1 --json bench --records 2000 --size 64 --depth 8
[[ $rc -eq 0 && $out == '{"records":2000,"failed":0,"size":64,"depth":8,'* &&
   $out == *'"latency_us":{"p50":'*'"p99":'* ]] || fail "bench --json: exit $rc: $out"
echo "$NAME: bench ok: $(grep -o '"records_per_s":[0-9]*' <<< "$out")"

# 5. fence: node1 steps down and serves as a replica
live 1 fence
[[ $rc -eq 0 ]] || fail "fence: exit $rc: $err"
[[ $out == *"stepped down"* ]] || fail "fence: $out"
wait_status 1 '"role":"replica"' "node1 a replica after fence"
live 1 status
grep -q "^node 1 (replica)" <<< "$out" || fail "fenced node1's status: $out"
live 1 append <<< "to-a-replica"
[[ $rc -eq 1 && -z $out && $err == *WRONG_ROLE* ]] ||
	fail "append to a fenced primary: exit $rc, out \"$out\", err \"$err\""
live 1 fence
[[ $rc -eq 1 && $err == *WRONG_ROLE* ]] || fail "fence of a replica: exit $rc: $err"
live 1 bench --records 10
[[ $rc -eq 1 && $err == *WRONG_ROLE* ]] || fail "bench on a replica: exit $rc: $err"
kill -0 "${pid[1]}" || fail "node1 exited after fence"
echo "$NAME: fence ok"

# 6. promote node2 (its file's peers: node1 and node3)
live 2 promote
[[ $rc -eq 0 && $out == *promoted* ]] || fail "promote: exit $rc: $out $err"
wait_status 2 '"role":"primary"' "node2 the primary"
wait_status 2 '"replicas_up":2' "node2 with both replicas up"
live 2 status
grep -q "^node 2 (primary)" <<< "$out" || fail "promoted node2's status: $out"
live 2 promote
[[ $rc -eq 1 && $err == *WRONG_ROLE* ]] || fail "promote of the primary: exit $rc: $err"
live 2 append <<< "after-promote"
[[ $rc -eq 0 && $out =~ ^[0-9]+$ ]] || fail "append to node2: exit $rc: $out $err"
(( out > CID_LSN )) || fail "node2's LSN $out not after $CID_LSN"
echo "$out after-promote" >> "$D/acked"
echo "$NAME: promote ok ($((SECONDS - T0)) s)"

# 7. remove node3, then add it back
st=$(status_json 2)
ce=$(jnum "$st" config_epoch)
live 2 remove "$P3"
[[ $rc -eq 0 && $out == *"1 replicas"* ]] || fail "remove: exit $rc: $out $err"
wait_status 2 '"replicas_up":1' "one replica after remove"
(( $(nreplicas "$st") == 1 )) || fail "after remove: $st"
[[ $st != *"$P3"* ]] || fail "after remove node3 still listed: $st"
(( $(jnum "$st" config_epoch) > ce )) || fail "remove: config_epoch not up: $st"
ce=$(jnum "$st" config_epoch)
live 2 remove "$P3"
[[ $rc -eq 1 && $err == *"not a member"* ]] || fail "remove of a non-member: exit $rc: $err"
live 2 add "$P3"
[[ $rc -eq 0 && $out == *"2 replicas"* ]] || fail "add: exit $rc: $out $err"
wait_status 2 '"replicas_up":2' "both replicas after add"
(( $(nreplicas "$st") == 2 )) || fail "after add: $st"
(( $(jnum "$st" config_epoch) > ce )) || fail "add: config_epoch not up: $st"
live 2 add "$P3"
[[ $rc -eq 1 && $err == *"a member already"* ]] || fail "add of a member: exit $rc: $err"
live 1 add "127.0.0.1:9"
[[ $rc -eq 1 && $err == *WRONG_ROLE* ]] || fail "add on a replica: exit $rc: $err"
live 2 remove "$P3" --quorum 2
[[ $rc -eq 1 && $err == *"quorum of 2 with 1 replicas"* ]] ||
	fail "remove leaving a quorum beyond the replicas: exit $rc: $err"
st=$(status_json 2)
(( $(nreplicas "$st") == 2 )) || fail "a refused remove changed the membership: $st"
live 2 append <<< "after-add"
[[ $rc -eq 0 && $out =~ ^[0-9]+$ ]] || fail "append after add: exit $rc: $out $err"
echo "$out after-add" >> "$D/acked"
echo "$NAME: remove/add ok ($((SECONDS - T0)) s)"

# 8. reload: node2's file, edited (its role line stays "replica": only
# the membership is read again)
st=$(status_json 2)
ce=$(jnum "$st" config_epoch)
conf 2 replica 3000 1 1
live 2 reload
[[ $rc -eq 0 && $out == *"1 replicas, quorum 1"* ]] || fail "reload: exit $rc: $out $err"
wait_status 2 '"replicas_up":1' "one replica after reload"
(( $(nreplicas "$st") == 1 && $(jnum "$st" config_epoch) > ce )) ||
	fail "after reload to one peer: $st"
[[ $st == *"$P1"* ]] || fail "after reload node1 not listed: $st"
ce=$(jnum "$st" config_epoch)
conf 2 replica 3000 2 1 3
hups=$(grep -c "SIGHUP: reloading" "$D/node2.err")
kill -HUP "${pid[2]}"
wait_count 2 "SIGHUP: reloading" $((hups + 1)) "SIGHUP's reload"
wait_status 2 '"quorum":2,"replicas_up":2' "quorum 2 with two replicas after SIGHUP" 20
(( $(nreplicas "$st") == 2 && $(jnum "$st" config_epoch) > ce )) ||
	fail "after SIGHUP: $st"
ce=$(jnum "$st" config_epoch)
live 2 reload
[[ $rc -eq 0 && $out == *unchanged* ]] || fail "reload unchanged: exit $rc: $out $err"
# a file that does not load: exit 1 naming FILE:LINE; nothing changes
cp "$D/node2.conf" "$D/node2.good"
bad_line=$(($(wc -l < "$D/node2.conf") + 1))
echo "quorum = ;" >> "$D/node2.conf"
live 2 reload
[[ $rc -eq 1 && $err == *"$D/node2.conf:$bad_line:"* ]] ||
	fail "reload of a bad file: exit $rc: $err (want $D/node2.conf:$bad_line:)"
st=$(status_json 2)
[[ $(jnum "$st" config_epoch) == "$ce" && $(jnum "$st" quorum) == 2 &&
   $(nreplicas "$st") == 2 && $(jstr "$st" role) == primary ]] ||
	fail "a bad reload changed something: $st"
hups=$(grep -c "SIGHUP: reloading" "$D/node2.err")
kill -HUP "${pid[2]}"
wait_count 2 "SIGHUP: reloading" $((hups + 1)) "SIGHUP's reload of a bad file"
sleep 0.5	# it says nothing when done: give the reload a moment
# (the daemon should say why it changed nothing; see the report: it does
# not yet, so this is only noted)
grep -q "does not load.*$D/node2.conf:$bad_line:" "$D/node2.err" ||
	echo "$NAME: NOTE: SIGHUP with a bad file: repld did not log why"
st=$(status_json 2)
[[ $(jnum "$st" config_epoch) == "$ce" && $(jnum "$st" quorum) == 2 ]] ||
	fail "a bad SIGHUP changed something: $st"
kill -0 "${pid[2]}" || fail "node2 died of a bad SIGHUP"
mv "$D/node2.good" "$D/node2.conf"
live 2 append <<< "after-reload"
[[ $rc -eq 0 && $out =~ ^[0-9]+$ ]] || fail "append after reload: exit $rc: $out $err"
echo "$out after-reload" >> "$D/acked"
echo "$NAME: reload ok ($((SECONDS - T0)) s)"

# 9. usage errors: exit 2, before any request
S=(-s "$(sock 2)")
for args in "" "-s" "-s $D/x -c $D/node2.conf status" "--timeout 0 status" \
	"--timeout x status" "frob" "status extra more" "peers x" "promote --bogus" \
	"promote force" "fence now" "reload x" "add" "remove" "add $P3 --quorum 9" \
	"add $P3 --quorum" "remove $P3 x" "append --bogus" "append --client-id x" \
	"bench --records 0" "bench --records" "bench --depth 2000" "bench --size 0" \
	"bench --bogus"; do
	if [[ $args == "" || $args == -s || $args == "-s $D/x"* ]]; then
		"$CTL" $args < /dev/null > /dev/null 2> "$D/usage.err"
	else
		"$CTL" "${S[@]}" $args < /dev/null > /dev/null 2> "$D/usage.err"
	fi
	rc=$?
	clean_stderr "$D/usage.err" "replctl $args"
	[[ $rc -eq 2 ]] || fail "replctl $args: exit $rc, not 2: $(cat "$D/usage.err")"
	[[ -s $D/usage.err ]] || fail "replctl $args: exit 2 without a word"
done
"$CTL" -c "$D/node2.conf" --json status > "$D/out" || fail "-c FILE status: exit $?"
[[ $(jstr "$(cat "$D/out")" role) == primary ]] || fail "-c FILE status: $(cat "$D/out")"
REPLD_SOCKET=$(sock 3) "$CTL" --json status > "$D/out" || fail "REPLD_SOCKET status: exit $?"
[[ $(jnum "$(cat "$D/out")" node_id) == 3 ]] || fail "REPLD_SOCKET status: $(cat "$D/out")"
"$CTL" --help | grep -q "^usage: replctl" || fail "--help"
echo "$NAME: usage errors ok"

# 10. a replica's status --json: one line, its role and peers
for n in 3 1; do
	live $n --json status
	[[ $rc -eq 0 && $(wc -l <<< "$out") -eq 1 ]] || fail "node$n --json status: exit $rc: $out"
	[[ $out == '{"ok":true,'* && $(jstr "$out" role) == replica &&
	   $(jnum "$out" node_id) == "$n" && $out == *'"peers":[{"address":"'* &&
	   $out != *'"replicas":'* && $out == *'"listen":"127.0.0.1:'$(cport $n)'"'* ]] ||
		fail "node$n --json status: $out"
done
live 3 --json status
[[ $out == *'"peers":[{"address":"'"$P1"'"},{"address":"'"$P2"'"}]'* ]] ||
	fail "node3's peers: $out"
echo "$NAME: replica status --json ok"

# 11. verify: the primary's checksums against both replicas' copies; a
# replica that cannot be compared fails it (exit 1)
wait_status 2 '"replicas_up":2' "both replicas streaming"
live 2 verify
[[ $rc -eq 0 && $out == *"in ranges of 256 records"* &&
   $(grep -c "0 mismatched, ok" <<< "$out") -eq 2 ]] ||
	fail "verify: exit $rc: $out $err"
live 2 --json verify --from 1
[[ $rc -eq 0 && $(grep -o '"checked":true' <<< "$out" | wc -l) -eq 2 &&
   $(grep -o '"mismatches":0' <<< "$out" | wc -l) -eq 2 &&
   $(jnum "$out" from) == 1 ]] || fail "verify --json: exit $rc: $out $err"
ranges=$(grep -o '"ranges":[0-9]*' <<< "$out" | head -n 1 | cut -d: -f2)
(( ranges > 0 )) || fail "verify compared no range: $out"
live 3 verify
[[ $rc -eq 1 && $err == *WRONG_ROLE* ]] || fail "verify on a replica: exit $rc: $err"
live 2 verify --from 9 --to 3
[[ $rc -eq 2 && $err == *"--from 9 is after --to 3"* ]] || fail "verify 9..3: exit $rc: $err"
kill -STOP "${pid[3]}"
live 2 verify
kill -CONT "${pid[3]}"
[[ $rc -eq 1 && $out == *"NOT CHECKED"* && $err == *"do not all hold"* ]] ||
	fail "verify with node3 frozen: exit $rc: $out $err"
echo "$NAME: verify ok ($ranges ranges per replica)"

# 12. a clean stop; what was acknowledged is in the final primary's log
stop 2
stop 1
stop 3
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
check_acked all "$D/acked" "$D/node2.log"
"$CTL" dump --from "$CID_LSN" --to "$CID_LSN" "$D/node2.log" |
	awk -v l="$CID_LSN" '$1 == l && $3 == 7 { f = 1 } END { exit !f }' ||
	fail "LSN $CID_LSN not of client 7 in node2's log"
echo "$NAME: ok: $checked acknowledged records in node2's log ($((SECONDS - T0)) s)"
