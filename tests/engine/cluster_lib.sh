# SPDX-License-Identifier: BSD-3-Clause
#
# cluster_lib.sh -- what the cluster tests share, sourced after they set
# NAME (their name in messages) and, optionally, TIMEOUT_MS: a directory in
# /dev/shm removed on exit, a CA for the run (TLS on the control channel),
# ports, and starting, watching and stopping 2 replicas and a primary
# (tests/engine/repl-node, crash backend); or 3 nodes that change roles (node_*),
# with what the chaos tests' rounds share (promote, check_log, wait_member,
# chaos_finish...).  The caller seeds RANDOM first.  $D/acked holds a line
# "EPOCH LSN HASH" per acknowledged record.  KEEP_DIR=1 keeps $D (to read
# the nodes' logs after a failure).

NODE=${REPL_NODE:-./tests/engine/repl-node}
[[ -x $NODE ]] || { echo "$NAME: $NODE not built"; exit 99; }
D=$(mktemp -d "/dev/shm/$NAME.XXXXXX") || exit 99
pids=()
cleanup() {
	kill "$watchdog" 2>/dev/null
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -n ${KEEP_DIR:-} ]] && echo "$NAME: kept $D" || rm -rf "$D"
}
trap cleanup EXIT
# a hung test must fail, not hold the suite: stop it after WATCHDOG_S
trap 'echo "$NAME: FAIL: still running after ${WATCHDOG_S:-600} s"; exit 1' TERM
# (its fds detached; when it is stopped it stops its sleep too, which
# would otherwise outlive the test)
(
	exec >/dev/null 2>&1 </dev/null
	sleep "${WATCHDOG_S:-600}" &
	trap 'kill $! 2>/dev/null; wait $!; exit 0' TERM
	wait $! && kill -TERM $$
) &
watchdog=$!

