#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_under_load.sh -- membership changes and a promotion while a client
# appends: `replctl append` of "load-<n>" lines (n = 1, 2, ...) runs in the
# background against node1, the primary of three nodes (quorum 1), while
#   a. `replctl remove` of node3, then `replctl add` of it back, happen on
#      the primary (the appends wait meanwhile, then go on);
#   b. node2 is promoted with `replctl promote`: node1 learns it is fenced
#      and exits 3; the appender's records in flight fail (REPL_E_UNKNOWN
#      "fenced while the record was in flight", REPL_E_FENCED after the
#      fence, STOPPING once node1 stops: on its stderr) and it exits 1, or 4
#      when node1 went before answering all it had sent (the appender
#      still sends: "Broken pipe").
# Then node2 and node3 stop cleanly, and replctl dump (offline) shows every
# acknowledged record in node2's log -- and in node3's -- with exactly its
# payload: the appender runs with --json, one reply per line in order, so
# the k-th reply is the k-th line's, "load-k".  Nothing acknowledged lost.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=repld_under_load
LOGSIZE=${LOGSIZE:-16M}
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
P3=127.0.0.1:$(cport 3)

# acks: how many replies the appender has had that were acknowledgements
acks() { grep -c '"ok":true' "$D/app.out" 2>/dev/null; }

# more_acks N WHAT: until N more acknowledgements than now (20 s)
more_acks() {
	local want=$(($(acks) + $1)) t
	for ((t = 0; t < 200; t++)); do
		(($(acks) >= want)) && return 0
		[[ -e $D/app.rc ]] && fail "the appender ended ($(cat "$D/app.rc")) $2: $(tail -n 3 "$D/app.err")"
		sleep 0.1
	done
	fail "no $1 more acknowledgements in 20 s $2 (have $(acks))"
}

# lines "load-1", "load-2", ... about 5000 a second, until $D/stop.gen
gen() {
	local i=0 j
	while [[ ! -e $D/stop.gen ]]; do
		for ((j = 0; j < 50; j++)); do
			echo "load-$((++i))"
		done
		sleep 0.01
	done
}

start_cluster

# the appender
( gen | "$CTL" -s "$(sock 1)" --json append > "$D/app.out" 2> "$D/app.err"
  echo $? > "$D/app.rc" ) &
bg+=($!)
more_acks 1000 "before the changes"

# a. remove node3, then add it back, under load
st=$(status_json 1)
ce=$(jnum "$st" config_epoch)
"$CTL" -s "$(sock 1)" remove "$P3" > "$D/out" 2> "$D/err" ||
	fail "remove under load: exit $?: $(cat "$D/err")"
wait_status 1 '"replicas_up":1' "one replica after remove"
(( $(nreplicas "$st") == 1 && $(jnum "$st" config_epoch) > ce )) ||
	fail "after remove: $st"
more_acks 1000 "after remove"
"$CTL" -s "$(sock 1)" add "$P3" > "$D/out" 2> "$D/err" ||
	fail "add under load: exit $?: $(cat "$D/err")"
wait_status 1 '"replicas_up":2' "both replicas after add"
(( $(nreplicas "$st") == 2 && $(jnum "$st" config_epoch) > ce + 1 )) ||
	fail "after add: $st"
more_acks 1000 "after add"
echo "$NAME: remove and add under load ok: $(acks) acknowledged ($((SECONDS - T0)) s)"
[[ -s $D/app.err ]] && fail "the appender failed meanwhile: $(head -n 3 "$D/app.err")"

# b. promote node2 under load: node1 is fenced, exits 3
"$CTL" -s "$(sock 2)" promote > "$D/out" 2> "$D/err" ||
	fail "promote under load: exit $?: $(cat "$D/err")"
exited 1 "node1 still running 10 s after node2's promotion"
clean_stderr "$D/node1.err" "the fenced node1 (exit $rc)"
[[ $rc -eq 3 ]] || fail "node1 exited $rc after node2's promotion, not 3"
grep -q "repld: fenced" "$D/node1.err" || fail "node1 did not say it was fenced"
touch "$D/stop.gen"
for ((t = 0; t < 100; t++)); do
	[[ -e $D/app.rc ]] && break
	sleep 0.1
done
[[ -e $D/app.rc ]] || fail "the appender still running 10 s after node1 exited"
arc=$(cat "$D/app.rc")
[[ $arc -eq 1 || $arc -eq 4 || $arc -eq 5 ]] ||
	fail "the appender exited $arc, not 1 (or 4, 5)"
# in flight at the fence: REPL_E_UNKNOWN ("fenced while the record was in
# flight"); appended after it: REPL_E_FENCED; after the gate closed:
# STOPPING.  Exit 5: the first failure was REPL_E_UNKNOWN (an outcome
# unknown, replctl(8)); 1: a refusal.  Exit 4: node1 went first --
# replctl still sending ("Broken pipe") or waiting; it may have read no
# reply by then.
refused="REPL_E_FENCED|REPL_E_UNKNOWN: .*fenced|STOPPING"
gone="Broken pipe|connection closed before the answer"
if [[ $arc -eq 1 || $arc -eq 5 ]]; then
	grep -Eq "$refused" "$D/app.err" ||
		fail "the appender exited $arc naming no refusal: $(head -n 5 "$D/app.err")"
else
	grep -Eq "$refused|$gone" "$D/app.err" ||
		fail "the appender exited 4 naming no refusal or lost connection: $(head -n 5 "$D/app.err")"
fi
echo "$NAME: node1 fenced: exit 3; the appender: exit $arc: $(head -n 1 "$D/app.err")"
wait_status 2 '"role":"primary"' "node2 the primary"
stop 2
stop 3

# every acknowledged record, with its payload: the k-th reply is load-k's
awk '/"ok":true/ { match($0, /"lsn":[0-9]+/)
	print substr($0, RSTART + 6, RLENGTH - 6), "load-" NR }' "$D/app.out" > "$D/acked"
n=$(wc -l < "$D/acked")
((n >= 3000)) || fail "only $n records acknowledged"
grep -vq '^{"ok":' "$D/app.out" && fail "the appender printed what is no reply: $(grep -vm1 '^{"ok":' "$D/app.out")"
# after the first failure nothing more is acknowledged
awk '/"ok":false/ { f = 1 } f && /"ok":true/ { exit 1 }' "$D/app.out" ||
	fail "an acknowledgement after a failure: $(grep -m3 '"ok":false' "$D/app.out")"
check_acked all "$D/acked" "$D/node2.log"
check_acked all "$D/acked" "$D/node3.log"
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: the failures: $(grep -o "\"error\":\"[A-Z_]*\"" "$D/app.out" | sort | uniq -c | tr -s " \n" " ")"
echo "$NAME: the appender's stderr: $(cat "$D/app.err")"
echo "$NAME: ok: all $checked acknowledged records in node2's and node3's logs," \
	"$(grep -c '"ok":false' "$D/app.out") failed ($((SECONDS - T0)) s)"
