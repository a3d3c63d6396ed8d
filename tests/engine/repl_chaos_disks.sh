#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_chaos_disks.sh -- three nodes (TLS on the control channel), one
# primary at a time (quorum 1 of two replicas: an acknowledged record is on
# 2 of the 3 nodes), and failures that take disks, epochs and restarts
# with them.  Each round does one thing at random:
#   - SIGKILL a replica and restart it;
#   - lost replica disk: SIGKILL a replica, delete its log, restart it (a
#     blank log, a new incarnation); it must catch up and get the membership
#     before anything else happens, and then hold every record acknowledged
#     before it started; sometimes the primary is SIGKILLed next and the
#     node on the new log promoted;
#   - lost disk of a former primary: SIGKILL the primary, promote a
#     replica, delete the old primary's log, restart it as a fresh replica;
#   - a lost disk and a primary crash before it is re-replicated: SIGKILL a
#     replica and delete its log, SIGKILL the primary, restart the replica
#     blank; promoting the third node must be refused (exit 4: the blank
#     log holds no membership and does not count, the old primary is
#     down, so an acknowledged record may be on the old primary alone);
#     sometimes promoting the blank node is tried too: refused (exit 5,
#     its log holds no membership);
#     the old primary's node then leads again (sometimes by a restart,
#     REPL_NODE_RESTART=1, refused with exit 6 when the refused promotion
#     left the blank replica following a newer epoch than the old
#     primary's log, then by a promotion);
#   - a failover sequence: 2 to 4 promotions in a row (SIGKILL the primary,
#     promote a replica, restart the killed node as a replica, soon SIGKILL
#     the new primary...), the next primary sometimes frozen (SIGSTOP)
#     beforehand so that it is behind and must copy the tail from the
#     other node;
#   - restart of an old primary from its unchanged files after a failover
#     (REPL_NODE_RESTART=1), sometimes with the replica down (the newer
#     primary answers the probe itself): it must exit 6 (superseded) with
#     its log unchanged, the newer primary must keep running and
#     acknowledging; then it comes back as a replica;
#   - restart of the primary with nothing changed (REPL_NODE_RESTART=1):
#     it must lead again;
#   - restart of an old primary that since served as a replica of the
#     newer one (its log follows the newer primary's epoch, nobody follows
#     a newer one): refused (exit 6: its log last followed another node's
#     epoch), the newer primary runs on;
#   - restart of an old primary while the replica and the newer primary
#     are out of reach (the replica killed, the newer primary frozen: the
#     first probe finds nobody) and the replica comes back during the
#     promotion's wait: with a higher node id the restart's epoch would be
#     above the newer primary's, and the replica would take it; it is
#     asked again before every round of fencing, so the restart is refused
#     (exit 6), or gives up (exit 4) if the replica is back too late.
# Every loss is one the rules survive: a disk is lost only while the two
# other nodes hold the membership (everything committed), and the next
# round starts only once a blank node caught up and holds it again.  After
# each promotion and each catch-up the primary's log is checked against
# every acknowledgement it still keeps (check_log; the 2 MiB ring laps, so
# the end's check sees only the last records); at the end the last primary
# stops cleanly once the replicas flushed everything and `repl-node
# verify-acks` checks every acknowledgement any primary made against its
# log and the replicas' against it.
#
# Membership changes under failures are repl_chaos_membership.sh's, which
# shares cluster_lib.sh.
#
# Environment: SEED (printed), ROUNDS (12; about 60 s), REPL_NODE (the
# node program), REPL_NODE_PAUSE_US (1000).
set -u

NAME=repl_chaos_disks
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
ROUNDS=${ROUNDS:-12}
RANDOM=$SEED
echo "$NAME: seed $SEED, $ROUNDS rounds (rerun with SEED=$SEED)"
# a primary pauses 1 ms after each acknowledged batch: a few thousand
# records a second still lap the 2 MiB ring every few seconds, and the
# acknowledgements the checks read stay small
export REPL_NODE_PAUSE_US=${REPL_NODE_PAUSE_US:-1000}
. "$(dirname "$0")/cluster_lib.sh"

T0=$(date +%s%N)
say() {
	local ms=$(( ($(date +%s%N) - T0) / 1000000 ))
	printf '%s: %d.%01d s: round %d: %s\n' $NAME $((ms / 1000)) $((ms % 1000 / 100)) \
		$round "$*"
}

