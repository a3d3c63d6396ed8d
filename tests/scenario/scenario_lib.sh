# SPDX-License-Identifier: BSD-3-Clause
#
# scenario_lib.sh -- what the scenario tests share (sourced, not run): each
# drives real repld processes through one sequence of crashes, restarts,
# lost disks, promotions and membership changes, and then checks the
# safety properties black-box, whatever mechanism keeps them:
#   a. every record `replctl append` reported acknowledged is in the final
#      primary's log at its LSN with its payload (the log read offline with
#      `replctl dump` once the node stopped);
#   b. no two nodes acknowledged different records at one LSN;
#   c. at most one node reports `primary` at the end.
# A step that a correct system may refuse (a start, a promotion, a
# membership change) is run with step_outcome or ctl_step: a refusal must
# be explicit -- a non-zero exit with a message -- never a hang or a crash.
#
# The sourcing script sets NAME first.  Builds on tests/tools/cluster_lib.sh
# (read it: $D, $REPLD, $CTL, pid[N], conf, fail, status_json, jnum, jstr,
# wait_status, clean_stderr, the cleanup trap).
#
# Provides: launch N [ARG...], mark_err N, new_err N, wait_new N PATTERN
# WHAT [SECS], step_outcome N PATTERN WHAT [SECS], ctl_step N WHAT CMD...,
# running N, kill9 N, kill_on N PATTERN [SECS], kill_done N, throttle N,
# unthrottle N, freeze N, thaw N, wipe_log N, wait_member N M [SECS], role_of N, must_ack N
# PAYLOAD..., must_ack_large N LEN NAME..., try_append N MS PAYLOAD,
# settle N LSN PAYLOAD, lsn_of LOG PAYLOAD, dump_has LOG LSN PAYLOAD,
# stop_all, conflicts, check_acked_in N [released], check_acked_any N...,
# check_one_primary, promote_step N WHAT, end_check NODE..., say WORDS,
# pass WORDS.

. "$(dirname "${BASH_SOURCE[0]}")/../tools/cluster_lib.sh"
# the scenarios say themselves when a node bootstraps or is made anew
AUTO_INIT=0

T0=$SECONDS

# A repld that knows --bootstrap (protocol v2) needs it on the first start
# of a node of a new cluster, and refuses a missing log without it.  It is
# given only when `repld --help` mentions it: so the same scenarios run
# against a build from before explicit bootstrap, to show they fail there.
BOOTSTRAP=
"$REPLD" --help 2>&1 | grep -q -- '--bootstrap' && BOOTSTRAP=--bootstrap
# --reinit: a fresh log for a replica whose disk was replaced
REINIT=
"$REPLD" --help 2>&1 | grep -q -- '--reinit' && REINIT=--reinit

declare -A booted=() mark=() killer_secs=()
: > "$D/acked"

# launch N [ARG...]: start node N (its conf file written before); on its
# first start in this test with --bootstrap if repld has it.  Its stderr
# lines from here on are new_err's.
launch() {
	local n=$1
	shift
	mark_err "$n"
	if [[ -z ${booted[$n]:-} ]]; then
		booted[$n]=1
		[[ -n $BOOTSTRAP ]] && set -- "$BOOTSTRAP" "$@"
	fi
	start "$n" "$@"
}

# mark_err N: new_err and wait_new of node N look only after this
mark_err() { mark[$1]=$(cat "$D/node$1.err" 2>/dev/null | wc -l); }

new_err() {	# N: node N's stderr since its last launch (or mark_err)
	tail -n +$((${mark[$1]:-0} + 1)) "$D/node$1.err" 2>/dev/null
}

# wait_new N PATTERN WHAT [SECS]: until node N's stderr since its launch
# matches PATTERN (grep -E; 15 s); fails if it exits first
wait_new() {
	local t lim=$((${4:-15} * 10))
	for ((t = 0; t < lim; t++)); do
		new_err "$1" | grep -Eq -- "$2" && return 0
		running "$1" || fail "node$1 exited before $3: $(new_err "$1" | tail -n 3)"
		sleep 0.1
	done
	fail "node$1: no $3 in $((lim / 10)) s"
}

