#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# replctl_switchover.sh -- replctl switchover and failover, and status's
# coordinator block, against a scripted admin socket (a python3 stand-in
# for an HA repld that answers SWITCHOVER, FAILOVER and STATUS as the
# coordinator's contract says), and against a real repld without a
# coordinator:
#   1. usage errors exit 2 and ask nothing (failover without --to, --to 0
#      or 65536, --wait 0 or x, an operand);
#   2. the request line sent (SWITCHOVER, SWITCHOVER 2, FAILOVER 3);
#   3. success once STATUS shows the leader key held, in state
#      "primary", by another node (the target) with a newer epoch: exit
#      0, the line "node N is the primary (epoch E), M ms after the
#      request"; --json's object (replctl(8)'s schema "switchover");
#      a leader still "promoting", or of the old epoch, is not success;
#   4. a refusal (PENDING, NO_COORDINATOR, ...): exit 1 with the
#      daemon's name and message; --json: its error object;
#   5. no new primary within --wait: exit 1 naming what it saw last,
#      within about --wait; --json: an error object WAIT_TIMEDOUT; a
#      slow daemon whose last STATUS the end of the wait cuts short is
#      still the one seen before, not "unreachable";
#   6. the socket gone during the wait: exit 4; none at all: exit 4;
#   7. status shows the coordinator block (endpoint, leader, pending
#      switchover, members; unreachable and paused); its exit status is
#      the usual one;
#   8. a repld without a coordinator answers the verbs NO_COORDINATOR:
#      exit 1 with its message.
#
# Environment: REPLD, REPLCTL (the build tree's by default).
set -u

NAME=replctl_switchover
command -v python3 >/dev/null ||
	{ echo "SKIP: $NAME: python3 is not installed (Debian: python3)"; exit 77; }
. "$(dirname "$0")/cluster_lib.sh"
MAN_PAGE=${MAN_PAGE:-$(dirname "$0")/../../docs/man/replctl.8}
T0=$SECONDS

# fake SCENARIO: an admin socket at $D/fake.sock; requests logged to
# $D/fake.req.  SCENARIO: ok (the target takes over after 5 STATUS, going
# through "promoting"), never (node 1 stays), refuse (PENDING),
# unreachable (etcd unreachable, failover paused), gone (the socket goes
# after 3 STATUS), noleader (nobody holds the leader key, a failover to
# node 2 pending), slow (as never, each STATUS answered after 0.35 s)
cat > "$D/fake.py" <<'EOF'
import json, os, socket, sys, time
path, scenario, log = sys.argv[1], sys.argv[2], sys.argv[3]
polls = 0
pending = None
def coordinator():
	global polls
	lead = {"node_id": 1, "epoch": 65537, "state": "primary", "lease_ttl_s": 1, "age_ms": 120}
	if scenario == "ok" and pending and polls >= 5:
		lead = {"node_id": pending["to"] or 2, "epoch": 131073, "state": "primary",
			"lease_ttl_s": -1, "age_ms": 30}
	elif scenario == "ok" and pending and polls >= 3:
		lead = {"node_id": pending["to"] or 2, "epoch": 131073, "state": "promoting",
			"lease_ttl_s": 1, "age_ms": 30}
	elif (scenario == "ok" and pending and polls >= 1) or scenario == "noleader":
		lead = None
	reach = scenario != "unreachable"
	return {"endpoint": "http://127.0.0.1:2379", "reachable": reach,
		"unreachable_ms": 0 if reach else 12345,
		"failover": "armed" if reach else "paused", "candidate": True,
		"lease_ms": 1000, "holds_leader": False, "leader": lead,
		"switchover": pending if pending and (scenario != "ok" or polls < 5) else
			{"from": 0, "to": 2, "failover": True} if scenario == "noleader" else None,
		"members": [
			{"node_id": 1, "role": "primary", "epoch": 65537, "last_lsn": 42,
			 "last_epoch": 65537, "link_up": True, "candidate": True,
			 "seen": "linked", "silent_ms": None},
			{"node_id": 2, "role": "replica", "epoch": 65537, "last_lsn": 42,
			 "last_epoch": 65537, "link_up": True, "candidate": True,
			 "seen": "self", "silent_ms": None},
			{"node_id": 3, "role": "replica", "epoch": 65537, "last_lsn": 40,
			 "last_epoch": 65537, "link_up": False, "candidate": False,
			 "seen": "unknown", "silent_ms": None}],
		"campaigns": 2, "promotions": 1, "etcd_requests": 40,
		"last_error": "" if reach else "http://127.0.0.1:2379: connection refused"}