fail() {
	echo "$NAME: FAIL: $*"
	for f in "$D"/*.err; do echo "--- $f (last 15 lines)"; tail -n 15 "$f"; done
	exit 1
}

# the control channel runs over TLS, as in production: a CA for this run
sh "$(dirname "${BASH_SOURCE[0]}")/make-test-ca.sh" "$D/tls" >/dev/null || {
	rc=$?; [[ $rc -eq 77 ]] && echo "$NAME: SKIP: no openssl command"; exit $rc; }
export REPL_NODE_TLS_DIR=$D/tls

# a 2 MiB ring: a lap is about 6,000 records of these sizes
SIZE=$((8192 + 2 * 1024 * 1024))
# ports no other test holds (tests/lib/test_ports.sh): about 20 used
. "$(dirname "${BASH_SOURCE[0]}")/../lib/test_ports.sh"
test_ports 32 || exit 99
BASE=$PORT_BASE
CTL=($BASE $((BASE + 2)))
DATA=($((BASE + 1)) $((BASE + 3)))
export REPL_NODE_TIMEOUT_MS=${REPL_NODE_TIMEOUT_MS:-${TIMEOUT_MS:-1500}}

rpid=(0 0)
start_replica() {	# index
	local i=$1
	: > "$D/r$i.out"
	"$NODE" replica "$D/r$i" $SIZE ${CTL[$i]} ${DATA[$i]} > "$D/r$i.out" 2>> "$D/r$i.err" &
	rpid[$i]=$!
	pids+=($!)
	wait_ready "$D/r$i.out" ${rpid[$i]} "replica $i"
}

# wait_ready OUT PID WHAT: until the process says "ready" in OUT (10 s)
wait_ready() {
	local t
	for ((t = 0; t < 100; t++)); do
		grep -q ready "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || fail "$3 did not start"
		sleep 0.1
	done
	fail "$3 not ready in 10 s"
}

ppid=0
# the first start bootstraps the cluster (makes the log); restarts open it
start_primary() {	# quorum
	local boot=0
	[[ -e $D/p ]] || boot=1
	# its control port (one the replicas do not use): a change needs it
	REPL_NODE_BOOTSTRAP=$boot REPL_NODE_LISTEN=127.0.0.1:$((BASE + 4)) \
		"$NODE" primary "$D/p" $SIZE $SEED 1000000000 $1 "$D/acked" \
		127.0.0.1:${CTL[0]} 127.0.0.1:${CTL[1]} 2>> "$D/p.err" &
	ppid=$!
	pids+=($!)
}

acked() {
	[[ -s $D/acked ]] && tail -n 1 "$D/acked" | cut -d' ' -f2 || echo 0
}

# wait until the acknowledged LSN passes $1 (the cluster makes progress)
wait_acked() {
	local want=$1 t
	for ((t = 0; t < 600; t++)); do
		(( $(acked) >= want )) && return 0
		kill -0 $ppid 2>/dev/null || fail "the primary died (acked $(acked))"
		sleep 0.1
	done
	fail "no progress past LSN $want in 60 s (acked $(acked))"
}

stop_all() {
	kill -TERM $ppid
	wait $ppid || fail "the primary did not stop cleanly"
	kill -TERM ${rpid[0]} ${rpid[1]}
	wait ${rpid[0]} ${rpid[1]}
}

verify() {
	"$NODE" verify $SEED "$D/acked" "$D/p" "$D/r0" "$D/r1" || fail "verification"
}

# --- 3 nodes, each a replica or the primary in turn ----------------------
# Node i keeps its log in $D/n$i across roles; its processes' stderr go to
# $D/n$i.err, each start marked.  npid[i]: its process, role[i]: its role.
# A fourth node (3) is there for the tests that change the membership;
# MEMBERS: the nodes a primary's configuration names (others).
NCTL=($BASE $((BASE + 2)) $((BASE + 4)) $((BASE + 8)))
NDATA=($((BASE + 1)) $((BASE + 3)) $((BASE + 5)) $((BASE + 9)))
npid=(0 0 0 0)
role=(none none none none)
MEMBERS=${MEMBERS:-0 1 2}
# node ids: the control ports the nodes start on (a node that moves to
# another port keeps its id, also on a log made anew there)
NID=("${NCTL[@]}")

mark() {	# node what
	echo "=== $(date +%T.%N | cut -c1-12) $2" >> "$D/n$1.err"
}

node_replica() {	# node
	local i=$1
	mark $i "replica"
	: > "$D/n$i.out"
	REPL_NODE_NODE_ID=${NID[$i]} "$NODE" replica "$D/n$i" $SIZE ${NCTL[$i]} \
		${NDATA[$i]} > "$D/n$i.out" 2>> "$D/n$i.err" &
	npid[$i]=$!
	role[$i]=replica
	pids+=($!)
	wait_ready "$D/n$i.out" ${npid[$i]} "node $i: the replica"
}

# a primary on node i's log (a promotion) appending to LSN until with
# quorum 1; the rest: its replicas' HOST:PORT; a new log gets node id CTL.
# The cluster's first primary bootstraps it (makes its log and the first
# membership); every later one opens the log its node has.  penv: more
# VAR=VALUE words for the process's environment (REPL_NODE_RESTART=1).
penv=()
node_primary() {	# node until replica...
	local i=$1 until=$2 boot=0
	shift 2
	[[ -e $D/bootstrapped ]] || { boot=1; : > "$D/bootstrapped"; }
	mark $i "primary to LSN $until of $*${penv[*]:+ (${penv[*]})}"
	# it listens where its replica did: the membership lists it there
	env ${penv[@]+"${penv[@]}"} REPL_NODE_BOOTSTRAP=$boot \
		REPL_NODE_NODE_ID=${NID[$i]} \
		REPL_NODE_LISTEN=127.0.0.1:${NCTL[$i]} "$NODE" primary \
		"$D/n$i" $SIZE $SEED $until 1 "$D/acked" "$@" 2>> "$D/n$i.err" &
	npid[$i]=$!
	role[$i]=primary
	pids+=($!)
}

# stop node i's process with a signal and reap it; $rc: its exit code
node_stop() {	# node signal
	kill -CONT ${npid[$1]} 2>/dev/null
	kill -$2 ${npid[$1]} 2>/dev/null
	wait ${npid[$1]} 2>/dev/null
	rc=$?
	role[$1]=none
}

# wait up to $2 s for node i's process to end, else fail saying $3;
# $rc: its exit code
node_wait_exit() {	# node seconds [why it should have ended]
	local t
	for ((t = 0; t < $2 * 10; t++)); do
		kill -0 ${npid[$1]} 2>/dev/null || break
		sleep 0.1
	done
	kill -0 ${npid[$1]} 2>/dev/null &&
		fail "node $1: its ${role[$1]} still runs after $2 s${3:+: $3}"
	wait ${npid[$1]}
	rc=$?
	role[$1]=none
}

acked_lines() {
	[[ -f $D/acked ]] && wc -l < "$D/acked" || echo 0
}

# wait until $1 more acknowledgements arrived than $2 (lines) while node
# $3's primary runs
wait_more_acks() {	# count from node
	local t
	for ((t = 0; t < 600; t++)); do
		(( $(acked_lines) >= $2 + $1 )) && return 0
		if ! kill -0 ${npid[$3]} 2>/dev/null; then
			wait ${npid[$3]}
			fail "node $3: the primary ended (exit code $?) with no $1 new acknowledgements"
		fi
		sleep 0.1
	done
	fail "no $1 acknowledgements in 60 s (node $3 primary)"
}

# lines of node i's stderr matching a pattern since its line $2
count_since() {	# node from_line pattern
	tail -n +$(($2 + 1)) "$D/n$1.err" 2>/dev/null | grep -a -c -- "$3"
}
err_lines() {	# node
	[[ -f $D/n$1.err ]] && wc -l < "$D/n$1.err" || echo 0
}

# the last LSN of the chain node i's image holds now: what a restart would
# find (the node is frozen while its image is copied)
persisted_last() {	# node
	kill -STOP ${npid[$1]}
	cp "$D/n$1" "$D/snapshot"
	kill -CONT ${npid[$1]}
	"$NODE" status "$D/snapshot" | cut -d' ' -f4
	rm -f "$D/snapshot"
}

# the newest LSN acknowledged in an epoch, in the lines after $2
max_acked_in() {	# epoch from_line
	tail -n +$(($2 + 1)) "$D/acked" | grep "^$1 " | cut -d' ' -f2 | sort -n | tail -n 1
}

# --- the chaos tests' rounds' helpers (repl_chaos*.sh) --------------------
# PROXIED: the node whose control channel goes through a `repl-node proxy`
# on PROXY_PORT (-1: none; start_proxy sets it up).
PROXIED=${PROXIED:--1}
PROXY_PORT=$((BASE + 6))
proxy_pid=0
ctl_addr() {	# node: how a primary reaches its control port
	(( $1 == PROXIED )) && echo 127.0.0.1:$PROXY_PORT || echo 127.0.0.1:${NCTL[$1]}
}
others() {	# node
	local j
	for j in $MEMBERS; do (( j != $1 )) && echo "$(ctl_addr $j)"; done
}
pause() {	# a random pause of 0..$1 ms
	local ms=$((RANDOM % $1))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
}

start_proxy() {	# node
	local t
	PROXIED=$1
	"$NODE" proxy $PROXY_PORT 127.0.0.1:${NCTL[$PROXIED]} > "$D/proxy.out" \
		2>> "$D/proxy.err" &
	proxy_pid=$!
	pids+=($!)
	for ((t = 0; t < 100; t++)); do
		grep -q ready "$D/proxy.out" 2>/dev/null && return 0
		kill -0 $proxy_pid 2>/dev/null || fail "the proxy did not start"
		sleep 0.1
	done
	fail "the proxy not ready in 10 s"
}

# node i starts a primary (a promotion; VAR=VALUE words after the node go
# to its environment) and we wait until it leads or ends: $rc is 0 and
# $epoch its epoch once it leads, else $rc is its exit code
try_promote() {	# node [VAR=VALUE...]
	local i=$1 from t line
	shift
	from=$(err_lines $i)
	penv=("$@")
	node_primary $i 1000000000 $(others $i)
	penv=()
	rc=0 epoch=
	for ((t = 0; t < 300; t++)); do
		line=$(tail -n +$((from + 1)) "$D/n$i.err" | grep -a -m1 "repl-node: primary of epoch")
		[[ -n $line ]] && break
		if ! kill -0 ${npid[$i]} 2>/dev/null; then
			wait ${npid[$i]}
			rc=$?
			role[$i]=none
			(( rc != 0 )) || rc=1	# ended before leading: no success
			return 0
		fi
		sleep 0.1
	done
	[[ -n $line ]] || fail "node $i did not promote (nor give up) in 30 s"
	epoch=$(sed 's/.*primary of epoch \([0-9]*\),.*/\1/' <<< "$line")
	prim=$i
}

