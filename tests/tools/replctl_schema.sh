#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_schema.sh -- replctl(8)'s JSON schemas hold for what a running
# cluster prints, both ways.  The page's JSON OUTPUT section has, per
# object, a comment ".\" schema: NAME" and one entry per key,
# "\fBPATH\fR (TYPE)" or "\fBPATH\fR (TYPE, optional)", TYPE perhaps
# "object or null" (always there, null when it has nothing); this test reads
# them from the page (so a key documented there is all it takes) and
# holds each output of a three-node cluster (status of the primary, also
# with a replica down, and of a replica; verify, append, read, bench, a reload's
# reply, an error; offline status LOG and dump of a stopped node's log)
# against its schema:
#   - every key printed is documented, with its type (integer; number: an
#     integer or a fraction; string, boolean, object, array);
#   - every documented key that is not optional is printed, wherever the
#     object or array holding it is (not null).
#
# Environment: REPLD, REPLCTL, JSON_KEYS (the build tree's by default),
# MAN_PAGE (docs/man/replctl.8 of the source tree).
set -u

NAME=replctl_schema
JSON_KEYS=${JSON_KEYS:-./tests/tools/json_keys}
MAN_PAGE=${MAN_PAGE:-$(dirname "$0")/../../docs/man/replctl.8}
[[ -x $JSON_KEYS ]] || { echo "$NAME: $JSON_KEYS not built"; exit 99; }
[[ -f $MAN_PAGE ]] || { echo "$NAME: no $MAN_PAGE"; exit 99; }
. "$(dirname "$0")/cluster_lib.sh"

T0=$SECONDS

# the page's schemas: "SCHEMA PATH TYPE REQUIRED" lines
sed -n -E '
	/^\.\\" schema: / { s/^\.\\" schema: ([a-z-]+).*/S \1/p; d; }
	/^\.SH / { s/.*/E/p; d; }
	s/^\\fB([][A-Za-z0-9_.]+)\\fR \(([a-z]+)( or (null))?(, (optional))?\)$/K \1 \2\/\4 \6/p
' "$MAN_PAGE" | awk '
	$1 == "S" { schema = $2; next }
	$1 == "E" { schema = ""; next }
	$1 == "K" && schema != "" {
		sub(/\/$/, "", $3)	# TYPE, or TYPE/null
		print schema, $2, $3, ($4 == "optional" ? "optional" : "required")
	}' > "$D/schemas"
for s in status-primary status-replica status-log verify reply error append \
	read-record read-end bench dump-header dump-record dump-end switchover; do
	n=$(awk -v s=$s '$1 == s' "$D/schemas" | wc -l)
	((n > 0)) || fail "replctl.8 has no schema $s (or none of its keys parse)"
done
echo "$NAME: $(wc -l < "$D/schemas") keys in $(cut -d' ' -f1 "$D/schemas" | sort -u | wc -l) schemas of $MAN_PAGE"

