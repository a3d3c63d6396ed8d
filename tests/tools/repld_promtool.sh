#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_promtool.sh -- Prometheus's own checker on repld's /metrics:
# `promtool check metrics` finds no error and no lint problem in the text
# of a primary and of its replica (quorum 1 of 1) after appends, of the
# primary once its replica is gone, and of a replica following no primary.
# Any line promtool prints counts as a problem (it prints lint warnings
# and exits 0 for some of them).  First, a text with known faults must
# make it complain: else the check would prove nothing.
#
# Environment: REPLD, REPLCTL (the build tree's by default), PROMTOOL
# (default: promtool on PATH).  Without promtool the test is skipped (77):
# it is in Debian's prometheus package, whose installation starts a
# Prometheus service; tools/quickstart check fetches that package without
# installing it, takes promtool out of it into build/tools and sets
# PROMTOOL.
set -u

NAME=repld_promtool
command -v curl >/dev/null ||
	{ echo "$NAME: curl is not installed (Debian: curl)" >&2; exit 77; }
PROMTOOL=${PROMTOOL:-$(command -v promtool)}
if [[ -z $PROMTOOL || ! -x $PROMTOOL ]]; then
	echo "$NAME: SKIP: no promtool (PROMTOOL unset and none on PATH; Debian's" \
		"prometheus package has it: tools/quickstart check fetches it)" >&2
	exit 77
fi
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS
mport() { echo $((BASE + 19 + $1)); }

# promtool_clean FILE WHAT: promtool finds nothing to say about FILE
promtool_clean() {
	local rc=0
	"$PROMTOOL" check metrics < "$1" > "$D/promtool.out" 2>&1 || rc=$?
	[[ $rc -eq 0 && ! -s $D/promtool.out ]] ||
		fail "promtool check metrics on $2: exit $rc: $(head -n 20 "$D/promtool.out")"
}

# scrape N FILE
scrape() {
	curl -sf -o "$2" "http://127.0.0.1:$(mport "$1")/metrics" 2>> "$D/curl.err" ||
		fail "GET /metrics of node$1: curl exit $?"
	grep -q '^repld_build_info' "$2" || fail "node$1's /metrics: $(head -c 300 "$2")"
}

# the checker can fail: a counter without _total (a lint problem, exit 0
# on some versions) and a sample that does not parse (an error)
printf '# HELP bad_counter A counter.\n# TYPE bad_counter counter\nbad_counter 1\n' \
	> "$D/lint.prom"
"$PROMTOOL" check metrics < "$D/lint.prom" > "$D/lint.out" 2>&1
[[ -s $D/lint.out ]] || fail "promtool said nothing of a counter without _total"
printf '# TYPE x gauge\nx{ 1\n' > "$D/bad.prom"
"$PROMTOOL" check metrics < "$D/bad.prom" > "$D/bad.out" 2>&1 &&
	fail "promtool accepted a sample that does not parse: $(cat "$D/bad.out")"
echo "$NAME: $("$PROMTOOL" --version 2>&1 | head -n 1); it reports a lint" \
	"problem and an error"

conf 1 primary 3000 1 2
conf 2 replica 3000 1 1
for n in 1 2; do
	echo "metrics_listen = \"127.0.0.1:$(mport $n)\";" >> "$D/node$n.conf"
done
start 2
wait_for 2 "listening" "listening"
start 1
up 1 2
wait_status 1 '"replicas_up":1' "the replica up"
wait_for 1 "metrics and health on http://127.0.0.1:$(mport 1)/" "the HTTP line"
"$CTL" -s "$(sock 1)" bench --size 100 --records 50 --depth 4 \
	> "$D/bench.out" 2> "$D/bench.err" || fail "bench: exit $?"

scrape 1 "$D/primary.prom"
grep -q '^repld_appends_total 50$' "$D/primary.prom" ||
	fail "the primary counted no 50 appends: $(grep appends_total "$D/primary.prom")"
grep -q '^process_open_fds ' "$D/primary.prom" || fail "no process_open_fds"
promtool_clean "$D/primary.prom" "the primary"
scrape 2 "$D/replica.prom"
grep -q '^repld_role{role="replica"} 1$' "$D/replica.prom" &&
	grep -q '^repld_replica_last_contact_seconds ' "$D/replica.prom" ||
	fail "node2's /metrics is not a following replica's"
promtool_clean "$D/replica.prom" "the replica"

# the primary without its replica, the replica without a primary
stop 2
scrape 1 "$D/alone.prom"
promtool_clean "$D/alone.prom" "the primary, its replica stopped"
stop 1
start 2
wait_count 2 "metrics and health on http" 2 "its HTTP server again"
for ((t = 0; t < 100; t++)); do	# it answers while it opens its log
	scrape 2 "$D/orphan.prom"
	grep -q '^repld_role{role="replica"} 1$' "$D/orphan.prom" && break
	sleep 0.1
done
grep -q '^repld_following 0$' "$D/orphan.prom" ||
	fail "node2 follows a primary that is stopped: $(grep following "$D/orphan.prom")"
promtool_clean "$D/orphan.prom" "a replica following no primary"
stop 2

for n in 1 2; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok: promtool finds no problem on a primary and a replica," \
	"each also alone ($((SECONDS - T0)) s)"