def status():
	return {"ok": True, "version": "0.1.0", "role": "replica", "node_id": 2,
		"listen": "127.0.0.1:7400", "epoch": 65537, "following": True,
		"primary_node": 1, "primary_address": "127.0.0.1:7401",
		"coordinator": coordinator()}
def answer(line):
	global polls, pending
	w = line.split()
	if w and w[0] == "STATUS":
		polls += 1
		if scenario == "slow":
			time.sleep(0.35)
		if scenario == "gone" and polls > 3:
			os.unlink(path)
			sys.exit(0)
		return status()
	if w and w[0] in ("SWITCHOVER", "FAILOVER"):
		if scenario == "refuse":
			return {"ok": False, "error": "PENDING", "code": 0,
				"message": "a switchover from node 1 to node 3 is pending"}
		to = int(w[1]) if len(w) > 1 else 0
		pending = {"from": 1, "to": to, "failover": w[0] == "FAILOVER"}
		polls = 0
		return {"ok": True, "from": 1, "to": to, "epoch": 65537,
			"message": "switchover from node 1 requested"}
	return {"ok": False, "error": "BAD_REQUEST", "code": 0, "message": "unknown verb"}
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
while True:
	c, _ = s.accept()
	f = c.makefile("rwb")
	# a client that goes before its answer (replctl after its last
	# STATUS) ends its connection, not the stand-in
	try:
		for raw in f:
			line = raw.decode().rstrip("\n")
			with open(log, "a") as l:
				l.write(line + "\n")
			f.write((json.dumps(answer(line), separators=(",", ":")) + "\n").encode())
			f.flush()
		f.close()
	except (BrokenPipeError, ConnectionResetError):
		pass
	c.close()
EOF

fake_pid=
fake() {
	[[ -n $fake_pid ]] && { kill "$fake_pid" 2>/dev/null; wait "$fake_pid" 2>/dev/null; }
	rm -f "$D/fake.sock" "$D/fake.req"
	python3 "$D/fake.py" "$D/fake.sock" "$1" "$D/fake.req" 2> "$D/fake.err" &
	fake_pid=$!
	bg+=("$fake_pid")
	for ((i = 0; i < 50; i++)); do [[ -S $D/fake.sock ]] && return; sleep 0.1; done
	fail "the fake admin socket did not come up: $(cat "$D/fake.err")"
}
F=$D/fake.sock

# run CODE PATTERN ARGS...: replctl ARGS exits CODE, stderr matching
# PATTERN (grep -E; "" anything); stdout in $out
run() {
	local code=$1 pat=$2 rc
	shift 2
	out=$("$CTL" "$@" 2> "$D/run.err")
	rc=$?
	clean_stderr "$D/run.err" "replctl $*"
	[[ $rc -eq $code ]] || fail "replctl $*: exit $rc, not $code: $(cat "$D/run.err") $out"
	[[ -z $pat ]] || grep -Eq -- "$pat" "$D/run.err" ||
		fail "replctl $*: no \"$pat\" on stderr: $(cat "$D/run.err")"
	if [[ $code -eq 0 ]]; then
		[[ ! -s $D/run.err ]] || fail "replctl $*: exit 0 with: $(cat "$D/run.err")"
	fi
}