# both nodes but $1 hold the membership: a disk may be lost at $1 (or
# $1 may fail) and every acknowledged record is still on a node that counts
members_but() {	# node
	local j
	for j in 0 1 2; do
		(( j == $1 )) && continue
		(( $(status_field $j config_epoch) > 0 )) ||
			fail "node $j holds no membership before a failure at node $1"
	done
}

# node i's disk is lost (it is down): its log is gone
lose_disk() {	# node
	[[ ${role[$1]} == none ]] || fail "lose_disk: node $1 still runs"
	rm -f "$D/n$1"
	lost=$((lost + 1))
}

# a replica running on a blank log since line LINES of the
# acknowledgements catches up and counts again: once it holds the
# membership it holds every record acknowledged before (I3), and its log
# is a new incarnation
caught_up_anew() {	# node incarnation_before lines
	wait_member $1
	[[ $(status_field $1 incarnation) != "$2" ]] ||
		fail "node $1's new log has its lost log's incarnation $2"
	check_log $1 "node $1 counts again on a new log" $3
	check_log $prim "node $1 caught up on a new log"
}
fresh_replica() {	# node incarnation_before
	local lines=$(acked_lines)
	node_replica $1
	caught_up_anew $1 $2 $lines
}

# stop replica i cleanly (its node becomes the primary next)
stop_replica() {	# node
	kill -CONT ${npid[$1]} 2>/dev/null
	node_stop $1 TERM
	(( rc == 0 )) || fail "node $1: the replica did not stop cleanly ($rc)"
}

# the newer primary runs on and acknowledges
still_leads() {	# node why
	local from=$(acked_lines)
	wait_more_acks 100 $from $1
	kill -0 ${npid[$1]} 2>/dev/null || fail "node $1: the primary ended ($2)"
}

replica_kills=0 lost=0 lost_replica=0 lost_primary=0 refused=0 blank_refused=0
sequences=0 seq_promotions=0 behind=0 copied=0 promotions=0
superseded=0 restarts=0 fresh_promoted=0 served_refused=0 race_refused=0
race_gave_up=0
node_replica 1
node_replica 2
promote 0
wait_more_acks 1000 0 $prim

