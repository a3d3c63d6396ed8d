#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# repld_metrics.sh -- the HTTP endpoints of metrics_listen (repld(8),
# METRICS and HEALTH) on a primary and its replica (quorum 1 of 1):
#
#  1. /metrics: Content-Type of the text format 0.0.4; every line parses
#     (names, labels, values; # HELP and # TYPE before a family's samples;
#     a histogram's le ascending, its buckets cumulative, +Inf == _count);
#     every metric the manual's METRICS section names is there on both
#     nodes; appending N records moves repld_appends_total, the bytes and
#     the histogram's count by N; the process_* families hold the
#     daemon's start time (during the test), CPU, memory and descriptors.
#  2. health: the primary with its replica up answers /primary 200,
#     /replica 503; the replica /replica 200, /primary 503; both /health
#     200.  The fields: the primary's last, durable and commit LSN are
#     the appends'; the replica's commit LSN is the primary's, its lag 0,
#     its primary node 1 at node1's control address, its last contact
#     recent.  The query string: lag=0 200 once caught up,
#     last_contact_ms=0 503 with the reason, no limit on the primary,
#     400 for malformed ones.  The primary stopped (SIGSTOP): the
#     replica's last contact ages past 1.5 s, its session ends, its
#     commit LSN stays, and status --json, replctl status and
#     repld_replica_last_contact_seconds say so too; back after SIGCONT.  The replica stopped: the
#     primary's /primary 503 with a reason, its /health still 200.
#  3. POST is 405, an unknown path 404.
#  4. metrics_listen on a port already held: the daemon exits 1 and names
#     the setting.
#
# Environment: REPLD, REPLCTL (the build tree's by default), MAN8 (repld.8).
set -u

NAME=repld_metrics
command -v curl >/dev/null ||
	{ echo "$NAME: curl is not installed (Debian: curl)" >&2; exit 77; }
. "$(dirname "$0")/cluster_lib.sh"
MAN8=${MAN8:-$(dirname "$0")/../../docs/man/repld.8}
[[ -r $MAN8 ]] || fail "no manual page $MAN8"

T0=$SECONDS
TEST_START=$(date +%s)
mport() { echo $((BASE + 19 + $1)); }
murl() { echo "http://127.0.0.1:$(mport "$1")$2"; }

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

# code URL [CURL-ARG...]: the status code; the body in $D/body
code() {
	local url=$1
	shift
	curl -s -o "$D/body" -w '%{http_code}' "$@" "$url" 2>> "$D/curl.err"
}

# scrape N FILE: /metrics of node N (its headers in FILE.h)
scrape() {
	curl -sf -D "$2.h" -o "$2" "$(murl "$1" /metrics)" 2>> "$D/curl.err" ||
		fail "GET /metrics of node$1: curl exit $?"
}

# value FILE SAMPLE: the value of the line whose name and labels are SAMPLE
value() { awk -v s="$2" '$1 == s { print $2; f = 1 } END { exit !f }' "$1"; }