# 1. usage: nothing is asked
fake ok
run 2 "failover needs --to NODE" -s "$F" failover
run 2 "--to: 0 is out of range \(1..65535\)" -s "$F" switchover --to 0
run 2 "--to: 65536 is out of range" -s "$F" failover --to 65536
run 2 "--wait: 0 is out of range" -s "$F" switchover --wait 0
run 2 "--wait: \"x\" is not a number" -s "$F" switchover --wait x
run 2 "switchover takes no operand" -s "$F" switchover 2
run 2 "unknown option '--force'" -s "$F" failover --to 2 --force
[[ ! -s $D/fake.req ]] || fail "a usage error asked the daemon: $(cat "$D/fake.req")"
echo "$NAME: usage errors: ok"

# 2, 3. success: the line sent, the leader key's new holder
t=$SECONDS
run 0 "" -s "$F" switchover --to 2 --wait 10
[[ $(head -n 1 "$D/fake.req") == "SWITCHOVER 2" ]] || fail "sent: $(head -n 1 "$D/fake.req")"
[[ $out =~ ^node\ 2\ is\ the\ primary\ \(epoch\ 131073\),\ [0-9]+\ ms\ after\ the\ request$ ]] ||
	fail "switchover's line: $out"
# five STATUS at 100 ms: the promoting and the null leader are not taken
ms=$(sed -E 's/.*, ([0-9]+) ms.*/\1/' <<< "$out")
((ms >= 350 && ms < 5000)) || fail "switchover done after $ms ms: not five polls of 100 ms"
n=$(grep -c '^STATUS$' "$D/fake.req")
((n == 5)) || fail "$n STATUS requests, not 5: the promoting leader taken for done?"
echo "$NAME: switchover --to 2: $out"