for ((round = 1; round <= ROUNDS; round++)); do
	check_running
	pause 300
	read -r r1 r2 <<< "$(replicas_of $prim)"
	(( RANDOM % 2 )) && victim=$r1 || victim=$r2
	third=$((3 - prim - victim))
	old=$prim
	action=$((RANDOM % 9))
	case $action in
	0)
		say "SIGKILL replica $victim"
		node_stop $victim KILL
		pause 300
		node_replica $victim
		replica_kills=$((replica_kills + 1))
		;;
	1)
		say "lost disk: SIGKILL replica $victim, delete its log, restart it"
		members_but $victim
		inc=$(status_field $victim incarnation)
		node_stop $victim KILL
		lose_disk $victim
		pause 300
		fresh_replica $victim $inc
		lost_replica=$((lost_replica + 1))
		if (( RANDOM % 3 == 0 )); then
			echo "$NAME:   SIGKILL primary $old, promote the new log's" \
				"node $victim"
			node_stop $old KILL
			stop_replica $victim
			promote $victim
			check_log $victim "node $victim promoted on its new log"
			promotions=$((promotions + 1))
			fresh_promoted=$((fresh_promoted + 1))
			node_replica $old
		fi
		;;
	2)
		say "lost disk of a former primary: SIGKILL primary $old," \
			"promote $victim, delete node $old's log, restart it"
		members_but $old
		inc=$(status_field $old incarnation)
		node_stop $old KILL
		stop_replica $victim
		promote $victim
		check_log $victim "node $victim promoted"
		promotions=$((promotions + 1))
		lose_disk $old
		fresh_replica $old $inc
		lost_primary=$((lost_primary + 1))
		;;
	3)
		say "lost disk of replica $victim, SIGKILL primary $old before it" \
			"is re-replicated: promoting node $third must be refused"
		members_but $victim
		inc=$(status_field $victim incarnation)
		node_stop $victim KILL
		lose_disk $victim
		node_stop $old KILL
		lines=$(acked_lines)
		node_replica $victim
		stop_replica $third
		from=$(err_lines $third)
		try_promote $third
		(( rc == 4 )) || fail "node $third: promoted (exit code $rc) with only" \
			"itself and a blank log; an acknowledged record may be on" \
			"node $old alone"
		(( $(count_since $third $from "promotion refused") > 0 )) ||
			fail "node $third did not say why it could not promote"
		refused=$((refused + 1))
		node_replica $third
		if (( RANDOM % 2 )); then
			# nor can the blank node lead: its log holds no membership
			stop_replica $victim
			from=$(err_lines $victim)
			try_promote $victim
			(( rc == 5 )) || fail "node $victim: a promotion on a blank log" \
				"ended with $rc, not 5 (not a member)"
			(( $(count_since $victim $from "holds no membership") > 0 )) ||
				fail "node $victim did not say why it could not promote"
			blank_refused=$((blank_refused + 1))
			node_replica $victim
		fi
		led=0
		if (( RANDOM % 2 )); then
			# the refused promotion fenced the blank replica with its
			# epoch, one term above what node $third followed: newer
			# than node $old's, and a restart cannot tell it from a
			# failover -- unless node $third had not learnt node
			# $old's epoch (it was down) and its node id is lower
			e_old=$(status_field $old epoch)
			e_blank=$(status_field $victim epoch)
			try_promote $old REPL_NODE_RESTART=1
			if (( e_blank > e_old )); then
				(( rc == 6 )) || fail "node $old: a restart after node" \
					"$third's refused promotion (epoch $e_blank) ended" \
					"with $rc, not 6 (superseded: its log's is $e_old)"
				superseded=$((superseded + 1))
			else
				(( rc == 0 )) || fail "node $old: a restart ended with" \
					"$rc; no node follows an epoch above its log's" \
					"$e_old (the blank one $e_blank)"
				led=1 restarts=$((restarts + 1))
			fi
		fi
		(( led )) || promote $old
		check_log $old "node $old led again after the refused promotion"
		promotions=$((promotions + 1))
		caught_up_anew $victim $inc $lines
		lost_replica=$((lost_replica + 1))
		;;
	4)
		n=$((2 + RANDOM % 3))
		say "a failover sequence of $n promotions"
		sequences=$((sequences + 1))
		for ((s = 0; s < n; s++)); do
			old=$prim
			read -r r1 r2 <<< "$(replicas_of $old)"
			(( RANDOM % 2 )) && next=$r1 || next=$r2
			other=$((3 - old - next))
			if (( RANDOM % 2 )); then
				# next falls behind: node $other alone follows
				echo "$NAME:   freeze replica $next, SIGKILL primary $old," \
					"promote $next"
				kill -STOP ${npid[$next]}
				wait_more_acks $((50 + RANDOM % 500)) $(acked_lines) $old
				behind=$((behind + 1))
			else
				echo "$NAME:   SIGKILL primary $old, promote $next"
			fi
			node_stop $old KILL
			stop_replica $next
			from=$(err_lines $next)
			promote $next
			(( $(count_since $next $from "holds more") > 0 )) &&
				copied=$((copied + 1))
			check_log $next "node $next promoted in a failover sequence"
			seq_promotions=$((seq_promotions + 1))
			promotions=$((promotions + 1))
			node_replica $old
			# quickly: the restarted node may still be catching up
			(( RANDOM % 2 )) && wait_more_acks $((RANDOM % 50 + 1)) \
				$(acked_lines) $next
			pause 400
		done
		;;
	5)
		say "SIGKILL primary $old, promote $victim, restart node $old from" \
			"its files: it must not lead"
		node_stop $old KILL
		stop_replica $victim
		promote $victim
		check_log $victim "node $victim promoted"
		promotions=$((promotions + 1))
		pause 300
		# sometimes with the replica down: the newer primary answers
		# the probe itself (a primary listens on its control port)
		down=$((RANDOM % 2))
		(( down )) && node_stop $third KILL
		before=$(node_status $old)
		from=$(err_lines $old)
		try_promote $old REPL_NODE_RESTART=1
		(( rc == 6 )) || fail "node $old: its restart after node $victim's" \
			"promotion ended with $rc, not 6 (superseded)" \
			"$( (( down )) && echo "with node $third down")"
		(( $(count_since $old $from "restart as the primary refused") > 0 )) ||
			fail "node $old did not say why it did not lead"
		[[ $(node_status $old) == "$before" ]] ||
			fail "node $old's refused restart changed its log"
		(( down )) && node_replica $third
		still_leads $victim "after node $old's refused restart"
		superseded=$((superseded + 1))
		node_replica $old
		;;
	6)
		say "SIGKILL primary $old, restart it from its files: it leads again"
		node_stop $old KILL
		pause 300
		promote $old REPL_NODE_RESTART=1
		check_log $old "node $old restarted"
		restarts=$((restarts + 1))
		;;
	7)
		# nobody follows a newer epoch than node $old's log: its log
		# itself says it followed node $victim's (Promotion, step 0)
		say "SIGKILL primary $old, promote $victim, node $old serves as" \
			"a replica, SIGKILL it, restart it from its files: it must" \
			"not lead"
		node_stop $old KILL
		stop_replica $victim
		promote $victim
		promotions=$((promotions + 1))
		node_replica $old
		for ((t = 0; t < 100; t++)); do
			(( $(status_field $old epoch) == epoch )) && break
			sleep 0.1
		done
		(( t < 100 )) || fail "node $old does not follow epoch $epoch"
		new=$epoch
		node_stop $old KILL
		before=$(node_status $old)
		from=$(err_lines $old)
		try_promote $old REPL_NODE_RESTART=1
		(( rc == 6 )) || fail "node $old: restarted from its files after" \
			"serving node $victim's epoch $new as a replica, it ended" \
			"with $rc, not 6 (superseded); the newer primary is" \
			"$(kill -0 ${npid[$victim]} 2>/dev/null && echo running ||
			echo gone)"
		(( $(count_since $old $from "last followed epoch $new of node") )) ||
			fail "node $old did not say it followed epoch $new"
		[[ $(node_status $old) == "$before" ]] ||
			fail "node $old's refused restart changed its log"
		still_leads $victim "after node $old's restart"
		node_replica $old
		served_refused=$((served_refused + 1))
		;;
	8)
		# a replica that comes back during the promotion's wait would
		# be fenced with the restart's epoch, above the newer primary's
		# when this node's id is higher, were it not asked again before
		# each round.  The newer primary is frozen meanwhile (a pause,
		# a partition), else it answers the probe itself.
		say "SIGKILL primary $old, promote $victim, SIGKILL" \
			"replica $third, freeze primary $victim, restart node" \
			"$old from its files and restart node $third meanwhile"
		node_stop $old KILL
		stop_replica $victim
		promote $victim
		promotions=$((promotions + 1))
		new=$epoch
		node_stop $third KILL
		kill -STOP ${npid[$victim]}
		from=$(err_lines $old)
		penv=(REPL_NODE_RESTART=1)
		node_primary $old 1000000000 $(others $old)
		penv=()
		# back after the probe (the frozen primary holds it up to the
		# down timeout) and before the promotion's wait ends
		sleep 1.5
		pause 800
		node_replica $third
		for ((t = 0; t < 150; t++)); do
			kill -0 ${npid[$old]} 2>/dev/null || break
			(( $(count_since $old $from "repl-node: primary of epoch") )) && break
			sleep 0.1
		done
		kill -CONT ${npid[$victim]}
		if kill -0 ${npid[$old]} 2>/dev/null; then
			fail "node $old (id ${NCTL[$old]}) restarted from its files leads" \
				"($(tail -n +$((from + 1)) "$D/n$old.err" |
				grep -a -m1 "primary of epoch")), above node $victim's" \
				"(id ${NCTL[$victim]}) epoch $new: the failover is undone"
		fi
		wait ${npid[$old]}
		rc=$?
		role[$old]=none
		(( rc == 6 || rc == 4 )) || fail "node $old's restart ended with $rc"
		(( rc == 6 )) && race_refused=$((race_refused + 1)) ||
			race_gave_up=$((race_gave_up + 1))
		still_leads $victim "after node $old's restart"
		node_replica $old
		;;
	esac
	wait_more_acks 300 $(acked_lines) $prim
done

chaos_finish
echo "$NAME: seed $SEED, $ROUNDS rounds: $replica_kills replica kills;" \
	"$lost lost disks ($lost_replica of replicas, $lost_primary of former" \
	"primaries; $fresh_promoted promoted on the new log), $refused" \
	"promotions refused after a lost disk and a primary crash" \
	"($blank_refused of the blank node too); $sequences failover" \
	"sequences of $seq_promotions promotions ($behind with the new primary" \
	"frozen behind before, $copied copying a tail); $promotions promotions" \
	"in all; $superseded restarts refused as superseded, $restarts" \
	"restarts leading again, $served_refused refused after serving as a" \
	"replica, $race_refused refused and $race_gave_up giving up with the" \
	"replica back during the wait;" \
	"$checks checks of a log against the acknowledgements" \
	"($checked_total acknowledged LSNs compared);" \
	"$acked_lsns records acknowledged, 0 lost"
