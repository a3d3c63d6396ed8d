#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_ha.sh -- automatic failover in the application's process: three
# nodes, each running the application (replvfs_ha_app) on its own database
# file through replvfs, with a repl_conf whose coordinator block names one
# etcd on loopback (lease 1 s, down_ms 500, quorum QUORUM, default 2: a
# COMMIT is durable on both replicas).  No repld runs: the applications are
# the nodes.  The application writes while its node is the primary, waits
# while it is a replica, reopens its connection when the role changes, and
# checks the database (integrity_check, every acknowledged id there with
# its writer's tag, a and b alike) each time it opens as the primary.
#
#   1. the first start: app2 and app3, then app1 (role "primary" in its
#      file), all with repl_bootstrap=1; app1 commits; the replicas'
#      refused writes name it in SQLite's log;
#   2. ROUNDS times (HA_ROUNDS or ROUNDS; default 20: the test takes
#      about 40 s with ASan on 2 cores): the primary's application is
#      killed (SIGKILL) in the middle of its transactions and restarted at
#      once without repl_bootstrap (with QUORUM 2 no commit is durable
#      before it is back); it must open as a replica, and another node
#      must be promoted by the coordinator, check the database and commit:
#      the time from the kill to that first COMMIT is the round's failover
#      time;
#   3. SIGSTOP of the primary's application for STOP_S (3) s, past its
#      lease: another node must become the primary; after SIGCONT the old
#      one must see its role change (its connection fails), reopen as a
#      replica, and the new primary commit;
#   4. etcd killed for ETCD_DOWN_S (4) s: the primary commits on (the
#      acknowledged transactions grow each second), no node's role
#      changes; etcd restarted: the same;
#   5. the primary stops writing (SIGUSR1), the replicas get 1 s to catch
#      up, every application is stopped with SIGTERM (exit 0; the primary
#      last), and each replica's file, opened read-only with plain SQLite,
#      must hold every acknowledged transaction (replvfs_ha_app --check).
#
# Prints the failover times (p50, p99, max); fails when p99 is above
# FAILOVER_P99_MS (2000), an acknowledged transaction is lost, an
# application reports an error it should not get ("unexpected" in its
# events: a replica's write refused with other than SQLITE_READONLY | 64
# << 8, a primary's with SQLITE_READONLY, or any code but SQLITE_IOERR's
# on a role change), when a refusal names the primary at an address that
# is no node's control address, or on a sanitizer report.  Skipped (77)
# without etcd.
# KEEP_DIR=DIR keeps the files: events.N (each application's events),
# appN.err (SQLite's log), acked.
set -u
NAME=replvfs_ha
APP=${REPLVFS_HA_APP:-$PWD/tests/sqlite/replvfs_ha_app}
[[ -x $APP ]] || { echo "$NAME: $APP not built"; exit 99; }
ROUNDS=${HA_ROUNDS:-${ROUNDS:-20}}
P99_MS=${FAILOVER_P99_MS:-2000}
QUORUM=${HA_QUORUM:-2}
STOP_S=${STOP_S:-3}
ETCD_DOWN_S=${ETCD_DOWN_S:-4}
LOGSIZE=${LOGSIZE:-64M}
. "$(dirname "$0")/replvfs_lib.sh"
# the sanitizer's runtime for the applications only: curl (etcd_lib's
# probes) hangs with it preloaded
APP_PRELOAD=${LD_PRELOAD-}
unset LD_PRELOAD
. "$(dirname "$0")/../tools/ha_lib.sh"
T0=$SECONDS
ACKED=$D/acked
: > "$ACKED"

# the events of node N's running application (its file holds its
# predecessors' too, from line evbase[N] + 1 on its own)
declare -A evbase=()
ev() { tail -n "+$((${evbase[$1]} + 1))" "$D/events.$1"; }
evlines() { wc -l < "$D/events.$1"; }
acked() { wc -l < "$ACKED"; }

