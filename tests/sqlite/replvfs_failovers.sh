#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replvfs_failovers.sh -- SQLite over librepl across failovers where every
# node keeps a copy of the database and the log is released behind
# checkpoints (docs/sqlite.md, "Failover", "Reading on a replica",
# "Checkpoints and the log").  Three nodes (ofi tcp on loopback), quorum 1
# of 2, logs of LOGSIZE (128M); every node's sqlite_copy is the file the
# application opens there when that node is promoted.  The application is
# replvfs_bank: bank transfers with a conserved total over indexed tables,
# savepoints, rolled back transactions, large transactions (2 to 6 MiB),
# schema changes, VACUUM and explicit checkpoints.  ROUNDS times (12):
#
#   1. the application on node p has opened the database (a promotion
#      and a rebuild, from node p's copy once the log was released) and
#      checked it: integrity_check, the conserved total, each account's
#      balance against its transfers, every acknowledged transfer there;
#      it printed the hash of every row before writing anything;
#   2. both other nodes' copies reach that hash, with integrity_check ok,
#      within 60 s (a copy that failed fails the test at once, with its
#      status), and only then the application writes;
#   3. it commits some dozens of transactions, two large ones among them;
#      every third round a replica's repld is killed (SIGKILL) while a
#      large transaction is applied to its copy, and started again (with
#      the RV_COPY_CRASH hooks of a debug build, when it has them, it then
#      also kills itself in the middle of its copy's next batch, or of
#      its next base marker, in turn, and is started once more), the
#      application going slower meanwhile;
#   4. the application is killed with SIGKILL in the middle of a large
#      transaction (odd rounds) or of a checkpoint after one (even
#      rounds), at a random point of one as long as the last one took;
#   5. the next node q takes over, in one of two orders: (a) node p's repld
#      restarts as a replica, then node q's repld stops and the
#      application opens there; (b) node q's repld stops and the
#      application opens there, then node p's repld restarts.  In odd
#      rounds a reader of node p's file holds a read transaction from
#      before its repld restarts until a second after node q's open, so
#      that the copy's start waits for it meanwhile (as readers of a copy
#      may make it wait: docs/sqlite.md, "Reading on a replica").
#
# Then a replica is lost for good and replaced (its log, copy and marker
# deleted, started again with --reinit at the same address) while the
# primary commits, which must go on (no SQLITE_FULL) and release its log
# past where it was.  The replaced node's copy, which has no base over a
# released log, must be remade from the primary's image by itself
# (docs/sqlite.md, "Remade from the primary's image"), and at the end
# every node's copy must equal the primary's database.  No node's stderr
# may say that its copy failed ("replvfs copy:"), apart from the replaced
# node's lines about its remake.
#
# Environment: ROUNDS (12; ROUNDS=100 for a long run by hand; FAILOVERS_ROUNDS
# overrides it), LOGSIZE,
# SEED (the run's random choices, printed; the timing is not repeated),
# LARGE_EVERY (one transfer in so many is large, 12), LARGE_KB (a large
# one's payload, MIN:MAX KiB, 2048:6144), ROUND_ACKED and
# ROUND_LARGE (a round commits at least so many transactions, 20, and
# large ones, 2), MBPS (while a replica is down the application writes
# so many MiB/s at most, 8, so that the replica's hold does not fill the
# log; otherwise it writes as fast as it can, so that its log holds much
# when it is killed), KEEP_GOING=1 (a copy that is wrong is reported and
# the rounds go on, to see what a later failover onto it does; the test
# still fails), KEEP_DIR (cluster_lib.sh: keep the files).
NAME=replvfs_failovers
BANK=${REPLVFS_BANK:-$PWD/tests/sqlite/replvfs_bank}
[[ -x $BANK ]] || { echo "$NAME: $BANK not built"; exit 99; }
# FAILOVERS_ROUNDS first: the ThreadSanitizer stage sets ROUNDS for other tests
ROUNDS=${FAILOVERS_ROUNDS:-${ROUNDS:-12}}
LOGSIZE=${LOGSIZE:-128M}
LARGE_EVERY=${LARGE_EVERY:-12}
LARGE_KB=${LARGE_KB:-2048:6144}
ROUND_ACKED=${ROUND_ACKED:-20}
ROUND_LARGE=${ROUND_LARGE:-2}
MBPS=${MBPS:-8}
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
KEEP_GOING=${KEEP_GOING:-0}
. "$(dirname "$0")/replvfs_lib.sh"
. "$(dirname "$0")/../tools/cluster_lib.sh"
T0=$SECONDS
RANDOM=$SEED
ACKED=$D/acked
: > "$ACKED"
echo "$NAME: seed $SEED, $ROUNDS rounds, logs of $LOGSIZE"