# step_outcome N PATTERN WHAT [SECS]: node N was just launched (or asked
# to change); it must either get to PATTERN in its stderr (outcome=ok) or
# exit with a non-zero status and a message (outcome=refused, $rc, $why).
# A hang (neither in SECS, 20 by default), a crash (a signal, a sanitizer
# report) or a silent exit fails the test.
step_outcome() {
	local n=$1 t lim=$((${4:-20} * 10))
	outcome=
	for ((t = 0; t < lim; t++)); do
		if new_err "$n" | grep -Eq -- "$2"; then
			outcome=ok
			return 0
		fi
		running "$n" || break
		sleep 0.1
	done
	running "$n" &&
		fail "$3: node$n neither got there nor exited in $((lim / 10)) s: $(new_err "$n" | tail -n 3)"
	wait "${pid[$n]}"
	rc=$?
	unset "pid[$n]"
	clean_stderr "$D/node$n.err" "$3 (node$n exited $rc)"
	((rc != 0 && rc < 128)) ||
		fail "$3: node$n exited $rc without getting there: $(new_err "$n" | tail -n 3)"
	why=$(new_err "$n" | grep -E "^(<[0-9]>|[0-9T:.-]+Z [a-z]+ )repld: " | tail -n 1)
	[[ -n $why ]] || fail "$3: node$n exited $rc without a word"
	outcome=refused
	say "$3: refused by node$n (exit $rc): $why"
}

# ctl_step N WHAT CMD...: replctl CMD on node N, a step a correct system
# may refuse: exit 0 (outcome=ok), or exit 1 with the daemon's reason on
# stderr (outcome=refused, $why).  No answer in 30 s (exit 4), a usage
# error or a crash fails.  $out: its stdout.
ctl_step() {
	local n=$1 what=$2
	shift 2
	out=$("$CTL" -s "$(sock "$n")" --timeout 30000 "$@" 2> "$D/step.err")
	rc=$?
	clean_stderr "$D/step.err" "$what: replctl $*"
	why=$(head -n 1 "$D/step.err")
	if ((rc == 0)); then
		outcome=ok
	elif ((rc == 1)) && [[ -n $why ]]; then
		outcome=refused
		say "$what: refused (replctl exit 1): $why"
	else
		fail "$what: replctl $* on node$n: exit $rc: ${why:-no message}"
	fi
}

running() { [[ -n ${pid[$1]:-} ]] && kill -0 "${pid[$1]}" 2>/dev/null; }

# kill9 N: SIGKILL node N, running until then, and reap it (it must
# really be gone)
kill9() {
	if ! running "$1"; then
		[[ -n ${pid[$1]:-} ]] && wait "${pid[$1]}"
		fail "node$1 was to be killed, but it is not running (exit $?)"
	fi
	kill -9 "${pid[$1]}" 2>/dev/null
	wait "${pid[$1]}" 2>/dev/null
	kill -0 "${pid[$1]}" 2>/dev/null && fail "node$1 survived SIGKILL"
	unset "pid[$1]"
}

# kill_on N PATTERN [SECS]: in the background, SIGKILL node N the moment
# its stderr gets a line matching PATTERN (bash regex), or after SECS (10)
# without one; $D/killed.N then says which ("line: ..." or "timeout").
# Reacts within milliseconds (tail -F), so it can hit a window between
# two steps of the daemon.  kill_done N waits for it (SECS + 5 s) and
# reaps N.
kill_on() {
	local n=$1 re=$2 secs=${3:-10} victim=${pid[$1]:-}
	[[ -n $victim ]] || fail "kill_on: node$n does not run"
	rm -f "$D/killed.$n"
	killer_secs[$n]=$secs
	(
		exec 3< <(exec tail -n 0 -F "$D/node$n.err" 2>/dev/null)
		tp=$!
		end=$((SECONDS + secs))
		what=timeout
		buf=
		while ((SECONDS < end)); do
			# a line cut by the read's timeout is joined again
			if read -r -t 0.5 -u 3 part; then
				line=$buf$part
				buf=
				if [[ $line =~ $re ]]; then
					what="line: ${line#* \*[A-Z]*\* }"
					break
				fi
			else
				buf+=$part
			fi
		done
		kill -9 "$victim" 2>/dev/null
		echo "$what" > "$D/killed.$n"
		kill "$tp" 2>/dev/null
	) &
	bg+=($!)
	# its end is no job for the shell to report ("Killed")
	disown "$victim" 2>/dev/null
	sleep 0.3	# tail is reading
}

