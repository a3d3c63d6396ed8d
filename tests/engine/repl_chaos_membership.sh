#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repl_chaos_membership.sh -- changes of the membership (S -> J -> F,
# docs/replication.md, Membership) while nodes fail, on up to four nodes
# (TLS on the control channel, k = 1 throughout: an acknowledged record
# is on 2 nodes; a promotion needs N - 1 of them).  The cluster starts as
# nodes 0, 1 and 2; node 3 is the spare.  Each round does one thing at
# random:
#   - SIGKILL a replica and restart it;
#   - a failover under the current membership: SIGKILL the primary,
#     promote a replica, restart the old one as a replica;
#   - a change: add the spare (3 -> 4 nodes; a node removed before comes
#     back with its old log or on a new one), remove a replica (4 -> 3;
#     sometimes the replica that is down), or move a replica to another
#     control and data port (same n and k: the change replaces its
#     address).  The change is a promotion with REPL_NODE_RECONFIGURE=1,
#     either a restart of the primary or a failover to a replica, while
#     another replica is down (SIGKILLed before, back once the change has
#     committed), or with a replica SIGKILLed right after it answered the
#     promotion's fence (before or after it stored J: the test says
#     which), back during the change's wait;
#   - the primary SIGKILLed right after it stored J (at once, or up to
#     300 ms later: J may then be on other nodes too, or the change may
#     have committed), then a promotion under the old membership S by a
#     replica that holds S: it must be refused exactly when a node of S
#     it reaches holds J or F, and else lead with every acknowledged
#     record.  If it led, the change died with its primary, and the nodes
#     holding its J are made anew (an operator's --reinit: a node holding
#     a newer membership refuses S's for good and refuses every promotion
#     that reaches it).  If it was refused, every node comes back and
#     the nodes holding the newest membership try to promote under it;
#     where the rules find too few holders of J or F for any of them (a
#     change that committed on its primary alone, before a node only T
#     lists held J), a forced promotion with every node up leads, and the
#     checks say whether it lost anything (counted apart: no promotion
#     without force can lead there; docs/replication.md, Membership).
# After each promotion and each committed change the primary's log is
# checked against the acknowledgements it keeps (check_log), and every
# member must hold the new membership before the next round; at the end
# the last primary stops cleanly once the replicas flushed everything and
# `repl-node verify-acks` checks every acknowledgement any primary made
# (at most one per LSN) against its log and the members' against it.
#
# Environment: SEED (printed), ROUNDS (8; about 70 s), REPL_NODE (the
# node program), REPL_NODE_PAUSE_US (1000).
set -u

NAME=repl_chaos_membership
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
ROUNDS=${ROUNDS:-8}
RANDOM=$SEED
echo "$NAME: seed $SEED, $ROUNDS rounds (rerun with SEED=$SEED)"
export REPL_NODE_PAUSE_US=${REPL_NODE_PAUSE_US:-1000}
MEMBERS="0 1 2"
. "$(dirname "$0")/cluster_lib.sh"

# a moved node listens on its other pair of ports (its log, so its node
# id, stays)
HOME_CTL=("${NCTL[@]}") HOME_DATA=("${NDATA[@]}")
moved=(0 0 0 0)
spare=3

T0=$(date +%s%N)
say() {
	local ms=$(( ($(date +%s%N) - T0) / 1000000 ))
	printf '%s: %d.%01d s: round %d: %s\n' $NAME $((ms / 1000)) $((ms % 1000 / 100)) \
		$round "$*"
}

