#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# check-model.sh -- the SPIN models of the replication protocol (model/
# repl.pml), of the SQLite layer's bases, copies and holds (model/
# bases.pml, the runs named bases-*), of what its readers read while
# commits are in flight (model/readers.pml, readers-*) and of the
# archiver's own state: the archive, its hold and the log-archiver key
# (model/archive.pml, archive-*), docs/model.md, searched exhaustively
# within their bounds:
#   pass runs  the v2 rules (the bases rules): no assertion may fail, and
#              the search must be complete (not cut at the depth limit,
#              not out of memory);
#   fail runs  one rule put back the way it was (or the way the first wording of the v2 rules
#              words it where the model found that unsafe), or I3 checked
#              where the model shows it does not hold: SPIN must find a
#              violated invariant, else this test fails; "fail:NAME" must
#              find invariant NAME violated (the replay names it).
# Each run prints the states stored, the transitions and the time; a fail
# run also prints the counterexample's steps (replayed from its trail).
#
# Run by "make check" from the build directory (automake exports $srcdir),
# or by hand from anywhere.  Environment:
#   MODEL_JOBS=N   runs at a time (default 2)
#   MODEL_LONG=1   also the long runs (larger bounds, minutes)
#   MODEL_ONLY=RE  only the runs whose name matches the regex RE
#   MODEL_KEEP=1   keep the scratch directory (pan, trails) and name it
# Exit 0: as expected; 1: a run went wrong (each is named); 77: spin or a
# C compiler is missing (skip).
set -u

if [ -z "${srcdir:-}" ]; then
	srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fi
model="$srcdir/model"
for f in repl.pml defs.pml actions.pml bases.pml readers.pml archive.pml; do
	if [ ! -f "$model/$f" ]; then
		echo "FAIL: $model/$f not found (srcdir=$srcdir)" >&2
		exit 1
	fi
done
SPIN=${SPIN:-spin}
CC=${MODEL_CC:-gcc}
if ! command -v "$SPIN" >/dev/null 2>&1; then
	echo "SKIP: $SPIN is not installed (Debian: apt-get install spin)"
	exit 77
fi
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "SKIP: no C compiler ($CC) to build SPIN's verifier"
	exit 77
