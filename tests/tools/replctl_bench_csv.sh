#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_bench_csv.sh -- replctl bench --csv against a three-node cluster
# (quorum 1), 3 clients: the file has the header of replctl(8) and one row
# per acknowledged append (as many as --json's "records"), latencies
# positive, each client's start offsets nondecreasing, every client
# present, the sizes the run's, the LSNs distinct and within the
# primary's log.  On a terminal (script(1)) its progress line names the
# total, the share done and the time left.  Then tools/bench/plot-bench
# makes a PNG of it (a PNG signature, more than 10 kB), and with -d the
# series it plotted: the tail's points are 1 - F (each latency's share
# of appends at least that slow, counted here from the CSV), from 1 down
# to 1/N at the slowest; the percentile marks lie on it; of a run of a
# second, every throughput bin on the line lies within the run (first
# send to last acknowledgement), at least 5 do, and every partial one
# does not.  Without gnuplot that
# part exits 77.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=replctl_bench_csv
PLOT=$(dirname "$0")/../../tools/bench/plot-bench
LOGSIZE=64M	# the run of a second: at most 400000 records of 64 B
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
start_cluster
S=$(sock 1)
"$CTL" -s "$S" bench --records 3000 --clients 3 --depth 4 --size 96 \
	--csv "$D/run.csv" --json > "$D/out" 2> "$D/err" ||
	fail "bench --csv: exit $?: $(cat "$D/err")"
clean_stderr "$D/err" "bench --csv"

# on a terminal (script(1) gives it one) the progress line says the total,
# the share done and the time left
if command -v script > /dev/null; then
	script -qefc "\"$CTL\" -s \"$S\" bench --records 20000 --depth 8 --size 64 > /dev/null" \
		"$D/tty.out" > /dev/null 2>&1 || fail "bench on a terminal: exit $?: $(tail -c 300 "$D/tty.out")"
	grep -aq "bench: [0-9]* of 20000 ([0-9]*%) records durable, [0-9]* records/s, [0-9]* s left" \
		"$D/tty.out" || fail "no progress line with the total and the time left: $(tr '\r' '\n' < "$D/tty.out" | head -n 3)"
	echo "$NAME: the progress line: $(tr '\r' '\n' < "$D/tty.out" | grep -a -m 1 'of 20000')"
else
	echo "$NAME: no script(1) (Debian: bsdutils): the progress line not looked at"
fi
out=$(cat "$D/out")
acked=$(jnum "$out" records)
[[ $acked == 3000 && $(jnum "$out" clients) == 3 && $(jnum "$out" failed) == 0 ]] ||
	fail "bench --json: $out"
[[ $(head -n 1 "$D/run.csv") == start_s,latency_s,size,lsn,client ]] ||
	fail "the CSV's header: $(head -n 1 "$D/run.csv")"
last=$(jnum "$(status_json 1)" last_lsn)
bad=$(tail -n +2 "$D/run.csv" | awk -F, -v want="$acked" -v last="$last" '
	NF != 5 { print "line " NR + 1 ": " NF " columns"; next }
	$1 !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ ||
	$2 !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]$/ {
		print "line " NR + 1 ": not seconds with 6 decimals: " $0 }
	$2 <= 0 { print "line " NR + 1 ": latency " $2 " not positive" }
	$3 != 96 { print "line " NR + 1 ": size " $3 }
	$4 < 1 || $4 > last { print "line " NR + 1 ": LSN " $4 " not in 1.." last }
	$4 in lsn { print "line " NR + 1 ": LSN " $4 " twice" }
	{ lsn[$4] = 1 }
	($5 in prev) && $1 < prev[$5] {
		print "line " NR + 1 ": client " $5 " start " $1 " before " prev[$5] }
	{ prev[$5] = $1; rows++ }
	END {
		if (rows != want) print rows " rows for " want " acknowledged"
		for (c = 0; c < 3; c++) if (!(c in prev)) print "no row of client " c
	}' | head -n 5)
[[ -z $bad ]] || fail "bench --csv: $bad"
echo "$NAME: $acked rows, 3 clients: ok ($(grep -o '"records_per_s":[0-9]*' <<< "$out"))"

# a run of a second, for the plot's throughput bins
"$CTL" -s "$S" bench --seconds 1 --records 400000 --depth 8 --size 64 --csv "$D/second.csv" \
	> /dev/null 2> "$D/err" || fail "bench --seconds 1 --csv: exit $?: $(cat "$D/err")"