# node i becomes the primary: it must promote; $epoch: its epoch
promote() {	# node [VAR=VALUE...]
	try_promote "$@"
	(( rc == 0 )) && return 0
	(( rc == 4 )) && fail "node $1 could not promote (no quorum) with" \
		"every other node running"
	fail "node $1: the primary exited with code $rc before promoting"
}

# the replicas are the two nodes that are not the primary
replicas_of() {	# primary
	echo $(( ($1 + 1) % 3 )) $(( ($1 + 2) % 3 ))
}

check_running() {
	local i
	for i in 0 1 2; do
		kill -0 ${npid[$i]} 2>/dev/null || {
			wait ${npid[$i]}
			fail "node $i: its ${role[$i]} ended unexpectedly (exit code $?)"
		}
	done
	(( proxy_pid == 0 )) || kill -0 $proxy_pid 2>/dev/null || fail "the proxy died"
}

# "first F last L epoch E tail_epoch T config_epoch C incarnation I" of
# node i's log as a restart would find it (a running node is frozen while
# its image is copied)
node_status() {	# node
	if kill -0 ${npid[$1]} 2>/dev/null; then
		kill -STOP ${npid[$1]}
		cp "$D/n$1" "$D/snapshot"
		kill -CONT ${npid[$1]}
	else
		cp "$D/n$1" "$D/snapshot"
	fi
	"$NODE" status "$D/snapshot"
	rm -f "$D/snapshot"
}
status_field() {	# node field
	node_status $1 | awk -v f=$2 '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'
}