hfail() {
	local n
	for n in 1 2 3; do
		[[ -e $D/events.$n ]] || continue
		echo "--- $D/events.$n (last 12 lines)"
		tail -n 12 "$D/events.$n"
	done
	fail "$@"
}

# app_start N [URI-EXTRA]: node N's application, in the background
app_start() {
	local n=$1
	touch "$D/events.$n"
	evbase[$n]=$(evlines "$n")
	LD_PRELOAD=$APP_PRELOAD "$APP" "$EXT" "file:$D/app$n.db?vfs=repl&repl_conf=$D/node$n.conf${2-}" \
		"$ACKED" "$D/events.$n" 2>> "$D/app$n.err" &
	pid[$n]=$!
}

# alive N WHAT: node N's application still runs, or the test fails
alive() {
	kill -0 "${pid[$1]}" 2>/dev/null && return 0
	wait "${pid[$1]}"
	hfail "$2: app$1 exited $?"
}

# wait_ev N REGEX SECONDS WHAT [MARK]: until a line of node N's running
# application (after line MARK of its file) matches (grep -E); the first
# such line in $line
wait_ev() {
	local n=$1 t
	for ((t = 0; t < $3 * 20; t++)); do
		line=$(tail -n "+$((${5:-${evbase[$n]}} + 1))" "$D/events.$n" |
			grep -E -m 1 -- "$2") && return 0
		alive "$n" "$4"
		sleep 0.05
	done
	hfail "$4: app$n: no '$2' in its events in $3 s"
}

# role N: the role node N's running application last opened with
role() { ev "$1" | awk '$1 == "open" { r = $2 } END { print r }'; }

# primary_now: in $p, the one node whose application last opened as the
# primary (0: none)
primary_now() {
	local n
	p=0
	for n in 1 2 3; do
		[[ $(role "$n") == primary ]] || continue
		((p == 0)) || hfail "app$p and app$n both opened as the primary last"
		p=$n
	done
}

# acked_more COUNT SECONDS WHAT: COUNT more acknowledged than now
acked_more() {
	local want=$(($(acked) + $1)) t n
	for ((t = 0; t < $2 * 20; t++)); do
		(($(acked) >= want)) && return 0
		for n in 1 2 3; do alive "$n" "$3"; done
		sleep 0.05
	done
	hfail "$3: fewer than $1 transactions acknowledged in $2 s"
}

# no_bad WHEN: no application reported an unexpected error or a failure;
# where a replica's refusal (SQLite's log, code 8) or repl_primary() at
# an open says the primary is, it names a node's control port, never
# another port
no_bad() {
	local n l
	for n in 1 2 3; do
		l=$(grep -E -m 1 '^(unexpected|FAIL) ' "$D/events.$n") &&
			hfail "$1: app$n: $l"
		l=$(grep -a -E ' sqlite \(8\): .*127\.0\.0\.1:[0-9]' "$D/app$n.err" |
			grep -v -E "127\.0\.0\.1:($(cport 1)|$(cport 2)|$(cport 3))\b" | head -n 1)
		[[ -z $l ]] || hfail "$1: app$n's refused write names no node's control port: $l"
		l=$(grep -E '^open .*"address":' "$D/events.$n" | grep -v -E \
			"\"address\":\"127\.0\.0\.1:($(cport 1)|$(cport 2)|$(cport 3))\"" | head -n 1)
		[[ -z $l ]] || hfail "$1: app$n's repl_primary() names no node's control port: $l"
	done
	return 0
}

# stop_app N: SIGTERM; node N's application must exit 0 within 15 s
stop_app() {
	local t
	kill -TERM "${pid[$1]}"
	for ((t = 0; t < 300; t++)); do
		kill -0 "${pid[$1]}" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "${pid[$1]}" 2>/dev/null && hfail "app$1 still running 15 s after SIGTERM"
	wait "${pid[$1]}"
	rc=$?
	unset "pid[$1]"
	((rc == 0)) || hfail "app$1 exited $rc after SIGTERM"
}

# since N MARK REGEX: node N's event lines after line MARK of its file
# that match
since() { tail -n "+$(($2 + 1))" "$D/events.$1" | grep -E -- "$3"; }