# a run that stops on a refusal writes only what was acknowledged
"$CTL" -s "$(sock 2)" bench --records 10 --csv "$D/refused.csv" > /dev/null 2> "$D/err"
rc=$?
[[ $rc -eq 1 && $(wc -l < "$D/refused.csv") -eq 1 ]] ||
	fail "bench --csv on a replica: exit $rc, $(wc -l < "$D/refused.csv") lines"
stop 1
stop 2
stop 3

if ! command -v gnuplot > /dev/null; then
	echo "$NAME: the CSV is ok; no gnuplot (Debian: gnuplot-nox): the plot is not tried" >&2
	exit 77
fi
cp "$D/run.csv" "$D/three-clients.csv"
"$PLOT" -o "$D/plot.png" -t "a test" -d "$D/series" "$D/three-clients.csv" "$D/run.csv" \
	"$D/second.csv" \
	> "$D/plot.out" 2>&1 ||
	fail "plot-bench: exit $?: $(cat "$D/plot.out")"
[[ $(head -c 8 "$D/plot.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
	fail "plot-bench: $D/plot.png is no PNG"
size=$(stat -c %s "$D/plot.png")
((size > 10000)) || fail "plot-bench: a PNG of $size bytes only"
# the tail: y is 1 - F, the share of the CSV's appends at least x us slow
bad=$(awk -F, -v tail="$D/series/run.tail" '
	FNR == 1 { next }
	{ lat[++n] = sprintf("%.0f", $2 * 1e6) + 0 }
	END {
		prev = 2
		while ((getline line < tail) > 0) {
			split(line, p, " "); x = p[1] + 0; y = p[2] + 0; pts++
			c = 0; for (k = 1; k <= n; k++) if (lat[k] >= x) c++
			if (c == 0 || y < c / n * (1 - 1e-6) || y > c / n * (1 + 1e-6)) {
				print "at " x " us: " y ", not 1 - F = " c "/" n; exit }
			if (y >= prev) { print "at " x " us: " y " after " prev; exit }
			if (pts == 1 && y != 1) { print "the first point is " y ", not 1"; exit }
			prev = y; last = x
		}
		if (pts < 2) { print pts " points"; exit }
		# it ends at the slowest, with the share of appends that slow
		# (more than 1/n when several tie for it)
		max = 0; for (k = 1; k <= n; k++) if (lat[k] > max) max = lat[k]
		top = 0; for (k = 1; k <= n; k++) if (lat[k] == max) top++
		if (last != max || prev * n < top - 1e-6 || prev * n > top + 1e-6)
			print "the tail ends at " last " us, " prev "; the slowest is " max " us, " top "/" n
	}' "$D/run.csv")
[[ -z $bad ]] || fail "plot-bench -d: the tail: $bad"
# the percentile marks: the p50 and p90 of 3000 appends, on the tail
[[ $(cut -d' ' -f1 "$D/series/run.pct" | tr '\n' ' ') == "p50 p90 p99 p99.9 " ]] ||
	fail "plot-bench -d: the marks of 3000 appends: $(cat "$D/series/run.pct")"
while read -r label x y; do
	grep -qx "$x $y" "$D/series/run.tail" || fail "plot-bench -d: $label at $x us, $y: not on the tail"
done < "$D/series/run.pct"
# the throughput of the run of a second: whole bins within the run (some),
# partial ones not
bad=$(awk -F, -v full="$D/series/second.tput" -v part="$D/series/second.partial" '
	FNR == 1 { next }
	NR == 2 || $1 < t0 { t0 = $1 }
	{ a = $1 + $2; if (a > t1) t1 = a }
	END {
		while ((getline line < full) > 0) {
			split(line, p, " "); nf++
			if (p[1] < t0 - 1e-9 || p[1] + 0.1 > t1 + 1e-9) {
				print "bin " p[1] " on the line is not within " t0 ".." t1; exit }
		}
		while ((getline line < part) > 0) {
			split(line, p, " "); np++
			if (p[1] >= t0 - 1e-9 && p[1] + 0.1 <= t1 + 1e-9) {
				print "partial bin " p[1] " is within " t0 ".." t1; exit }
		}
		if (nf < 5) print nf " whole bins in a run of a second"
	}' "$D/second.csv")
[[ -z $bad ]] || fail "plot-bench -d: the throughput: $bad"
echo "$NAME: plot-bench -d: $(wc -l < "$D/series/run.tail") tail points, 1 - F;" \
	"a second's run: $(wc -l < "$D/series/second.tput") whole bins, $(wc -l < "$D/series/second.partial") partial"
"$PLOT" -o "$D/bad.png" "$D/refused.csv" > /dev/null 2>&1 &&
	fail "plot-bench of a CSV without rows succeeded"
echo "$NAME: ok: a $size-byte plot ($((SECONDS - T0)) s)"
