#!/usr/bin/bash
# tests/vm/baselines.sh -- runs inside the test guest of make check-rdma,
# after the tests (tests/vm/rdma-tests.sh calls it): four latency baselines
# of one boot, so that they compare with each other:
#   - perftest ib_write_lat -R and ib_read_lat -R, 64 B (raw verbs);
#   - the write+flush loop of tests/bench-rdma built against Debian's
#     librpma (librpma target, librpma client);
#   - the same loop built against our core (our target, our client);
# then a table of the four medians and the ratio ours/librpma.  The two
# loops take turns, twice each (librpma, ours, librpma, ours), and the table
# has the lower median of each: a burst of load on the host then spoils one
# run, not the comparison.
#
# After the timed runs each loop's client runs twice more under strace -c
# (SYSCALL_SHORT and SYSCALL_LONG rounds, no warm-up) and the table shows
# the system calls per round: the difference of the two counts over the
# difference of the rounds, so that set-up and teardown cancel out.  On rxe
# every ibv_post_send is a write(2), so this counts doorbells too.  Without
# strace in the guest the row says n/a.
#
# Times are never asserted: they vary twofold and more with the host's load.
# A program that fails (no number) is a failure; perftest transfers that
# worked but whose clock calibration failed (smoke.sh explains) are shown as
# "n/a" and are not.  When the librpma build is not in /files (no
# librpma-dev where it was built) its row says so and there is no ratio.
set -uo pipefail

# the helpers only (wait_listen, perftest_local, pass, fail, $log)
# shellcheck source=tests/vm/smoke.sh
. /files/smoke.sh || { echo "FAIL: cannot source /files/smoke.sh"; exit 1; }

iterations=${RPMA_WF_ITERATIONS:-1000}
warmup=${RPMA_WF_WARMUP:-100}
dax=
[[ -c /dev/dax0.0 ]] && dax=/dev/dax0.0
port=7800

# wf_loop NAME: target and client of /files/rdma_wf_loop_NAME in this guest;
# keeps the lowest median of NAME's runs in wf[NAME] and adds this run's to
# wf_all[NAME]; FAILED once any run failed.
declare -A wf=() wf_all=()
wf_loop() {
	local name=$1 bin=/files/rdma_wf_loop_$1 tpid rc trc line m
	port=$((port + 1))
	case ${wf[$name]:-} in FAILED | "not built") return ;; esac
	if [[ ! -x $bin ]]; then
		wf[$name]="not built"
		echo "NOTE: $bin was not passed in (built only with librpma-dev)"
		return
	fi
	# the target's region is device-dax (the smoke test made it) when there is one
	timeout 120 "$bin" target "$ip" "$port" ${dax:+"$dax"} >"$log/wf-$name-t" 2>&1 &
	tpid=$!
	if ! wait_listen; then
		fail "write+flush loop ($name): the target did not listen within 30 s"
		kill "$tpid" 2>/dev/null
		wait "$tpid"
		show target "$log/wf-$name-t"
		wf[$name]=FAILED
		return
	fi
	timeout 120 "$bin" client "$ip" "$port" "$iterations" "$warmup" >"$log/wf-$name-c" 2>&1
	rc=$?
	wait "$tpid"
	trc=$?
	line=$(grep -m1 '^wf_loop: ' "$log/wf-$name-c")
	if ((rc == 0 && trc == 0)) && [[ $line =~ median_us=([0-9.]+) ]]; then
		m=${BASH_REMATCH[1]}
		wf_all[$name]+="${wf_all[$name]:+, }$m"
		if [[ -z ${wf[$name]:-} ]] || awk -v a="$m" -v b="${wf[$name]}" 'BEGIN { exit !(a < b) }'; then
			wf[$name]=$m
		fi
		pass "write+flush loop ($name target, $name client${dax:+, $dax}): ${line#wf_loop: }"
	else
		wf[$name]=FAILED
		fail "write+flush loop ($name): client exit $rc, target exit $trc"
		show client "$log/wf-$name-c"
		show target "$log/wf-$name-t"
	fi
}

# strace_counts FILE: "NAME CALLS" for every system call of an strace -c report
strace_counts() {
	awk '$1 ~ /^[0-9.]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" { print $NF, $4 }' "$1"
}

