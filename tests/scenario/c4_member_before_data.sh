#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# c4_member_before_data.sh -- a wiped replica counted before it holds the
# data: four nodes, k = 2 (n = 3: a record is acknowledged on three of the
# four, a promotion needs n - k + 1 = 2).  node1 the primary; three small
# records acknowledged with all up; node4 dies; NLARGE (60) large records
# (LARGE bytes each) acknowledged on node1, node2 and node3.  node3 stops
# and its log is deleted (a replaced disk).  node1 restarts (promoted with
# node2); node2 dies.  node3 comes back with a fresh log while node1 is
# slowed (it runs 10 ms of every 50).
#
# Before the fix a primary's commit point starts at its checkpoint after a
# restart, so the fresh node3 is "caught up: a member" the moment its
# resync starts ("resuming at LSN 1 (63 to send)"), long before the large
# records reach it.  node1 dies right then (SIGKILL on that line).  node4
# comes back and `replctl promote` counts node3 (it holds the current
# membership) with itself: promoted, without the records node3 had not
# received yet.
#
# A correct system makes a replica a member only once it holds the
# committed prefix: node4's promotion is refused (node1 and node2 hold the
# records and are down), explicitly, or node3 had them all.  (With the
# promise floor node3, made anew, does not even serve node1 here: it needs
# k + 1 = 3 answers, node2's and node4's among them, while both are down;
# node1 is then killed after 20 s, and node4's promotion, which cannot
# count node3, is refused.)
#
# Checked: everything acknowledged in the final primary's log; one primary.
set -u

NAME=c4_member_before_data
LOGSIZE=${LOGSIZE:-96M}
LARGE=${LARGE:-1000000}
NLARGE=${NLARGE:-60}
. "$(dirname "$0")/scenario_lib.sh"

for n in 1 2 3 4; do
	peers=()
	for m in 1 2 3 4; do ((m != n)) && peers+=($m); done
	conf $n $( ((n == 1)) && echo primary || echo replica) 3000 2 "${peers[@]}"
done
for n in 2 3 4; do launch $n; done
for n in 2 3 4; do wait_new $n "listening" "node$n listening"; done
launch 1
wait_new 1 "is the primary of epoch" "node1's first promotion"
wait_status 1 '"replicas_up":3' "three replicas streaming"
must_ack 1 c4-{1..3}
say "three records acknowledged with all up, to LSN $last_lsn"

kill9 4
must_ack_large 1 "$LARGE" $(seq -f "c4-large-%02g-" 1 "$NLARGE")
say "node4 killed; $NLARGE records of $LARGE bytes acknowledged, to LSN $last_lsn"

stop 3
wipe_log 3
stop 1
# node1's restart: a promotion with node2 (node2 then follows it)
mark_err 2
launch 1
wait_new 2 "following the primary" "node2 following node1's new epoch"
sleep 0.5
kill9 2
say "node3's log deleted; node1 restarted (with node2), node2 killed"

# node3 with a fresh log; node1 dies as soon as it counts node3 a member.
# node1 is slowed meanwhile (so that the large records take their time
# to leave it, however fast the machine and large the socket buffers)
kill_on 1 "127.0.0.1:$(cport 3) caught up: a member" 20
throttle 1
launch 3 $REINIT
kill_done 1
unthrottle 1
if [[ $killed_by == line:* ]]; then
	say "node1 killed on its ${killed_by:0:130}"
else
	say "node1 killed after 20 s: it never said node3 caught up, a member"
fi
grep -h "127.0.0.1:$(cport 3) is up, resuming\|127.0.0.1:$(cport 3) caught up" "$D/node1.err" |
	tail -n 2 | sed "s/^/$NAME: node1: /"
wait_new 3 "listening" "node3 listening"
sleep 1
st=$(status_json 3)
say "node3 then holds LSNs $(jnum "$st" first_lsn)..$(jnum "$st" last_lsn)" \
	"(configuration epoch $(jnum "$st" config_epoch))"

launch 4
wait_new 4 "listening" "node4 listening"
final=
promote_step 4 "node4's promotion with node1 and node2 down"
end_check 1 2 3 4
pass "node3 counted only with the data: nothing acknowledged lost"