# check_format FILE: every line as the text format 0.0.4 spells it
check_format() {
	local out
	out=$(awk '
		function base(n) {
			if (n ~ /_bucket$/) sub(/_bucket$/, "", n)
			else if (n ~ /_sum$/ && !(n in type)) sub(/_sum$/, "", n)
			else if (n ~ /_count$/ && !(n in type)) sub(/_count$/, "", n)
			return n
		}
		/^# HELP / { if ($3 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) bad("help name"); help[$3] = 1; next }
		/^# TYPE / {
			if (!($3 in help)) bad("TYPE before HELP")
			if ($4 !~ /^(counter|gauge|histogram|summary|untyped)$/) bad("type")
			if ($3 in type) bad("TYPE twice")
			type[$3] = $4; next
		}
		/^#/ { bad("comment"); next }
		{
			if ($0 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*")*\})? ([-+]?[0-9.eE+-]+|[+-]Inf|NaN)$/)
				bad("sample")
			name = $1; sub(/\{.*/, "", name)
			b = base(name)
			if (!(b in type)) bad("no TYPE for " b)
			if (type[b] ~ /counter/ && b !~ /_total$/) bad("counter without _total")
			if (type[b] == "histogram" && name ~ /_bucket$/) {
				le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
				key = $1; sub(/,?le="[^"]*"/, "", key)
				if (key in lastle && le != "+Inf" && le + 0 <= lastle[key] + 0) bad("le not ascending")
				if (key in lastc && $2 + 0 < lastc[key]) bad("bucket not cumulative")
				lastle[key] = le; lastc[key] = $2 + 0
				if (le == "+Inf") inf[b] = $2
			}
			if (type[b] == "histogram" && name == b "_count" && inf[b] != $2) bad("+Inf != _count")
		}
		function bad(w) { print "line " NR ": " w ": " $0; err = 1 }
		END { exit err }' "$1") || fail "$1 is not the text format: $(head -n 5 <<< "$out")"
}

# ---- 1. /metrics ----
scrape 1 "$D/m0"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$D/m0.h" ||
	fail "Content-Type: $(grep -i content-type "$D/m0.h")"
check_format "$D/m0"
scrape 2 "$D/r0"
check_format "$D/r0"

# the manual's METRICS section: every name it gives is a family on both
documented=$(sed -n '/^\.SH METRICS/,/^\.SH /p' "$MAN8" |
	grep -o '\(repld\|process\)_[a-z_]*[a-z]' | sed 's/_bucket$//; s/_sum$//; s/_count$//' |
	sort -u)
[[ $(wc -l <<< "$documented") -ge 30 ]] ||
	fail "the METRICS section of $MAN8 names $(wc -l <<< "$documented") metrics"
for m in $documented; do
	for f in m0 r0; do
		grep -q "^# TYPE $m " "$D/$f" || fail "$m (repld.8) not in /metrics ($f)"
	done
done
# and every family exposed is documented
for m in $(awk '/^# TYPE/ { print $3 }' "$D/m0" "$D/r0" | sort -u); do
	grep -qx "$m" <<< "$documented" || fail "$m exposed, not in repld.8's METRICS"
done

rp="127.0.0.1:$(cport 2)"
[[ $(value "$D/m0" 'repld_role{role="primary"}') == 1 &&
   $(value "$D/m0" 'repld_role{role="replica"}') == 0 &&
   $(value "$D/m0" "repld_replica_streaming{replica=\"$rp\"}") == 1 &&
   $(value "$D/m0" "repld_replica_link_state{replica=\"$rp\",state=\"streaming\"}") == 1 &&
   $(value "$D/m0" "repld_replica_link_transitions_total{replica=\"$rp\",state=\"streaming\"}") -ge 1 &&
   $(value "$D/m0" repld_replicas_streaming) == 1 &&
   $(value "$D/m0" repld_can_acknowledge) == 1 ]] ||
	fail "the primary's metrics: $(grep -e role -e streaming -e acknowledge "$D/m0")"
grep -q '^repld_build_info{version="[^"]*"} 1$' "$D/m0" || fail "no repld_build_info"
# the process's own: each node started during this test, holds memory
# and descriptors, and has used some CPU
for f in m0 r0; do
	awk -v now="$(date +%s)" -v t0="$TEST_START" '
		$1 == "process_start_time_seconds" { st = $2 }
		$1 == "process_cpu_seconds_total" { cpu = $2 }
		$1 == "process_resident_memory_bytes" { rss = $2 }
		$1 == "process_virtual_memory_bytes" { vsz = $2 }
		$1 == "process_open_fds" { fds = $2 }
		$1 == "process_max_fds" { max = $2 }
		END { exit !(st >= t0 - 1 && st <= now + 1 && cpu > 0 && rss > 1e6 &&
			vsz >= rss && fds >= 5 && max >= fds) }' "$D/$f" ||
		fail "the process metrics of $f (test began at $TEST_START): $(grep '^process_' "$D/$f")"
done
[[ $(value "$D/r0" 'repld_role{role="replica"}') == 1 &&
   $(value "$D/r0" repld_following) == 1 &&
   $(value "$D/r0" 'repld_session_state{state="following"}') == 1 ]] ||
	fail "the replica's metrics: $(grep -e role -e follow "$D/r0")"
# heartbeats every 100 ms: the replica heard its primary just now
awk '$1 == "repld_replica_last_contact_seconds" { f = 1; ok = $2 >= 0 && $2 < 5 }
	END { exit !(f && ok) }' "$D/r0" ||
	fail "the replica's last contact: $(grep last_contact "$D/r0")"
! grep -q '^repld_replica_last_contact_seconds ' "$D/m0" ||
	fail "a last contact on the primary: $(grep last_contact "$D/m0")"

N=50
SIZE=100
"$CTL" -s "$(sock 1)" --json bench --size $SIZE --records $N --depth 4 \
	> "$D/bench.out" 2> "$D/bench.err" || fail "bench: exit $?"
scrape 1 "$D/m1"
check_format "$D/m1"
for pair in "repld_appends_total $N" "repld_append_bytes_total $((N * SIZE))" \
	    "repld_append_durable_seconds_count $N" \
	    'repld_append_durable_seconds_bucket{le="+Inf"}'" $N" \
	    "repld_appends_failed_total 0"; do
	set -- $pair
	a=$(value "$D/m0" "$1") && b=$(value "$D/m1" "$1") || fail "no $1"
	[[ $((b - a)) -eq $2 ]] || fail "$1: $a -> $b after $N appends, want +$2"
done
last0=$(value "$D/m0" repld_log_last_lsn)
last1=$(value "$D/m1" repld_log_last_lsn)
[[ $((last1 - last0)) -eq $N ]] || fail "repld_log_last_lsn $last0 -> $last1"
flushes=$(value "$D/m1" repld_log_flushes_total)
[[ $flushes -gt $(value "$D/m0" repld_log_flushes_total) ]] ||
	fail "repld_log_flushes_total did not move: $flushes"
sum=$(value "$D/m1" repld_append_durable_seconds_sum)
awk -v s="$sum" 'BEGIN { exit !(s > 0 && s < 60) }' ||
	fail "repld_append_durable_seconds_sum $sum"
echo "$NAME: /metrics parses, $(wc -l <<< "$documented") documented" \
	"metrics on both nodes, $N appends counted"

# ---- 2. health ----
expect() {	# NODE PATH CODE [BODY-PATTERN]
	local c
	c=$(code "$(murl "$1" "$2")")
	[[ $c == "$3" ]] || fail "node$1 GET $2: $c, want $3: $(cat "$D/body")"
	[[ -z ${4:-} ]] || grep -q -- "$4" "$D/body" ||
		fail "node$1 GET $2: body $(cat "$D/body"), want $4"
}
expect 1 /health 200 '"role":"primary"'
expect 1 /primary 200 '"can_acknowledge":true'
grep -q '"quorum":1' "$D/body" && grep -q '"replicas_streaming":1' "$D/body" ||
	fail "/primary body: $(cat "$D/body")"
! grep -q '"reason"' "$D/body" || fail "a reason in a 200: $(cat "$D/body")"
expect 1 /ready 200
expect 1 /replica 503 '"reason":"this node is the primary"'
expect 2 /health 200 '"role":"replica"'
expect 2 /replica 200 '"following":true'
expect 2 /ready 200
expect 2 /primary 503 '"reason":"this node is a replica"'
c=$(code "$(murl 1 /primary)" -I)
[[ $c == 200 ]] || fail "HEAD /primary: $c"

# the log's and the session's fields: once the replica heard the commit
# point of the appends above (nothing is appended meanwhile), it holds it
for ((t = 0; t < 50; t++)); do
	expect 2 /health 200
	rh=$(cat "$D/body")
	expect 1 /health 200
	ph=$(cat "$D/body")
	[[ $(jnum "$rh" commit_lsn) == "$(jnum "$ph" commit_lsn)" ]] && break
	sleep 0.1
done
pc=$(jnum "$ph" commit_lsn)
[[ $pc == "$last1" && $(jnum "$ph" last_lsn) == "$last1" &&
   $(jnum "$ph" durable_lsn) == "$last1" ]] ||
	fail "the primary's LSNs after the appends (last $last1): $ph"
for f in lag_records primary_node primary_address last_contact_ms; do
	grep -q "\"$f\":null" <<< "$ph" || fail "the primary's $f is not null: $ph"
done
[[ $(jnum "$rh" commit_lsn) == "$pc" && $(jnum "$rh" durable_lsn) == "$pc" &&
   $(jnum "$rh" lag_records) == 0 &&
   $(jnum "$rh" primary_node) == 1 &&
   $(jstr "$rh" primary_address) == "127.0.0.1:$(cport 1)" ]] ||
	fail "the replica caught up at commit $pc: $rh"
lc=$(jnum "$rh" last_contact_ms)
[[ -n $lc && $lc -lt 5000 ]] || fail "the replica's last_contact_ms: $rh"

# the limits of the query string
expect 2 "/replica?lag=0" 200 '"lag_records":0'
expect 2 "/replica?lag=1000000&last_contact_ms=60000" 200
expect 2 "/ready?lag=0" 200
# heartbeats come every 100 ms: the last one is seldom 0 ms old
for ((t = 0; t < 20; t++)); do
	c=$(code "$(murl 2 "/replica?last_contact_ms=0")")
	[[ $c == 503 ]] && break
done
[[ $c == 503 ]] && grep -q '"reason":"the replica last heard from its primary [1-9][0-9]* ms ago, more than last_contact_ms=0"' "$D/body" ||
	fail "node2 /replica?last_contact_ms=0: $c: $(cat "$D/body")"
expect 1 "/replica?lag=1000000" 503 '"reason":"this node is the primary"'
expect 1 "/primary?lag=0&last_contact_ms=0" 200	# no limit on the primary
for q in lag=16MB lag=-1 lag= lag lag=1.5 "lag=1&lag=2" last_contact_ms=2s \
	 lag_ms=500 foo=1 lag=9223372036854775808; do
	for n in 1 2; do
		c=$(code "$(murl $n "/replica?$q")")
		[[ $c == 400 ]] || fail "node$n /replica?$q: $c, want 400: $(cat "$D/body")"
	done
done
expect 2 "/health?lag=16MB" 400 "^lag=16MB: not a number of records"
expect 2 "/replica?lag_ms=500" 400 '^unknown parameter "lag_ms"'
expect 1 "/primary?lag=1&lag=2" 400 "^lag given twice"
expect 2 "/replica?lag=9223372036854775807" 200

# the primary silent (stopped, not gone): the replica's last contact ages
# past the session's timeout (1000 ms), and the session ends
kill -STOP "${pid[1]}"
for ((t = 0; t < 100; t++)); do
	expect 2 /health 200
	lc=$(jnum "$(cat "$D/body")" last_contact_ms)
	[[ -n $lc && $lc -ge 1500 ]] && grep -q '"following":false' "$D/body" && break
	sleep 0.1
done
rh=$(cat "$D/body")
[[ -n $lc && $lc -ge 1500 ]] || { kill -CONT "${pid[1]}"; fail "last_contact_ms with the primary stopped: $rh"; }
# as status, replctl status and /metrics say it meanwhile
js=$(status_json 2)
out=$("$CTL" -s "$(sock 2)" status 2>&1)
scrape 2 "$D/r1"
# asked before SIGCONT: a primary resumed is heard from again at once
expect 2 "/replica?last_contact_ms=1000" 503 \
	'"reason":"this replica is connected to no primary"'
kill -CONT "${pid[1]}"
[[ $(jnum "$js" last_contact_ms) -ge 1500 ]] ||
	fail "status --json of the replica with its primary stopped: $js"
grep -q '^following no primary now (last heard from one [0-9]*s ago)$' <<< "$out" ||
	fail "replctl status of the replica with its primary stopped: $out"
awk '$1 == "repld_replica_last_contact_seconds" { f = $2 >= 1.5 } END { exit !f }' \
	"$D/r1" || fail "the metric with the primary stopped: $(grep last_contact "$D/r1")"
grep -q '"following":false' <<< "$rh" && grep -q '"primary_node":null' <<< "$rh" &&
	[[ $(jnum "$rh" commit_lsn) == "$pc" ]] ||
	fail "the replica with its primary silent past down_ms: $rh"
wait_status 1 '"replicas_up":1' "the replica back after SIGCONT"
for ((t = 0; t < 100; t++)); do
	expect 2 "/health" 200
	lc=$(jnum "$(cat "$D/body")" last_contact_ms)
	[[ $lc -lt 1000 ]] && grep -q '"following":true' "$D/body" && break
	sleep 0.1
done
expect 2 "/replica?last_contact_ms=60000" 200
js=$(status_json 2)
out=$("$CTL" -s "$(sock 2)" status 2>&1)
[[ $(jnum "$js" last_contact_ms) -lt 5000 ]] || fail "status --json of the replica: $js"
grep -q "^following node 1 (connected from 127.0.0.1:$(cport 1)), last heard from it [0-9]*\(ms\|s\) ago$" <<< "$out" &&
	grep -q "^LSN .*, the primary's commit $pc as last heard$" <<< "$out" ||
	fail "replctl status of the replica: $out"

# ---- 3. methods and paths ----
c=$(code "$(murl 1 /metrics)" -X POST -d x=1)
[[ $c == 405 ]] || fail "POST /metrics: $c, want 405"
c=$(code "$(murl 1 /primary)" -X DELETE)
[[ $c == 405 ]] || fail "DELETE /primary: $c, want 405"
c=$(code "$(murl 1 /nothing)")
[[ $c == 404 ]] || fail "GET /nothing: $c, want 404"

stop 2
for ((t = 0; t < 50; t++)); do
	[[ $(code "$(murl 1 /primary)") == 503 ]] && break
	sleep 0.1
done
expect 1 /primary 503 '"reason":"0 of 1 replicas'
grep -q '"can_acknowledge":false' "$D/body" || fail "body: $(cat "$D/body")"
expect 1 /health 200
scrape 1 "$D/m2"
check_format "$D/m2"
[[ $(value "$D/m2" "repld_replica_streaming{replica=\"$rp\"}") == 0 &&
   $(value "$D/m2" repld_can_acknowledge) == 0 ]] ||
	fail "the replica stopped: $(grep -e streaming -e acknowledge "$D/m2")"
echo "$NAME: health: /primary 200 -> 503 when the quorum's replica stopped;" \
	"/replica on each, its lag= and last_contact_ms= limits, 400 on bad" \
	"ones; the LSNs and the last contact; 405 and 404"

# ---- 4. a port already held ----
conf 3 replica 3000 1 1
echo "metrics_listen = \"127.0.0.1:$(mport 1)\";" >> "$D/node3.conf"
start 3
exited 3 "node3 still runs on a metrics port already held"
[[ $rc -eq 1 ]] || fail "node3 exited $rc on a metrics port held, want 1"
grep -q "metrics_listen 127.0.0.1:$(mport 1): cannot listen" "$D/node3.err" ||
	fail "node3's message: $(tail -n 3 "$D/node3.err")"

stop 1
for n in 1 2 3; do clean_stderr "$D/node$n.err" "node$n"; done
echo "$NAME: ok ($((SECONDS - T0)) s)"