kill_done() {
	local t
	for ((t = 0; t < (${killer_secs[$1]:-10} + 5) * 10; t++)); do
		[[ -e $D/killed.$1 ]] && break
		sleep 0.1
	done
	[[ -e $D/killed.$1 ]] || fail "node$1's killer did not end"
	for ((t = 0; t < 50; t++)); do
		running "$1" || break
		sleep 0.1
	done
	running "$1" && fail "node$1 survived SIGKILL"
	unset "pid[$1]"
	killed_by=$(cat "$D/killed.$1")
}

# throttle N: in the background, node N runs 10 ms of every 50 (SIGSTOP,
# SIGCONT), a slow node, until unthrottle N
throttle() {
	local n=$1 victim=${pid[$1]:-}
	[[ -n $victim ]] || fail "throttle: node$n does not run"
	rm -f "$D/unthrottle.$n"
	(
		while [[ ! -e $D/unthrottle.$n ]] && kill -STOP "$victim" 2>/dev/null; do
			sleep 0.04
			kill -CONT "$victim" 2>/dev/null
			sleep 0.01
		done
		kill -CONT "$victim" 2>/dev/null
		rm -f "$D/unthrottle.$n"
	) &
	bg+=($!)
}

unthrottle() {
	local t
	: > "$D/unthrottle.$1"
	for ((t = 0; t < 50; t++)); do
		[[ -e $D/unthrottle.$1 ]] || break
		sleep 0.1
	done
	thaw "$1"
}

freeze() { running "$1" && kill -STOP "${pid[$1]}" || fail "cannot freeze node$1"; }
thaw() { [[ -z ${pid[$1]:-} ]] || kill -CONT "${pid[$1]}" 2>/dev/null; }

# wipe_log N: node N's log is gone (a lost disk); N must be down
wipe_log() {
	running "$1" && fail "wipe_log: node$1 runs"
	[[ -e $D/node$1.log ]] || fail "node$1's log does not exist before the wipe"
	rm -f "$D/node$1.log"
	[[ -e $D/node$1.log ]] && fail "node$1's log still there"
	return 0
}

# wait_member N M [SECS]: primary N reports node M streaming and a member
wait_member() {
	wait_status "$1" "\"address\":\"127.0.0.1:$(cport "$2")\",\"state\":\"streaming\",\"member\":true" \
		"node$2 a streaming member of node$1's" "${3:-20}"
}

# role_of N: "primary", "replica", or "" when it does not answer (2 s)
role_of() {
	local s rc
	running "$1" || return 0
	# 5: it answers, but cannot acknowledge or follows no primary now
	s=$("$CTL" -s "$(sock "$1")" --timeout 2000 --json status 2> /dev/null)
	rc=$?
	((rc == 0 || rc == 5)) || return 0
	jstr "$s" role
}