etcd_start "${ETCD_FLAGS[@]}"
for n in 1 2 3; do
	if ((n == 1)); then hconf 1 primary 3000 "$QUORUM"; else hconf "$n" replica 3000 "$QUORUM"; fi
done

# 1. the first start: the replicas first; the primary's open waits for them
app_start 2 '&repl_bootstrap=1'
app_start 3 '&repl_bootstrap=1'
wait_ev 2 '^start ' 10 "app2's start"
wait_ev 3 '^start ' 10 "app3's start"
sleep 0.5
app_start 1 '&repl_bootstrap=1'
wait_ev 1 '^open ' 30 "the bootstrap"
[[ $line == "open primary "* ]] || hfail "app1 (role primary) opened as: $line"
wait_ev 1 '^first_commit ' 30 "app1's first commit"
wait_ev 2 '^open replica ' 30 "app2 a replica"
wait_ev 3 '^open replica ' 30 "app3 a replica"
acked_more 50 20 "after the bootstrap"
# a replica's refused write names the primary in SQLite's log
for n in 2 3; do
	for ((t = 0; t < 50; t++)); do
		grep -q "127\.0\.0\.1:$(cport 1)\b" "$D/app$n.err" && break
		sleep 0.1
	done
	((t < 50)) || hfail "app$n's log does not name the primary (127.0.0.1:$(cport 1))"
done
no_bad "after the bootstrap"
echo "$NAME: bootstrapped, app1 the primary, $(acked) acknowledged ($((SECONDS - T0)) s)"

# 2. SIGKILL of the primary's application
times=()
declare -A mark=()
for ((r = 1; r <= ROUNDS; r++)); do
	primary_now
	((p)) || hfail "round $r: no application is the primary"
	acked_more $((20 + RANDOM % 80)) 30 "round $r"
	for n in 1 2 3; do mark[$n]=$(evlines "$n"); done
	base=$(acked)
	t_kill=$(ms_now)
	kill -9 "${pid[$p]}"
	wait "${pid[$p]}" 2>/dev/null
	# at once: with quorum 2 no commit is durable without it
	app_start "$p"
	np=0
	for ((t = 0; t < 600 && np == 0; t++)); do
		for n in 1 2 3; do
			((n == p)) && continue
			l=$(since "$n" "${mark[$n]}" '^first_commit ' | head -n 1)
			[[ -n $l ]] && { np=$n; break; }
			alive "$n" "round $r"
		done
		((np)) || sleep 0.05
	done
	((np)) || hfail "round $r: no other node committed within 30 s of app$p's kill"
	ms=$(($(awk '{ print $2 }' <<< "$l") - t_kill))
	times+=("$ms")
	since "$np" "${mark[$np]}" '^checked ' > /dev/null ||
		hfail "round $r: app$np committed as the primary without its check"
	wait_ev "$p" '^open ' 30 "round $r: app$p's restart"
	[[ $line == "open replica "* ]] || hfail "round $r: app$p restarted as: $line"
	echo "$NAME: round $r: app$p killed after $((base - ${rbase:-0})) more acknowledged;" \
		"app$np committed $ms ms later; app$p back as a replica (at $((SECONDS - T0)) s)"
	rbase=$base
	no_bad "round $r"
done

# 3. the primary stopped past its lease, then let go on
primary_now
acked_more 50 30 "before SIGSTOP"
for n in 1 2 3; do mark[$n]=$(evlines "$n"); done
t_stop=$(ms_now)
kill -STOP "${pid[$p]}"
np=0
for ((t = 0; t < 400 && np == 0; t++)); do
	for n in 1 2 3; do
		((n == p)) && continue
		since "$n" "${mark[$n]}" '^open primary ' > /dev/null && { np=$n; break; }
	done
	((np)) || sleep 0.05