failures=0
# bad WHAT: a wrong copy fails the test (KEEP_GOING=1: at the end; it is
# counted and the rounds go on)
bad() {
	if [[ $KEEP_GOING == 1 ]]; then
		echo "$NAME: FAIL (going on): $*"
		failures=$((failures + 1))
	else
		fail "$*"
	fi
}

conf_node() {	# N ROLE: quorum 1, a promotion waits up to 10 s for a node
	conf "$1" "$2" 10000 1
	echo "sqlite_copy = \"app$1.db\";" >> "$D/node$1.conf"
}

# restart N [OPTION...]: start node N's repld (a replica), until it listens
# (its stderr keeps the lines of its earlier runs: one more is counted)
restart() {
	local n=$1 c
	c=$(grep -c "listening" "$D/node$n.err" 2>/dev/null)
	start "$@"
	wait_count "$n" "listening" $((${c:-0} + 1)) "listening"
}

# the LSN node N's copy's marker says it holds (none: 0)
marker_lsn() {
	local v
	v=$(od -An -tu8 -j24 -N8 "$D/app$1.db-repl-base" 2>/dev/null | tr -d ' ')
	echo "${v:-0}"
}

# where node N stands: its copy's base and its log's first and last LSNs
where() {
	local st
	st=$(status_json "$1")
	echo "node$1's copy a base at $(marker_lsn "$1"), its log $(jnum "$st" first_lsn)..$(jnum "$st" last_lsn)"
}

# quiet, loud: around a wait for a process that kills itself, the shell's
# report of it ("Killed", at its next command) goes nowhere
quiet() { exec {quiet_fd}>&2 2>/dev/null; }
loud() { exec 2>&"$quiet_fd" {quiet_fd}>&-; }

# node N's sqlite_copy status object ('' when its repld does not answer)
copy_status() {
	status_json "$1" | grep -o '"sqlite_copy":{[^}]*}'
}

