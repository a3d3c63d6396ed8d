#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_concurrent_add.sh -- two `replctl add` at the same moment, on a
# primary (node1) with one replica (node2, quorum 1); node3 and node4 are
# running replicas that neither knows yet.  The admin socket serves each
# client in its own thread, and a change runs one at a time: each add must
# build on the membership the one before it left.  Both must end in the
# primary's membership (node2, node3 and node4), whatever their order.
# (An add that read the number of peers before it waited for the change
# lock wrote its node over the one the first add had just put there.)
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_concurrent_add
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
conf 1 primary 3000 1 2
conf 2 replica 3000 1 1 3 4
conf 3 replica 3000 1 1 2 4
conf 4 replica 3000 1 1 2 3
for n in 2 3 4; do
	start "$n"
	wait_for "$n" "listening" "listening"
done
start 1
wait_for 1 "is the primary of epoch" "promotion"
up 1 2
st=$(status_json 1)
(( $(nreplicas "$st") == 1 )) || fail "before the adds: $st"

"$CTL" -s "$(sock 1)" --timeout 30000 add "127.0.0.1:$(cport 3)" \
	> "$D/add3.out" 2> "$D/add3.err" &
a3=$!
"$CTL" -s "$(sock 1)" --timeout 30000 add "127.0.0.1:$(cport 4)" \
	> "$D/add4.out" 2> "$D/add4.err" &
a4=$!
wait "$a3"; rc3=$?
wait "$a4"; rc4=$?
echo "$NAME: add node3: exit $rc3: $(cat "$D/add3.out" "$D/add3.err")"
echo "$NAME: add node4: exit $rc4: $(cat "$D/add4.out" "$D/add4.err")"
((rc3 == 0 && rc4 == 0)) || fail "an add failed: exit $rc3 and $rc4"

wait_status 1 '"replicas_up":3' "three replicas up after both adds" 20
for n in 2 3 4; do
	[[ $st == *"\"127.0.0.1:$(cport "$n")\""* || $st == *"\"port\":$(cport "$n")"* ||
	   $st == *":$(cport "$n")"* ]] || fail "node$n is not in the membership: $st"
done
(( $(nreplicas "$st") == 3 )) || fail "not three replicas: $st"
stop 1
for n in 2 3 4; do stop "$n"; done
echo "$NAME: ok: both concurrent adds are in the membership ($((SECONDS - T0)) s)"