# must_ack N PAYLOAD...: append each payload (one record each) on node N;
# every one must be acknowledged.  Each goes into $D/acked as
# "LSN PAYLOAD nodeN"; $last_lsn: the last one's LSN.
must_ack() {
	local n=$1 out rc
	shift
	out=$(printf '%s\n' "$@" | "$CTL" -s "$(sock "$n")" --timeout 15000 --json \
		append 2> "$D/append.err")
	rc=$?
	clean_stderr "$D/append.err" "replctl append on node$n"
	record_acks "$n" "$out" "$@"
	((rc == 0 && got == $#)) ||
		fail "append of $# records on node$n: exit $rc, $got acknowledged: $(cat "$D/append.err")"
}

# must_ack_large N LEN NAME...: like must_ack, records of LEN bytes: each
# NAME followed by "x" up to LEN ("NAME~LEN" in $D/acked)
must_ack_large() {
	local n=$1 len=$2 out rc names=()
	shift 2
	printf '%s\n' "$@" | awk -v len="$len" '
		BEGIN {
			pad = "x"
			while (length(pad) < len)
				pad = pad pad
			pad = substr(pad, 1, len)
		}
		{ print $0 substr(pad, length($0) + 1) }' > "$D/large.in"
	out=$("$CTL" -s "$(sock "$n")" --timeout 30000 --json append < "$D/large.in" \
		2> "$D/append.err")
	rc=$?
	rm -f "$D/large.in"
	clean_stderr "$D/append.err" "replctl append on node$n"
	for p in "$@"; do names+=("$p~$len"); done
	record_acks "$n" "$out" "${names[@]}"
	((rc == 0 && got == $#)) ||
		fail "append of $# records of $len bytes on node$n: exit $rc, $got acknowledged: $(cat "$D/append.err")"
}

# record_acks N REPLIES PAYLOAD...: the acknowledged ones into $D/acked;
# $got: how many
record_acks() {
	local n=$1 replies=$2 line i=0 lsn
	shift 2
	local payloads=("$@")
	got=0
	while IFS= read -r line; do
		[[ -z $line ]] && continue
		if [[ $line == '{"ok":true,"lsn":'* ]]; then
			lsn=$(jnum "$line" lsn)
			echo "$lsn ${payloads[$i]} node$n" >> "$D/acked"
			last_lsn=$lsn
			got=$((got + 1))
		fi
		i=$((i + 1))
	done <<< "$replies"
}

# try_append N MS PAYLOAD: one record that may not be acknowledged (no
# quorum): replctl gives up after MS.  $rc: replctl's exit; when it was
# acknowledged after all it is in $D/acked like must_ack's.
try_append() {
	local out
	out=$(printf '%s\n' "$3" | "$CTL" -s "$(sock "$1")" --timeout "$2" --json \
		append 2> "$D/append.err")
	rc=$?
	clean_stderr "$D/append.err" "replctl append on node$1"
	record_acks "$1" "$out" "$3"
}

# settle N LSN PAYLOAD: a record whose append's outcome was unknown (it
# timed out) settled on the later primary N as repl_wait_durable(3) says:
# once everything N holds is durable under its own quorum (commit_lsn
# reaches last_lsn, 20 s), the record is committed iff N's log holds it
# at its LSN.  Committed: it goes into $D/acked (settled=1), since the
# client acknowledges it now.
settle() {
	local n=$1 end=$((SECONDS + 20)) c l ok=0
	settled=0
	while ((SECONDS < end)); do
		st=$(status_json "$n")
		c=$(jnum "$st" commit_lsn)
		l=$(jnum "$st" last_lsn)
		[[ $(jstr "$st" role) == primary && -n $c && -n $l ]] && ((c >= l)) && ok=1 && break
		sleep 0.1
	done
	((ok)) || fail "node$n: its log not all durable in 20 s: $st"
	if dump_has "$D/node$n.log" "$2" "$3"; then
		echo "$2 $3 node$n-settled" >> "$D/acked"
		settled=1
		say "LSN $2 ($3) settled on node$n: committed (commit_lsn $c)"
	else
		say "LSN $2 ($3) settled on node$n: not committed (commit_lsn $c)"
	fi
}

# A large record is named NAME~LEN in $D/acked: NAME, then "x" up to LEN
# bytes (must_ack_large writes them).  plen PAYLOAD: its length; head32
# PAYLOAD: its first 32 bytes.
plen() { [[ $1 == *~* ]] && echo "${1##*~}" || echo "${#1}"; }
head32() {
	local p=$1
	if [[ $p == *~* ]]; then
		p=${p%~*}
		while ((${#p} < 32)); do p+=x; done
	fi
	echo "${p:0:32}"
}

# hexof PAYLOAD: what replctl dump shows of it (32 bytes, then "...")
hexof() {
	local h
	h=$(printf '%s' "$(head32 "$1")" | od -An -tx1 | tr -d ' \n')
	(($(plen "$1") > 32)) && h+=...
	echo "$h"
}

# unhex HEX: the text of dump's hex (its first 32 bytes), "..." kept
unhex() {
	local h=${1%...} t
	t=$(printf "$(sed 's/../\\x&/g' <<< "$h")")
	[[ $1 == *... ]] && t+=...
	echo "\"$t\""
}

# dump LOG: the records of a node's log as "LSN EPOCH LEN HEX" (of a
# running node's: a moment of it); the whole dump in $D/dump.out
dump() {
	"$CTL" dump --payload hex "$1" > "$D/dump.out" 2> "$D/dump.err" ||
		fail "replctl dump $1: exit $?: $(cat "$D/dump.err")"
	clean_stderr "$D/dump.err" "replctl dump $1"
	awk '$1 ~ /^[0-9]+$/ && NF == 8 && $7 == "ok" { print $1, $2, $4, $8 }' "$D/dump.out"
}

# lsn_of LOG PAYLOAD: the LSN of the record with PAYLOAD in LOG ("" if none)
lsn_of() {
	local h
	h=$(hexof "$2")
	dump "$1" | awk -v h="$h" -v l="$(plen "$2")" '$4 == h && $3 == l { print $1; exit }'
}

# dump_has LOG LSN PAYLOAD: does LOG hold PAYLOAD at LSN?
dump_has() {
	local h
	h=$(hexof "$3")
	dump "$1" | awk -v lsn="$2" -v h="$h" -v l="$(plen "$3")" \
		'$1 == lsn && $4 == h && $3 == l { f = 1 } END { exit !f }'
}

# stop_all: SIGTERM every running node; each must exit (any status: a
# fenced primary exits 3), none may crash
stop_all() {
	local n
	for n in "${!pid[@]}"; do thaw "$n"; kill -TERM "${pid[$n]}" 2>/dev/null; done
	for n in "${!pid[@]}"; do
		exited "$n" "node$n still running 10 s after SIGTERM"
		clean_stderr "$D/node$n.err" "node$n (exit $rc)"
		((rc < 128)) || fail "node$n died of a signal (exit $rc) on SIGTERM"
	done
}

# conflicts: "LSN L: P1 by W1 and P2 by W2" for every LSN in $D/acked
# acknowledged with two different records (b), one a line
conflicts() {
	awk '{ if (($1 in p) && p[$1] != $2) print "LSN " $1 ": " p[$1] " by " w[$1] \
		" and " $2 " by " $3; p[$1] = $2; w[$1] = $3 }' "$D/acked"
}

# verdict LINE...: how many of the LINEs are LOST: and TWICE: ones
verdict() {
	local l lost=0 twice=0
	for l in "$@"; do
		[[ $l == LOST:* ]] && lost=$((lost + 1))
		[[ $l == TWICE:* ]] && twice=$((twice + 1))
	done
	echo "$lost lost, $twice LSNs acknowledged with two records"
}

# check_acked_in N [released]: node N (stopped: stop_all first) is the
# final primary; every acknowledged record in $D/acked must be in its log
# at its LSN with its payload (a), and no LSN may have been acknowledged
# with two different payloads (b).  With "released", records below the
# log's checkpoint are not looked for (the application released them).
# Fails naming every record lost.
check_acked_in() {
	local log=$D/node$1.log lsn p who bad=() h hx len ep dup total head=0 released=0
	[[ -s $D/acked ]] || fail "nothing was acknowledged: the scenario did not run"
	[[ -e $log ]] || fail "node$1's log $log does not exist"
	dump "$log" > "$D/final.dump"
	if [[ ${2:-} == released ]]; then
		head=$(awk '$1 == "checkpoint:" { print $3 }' "$D/dump.out")
		[[ $head =~ ^[0-9]+$ ]] || fail "no checkpoint in node$1's dump"
	fi
	# b. one record per LSN, whoever acknowledged it
	while IFS= read -r dup; do
		bad+=("TWICE: $dup: two records acknowledged at one LSN")
	done < <(conflicts)
	# a. each in the final primary's log
	total=0
	while read -r lsn p who; do
		total=$((total + 1))
		if ((lsn < head)); then
			# released by the application: gone from every log
			released=$((released + 1))
			continue
		fi
		h=$(hexof "$p")
		hx= len= ep=
		read -r hx len ep < <(awk -v l="$lsn" '$1 == l { print $4, $3, $2 }' "$D/final.dump")
		if [[ -z $hx ]]; then
			bad+=("LOST: LSN $lsn ($(short "$p"), acknowledged by $who): node$1's log has no LSN $lsn")
		elif [[ $hx != "$h" || $len != "$(plen "$p")" ]]; then
			bad+=("LOST: LSN $lsn ($(short "$p"), acknowledged by $who): node$1's log holds another record there: $(unhex "$hx") ($len bytes, epoch $ep)")
		fi
	done < "$D/acked"
	if ((${#bad[@]})); then
		for p in "${bad[@]}"; do echo "$NAME: $p"; done
		fail "of $total acknowledged records: $(verdict "${bad[@]}") (the final primary: node$1)"
	fi
	if ((released)); then
		say "all $total acknowledged records in node$1's log ($released of them" \
			"released: below its checkpoint, LSN $head)"
	else
		say "all $total acknowledged records in node$1's log"
	fi
}

# check_acked_any N...: no final primary (every promotion was refused):
# then nothing acknowledged may be gone from all of these (stopped) nodes'
# logs, and no LSN acknowledged twice differently
check_acked_any() {
	local n lsn p who h l bad=() total=0 dup
	[[ -s $D/acked ]] || fail "nothing was acknowledged: the scenario did not run"
	while IFS= read -r dup; do
		bad+=("TWICE: $dup: two records acknowledged at one LSN")
	done < <(conflicts)
	: > "$D/any.dump"
	for n in "$@"; do
		[[ -e $D/node$n.log ]] && dump "$D/node$n.log" >> "$D/any.dump"
	done
	while read -r lsn p who; do
		total=$((total + 1))
		h=$(hexof "$p")
		l=$(plen "$p")
		awk -v lsn="$lsn" -v h="$h" -v l="$l" \
			'$1 == lsn && $4 == h && $3 == l { f = 1 } END { exit !f }' "$D/any.dump" ||
			bad+=("LOST: LSN $lsn ($(short "$p"), acknowledged by $who): in none of the logs of nodes $*")
	done < "$D/acked"
	if ((${#bad[@]})); then
		for p in "${bad[@]}"; do echo "$NAME: $p"; done
		fail "of $total acknowledged records: $(verdict "${bad[@]}") (no final primary; the logs of nodes $*)"
	fi
	say "no primary at the end; all $total acknowledged records are in the logs of nodes $*"
}

# check_one_primary: at most one running node reports primary; $primary
# is it ("" if none)
check_one_primary() {
	local n ps=()
	primary=
	for n in "${!pid[@]}"; do
		[[ $(role_of "$n") == primary ]] && ps+=("node$n")
	done
	((${#ps[@]} <= 1)) || fail "${#ps[@]} nodes report primary: ${ps[*]}"
	primary=${ps[0]:-}
	primary=${primary#node}
}

pass() { echo "$NAME: ok: $* ($((SECONDS - T0)) s)"; exit 0; }

# say WORDS: a progress line, with the seconds since the start
say() { echo "$NAME: [$((SECONDS - T0)) s] $*"; }

# short PAYLOAD: a large record's name and length (the record otherwise)
short() { [[ $1 == *~* ]] && echo "${1%~*}xxx... (${1##*~} bytes)" || echo "$1"; }

# promote_step N WHAT: ask node N to promote (ctl_step); if it took, node N
# must report primary, and $final becomes N
promote_step() {
	ctl_step "$1" "$2" promote
	[[ $outcome == ok ]] || return 0
	wait_status "$1" '"role":"primary"' "node$1 the primary"
	say "node$1 promoted: $(new_err "$1" | grep -m1 -o "promoted: .*")"
	final=$1
}

# end_check NODE...: the one node that reports primary is $final (none if
# $final is empty); all stop; every acknowledged record is then in
# $final's log, or, without a primary, in one of NODE...'s
end_check() {
	check_one_primary
	[[ ${primary:-} == "${final:-}" ]] ||
		fail "node${primary:-?} reports primary, not node${final:-?}"
	stop_all
	if [[ -n ${final:-} ]]; then
		check_acked_in "$final"
	else
		check_acked_any "$@"
	fi
}
