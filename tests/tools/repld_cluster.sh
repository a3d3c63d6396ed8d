#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_cluster.sh -- repld as the three nodes of a cluster on this host
# (ofi:tcp, file backend in /dev/shm, quorum 1), each from its own file:
#   1. two replicas, then the primary: the primary sees both replicas up;
#   2. --check: a good file is "ok" (exit 0), a bad one names FILE:LINE
#      (exit 2);
#   3. SIGTERM stops each node with exit 0 within 10 s;
#   4. the primary restarts with one replica reachable: itself and it are
#      the 2 of 3 nodes a promotion needs;
#   5. a replica promoted in its place (`replctl promote`) fences it:
#      exit 3; a restart of that replica from a file that says primary
#      would be refused, since its log follows node1's epoch;
#   6. with no replica running it refuses to promote: exit 4, naming them.
#
# Environment: REPLD, REPLCTL (the build tree's by default; cluster_lib.sh).
set -u

NAME=repld_cluster
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS

# 1. the cluster comes up
start_cluster

# 2. --check
out=$("$REPLD" -c "$D/node1.conf" --check 2>&1)
rc=$?
[[ $rc -eq 0 && $out == "$D/node1.conf: ok" ]] ||
	fail "--check of a good file: exit $rc, \"$out\""
sed 's/^quorum = 1;/quorum = 3;/' "$D/node1.conf" > "$D/bad.conf"
out=$("$REPLD" -c "$D/bad.conf" --check 2>&1 >/dev/null)
rc=$?
[[ $rc -eq 2 && $out =~ ^"$D/bad.conf":[0-9]+:\ .*quorum ]] ||
	fail "--check of a bad file: exit $rc, \"$out\""
"$REPLD" --bogus 2>/dev/null
rc=$?
[[ $rc -eq 2 ]] || fail "a bad option: exit $rc"
echo "$NAME: --check ok: \"$out\""

# 3. a clean stop: the primary first (it drains its replicas)
stop 1
stop 2
stop 3
echo "$NAME: all three stopped with exit 0 ($((SECONDS - T0)) s)"

# 4. one replica of two: itself and node2 are the 2 of 3 nodes needed
: > "$D/node1.err"
start 2
wait_for 2 "listening" "listening"
start 1
wait_for 1 "is the primary of epoch" "promotion"
up 1 2
stop 1
stop 2
echo "$NAME: promoted with one replica of two ($((SECONDS - T0)) s)"

# 5. node2 promotes itself over node3: node1 learns it is fenced (exit 3)
start 2
start 3
wait_for 2 "listening" "listening"
wait_for 3 "listening" "listening"
: > "$D/node1.err"
start 1
up 1 2
up 1 3
out=$("$CTL" -s "$(sock 2)" promote 2>> "$D/ctl.err")
[[ $? -eq 0 && $out == *promoted* ]] || fail "replctl promote on node2: $out"
wait_for 2 "is the primary of epoch" "promotion"
exited 1 "node1 not fenced 10 s after node2's promotion"
[[ $rc -eq 3 ]] || fail "fenced node1 exited $rc, not 3"
grep -q "repld: fenced" "$D/node1.err" || fail "node1 did not say it was fenced"
stop 2
stop 3
echo "$NAME: node1 fenced by node2's promotion: exit 3 ($((SECONDS - T0)) s)"

# 6. alone: refused, naming the replicas it could not reach
conf 1 primary 500
: > "$D/node1.err"
start 1
exited 1 "a primary alone still running after 10 s"
[[ $rc -eq 4 ]] || fail "a primary alone exited $rc, not 4"
for m in 2 3; do
	grep -q "127.0.0.1:$(cport $m) not fenced" "$D/node1.err" ||
		fail "the refusal does not name node$m (127.0.0.1:$(cport $m))"
done
echo "$NAME: alone: exit 4: $(grep -m1 'repld: promotion refused' "$D/node1.err")"
echo "$NAME: ok ($((SECONDS - T0)) s)"