# wait until node i (a replica) holds the membership in its log: a primary
# gives it only once the replica holds everything committed, so from then
# on it counts toward a promotion (60 s)
wait_member() {	# node
	local t
	for ((t = 0; t < 300; t++)); do
		(( $(status_field $1 config_epoch) > 0 )) && return 0
		kill -0 ${npid[$1]} 2>/dev/null || fail "node $1: its replica ended while catching up"
		kill -0 ${npid[$prim]} 2>/dev/null || fail "node $prim: the primary ended" \
			"while node $1 caught up"
		sleep 0.2
	done
	fail "node $1 holds no membership after 60 s: not caught up"
}

# I1 now: every acknowledged record node i's log keeps (the primary's, or a
# stopped node's) is there at its LSN with its bytes, and none acknowledged
# is past its end.  The node (a running primary) is frozen while its image
# and the acknowledgements are copied: every line was written after its
# record was durable.  Only the newest CHECK_ACKS lines are compared (the
# ring holds far fewer records; LSNs are acknowledged in ascending order);
# with LINES, only those up to line LINES (a replica must hold what was
# acknowledged before it caught up).  $checked: how many acknowledged LSNs
# were compared.
CHECK_ACKS=${CHECK_ACKS:-50000}
check_log() {	# node why [lines]
	local live=0 out
	kill -0 ${npid[$1]} 2>/dev/null && live=1
	(( live )) && kill -STOP ${npid[$1]}
	cp "$D/n$1" "$D/check.log"
	if [[ -f $D/acked && -n ${3:-} ]]; then
		head -n $3 "$D/acked" | tail -n $CHECK_ACKS > "$D/check.acked"
	elif [[ -f $D/acked ]]; then
		tail -n $CHECK_ACKS "$D/acked" > "$D/check.acked"
	else
		: > "$D/check.acked"
	fi
	(( live )) && kill -CONT ${npid[$1]}
	out=$("$NODE" verify-acks "$D/check.acked" "$D/check.log" 2>&1) || {
		echo "$out"
		fail "node $1's log lost acknowledged records ($2)"
	}
	checked=$(sed -n 's/^verify: \([0-9]*\) acknowledged LSNs checked.*/\1/p' <<< "$out")
	checks=$((checks + 1))
	checked_total=$((checked_total + ${checked:-0}))
	rm -f "$D/check.log" "$D/check.acked"
}
checks=0 checked_total=0

# the end of a chaos test: the last primary stops once every replica
# flushed everything, and every acknowledgement any primary made is checked
# against its log and the replicas' against it; $acked_lsns: how many
chaos_finish() {
	local r1 r2
	echo "$NAME: done; the primary (node $prim) stops once the replicas have it all"
	check_running
	kill -TERM ${npid[$prim]}
	node_wait_exit $prim 90 "told to stop (SIGTERM)"
	(( rc == 0 )) || fail "the last primary (node $prim) did not stop cleanly (exit code $rc)"
	read -r r1 r2 <<< "$(replicas_of $prim)"
	node_stop $r1 TERM
	node_stop $r2 TERM
	"$NODE" verify-acks "$D/acked" "$D/n$prim" "$D/n$r1" "$D/n$r2" || fail "verification"
	acked_lsns=$(cut -d' ' -f2 "$D/acked" | sort -un | wc -l)
}