# app N TAG [URI-EXTRA]: the application on node N, in the background; it
# writes once $D/go.TAG exists, stops writing once $D/stop.TAG does,
# kills itself in the checkpoint after its next large transaction once
# $D/die.TAG does, and goes slow while $D/slow does
app() {
	tag=$2
	"$BANK" "$EXT" "file:$D/app$1.db?vfs=repl&repl_conf=$D/node$1.conf&repl_timeout_ms=10000${3-}" \
		"$ACKED" --go "$D/go.$tag" --stop "$D/stop.$tag" --die "$D/die.$tag" --linger 600 \
		--large-every "$LARGE_EVERY" --large-kb "$LARGE_KB" --slow "$D/slow" \
		--mbps "$MBPS" --seed $((SEED + ${#bg[@]})) \
		> "$D/app.$tag.out" 2> "$D/app.$tag.err" &
	apid=$!
	bg+=("$apid")
}

# app_alive WHAT: fails when the application has ended
app_alive() {
	local rc
	kill -0 "$apid" 2>/dev/null && return 0
	wait "$apid" 2>/dev/null
	rc=$?
	fail "$1: the application on node$p exited $rc: $(tail -n 4 "$D/app.$tag.out")
$(grep -m 2 '^replvfs_bank:\|not appended' "$D/app.$tag.err" | cut -c 1-400)
$(grep -v '^sqlite (27)' "$D/app.$tag.err" | tail -n 8)"
}

# watch ROUND WHAT: fails (bad) when a node's copy failed since the last
# look ("replvfs copy: ..." in its repld's stderr; not the replaced node's,
# below), then when the application has ended
COPY_FAILED='replvfs copy:\|sqlite_copy .*not followed'
declare -A copy_fails=()
skip_node=0
watch() {
	copies_ok "$@"
	app_alive "round $1: $2"
}
copies_ok() {	# ROUND WHAT: watch's look at the copies alone
	local n c
	for n in 1 2 3; do
		((n == skip_node)) && continue
		c=$(grep -c "$COPY_FAILED" "$D/node$n.err" 2>/dev/null)
		((${c:-0} > ${copy_fails[$n]:-0})) || continue
		copy_fails[$n]=$c
		copy_wrong "$1" "$n" "$("$BANK" --hash "$D/app$n.db" 2>&1)" \
			"$(copy_status "$n")" "failed ($2)"
	done
}

# count PATTERN: lines of the application's output that match
count() { grep -c -- "$1" "$D/app.$tag.out"; }

# opened ROUND BASE: until the application printed its check and its hash
# (the rebuild takes a while; 120 s); the hash line in $want
opened() {
	local end=$((SECONDS + 120))
	want="none yet (node$p opens)"
	while ((SECONDS < end)); do
		grep -q '^hash ' "$D/app.$tag.out" && break
		watch "$1" "the open on node$p"
		sleep 0.1
	done
	grep -q "^checked: $2 acknowledged present" "$D/app.$tag.out" ||
		fail "round $1: node$p's open: $(cat "$D/app.$tag.out") $(tail -n 5 "$D/app.$tag.err")"
	want=$(grep -m 1 '^hash ' "$D/app.$tag.out")
}

# converge ROUND NODE...: until each NODE's copy follows and hashes as
# $want with integrity_check ok (60 s); a copy that failed, or that
# follows and is not ok, is wrong at once
converge() {
	local r=$1 n got st left pending before=$failures end=$((SECONDS + 60))
	shift
	left=("$@")
	while ((${#left[@]} > 0 && SECONDS < end)); do
		pending=()
		for n in "${left[@]}"; do
			# the status first: a copy that still starts may show the
			# file as the application left it (its -wal not yet dropped)
			st=$(copy_status "$n")
			got=$("$BANK" --hash "$D/app$n.db" 2> "$D/hash.err")
			[[ $got == "$want"$'\n'"integrity: ok" &&
			   $st == *'"state":"following"'* ]] && continue
			# a copy that follows shows commits only: each one whole
			if [[ $st == *'"state":"failed"'* ||
			      ( $st == *'"state":"following"'* && $got == *"integrity: "* &&
				$got != *"integrity: ok" ) ]]; then
				copy_wrong "$r" "$n" "$got" "$st"
				continue
			fi
			pending+=("$n")
		done
		left=("${pending[@]}")
		((${#left[@]} > 0)) && sleep 0.2 && watch "$r" "the copies"
	done
	for n in "${left[@]}"; do
		copy_wrong "$r" "$n" "$got $(cat "$D/hash.err")" "$(copy_status "$n")" \
			"not within 60 s"
	done
	# (KEEP_GOING: the copies are not all right)
	((failures == before))
}

copy_wrong() {	# ROUND NODE GOT STATUS [WHY]
	local got=${3//$'\n'/; } st
	((${#got} > 600)) && got="${got:0:600}..."
	st=$(status_json "$2")
	bad "round $1: node$2's copy ${5:-is wrong}: it reads '$got', the primary's (node$p) '$want'; node$2's sqlite_copy: ${4:-no status}; node$2's log $(jnum "$st" first_lsn)..$(jnum "$st" last_lsn), commit_lsn $(jnum "$st" commit_lsn), readable_lsn $(jnum "$st" readable_lsn); its stderr: $(grep "$COPY_FAILED\|sqlite_copy" "$D/node$2.err" | tail -n 3)"
}

# kill_app ROUND MODE: SIGKILL at a random point of the next large
# transaction (MODE large: timed from here, at a random part of what the
# last one took), or of the next checkpoint after one (checkpoint: such a
# checkpoint takes milliseconds, so the application times it itself, with
# --die); $delay says where
kill_app() {
	local r=$1 mode=$2 c t took rc
	if [[ $mode == checkpoint ]]; then
		: > "$D/die.$tag"
		quiet
		for ((t = 0; t < 1200; t++)); do
			kill -0 "$apid" 2>/dev/null || break
			copies_ok $r "waiting for a checkpoint"
			sleep 0.05
		done
		loud
		((t < 1200)) || fail "round $r: no checkpoint after a large transaction in 60 s: $(tail -n 3 "$D/app.$tag.out")"
		wait "$apid" 2>/dev/null
		rc=$?
		((rc == 137)) || fail "round $r: the application exited $rc, not killed in a checkpoint: $(tail -n 3 "$D/app.$tag.out") $(tail -n 5 "$D/app.$tag.err")"
		delay=$(sed -n 's/^dying \([0-9.]*\) s .*/\1/p' "$D/app.$tag.out")
		return
	fi
	took=$(awk '/^large done/ { if (b != "") t = $NF - b; b = ""; next }
		/^large [0-9]/ { b = $NF }
		END { printf "%.3f\n", t == "" ? 0.2 : t }' "$D/app.$tag.out")
	c=$(count '^large [0-9]')
	for ((t = 0; t < 1500; t++)); do
		(($(count '^large [0-9]') > c)) && break
		watch $r "waiting for a large transaction"
		sleep 0.02
	done
	((t < 1500)) || fail "round $r: no large transaction began in 30 s"
	delay=$(awk -v t="$took" -v r=$RANDOM 'BEGIN { printf "%.3f", t * (r % 100) / 100 }')
	sleep "$delay"
	watch $r "before the kill"
	kill -9 "$apid"
	wait "$apid" 2>/dev/null
}

# hold_reader N ROUND: a reader of node N's file holds a read transaction
# until let_go_reader (when the file cannot be read now, there is none)
held=
hold_reader() {
	local t
	"$BANK" --hash "$D/app$1.db" --hold-until "$D/unhold.$2" > "$D/reader.$2.out" \
		2> "$D/reader.$2.err" &
	rpid=$!
	bg+=("$rpid")
	for ((t = 0; t < 100; t++)); do
		grep -q holding "$D/reader.$2.out" && break
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.05
	done
	held=$2
	grep -q holding "$D/reader.$2.out" && reader="a reader held node$1's file" ||
		reader="no reader could hold node$1's file ($(head -c 200 "$D/reader.$2.err"))"
}

# let_go_reader: a second after the new primary's open, the held reader
# ends its transaction
let_go_reader() {
	local t
	[[ -n $held ]] || return 0
	sleep 1
	: > "$D/unhold.$held"
	for ((t = 0; t < 300; t++)); do
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$rpid" 2>/dev/null && fail "the reader of round $held still runs 30 s after it was let go"
	wait "$rpid" 2>/dev/null
	clean_stderr "$D/reader.$held.err" "the reader of round $held"
	held=
}

# the RV_COPY_CRASH hooks (a debug build of repld): unknown, yes or no
declare -A hook=([apply]=unknown [mark]=unknown)

# try_hook ROUND N KIND: node N's repld started with RV_COPY_CRASH=KIND kills
# itself in the middle of its copy's next batch (apply) or base marker
# (mark); 0 once it did; 1 (and the hook is taken as absent) when it was
# still running after 20 s, or after its copy applied batches (apply) or
# marked bases (mark) enough that the hook would have fired
try_hook() {
	local r=$1 n=$2 kind=$3 t st key seen=() v rc
	[[ $kind == apply ]] && key=batches || key=base_lsn
	export RV_COPY_CRASH=$kind
	start "$n"
	unset RV_COPY_CRASH
	quiet
	for ((t = 0; t < 200; t++)); do
		if ! kill -0 "${pid[$n]}" 2>/dev/null; then
			wait "${pid[$n]}" 2>/dev/null
			rc=$?
			loud
			unset "pid[$n]"
			((rc == 137)) || fail "node$n's repld with RV_COPY_CRASH=$kind exited $rc, not by SIGKILL"
			hook[$kind]=yes
			return 0
		fi
		st=$(copy_status "$n")
		v=$(grep -o "\"$key\":[0-9]*" <<< "$st" | cut -d: -f2)
		[[ -n $v && " ${seen[*]} " != *" $v "* ]] && seen+=("$v")
		# three values: two batches applied, or two bases marked
		((${#seen[@]} >= 3)) && break
		watch "$r" "RV_COPY_CRASH=$kind on node$n"
		sleep 0.1
	done
	loud
	hook[$kind]=no
	echo "$NAME: RV_COPY_CRASH=$kind: not in this build (node$n's repld runs on: ${seen[*]} $key); timed kills only"
	return 1
}

# kill_replica ROUND N: node N's repld killed while a large transaction
# is applied to its copy, started again; the application goes slow
# meanwhile
kill_replica() {
	local r=$1 n=$2 c t delay kind how
	c=$(count '^large done')
	for ((t = 0; t < 1500; t++)); do
		(($(count '^large done') > c)) && break
		watch $r "waiting for a large transaction"
		sleep 0.02
	done
	# its record reaches the copy with the next commit point
	delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", (r % 150) / 1000 }')
	sleep "$delay"
	# the application slows down until the copy follows again (its hold
	# keeps the log meanwhile)
	: > "$D/slow"
	kill -9 "${pid[$n]}"
	wait "${pid[$n]}" 2>/dev/null
	unset "pid[$n]"
	how="killed ${delay}s after a large COMMIT"
	kills=$((kills + 1))
	# the hooks, in turn, while they may exist
	kind=$( ((kills % 2)) && echo apply || echo mark)
	[[ ${hook[$kind]} == no ]] && kind=$( [[ $kind == apply ]] && echo mark || echo apply)
	if [[ ${hook[$kind]} != no ]]; then
		if try_hook "$r" "$n" "$kind"; then
			how="$how, then killed itself in the middle of its copy's $kind (RV_COPY_CRASH)"
			restart "$n"
		fi
	else
		restart "$n"
	fi
	for ((t = 0; t < 300; t++)); do
		[[ $(copy_status "$n") == *'"state":"following"'* ]] && break
		watch $r "node$n's copy starting"
		sleep 0.1
	done
	rm -f "$D/slow"
	echo "$NAME: round $r: node$n's repld $how; started again"
}

# the first start: nodes 2 and 3 replicas, the application on node 1
conf_node 1 primary
conf_node 2 replica
conf_node 3 replica
restart 2
restart 3
p=1
kills=0
app $p 1 "&repl_bootstrap=1"
for ((r = 1; r <= ROUNDS + 1; r++)); do
	base=$(wc -l < "$ACKED")
	opened $r "$base"
	let_go_reader
	others=()
	for n in 1 2 3; do ((n == p)) || others+=("$n"); done
	converge $r "${others[@]}" && equal="node${others[0]}'s and node${others[1]}'s copies equal its $want" ||
		equal="NOT all copies equal its $want"
	echo "$NAME: round $r: node$p opened: $(grep -m 1 '^checked' "$D/app.$tag.out"); $equal ($((SECONDS - T0)) s)"
	: > "$D/go.$tag"
	((r == ROUNDS + 1)) && break
	# some dozens of transactions, ROUND_LARGE large ones among them
	for ((t = 0; t < 1200; t++)); do
		(($(wc -l < "$ACKED") >= base + ROUND_ACKED &&
		  $(count '^large done') >= ROUND_LARGE)) && break
		watch $r "committing"
		sleep 0.05
	done
	((t < 1200)) || fail "round $r: fewer than $ROUND_ACKED transactions and $ROUND_LARGE large ones in 60 s: $(tail -n 3 "$D/app.$tag.out")"
	q=$((p % 3 + 1))
	# every third round a replica's repld dies under a large transaction:
	# in turn the next primary and the other one
	if ((r % 6 == 2)); then
		kill_replica $r $q
	elif ((r % 6 == 5)); then
		kill_replica $r $((q % 3 + 1))
	fi
	mode=$( ((r % 2)) && echo large || echo checkpoint)
	kill_app $r $mode
	acked=$(($(wc -l < "$ACKED") - base))
	# odd rounds: a reader in a read transaction on node p's file while
	# its repld restarts and node q opens (the copy's start waits for it:
	# docs/sqlite.md, "Readers and the applier take turns")
	((r % 2)) && hold_reader $p $r
	# the failover: (a) rounds 1, 2, 5, 6, ...; (b) rounds 3, 4, 7, 8, ...
	if (((r - 1) % 4 < 2)); then
		order="a: node$p's repld restarted, then node$q's stopped and the application opened there"
		conf_node $p replica
		restart $p
		at=$(where $p)
		stop $q
		app $q $((r + 1))
	else
		order="b: node$q's repld stopped and the application opened there, then node$p's repld restarted"
		stop $q
		app $q $((r + 1))
		# the promotion may wait for node p (it fences both nodes)
		for ((t = 0; t < 30; t++)); do
			grep -q '^checked' "$D/app.$tag.out" && break
			kill -0 "$apid" 2>/dev/null || break
			sleep 0.1
		done
		conf_node $p replica
		restart $p
		at=$(where $p)
	fi
	((r % 2)) || reader="no reader"
	echo "$NAME: round $r: node$p's application killed ${delay}s into a $mode after $acked acknowledged; order $order; $reader ($at)"
	p=$q
done

# a replica lost for good: its log, its copy and its marker gone, a new
# node at the same address (repld --reinit); o is the other replica
s=$((p % 3 + 1))
o=$((s % 3 + 1))
for ((t = 0; t < 1200; t++)); do
	(($(count '^large done') >= 1)) && break
	watch end "before the replacement"
	sleep 0.05
done
# the application slows down until the log was released past where it
# is now: node s's hold keeps it meanwhile (docs/sqlite.md, "Replacing a
# lost node")
: > "$D/slow"
stop $s
watch end "node$s stopped"
rm -f "$D/node$s.log" "$D/app$s.db" "$D/app$s.db-wal" "$D/app$s.db-shm" \
	"$D/app$s.db-journal" "$D/app$s.db-repl-base"
skip_node=$s
last=$(jnum "$(status_json $o)" last_lsn)
restart $s --reinit
# the primary commits on (no SQLITE_FULL), and the log is released past
# where it was: nothing on node s keeps it for good
base=$(wc -l < "$ACKED")
c=$(count '^large done')
end=$((SECONDS + 60))
while ((SECONDS < end)); do
	if (($(wc -l < "$ACKED") >= base + 30 && $(count '^large done') > c)); then
		first=$(jnum "$(status_json $o)" first_lsn)
		((${first:-0} > last)) && break
	fi
	watch end "after node$s was replaced"
	sleep 0.05
done
rm -f "$D/slow"
((SECONDS < end)) || fail "after node$s was replaced: in 60 s, $(($(wc -l < "$ACKED") - base)) transactions, $(($(count '^large done') - c)) large, and node$o's log begins at ${first:-?}, not past LSN $last (released no further?): $(tail -n 3 "$D/app.$tag.err")"
grep -q "database or disk is full" "$D/app.$tag.err" &&
	fail "after node$s was replaced a COMMIT failed with SQLITE_FULL: $(grep -m 2 'full' "$D/app.$tag.err")"
for ((t = 0; t < 300; t++)); do
	st=$(copy_status $s)
	[[ $st == *'"state":"starting"'* || -z $st ]] || break
	sleep 0.1
done
echo "$NAME: node$s replaced (--reinit, no copy): the primary committed $(($(wc -l < "$ACKED") - base)) more, the log released past LSN $last (node$o's begins at $first); node$s's sqlite_copy: $st"

# the end: the primary stops writing
: > "$D/stop.$tag"
for ((t = 0; t < 600; t++)); do
	(($(count '^hash ') >= 2)) && break
	watch end "the last hash"
	sleep 0.1
done
want=$(grep '^hash ' "$D/app.$tag.out" | tail -n 1)
# node s was made anew with an empty copy after the log was released: its
# copy cannot be made from the log alone, so it asks the primary for the
# database's image and is remade from it by itself (docs/sqlite.md,
# "Remade from the primary's image"); then it follows like the others
for ((t = 0; t < 1200; t++)); do
	st=$(copy_status $s)
	[[ $st == *'"state":"following"'*'"remakes":'[1-9]* || $st == *'"state":"failed"'* ]] && break
	watch end "node$s's copy remade"
	sleep 0.1
done
[[ $st == *'"state":"following"'*'"remakes":'[1-9]* ]] ||
	fail "node$s's copy, made anew after the log was released, was not remade from the primary's image in 120 s: $st; $(grep 'replvfs copy' "$D/node$s.err" | tail -n 3)"
echo "$NAME: node$s's copy remade from the primary's image by itself: $(grep -o 'the image at LSN [^)]*)' "$D/node$s.err" | tail -n 1)"
# every copy reaches the last primary's database
finals=()
for n in 1 2 3; do ((n == p)) || finals+=("$n"); done
converge end "${finals[@]}"
watch end "the end"
kill -9 "$apid"
wait "$apid" 2>/dev/null
echo "$NAME: the last primary node$p: $want; the copies of node${finals[0]} and node${finals[1]} equal it"
for f in "$D"/app.*.err "$D"/node*.err; do clean_stderr "$f" "$f"; done
# no copy failed on the way (one that failed, then was started again,
# may look whole); the replaced node's was remade, and nothing else
REMADE='remaking it from the primary.s image\|: the image at LSN\|remade from the primary.s image'
for n in 1 2 3; do
	lines=$(grep "$COPY_FAILED" "$D/node$n.err")
	((n == s)) && lines=$(grep -v "$REMADE" <<< "$lines")
	[[ -z $lines ]] || bad "node$n's copy failed on the way: $(head -n 3 <<< "$lines")"
done
((failures == 0)) || fail "$failures wrong copies (KEEP_GOING)"
echo "$NAME: $ROUNDS failovers, $(wc -l < "$ACKED") acknowledged transactions, none lost, none partial; $kills replicas killed (hooks: apply ${hook[apply]}, mark ${hook[mark]}) ($((SECONDS - T0)) s)"
echo "$NAME: ok ($((SECONDS - T0)) s)"