# check SCHEMA WHAT: each JSON object of $D/out (one a line) against SCHEMA
check() {
	local schema=$1 what=$2 bad
	[[ -s $D/out ]] || fail "$what: no output"
	"$JSON_KEYS" < "$D/out" > "$D/keys" 2> "$D/keys.err" ||
		fail "$what: not JSON objects: $(cat "$D/keys.err"): $(head -c 300 "$D/out")"
	bad=$(awk -v schema="$schema" '
		function parent(p) {
			if (p ~ /\[\]$/) return substr(p, 1, length(p) - 2)
			if (p !~ /\./) return ""
			sub(/\.[^.]*$/, "", p)
			return p
		}
		function fits(doc, got) {
			if (got == "null" && doc ~ /\/null$/) return 1
			sub(/\/.*/, "", doc)
			return doc == got || (doc == "number" && (got == "integer" || got == "real"))
		}
		function done_object() {
			for (k in type)
				if (need[k] && !(k in seen) && (parent(k) == "" ||
				    (parent(k) in seen && seen[parent(k)] != "null")))
					printf "documented key %s (%s) is missing from object %d\n", k, type[k], obj
			delete seen
		}
		FNR == NR { if ($1 == schema) { type[$2] = $3; need[$2] = $4 == "required" } next }
		$0 == "--" { done_object(); obj++; next }
		{
			seen[$1] = $2
			if ($1 ~ /\[\]$/) next		# an element: its members say
			if (!($1 in type))
				printf "key %s (%s) is not documented\n", $1, $2
			else if (!fits(type[$1], $2))
				printf "key %s is %s, documented %s\n", $1, $2, type[$1]
		}' "$D/schemas" "$D/keys" | sort -u)
	[[ -z $bad ]] || fail "$what against replctl(8)'s schema \"$schema\":
$bad
output: $(head -c 600 "$D/out")"
	echo "$NAME: $what: $(grep -c -- '^--$' "$D/keys") object(s), $(grep -vc -- '^--$' "$D/keys") keys: ok"
}

# live LINES N ARGS...: replctl -s nodeN's socket ARGS into $D/out; exit in $rc
live() {
	local n=$1
	shift
	"$CTL" -s "$(sock "$n")" "$@" > "$D/out" 2> "$D/live.err"
	rc=$?
	clean_stderr "$D/live.err" "replctl $*"
}

start_cluster
seq 1 20 | sed 's/^/schema-/' > "$D/in"

live 1 --json status
check status-primary "status of the primary"
live 2 status --json
check status-replica "status of a replica"
# with a coordinator (repld.conf(5)) both carry its object, the leader
# key, a pending switchover and maintenance null or not: its keys as its
# contract gives them, put into this cluster's own status
if command -v python3 > /dev/null; then
	cp "$D/out" "$D/status-replica"
	live 1 --json status
	cp "$D/out" "$D/status-primary"
	for role in primary replica; do
		for held in true false; do
			python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
held = sys.argv[1] == "true"
d["coordinator"] = {"endpoint": "http://127.0.0.1:2379", "reachable": True,
	"unreachable_ms": 0, "failover": "armed" if held else "maintenance",
	"candidate": True,
	"lease_ms": 1000, "holds_leader": held,
	"leader": {"node_id": 1, "epoch": 65537, "state": "primary",
		"ctl_addr": "127.0.0.1:7000",
		"lease_ttl_s": -1, "age_ms": 120} if held else None,
	"switchover": None if held else {"from": 1, "to": 2, "failover": False},
	"members": [{"node_id": 1, "role": "primary", "epoch": 65537,
		"last_lsn": 42, "last_epoch": 65537, "link_up": True,
		"candidate": True, "seen": "self", "silent_ms": None}]
		if held else [],
	"campaigns": 0, "promotions": 0, "takeovers": 0, "etcd_requests": 12,
	"last_error": "",
	"waiting": "" if held else "keyless",
	"maintenance": None if held else {"node_id": 3, "at_ms": 1700000000123,
		"reason": "kernel upgrade"},
	"membership": {"state": "applied", "config_epoch": 1, "quorum": 1,
		"nodes": [{"node_id": 1, "ctl_addr": "127.0.0.1:7000"},
			{"node_id": 0, "ctl_addr": "127.0.0.1:7002"}]} if held else None}
print(json.dumps(d, separators=(",", ":")))' "$held" < "$D/status-$role" > "$D/out"
			check "status-$role" "status of a $role with a coordinator (leader key held: $held)"
		done
	done
fi
live 1 --json append < "$D/in"
[[ $rc -eq 0 ]] || fail "append: exit $rc: $(cat "$D/live.err")"
check append "append --json"
live 1 --json read --from 0
[[ $rc -eq 0 ]] || fail "read: exit $rc: $(cat "$D/live.err")"
grep '"end"' "$D/out" > "$D/read-end"
grep -v '"end"' "$D/out" > "$D/read-records"
cp "$D/read-records" "$D/out"
check read-record "read --json, its records"
cp "$D/read-end" "$D/out"
check read-end "read --json, its end"
live 2 --json read --from 1
[[ $rc -eq 1 ]] || fail "read on a replica: exit $rc, not 1"
check error "read --json on a replica (an error)"
live 1 --json bench --records 200 --clients 2 --size 64
[[ $rc -eq 0 ]] || fail "bench: exit $rc: $(cat "$D/live.err")"
check bench "bench --json"
live 1 --json verify
[[ $rc -eq 0 ]] || fail "verify: exit $rc: $(cat "$D/live.err")"
check verify "verify --json"
live 1 --json reload
[[ $rc -eq 0 ]] || fail "reload: exit $rc: $(cat "$D/live.err")"
check reply "reload --json (a change's reply)"
live 2 --json fence
[[ $rc -eq 1 ]] || fail "fence of a replica: exit $rc, not 1"
check error "fence --json of a replica (an error)"

# a replica down: its entry says why; verify cannot check it
kill -9 "${pid[3]}"
wait "${pid[3]}" 2>/dev/null
unset "pid[3]"
wait_status 1 '"replicas_up":1' "node3 seen down"
live 1 --json status
check status-primary "status of the primary with a replica down"
grep -q '"why":"[^"]' "$D/out" || fail "no why for the replica down: $(cat "$D/out")"
live 1 --json verify
[[ $rc -eq 1 ]] || fail "verify with a replica down: exit $rc, not 1"
check verify "verify --json with a replica down"

# offline, of a log a node wrote and closed
stop 2
live 1 --json status "$D/node2.log"
[[ $rc -eq 0 ]] || fail "status LOG: exit $rc: $(cat "$D/live.err")"
check status-log "status --json LOG"
"$CTL" dump --json "$D/node2.log" > "$D/dump" 2> "$D/dump.err" ||
	fail "dump --json: exit $?: $(cat "$D/dump.err")"
for t in header record end; do
	grep "^{\"type\":\"$t\"" "$D/dump" > "$D/out"
	check "dump-$t" "dump --json, $t"
done
"$CTL" dump --json --payload none "$D/node2.log" | grep '^{"type":"record"' > "$D/out"
check dump-record "dump --json --payload none, record"
stop 1
echo "$NAME: ok ($((SECONDS - T0)) s)"