fake ok
run 0 "" -s "$F" --json switchover
[[ $(head -n 1 "$D/fake.req") == "SWITCHOVER" ]] || fail "sent: $(head -n 1 "$D/fake.req")"
[[ $out =~ ^\{\"ok\":true,\"from\":1,\"to\":2,\"epoch\":65537,\"new_epoch\":131073,\"ms\":[0-9]+\}$ ]] ||
	fail "switchover --json: $out"
# the keys against replctl(8)'s schema "switchover", both ways
keys=$(sed -n '/^\.\\" schema: switchover/,/^\.\\" schema: /p' "$MAN_PAGE" |
	sed -n -E 's/^\\fB([a-z_]+)\\fR \(([a-z]+)\)$/\1/p' | sort | tr '\n' ' ')
got=$(grep -o '"[a-z_]*":' <<< "$out" | tr -d '":' | sort | tr '\n' ' ')
[[ $keys == "$got" ]] || fail "switchover --json keys \"$got\", replctl(8) documents \"$keys\""
echo "$NAME: switchover --json: $out"

fake ok
run 0 "" -s "$F" failover --to 3
[[ $(head -n 1 "$D/fake.req") == "FAILOVER 3" ]] || fail "sent: $(head -n 1 "$D/fake.req")"
[[ $out == "node 3 is the primary (epoch 131073), "*" ms after the request" ]] ||
	fail "failover's line: $out"
echo "$NAME: failover --to 3: $out"

# 4. refused: the daemon's error, exit 1
fake refuse
run 1 "switchover: PENDING: a switchover from node 1 to node 3 is pending" -s "$F" switchover
run 1 "failover: PENDING" -s "$F" --json failover --to 2
[[ $out == '{"ok":false,"error":"PENDING",'* ]] || fail "refused --json: $out"
((!$(grep -c '^STATUS$' "$D/fake.req"))) || fail "a refused request was followed by STATUS"
echo "$NAME: refused: $(cat "$D/run.err")"

# 5. no new primary within --wait: what it saw last
fake never
t=$SECONDS
run 1 "node 2 is not the primary after 1 s \(--wait\); last seen: node 1 holds the leader key, epoch 65537, state primary" \
	-s "$F" switchover --to 2 --wait 1
((SECONDS - t <= 3)) || fail "--wait 1 took $((SECONDS - t)) s"
echo "$NAME: --wait ran out: $(cat "$D/run.err")"
run 1 "no node took over from node 1 as the primary in 1 s" -s "$F" --json switchover --wait 1
[[ $out == '{"ok":false,"error":"WAIT_TIMEDOUT","code":0,"message":"switchover: no node took over'* ]] ||
	fail "--wait ran out, --json: $out"
fake unreachable
run 1 "etcd unreachable from this node" -s "$F" switchover --wait 1
fake slow
for w in 1 2; do
	run 1 "not the primary after $w s \(--wait\); last seen: node 1 holds the leader key" \
		-s "$F" switchover --to 2 --wait $w
done
echo "$NAME: --wait ran out on a slow daemon: ok"

# 6. unreachable
fake gone
run 4 "$F" -s "$F" switchover --to 2 --wait 2
run 4 "No such file" -s "$D/absent.sock" switchover
run 4 "No such file" -s "$D/absent.sock" failover --to 2
echo "$NAME: unreachable: ok"

# 7. status: the coordinator block, after the rest; the exit as before
fake ok
run 0 "" -s "$F" status
for pat in "^following node 1" \
	"^coordinator http://127.0.0.1:2379: reachable, failover armed, lease 1000 ms$" \
	"^leader    node 1, epoch 65537, primary, lease 1 s left, read 120 ms ago$" \
	"^campaigns 2 begun by this node, 1 won \(promoted\)$" \
	"^MEMBER +ROLE +EPOCH +LAST-LSN +LAST-EPOCH +LINK +SEEN-HERE +CANDIDATE$" \
	"^1 +primary +65537 +42 +65537 +up +linked +yes$" \
	"^3 +replica +65537 +40 +65537 +down +- +no$"; do
	grep -Eq -- "$pat" <<< "$out" || fail "status: no line \"$pat\":
$out"
done
[[ $(grep -n '^coordinator' <<< "$out" | cut -d: -f1) -gt $(grep -n '^following' <<< "$out" | cut -d: -f1) ]] ||
	fail "status: the coordinator block is not after the rest: $out"
fake never
"$CTL" -s "$F" switchover --wait 1 > /dev/null 2>&1
run 0 "" -s "$F" status
grep -q "^pending   a switchover from node 1 to the most advanced replica$" <<< "$out" ||
	fail "status: no pending switchover: $out"
fake noleader
run 0 "" -s "$F" status
grep -q "^pending   a failover from node 0 to node 2$" <<< "$out" ||
	fail "status: no pending failover: $out"
grep -q "^leader    none: nobody holds the leader key$" <<< "$out" ||
	fail "status: the leader key held by none not said: $out"
run 1 "failover: node 2 is not the primary after 1 s \(--wait\); last seen: nobody holds the leader key; the failover from node 1 to node 2 still pending" \
	-s "$F" failover --to 2 --wait 1
fake unreachable
run 0 "" -s "$F" status
grep -q "^coordinator http://127.0.0.1:2379: UNREACHABLE for 12.3 s, failover PAUSED (etcd unreachable: no takeover)" <<< "$out" &&
	grep -q "^error     the last etcd failure: http://127.0.0.1:2379: connection refused$" <<< "$out" ||
	fail "status, etcd unreachable: $out"
echo "$NAME: status's coordinator block:"
sed -n '/^coordinator/,$p' <<< "$out" | sed 's/^/    /'

# 8. a repld without a coordinator: the verbs refused, exit 1
conf 2 replica
start 2
wait_for 2 "listening" "listening"
run 1 "switchover: NO_COORDINATOR: .+" -s "$(sock 2)" switchover --to 1
echo "$NAME: without a coordinator: $(cat "$D/run.err")"
run 1 "failover: NO_COORDINATOR: .+" -s "$(sock 2)" --json failover --to 1
[[ $out == '{"ok":false,"error":"NO_COORDINATOR",'* ]] || fail "failover --json, no coordinator: $out"
run 5 "follows no primary" -s "$(sock 2)" status
grep -q '^coordinator' <<< "$out" && fail "status without a coordinator shows a block: $out"
stop 2
echo "$NAME: ok ($((SECONDS - T0)) s)"