# the members but the primary; a list without one node; one of a list
member_replicas() {
	local j
	for j in $MEMBERS; do (( j != prim )) && echo -n "$j "; done
}
without() {	# node list...
	local n=$1 j
	shift
	for j in "$@"; do (( j != n )) && echo -n "$j "; done
}
pick() {	# list...
	local a=("$@")
	echo ${a[RANDOM % ${#a[@]}]}
}

flip_ports() {	# node
	local i=$1
	if (( moved[i] )); then
		NCTL[i]=${HOME_CTL[i]} NDATA[i]=${HOME_DATA[i]} moved[i]=0
	else
		NCTL[i]=$((BASE + 10 + 2 * i)) NDATA[i]=$((BASE + 11 + 2 * i)) moved[i]=1
	fi
}

check_members() {
	local j
	for j in $MEMBERS; do
		kill -0 ${npid[$j]} 2>/dev/null || {
			wait ${npid[$j]}
			fail "node $j: its ${role[$j]} ended unexpectedly (exit code $?)"
		}
	done
}

# wait until node i's stderr has a line matching a pattern since line
# $2: 0, or 1 if its process ended first (then $rc is its exit code)
wait_line() {	# node from pattern seconds
	local t
	for ((t = 0; t < $4 * 20; t++)); do
		(( $(count_since $1 $2 "$3") )) && return 0
		if ! kill -0 ${npid[$1]} 2>/dev/null; then
			(( $(count_since $1 $2 "$3") )) && return 0
			wait ${npid[$1]}
			rc=$?
			role[$1]=none
			return 1
		fi
		sleep 0.05
	done
	fail "node $1: no \"$3\" in $4 s"
}

# a primary on node p for configuration MEMBERS that reconfigures
start_change() {	# node
	cfrom=$(err_lines $1)
	penv=(REPL_NODE_RECONFIGURE=1)
	node_primary $1 1000000000 $(others $1)
	penv=()
}

# the change's promoter leads: $epoch, prim
change_leads() {	# node
	wait_line $1 $cfrom "repl-node: primary of epoch" 60 ||
		fail "node $1: the change's promotion ended with $rc"
	epoch=$(tail -n +$((cfrom + 1)) "$D/n$1.err" | grep -a -m1 "repl-node: primary of epoch" |
		sed 's/.*primary of epoch \([0-9]*\),.*/\1/')
	prim=$1
}

# the change is committed (F stored) on node p and every running member
# holds F: the next round may take any one node away
committed() {	# node
	local j t ce
	wait_line $1 $cfrom "membership: the change is committed" 60 ||
		fail "node $1: the primary ended ($rc) before the change committed"
	ce=$(status_field $1 config_epoch)
	for j in $(member_replicas); do
		[[ ${role[$j]} == none ]] && continue
		for ((t = 0; t < 300; t++)); do
			(( $(status_field $j config_epoch) == ce )) && break
			kill -0 ${npid[$j]} 2>/dev/null || fail "node $j ended"
			sleep 0.2
		done
		(( t < 300 )) || fail "node $j does not hold configuration epoch $ce"
	done
	changes=$((changes + 1))
}

# every member replica holds the primary's membership
members_hold() {
	local j t ce=$(status_field $prim config_epoch)
	for j in $(member_replicas); do
		for ((t = 0; t < 300; t++)); do
			(( $(status_field $j config_epoch) == ce )) && break
			kill -0 ${npid[$j]} 2>/dev/null || fail "node $j ended"
			sleep 0.2
		done
		(( t < 300 )) || fail "node $j does not hold configuration epoch $ce"
	done
}

# a promotion of node i that must lead (no change): $epoch
promote_member() {	# node
	stop_replica $1
	promote $1
	check_log $1 "node $1 promoted"
	promotions=$((promotions + 1))
}
stop_replica() {	# node
	kill -CONT ${npid[$1]} 2>/dev/null
	node_stop $1 TERM
	(( rc == 0 )) || fail "node $1: the replica did not stop cleanly ($rc)"
}

# a change to the node list $1 on a cluster whose other replica $2 (or
# none: -1) is taken down as the round says; how: restart (of the
# primary) or failover (to replica $3)
change() {	# new_members victim timing how promoter
	local new=$1 v=$2 timing=$3 how=$4 p=$5 old=$prim held
	case $how in
	restart)
		# a clean stop, unless the primary cannot make progress (a
		# moved replica and the other one down: SIGKILL)
		if [[ $kind == move && $timing == before ]]; then
			node_stop $old KILL
		else
			node_stop $old TERM
			(( rc == 0 )) || fail "node $old: the primary did not stop" \
				"cleanly ($rc)"
		fi
		;;
	failover)
		node_stop $old KILL
		stop_replica $p
		;;
	esac
	MEMBERS=$new
	start_change $p
	if [[ $timing == fence ]]; then
		# the promotion fenced it and counted it; J may not be there yet
		wait_line $p $cfrom "promoted: epoch" 30 ||
			fail "node $p: the change's promotion ended with $rc"
		node_stop $v KILL
		held=$(status_field $v config_epoch)
		(( held > ce_before )) && killed_after_j=$((killed_after_j + 1)) ||
			killed_before_j=$((killed_before_j + 1))
		echo "$NAME:   node $v SIGKILLed after the fence, holding configuration" \
			"epoch $held (S is $ce_before)"
		pause 800
		node_replica $v
	fi
	change_leads $p
	promotions=$((promotions + 1))
	check_log $p "node $p promoted with a change"
	[[ $how == failover ]] && node_replica $old
	if [[ $timing == before ]]; then
		committed $p
		node_replica $v
	else
		committed $p
	fi
	members_hold
	check_log $p "node $p committed a change"
}

replica_kills=0 failovers=0 promotions=0 changes=0 adds=0 removes=0 moves=0
killed_before_j=0 killed_after_j=0 down_during=0 by_failover=0 half_done=0
old_refused=0 old_led=0 made_anew=0 forced=0 fresh_added=0 too_late=0
node_replica 1
node_replica 2
promote 0
wait_more_acks 1000 0 $prim

for ((round = 1; round <= ROUNDS; round++)); do
	check_members
	pause 300
	reps=($(member_replicas))
	n=$(( ${#reps[@]} + 1 ))
	action=$((RANDOM % 6))
	ce_before=$(status_field $prim config_epoch)
	case $action in
	0)
		v=$(pick ${reps[@]})
		say "SIGKILL replica $v"
		node_stop $v KILL
		pause 300
		node_replica $v
		replica_kills=$((replica_kills + 1))
		;;
	1)
		p=$(pick ${reps[@]})
		old=$prim
		say "SIGKILL primary $old, promote $p"
		node_stop $old KILL
		promote_member $p
		node_replica $old
		failovers=$((failovers + 1))
		;;
	2 | 3 | 4)
		# what changes
		if (( action == 4 )); then
			kind=move
		elif (( (action == 2 && spare >= 0) || n == 3 )); then
			kind=add
		else
			kind=remove
		fi
		y=-1
		case $kind in
		add)	y=$spare; new="$MEMBERS $y" ;;
		remove)	y=$(pick ${reps[@]}); new=$(without $y $MEMBERS) ;;
		move)	y=$(pick ${reps[@]}); new=$MEMBERS ;;
		esac
		# which failure around it
		f=$((RANDOM % 3))
		others_=($(without $y ${reps[@]}))
		v=$(pick ${others_[@]})
		if [[ $kind == remove && $f == 0 && $((RANDOM % 3)) == 0 ]]; then
			v=$y	# the node removed is the one that is down
		fi
		case $f in
		0)	how=restart timing=before p=$prim ;;
		1)	how=restart timing=fence p=$prim ;;
		2)	how=failover timing=none p=$v ;;
		esac
		say "$kind node $y ($MEMBERS -> $new) by a $how of node $p," \
			"$( case $f in 0) echo "node $v down";;
			1) echo "node $v SIGKILLed after the fence";;
			2) echo "primary $prim SIGKILLed";; esac)"
		[[ $f == 0 ]] && { node_stop $v KILL; down_during=$((down_during + 1)); }
		[[ $f == 2 ]] && by_failover=$((by_failover + 1))
		case $kind in
		add)
			if [[ -e $D/n$y ]] && (( RANDOM % 2 )); then
				rm -f "$D/n$y"
				fresh_added=$((fresh_added + 1))
			fi
			node_replica $y
			adds=$((adds + 1))
			;;
		move)
			node_stop $y TERM
			flip_ports $y
			node_replica $y
			moves=$((moves + 1))
			;;
		remove)
			removes=$((removes + 1))
			;;
		esac
		if [[ $f == 0 && $v == $y ]]; then
			# the removed node stays down: bring it back as a spare
			change "$new" $v none $how $p
		else
			change "$new" $v $timing $how $p
		fi
		if [[ $kind == remove ]]; then
			[[ ${role[$y]} == none ]] || node_stop $y TERM
			spare=$y
		elif [[ $kind == add ]]; then
			spare=-1
		fi
		;;
	5)
		# the primary dies right after it stored J: nobody else may hold
		# it yet, or some node of S or T does, or it has committed
		if (( spare >= 0 )); then
			kind=add y=$spare new="$MEMBERS $spare"
		else
			kind=remove y=$(pick ${reps[@]}); new=$(without $y $MEMBERS)
		fi
		old=$prim s_members=$MEMBERS
		say "$kind node $y ($MEMBERS -> $new): primary $old SIGKILLed right" \
			"after it stored J; a promotion under the old membership"
		[[ $kind == add ]] && node_replica $y
		node_stop $old TERM
		MEMBERS=$new
		start_change $old
		# at once (the links start right after J is stored) or a little
		# later, when some nodes may hold J or the change has committed
		(( RANDOM % 3 )) && late=0 || late=1
		for ((t = 0; t < 30000; t++)); do
			tail -n +$((cfrom + 1)) "$D/n$old.err" |
				grep -a -q "through the joint configuration epoch" && break
			kill -0 ${npid[$old]} 2>/dev/null ||
				fail "node $old: the change's promotion ended"
		done
		(( late )) && pause 300
		node_stop $old KILL
		j_ce=$((ce_before + 1))
		held=(0 0 0 0) newer= s_newer=0
		for j in 0 1 2 3; do
			[[ -e $D/n$j ]] || continue
			held[j]=$(status_field $j config_epoch)
			(( j != old && held[j] > ce_before )) || continue
			[[ ${role[$j]} == none ]] && continue
			newer+="$j "
			[[ " $s_members " == *" $j "* ]] && s_newer=1
		done
		if (( held[old] > j_ce )); then
			echo "$NAME:   the change had committed on node $old; J or F on" \
				"${newer:-no other node}"
			too_late=$((too_late + 1))
		else
			echo "$NAME:   J (configuration epoch $j_ce) on node $old and" \
				"${newer:-no other node}"
			half_done=$((half_done + 1))
		fi
		# a promotion under S by a replica of S that holds S: it reaches
		# the nodes of S and is refused if one holds J or F
		cands=()
		for j in $(without $old $s_members); do
			(( held[j] == ce_before )) && cands+=($j)
		done
		led=0
		if (( ${#cands[@]} )); then
			r=$(pick ${cands[@]})
			MEMBERS=$s_members
			stop_replica $r
			try_promote $r
			(( (rc == 0) == !s_newer )) || fail "node $r: a promotion under" \
				"the old membership ended with $rc while nodes ${newer:-none}" \
				"hold a newer one"
			if (( rc == 0 )); then
				check_log $r "node $r promoted under S, the change half done"
				old_led=$((old_led + 1)) promotions=$((promotions + 1))
				echo "$NAME:   node $r leads under the old membership"
				led=1
			else
				(( rc == 4 )) || fail "node $r: a promotion under the old" \
					"membership ended with $rc"
				echo "$NAME:   node $r's promotion under the old membership" \
					"refused"
				old_refused=$((old_refused + 1))
				node_replica $r
			fi
		fi
		if (( led )); then
			# the change died with its primary: its J is on node $old
			# (and maybe on the node only T lists), which therefore
			# refuse the old membership for good: they are made anew
			# (an operator's --reinit) and node $old joins again
			for j in $old $newer; do
				[[ ${role[$j]} == none ]] || node_stop $j KILL
				rm -f "$D/n$j"
				made_anew=$((made_anew + 1))
			done
			node_replica $old
			wait_member $old
			if [[ $kind == add ]]; then
				[[ ${role[$y]} == none ]] || node_stop $y TERM
				spare=$y
			fi
		else
			# the nodes back as replicas, the change goes on: the nodes
			# holding the newest membership try first (under J a
			# promotion needs N - k holders of J in S and in T); if the
			# rule finds too few holders anywhere, a forced promotion
			# with every node up (an operator's last resort) leads, and
			# check_log says whether anything was lost
			MEMBERS=$new
			for j in $s_members $new; do
				[[ ${role[$j]} == none ]] && node_replica $j
			done
			# (a node the change removes does not promote)
			cands=($(for j in $old $newer; do
				[[ " $new " == *" $j "* ]] && echo "${held[j]} $j"
			done | sort -rn | cut -d' ' -f2))
			for r in ${cands[@]}; do
				cfrom=$(err_lines $r)
				stop_replica $r
				try_promote $r
				(( rc == 0 )) && break
				(( rc == 4 )) || fail "node $r: its promotion under the change" \
					"ended with $rc"
				echo "$NAME:   node $r (configuration epoch ${held[r]})" \
					"refused: $(tail -n +$((cfrom + 1)) "$D/n$r.err" |
					grep -a -m1 -o 'promotion refused: .*' | cut -c1-160)"
				node_replica $r
			done
			if (( rc != 0 )); then
				r=${cands[0]}
				cfrom=$(err_lines $r)
				stop_replica $r
				try_promote $r REPL_NODE_FORCE=1
				(( rc == 0 )) || fail "node $r: a forced promotion ended with $rc"
				forced=$((forced + 1))
				echo "$NAME:   node $r leads by a forced promotion"
			fi
			check_log $r "node $r led the half-done change"
			promotions=$((promotions + 1))
			(( $(status_field $r config_epoch) == j_ce )) && committed $r ||
				changes=$((changes + 1))
			if [[ $kind == remove ]]; then
				node_stop $y TERM
				spare=$y
			else
				spare=-1
			fi
		fi
		for j in $MEMBERS; do
			[[ ${role[$j]} == none ]] && node_replica $j
		done
		members_hold
		;;
	esac
	wait_more_acks 300 $(acked_lines) $prim
done

echo "$NAME: done; the primary (node $prim) stops once the replicas have it all"
check_members
reps=($(member_replicas))
kill -TERM ${npid[$prim]}
node_wait_exit $prim 90 "told to stop (SIGTERM)"
(( rc == 0 )) || fail "the last primary (node $prim) did not stop cleanly (exit code $rc)"
logs=()
for j in ${reps[@]}; do
	node_stop $j TERM
	logs+=("$D/n$j")
done
"$NODE" verify-acks "$D/acked" "$D/n$prim" "${logs[@]}" || fail "verification"
acked_lsns=$(cut -d' ' -f2 "$D/acked" | sort -un | wc -l)
echo "$NAME: seed $SEED, $ROUNDS rounds: $replica_kills replica kills;" \
	"$failovers failovers; $changes changes committed ($adds adds, $fresh_added" \
	"on a new log; $removes removes; $moves address moves; $down_during with" \
	"a replica down, $by_failover by a failover, $killed_before_j replicas" \
	"killed after the fence before storing J, $killed_after_j after);" \
	"$((half_done + too_late)) primaries killed right after storing J" \
	"($too_late once the change had committed on it; $old_refused promotions" \
	"under the old membership refused, $old_led leading; $made_anew nodes" \
	"made anew for an abandoned J; $forced forced promotions);" \
	"$promotions promotions in all; $checks checks of a log against the" \
	"acknowledgements ($checked_total acknowledged LSNs compared);" \
	"$acked_lsns records acknowledged, 0 lost"