fi
jobs=${MODEL_JOBS:-2}
only=${MODEL_ONLY:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-model.XXXXXX") || exit 1
if [ -n "${MODEL_KEEP:-}" ]; then
	echo "scratch directory: $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

# The runs: name, expect (pass, fail or fail:NAME), then spin's -D options;
# model=FILE searches FILE (default repl.pml), depth=N lets pan's search go
# N steps deep (default 20000), and with shortest a fail run looks for the
# shortest counterexample (pan -i) and prints that one.  The bounds and
# what each fail run shows are in docs/model.md.  The quick pass runs are compiled with -O1 (at -O2
# gcc spends longer on pan.c than the search takes), the fail runs, which
# stop early, with -O0, the long ones with -O2.
B3="-DNN=3 -DC0=7 -DK0=1 -DL=3"
M4="-DNN=4 -DC0=7 -DK0=1 -DL=3 -DPRIMARY_SYNC"
K2C="-DNN=4 -DC0=7 -DK0=2 -DL=3 -DPRIMARY_SYNC -DMAXCHG=2 -DCHANGE_KINDS=3 -DNO_APPEND -DNO_CRASH"
K2M="$K2C -DMAXT=3"
BA="model=bases.pml depth=200000 -DNN=2 -DNP=2 -DNT=4 -DMAXLOSS=1 -DRESEED"
BF="$BA shortest"
BL="model=bases.pml depth=200000 -DMAXLOSS=1 -DRESEED"
BRL="model=bases.pml depth=200000 -DRESEED -DREMAKE"
BR="$BRL -DNN=2 -DNP=2 -DNT=5 -DMAXTX=3 -DMAXLOSS=1"
BRF="$BR shortest"
BR1="$BRL -DNN=2 -DNP=1 -DNT=5 -DMAXTX=4 -DMAXLOSS=1"
RD="model=readers.pml depth=100000"
AR="model=archive.pml depth=200000"
AF="$AR -DNT=2 shortest"
RUNS=(
	# the commit rule: 3 nodes, k 1, 4 terms (Raft's figure 8 needs 4)
	"commit		pass $B3 -DMAXT=4"
	"no-epoch-start	fail $B3 -DMAXT=4 -DNO_EPOCH_START"
	# lost disks, --reinit and --bootstrap: 3 nodes, k 1, 3 terms
	"disk		pass $B3 -DMAXT=3 -DMAXLOSS=1 -DBOOTSTRAP_ACTION"
	"self-counts	fail $B3 -DMAXT=3 -DMAXLOSS=1 -DSELF_COUNTS_WITHOUT_MEMBERSHIP -DNO_I3"
	"reinit-no-floor	fail $B3 -DMAXT=3 -DMAXLOSS=1 -DREINIT_NO_FLOOR"
	"bootstrap-any	fail $B3 -DMAXT=3 -DMAXLOSS=1 -DBOOTSTRAP_ACTION -DBOOTSTRAP_ANY_REACHABLE -DNO_I3"
	"member-at-commit fail $B3 -DMAXT=3 -DMAXLOSS=1 -DMEMBER_AT_COMMIT_ONLY -DNO_I3"
	# 4 nodes, k 2: promotion quorums (2 nodes) need not meet
	"k2		pass -DNN=4 -DC0=15 -DK0=2 -DL=3 -DPRIMARY_SYNC -DMAXT=2"
	# membership changes, n3 a spare: one change of any kind, 2 terms
	"change		pass $M4 -DMAXT=2 -DMAXCHG=1"
	"old-membership	fail $M4 -DMAXT=2 -DMAXCHG=1 -DOLD_MEMBERSHIP"
	# removing a node, 3 terms: the node removed may lead under J
	"remove		pass $M4 -DMAXT=3 -DMAXCHG=1 -DCHANGE_KINDS=2 -DNO_APPEND"
	"outside-counts	fail $M4 -DMAXT=3 -DMAXCHG=1 -DCHANGE_KINDS=2 -DNO_APPEND -DPRIMARY_OUTSIDE_COUNTS"
	# two changes (add, remove), k 2, 3 terms: one config epoch, two
	# memberships; and I3 (not I1, I2) fails with a superseded primary
	"epoch-only	fail $K2M -DMATCH_CONFIG_EPOCH -DNO_I3"
	"i3-superseded	fail $K2M"
	# changes taken by compare-and-swap in etcd first: a config epoch names
	# one membership, so even counting by config epoch alone is safe; the
	# same bounds without the store fail
	"epoch-only-t2	fail $K2C -DMAXT=2 -DMATCH_CONFIG_EPOCH -DNO_I3"
	"dcs-epoch-only	pass $K2C -DMAXT=2 -DMATCH_CONFIG_EPOCH -DDCS_CHANGES -DNO_I3"
	# the SQLite layer (model/bases.pml): 2 nodes, 2 pages, 4 records, one
	# copy lost, reseeding; each fail run one rule broken, and the
	# invariant it must break
	"bases		pass $BA"
	"bases-copy-from-first fail:I-gap $BF -DBUG_COPY_FROM_FIRST -DNO_I_MARKER -DNO_I_COPY -DNO_I_REBUILD"
	"bases-copy-from-first-marker fail:I-marker $BF -DBUG_COPY_FROM_FIRST"
	"bases-copy-from-first-rebuild fail:I-rebuild $BF -DBUG_COPY_FROM_FIRST -DNO_I_GAP -DNO_I_MARKER -DNO_I_COPY"
	"bases-no-base-from-first fail:I-marker $BF -DBUG_NO_BASE_FROM_FIRST -DNO_I_GAP -DNO_I_COPY"
	"bases-mark-before-sync fail:I-marker $BF -DBUG_MARK_BEFORE_SYNC"
	"bases-mark-before-sync-rebuild fail:I-rebuild $BF -DBUG_MARK_BEFORE_SYNC -DNO_I_MARKER -DNO_I_COPY"
	"bases-failed-keeps-hold fail:I-wedge $BF -DBUG_FAILED_KEEPS_HOLD"
	"bases-short-base fail:I-rebuild $BF -DBUG_REBUILD_SHORT_BASE"
	"bases-release-past-holds fail:I-gap $BF -DBUG_RELEASE_PAST_HOLDS"
	# copies remade from the primary's image (rule 7): 5 records, of them
	# 3 transactions (an image of 2 pages, a transaction among them), and
	# 1 page with 4 (releases during the remake and after it); each fail
	# run rule 7 broken, and the invariant it must break
	"bases-remake	pass $BR"
	"bases-remake-1page pass $BR1"
	"bases-image-no-pin fail:I-gap $BRF -DBUG_IMAGE_NO_PIN"
	"bases-image-overwrites fail:I-remake $BRF -DBUG_IMAGE_OVERWRITES"
	"bases-image-mark-early fail:I-marker $BRF -DBUG_IMAGE_MARK_EARLY"
	"bases-image-mark-early-rebuild fail:I-rebuild $BRF -DBUG_IMAGE_MARK_EARLY -DNO_I_MARKER -DNO_I_COPY"
	"bases-remake-keeps-hold fail:I-wedge $BRF -DBUG_FAILED_KEEPS_HOLD"
	"bases-remake-hold-back fail:I-gap $BR1 shortest -DBUG_REMAKE_HOLD_BACK"
	# strict commits in flight (model/readers.pml): 2 connections, 2
	# pages, 3 transactions, and 3 connections with 2; each fail run one
	# rule dropped (the second after a ROLLBACK, no commit timing out)
	"readers	pass $RD -DNC=2 -DNT=3"
	"readers-3conn	pass $RD -DNC=3 -DNT=2"
	"readers-no-read-gate fail:I-read $RD shortest -DBUG_NO_READ_GATE"
	"readers-no-seen-wait fail:I-read $RD shortest -DBUG_NO_SEEN_WAIT"
	"readers-no-seen-wait-rollback fail:I-read $RD shortest -DBUG_NO_SEEN_WAIT -DNO_TIMEOUT"
	# the archiver (model/archive.pml): 3 nodes, 5 records, 2 crashes, 1
	# failover, 1 hold dropped for space; archive.on = "replica"; no
	# log-archiver key (3 records); each fail run (2 records) one rule
	# broken, or the code as it was where the model found it unsafe
	"archive	pass $AR"
	"archive-on-replica pass $AR -DON_REPLICA"
	"archive-no-key	pass $AR -DNO_KEY -DNT=3"
	"archive-hold-from-next fail:I-gap $AF -DBUG_HOLD_FROM_NEXT"
	"archive-no-attach-hold fail:I-gap $AF -DBUG_NO_ATTACH_HOLD"
	"archive-down-hold-forgotten fail:I-gap $AF -DBUG_DOWN_HOLD_FORGOTTEN"
	"archive-unseen-releases fail:I-gap $AF -DBUG_UNSEEN_RELEASES"
	"archive-no-gap-check fail:I-said $AF -DBUG_NO_GAP_CHECK"
	"archive-take-unheld fail:I-gap $AF -DBUG_TAKE_UNHELD"
	"archive-take-unconnected fail:I-gap $AF -DBUG_TAKE_UNCONNECTED"
	"archive-promoted-unheld fail:I-gap $AF -DBUG_PROMOTED_UNHELD"
)
if [ -n "${MODEL_LONG:-}" ]; then
	RUNS+=(
	"long-change-t3	pass $M4 -DMAXT=3 -DMAXCHG=1"
	"long-change2	pass $M4 -DMAXT=2 -DMAXCHG=2"
	"long-two-changes pass $K2M -DNO_I3"
	"long-dcs-epoch-only pass $K2M -DMATCH_CONFIG_EPOCH -DDCS_CHANGES -DNO_I3"
	"long-k2-disk	pass -DNN=4 -DC0=15 -DK0=2 -DL=3 -DPRIMARY_SYNC -DMAXT=2 -DMAXLOSS=1"
	# the bases model: 3 nodes; 3 pages; each page's three crash outcomes
	# and checkpoints stopped half-way
	"long-bases-3nodes pass $BL -DNN=3 -DNP=2 -DNT=3"
	"long-bases-3pages pass $BL -DNN=2 -DNP=3 -DNT=3"
	"long-bases-choices pass $BL -DNN=2 -DNP=2 -DNT=3 -DCRASH_CHOICES -DPARTIAL_CKPT"
	# remakes: 6 records, 4 of them transactions; 3 nodes, two copies lost
	# (two remakes at once, a copy that starts over with another's image);
	# every crash outcome and checkpoints stopped half-way
	"long-bases-remake-6 pass $BRL -DNN=2 -DNP=2 -DNT=6 -DMAXTX=4 -DMAXLOSS=1"
	"long-bases-remake-3nodes pass $BRL -DNN=3 -DNP=2 -DNT=5 -DMAXTX=2 -DMAXLOSS=2"
	"long-bases-remake-choices pass $BRL -DNN=2 -DNP=2 -DNT=5 -DMAXTX=3 -DMAXLOSS=1 -DCRASH_CHOICES -DPARTIAL_CKPT"
	# readers: 3 connections and 3 transactions; 4 transactions on 3 pages
	"long-readers-3conn pass $RD -DNC=3 -DNT=3"
	"long-readers-3pages pass $RD -DNC=2 -DNP=3 -DNT=4"
	# the archiver without a key: 4 records
	"long-archive-no-key pass $AR -DNO_KEY -DNT=4"
	)
fi

# run NAME EXPECT DEFS...: build and search in $tmp/NAME; the verdict goes
# to $tmp/NAME/verdict (first line PASS or FAIL), the report to .../report
run() {
	local name=$1 expect=$2 OPT=-O1 HASH=22 errors stored trans depth cpu sys wall; shift 2
	local main=repl.pml maxdepth=20000 want='' arg
	local -a P=()
	# fail:NAME: the violation found must be invariant NAME's
	case $expect in fail:*) want=${expect#fail:}; expect=fail ;; esac
	# a fail run stops early: compiling pan.c is most of its time
	[ "$expect" = fail ] && OPT=-O0
	case $name in long-*) OPT=-O2 HASH=26 ;; esac
	local -a D=()
	for arg in "$@"; do
		case $arg in
		model=*) main=${arg#model=} ;;
		depth=*) maxdepth=${arg#depth=} ;;
		shortest) P+=(-i) ;;
		*) D+=("$arg") ;;
		esac
	done
	local d="$tmp/$name"
	mkdir -p "$d" && cp "$model"/*.pml "$d"/ || return 1
	cd "$d" || return 1
	{
		if [ "$main" = repl.pml ]; then
			echo "== $name ($expect): spin ${D[*]}"
		else
			echo "== $name ($expect${want:+ $want}): spin ${D[*]} $main"
		fi
		if ! "$SPIN" "${D[@]}" -a "$main" > spin.out 2>&1; then
			cat spin.out
			echo "FAIL" > verdict
			exit 0
		fi
		# safety only (assertions, invalid end states); no partial order
		# reduction is needed: the model is one process
		# (pan -i finds the shortest only with -DREACH)
		if ! "$CC" $OPT -w -DSAFETY -DMEMLIM=4096 ${P[@]+-DREACH} -o pan pan.c > cc.out 2>&1; then
			cat cc.out
			echo "FAIL" > verdict
			exit 0
		fi
		# the search's CPU time and elapsed time (the machine may be shared)
		TIMEFORMAT='%U %S %R'
		{ time ./pan -m"$maxdepth" -w$HASH ${P[@]+"${P[@]}"} > pan.out 2>&1; } 2> time.out
		errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -1)
		stored=$(awk '/states, stored/ { print $1; exit }' pan.out)
		trans=$(awk '/transitions \(= stored\+matched\)/ { print $1; exit }' pan.out)
		depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.out | head -1)
		read -r cpu sys wall < time.out
		cpu=$(awk -v u="$cpu" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
		echo "   $stored states stored, $trans transitions, depth $depth, ${cpu}s CPU (${wall}s elapsed), errors: ${errors:-?}"
		if [ "$expect" = pass ]; then
			if [ "${errors:-x}" != 0 ]; then
				echo "   unexpected: the v2 rules violate an invariant:"
				grep -E 'assertion violated|error|out of memory' pan.out | head -3 | sed 's/^/   /'
				trail
				echo FAIL > verdict
			elif grep -q 'max search depth too small' pan.out; then
				echo "   unexpected: the search was cut at the depth limit"
				echo FAIL > verdict
			elif grep -qiE 'out of memory|Search not completed' pan.out; then
				echo "   unexpected: the search did not complete"
				echo FAIL > verdict
			elif ! grep -q 'Full statespace search' pan.out; then
				echo "   unexpected: no full state-space search"
				echo FAIL > verdict
			else
				echo "   exhaustive: no invariant violated"
				echo PASS > verdict
			fi
		else
			if [ -n "$errors" ] && [ "$errors" -gt 0 ] &&
			   grep -q 'assertion violated' pan.out; then
				# (pan -i goes on to shorter ones: the replay names it)
				[ ${#P[@]} -eq 0 ] &&
				grep -m1 'assertion violated' pan.out | sed 's/^pan:1: /   found: /'
				trail > trail.out
				cat trail.out
				if [ -n "$want" ] && ! grep -q "^ *$want violated" trail.out; then
					echo "   unexpected: not $want that was violated"
					echo FAIL > verdict
				else
					echo PASS > verdict
				fi
			else
				echo "   unexpected: SPIN found no violation"
				echo FAIL > verdict
			fi
		fi
	} > report 2>&1
	# the replay leaves the verdict last; the report is printed in order
}

# trail: replay pan's trail (in the current directory, with run's model
# main and options D) and print its steps, up to the invariant violated
trail() {
	[ -f "$main.trail" ] || return 0
	"$SPIN" -T "${D[@]}" -DSHOW_TRAIL=1 -t "$main" 2>&1 |
		awk '/violated/ { print; exit } /^[a-z]+: / && !/^spin:/' |
		sed 's/^/     /'
}

names=()
running=0
for entry in "${RUNS[@]}"; do
	read -r name expect rest <<< "$entry"
	if [ -n "$only" ] && ! [[ $name =~ $only ]]; then
		continue
	fi
	names+=("$name")
	read -r -a defs <<< "$rest"
	( run "$name" "$expect" "${defs[@]}" ) &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
for name in "${names[@]}"; do
	cat "$tmp/$name/report"
	if [ "$(head -1 "$tmp/$name/verdict" 2>/dev/null)" != PASS ]; then
		echo "FAIL: $name"
		failed=$((failed + 1))
	fi
done
if [ ${#names[@]} -eq 0 ]; then
	echo "FAIL: no run matches MODEL_ONLY=$only"
	exit 1
fi
if [ "$failed" -ne 0 ]; then
	echo "FAIL: $failed of ${#names[@]} model runs"
	exit 1
fi
echo "PASS: ${#names[@]} model runs as expected"
exit 0