done
((np)) || { kill -CONT "${pid[$p]}"; hfail "no node became the primary within 20 s of app$p's SIGSTOP"; }
took=$(($(ms_now) - t_stop))
while (($(ms_now) - t_stop < STOP_S * 1000)); do sleep 0.1; done
a_cont=$(acked)
kill -CONT "${pid[$p]}"
# it may reopen as the primary first (its node not stepped down yet; its
# writes fail, fenced), but must end up a replica
wait_ev "$p" '^open replica ' 30 "app$p a replica after SIGCONT" "${mark[$p]}"
why=$(since "$p" "${mark[$p]}" '^reopen ' | head -n 1)
wait_ev "$np" '^first_commit ' 30 "app$np's first commit after app$p's SIGCONT" "${mark[$np]}"
acked_more 50 30 "after SIGCONT"
no_bad "after SIGSTOP"
echo "$NAME: app$p stopped ${STOP_S} s: app$np the primary ${took} ms after SIGSTOP;" \
	"app$p stepped down ($why) and reopened as a replica; $(($(acked) - a_cont)) acknowledged since"

# 4. etcd down: the primary commits on, no role changes
primary_now
((p == np)) || hfail "app$np took over, but app$p opened as the primary last"
for n in 1 2 3; do mark[$n]=$(evlines "$n"); done
etcd_kill
last=$(acked)
for ((s = 1; s <= ETCD_DOWN_S; s++)); do
	sleep 1
	now=$(acked)
	((now > last)) || hfail "$s s after etcd's kill: no transaction acknowledged in a second"
	last=$now
done
etcd_restart
for ((s = 1; s <= 2; s++)); do
	sleep 1
	now=$(acked)
	((now > last)) || hfail "$s s after etcd's restart: no transaction acknowledged in a second"
	last=$now
done
for n in 1 2 3; do
	l=$(since "$n" "${mark[$n]}" '^(open|reopen|open_failed) ' | head -n 1)
	[[ -z $l ]] || hfail "app$n's role changed while etcd was down or after it came back: $l"
done
no_bad "etcd down"
echo "$NAME: etcd down ${ETCD_DOWN_S} s and back: app$p committed on, no role changed"

# 5. the end: the replicas catch up, everyone stops, the copies are checked
kill -USR1 "${pid[$p]}"
wait_ev "$p" '^paused ' 10 "app$p's pause"
sleep 1
for n in 1 2 3; do ((n == p)) || stop_app "$n"; done
stop_app "$p"
no_bad "at the end"
total=$(acked)
for n in 1 2 3; do
	((n == p)) && continue
	out=$(LD_PRELOAD=$APP_PRELOAD "$APP" --check "$D/app$n.db" "$ACKED" 2>&1) ||
		hfail "app$n's copy: $out"
	[[ $out == "checked: $total acknowledged present,"* ]] || hfail "app$n's copy: $out"
	echo "$NAME: app$n's copy: $out"
done
for n in 1 2 3; do clean_stderr "$D/app$n.err" "app$n"; done

((ROUNDS > 0)) || times=(0)
read -r p50 p99 max < <(printf '%s\n' "${times[@]}" | sort -n | awk '
	{ v[NR] = $1 }
	END {
		i50 = int((NR * 50 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
		print v[i50], v[i99], v[NR]
	}')
echo "$NAME: failover time, kill -9 of the primary's application to the first" \
	"COMMIT on another node, lease ${LEASE_MS} ms, quorum $QUORUM:"
printf '%s:   %6s %8s\n' "$NAME" round ms
for ((r = 1; r <= ROUNDS; r++)); do printf '%s:   %6s %8s\n' "$NAME" "$r" "${times[r - 1]}"; done
printf '%s:   %8s %8s %8s %8s\n' "$NAME" rounds p50_ms p99_ms max_ms
printf '%s:   %8s %8s %8s %8s\n' "$NAME" "$ROUNDS" "$p50" "$p99" "$max"
echo "$NAME: $total acknowledged transactions, none lost"
((p99 <= P99_MS)) || hfail "failover p99 $p99 ms is above $P99_MS ms"
echo "$NAME: ok ($((SECONDS - T0)) s)"