# syscalls NAME: sets sc[NAME] to the system calls per round of NAME's
# client, total first, then the calls that make it ("n/a" when it cannot)
syscall_short=${RPMA_WF_SYSCALL_SHORT:-100}
syscall_long=${RPMA_WF_SYSCALL_LONG:-400}
declare -A sc=()
syscalls() {
	local name=$1 bin=/files/rdma_wf_loop_$1 n tpid rc
	sc[$name]=n/a
	command -v strace >/dev/null 2>&1 || return 0
	[[ -x $bin ]] || return 0
	for n in "$syscall_short" "$syscall_long"; do
		port=$((port + 1))
		timeout 120 "$bin" target "$ip" "$port" ${dax:+"$dax"} >"$log/sc-$name-$n-t" 2>&1 &
		tpid=$!
		if ! wait_listen; then
			kill "$tpid" 2>/dev/null
			wait "$tpid"
			echo "NOTE: strace of the $name loop: its target did not listen"
			return 0
		fi
		timeout 300 strace -c -f -o "$log/sc-$name-$n" "$bin" client "$ip" "$port" \
			"$n" 0 >"$log/sc-$name-$n-c" 2>&1
		rc=$?
		wait "$tpid"
		if ((rc != 0)) || [[ ! -s $log/sc-$name-$n ]]; then
			echo "NOTE: strace of the $name loop ($n rounds) failed (exit $rc)"
			show client "$log/sc-$name-$n-c"
			return 0
		fi
		strace_counts "$log/sc-$name-$n" >"$log/sc-$name-$n.counts"
	done
	sc[$name]=$(awk -v d=$((syscall_long - syscall_short)) '
		FNR == NR { a[$1] = $2; next }
		{ b[$1] = $2 }
		END {
			for (k in a) if (!(k in b)) b[k] = 0
			for (k in b) { c = (b[k] - a[k]) / d; t += c; if (c >= 0.005 || c <= -0.005) parts = parts sprintf(", %s %.2f", k, c) }
			printf "%.2f%s", t, parts ? " (" substr(parts, 3) ")" : ""
		}' "$log/sc-$name-$syscall_short.counts" "$log/sc-$name-$syscall_long.counts")
}

# phases NAME: ph[NAME], where a round of NAME's loop goes (one more run with
# RPMA_WF_PHASES=1: rdma_wf_loop.c says what the fields are)
declare -A ph=()
phases() {
	local name=$1 bin=/files/rdma_wf_loop_$1 tpid line
	ph[$name]=n/a
	[[ -x $bin ]] || return 0
	port=$((port + 1))
	timeout 120 "$bin" target "$ip" "$port" ${dax:+"$dax"} >"$log/ph-$name-t" 2>&1 &
	tpid=$!
	if ! wait_listen; then
		kill "$tpid" 2>/dev/null
		wait "$tpid"
		return 0
	fi
	RPMA_WF_PHASES=1 timeout 120 "$bin" client "$ip" "$port" "$iterations" "$warmup" \
		>"$log/ph-$name-c" 2>&1
	wait "$tpid"
	line=$(grep -m1 '^wf_phases: ' "$log/ph-$name-c") && ph[$name]=${line#wf_phases: impl=$name }
	line=$(grep -m1 '^wf_loop: ' "$log/ph-$name-c") && [[ $line =~ median_us=([0-9.]+) ]] &&
		ph[$name]+=" (median ${BASH_REMATCH[1]} us)"
}

# shows perftest's median, or why there is none
perftest_cell() {
	if [[ -n $perftest_median ]]; then
		echo "$perftest_median"
	elif ((failed > $1)); then
		echo FAILED
	else
		echo "n/a (clock calibration)"
	fi
}

echo "baselines: 64 B, $iterations iterations after $warmup warm-up for the loops, one boot"
f0=$failed
perftest_local ib_write_lat
write_lat=$(perftest_cell "$f0")
f0=$failed
perftest_local ib_read_lat
read_lat=$(perftest_cell "$f0")
for _ in 1 2; do
	wf_loop librpma
	wf_loop ours
done

syscalls librpma
syscalls ours
for _ in 1 2 3; do
	phases librpma
	echo "phases (librpma): ${ph[librpma]}"
	phases ours
	echo "phases (ours): ${ph[ours]}"
done

ratio=n/a
if [[ ${wf[librpma]} =~ ^[0-9.]+$ && ${wf[ours]} =~ ^[0-9.]+$ ]]; then
	ratio=$(awk -v o="${wf[ours]}" -v l="${wf[librpma]}" 'BEGIN { if (l > 0) printf "%.2f", o / l; else print "n/a" }')
fi
row() { printf '  %-40s %s\n' "$1" "$2"; }
unit() { [[ $1 =~ ^[0-9.]+$ ]] && echo "$1 us" || echo "$1"; }
echo "===== baselines: medians (not asserted) ====="
row "ib_write_lat -R, 64 B" "$(unit "$write_lat")"
row "ib_read_lat -R, 64 B" "$(unit "$read_lat")"
row "librpma write 64 B + flush (librpma)" "$(unit "${wf[librpma]}")${wf_all[librpma]:+  (runs: ${wf_all[librpma]})}"
row "librpmacore write 64 B + flush (ours)" "$(unit "${wf[ours]}")${wf_all[ours]:+  (runs: ${wf_all[ours]})}"
row "ratio ours/librpma" "$ratio"
row "syscalls per round (librpma)" "${sc[librpma]}"
row "syscalls per round (ours)" "${sc[ours]}"
row "a round's phases (librpma)" "${ph[librpma]}"
row "a round's phases (ours)" "${ph[ours]}"
echo "============================================="
rm -rf "$log"
echo "baselines: $passed passed, $failed failed"
((failed == 0))
