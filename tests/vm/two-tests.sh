#!/usr/bin/bash
# tests/vm/two-tests.sh -- runs in both guests of make check-rdma-two
# (run-guest --two; RPMA_VM_ROLE says which side this is), in steps that the
# two sides take together:
#   0. the rig's smoke test (tests/vm/smoke.sh): each guest's device;
#   1. our core's write+flush across the guests: the server guest runs
#      rdma_wf_loop_ours (tests/bench-rdma) as the target, its region on
#      device-dax when the guests have PMem, the client guest its client:
#      RPMA_WF_TWO_ROUNDS (300) rounds of write 64 B + persistent flush;
#      every completion must succeed, the target checks the bytes that
#      landed, the client prints the median;
#   2. the same with a client built against Debian's librpma
#      (rdma_wf_loop_librpma) into our target;
#   3. and our client into a librpma target;
#   4. a promotion over verbs while the old primary writes: the server guest
#      runs two replicas (repl-node, provider verbs), the client guest a
#      primary streaming to both; the server promotes replica 2 (a primary
#      on its log: itself and replica 1 are n - k + 1 nodes); the old
#      primary must exit fenced (3), and replica 1's ring must not change
#      after the new primary stopped, while the old one was still trying.
#      (tests/verbs/verbs_fence shows in one guest that the old key and the
#      old epoch are refused with a remote access error.)
# A step whose programs were not passed in (/files) fails.
#
# (tests/interop's programs cannot cross guests: their client looks up its
# device by the target's address as a local one.)
#
# Each step has its rendezvous: the server side says `vm-peer ready STEP`
# once its target listens (even when it did not, so that the client fails
# fast, REJECTED, rather than waiting for the guest's time to run out).  A
# target ends when its client disconnects; in case the client never came,
# the client side also says `vm-peer ready 5STEP` when it is done with the
# step, and the server stops a target that is still running 20 s later.
# (The server cannot wait for that signal: after the last step the client
# guest powers off at once and may take its port with it; a client that
# failed lingers a few seconds so that the server can see it.)  A request REJECTED although the target
# listens is seen now and then between the guests; the target never saw it,
# so rdma_wf_loop's client tries again (up to 10 times, a second apart).
set -uo pipefail

# the helpers only (wait_listen, pass, fail, show, $ip, $role, $log)
# shellcheck source=tests/vm/smoke.sh
. /files/smoke.sh || { echo "FAIL: cannot source /files/smoke.sh"; exit 1; }

rounds=${RPMA_WF_TWO_ROUNDS:-300}
# one CPU per guest: a busy-polling client keeps the kernel's rxe work
# waiting for the next tick, so the client sleeps in rpma_cq_wait
mode=${RPMA_WF_TWO_MODE:-wait}
base_port=7700

# the steps after the smoke test: "TARGET CLIENT" (programs of /files)
steps=(
	"rdma_wf_loop_ours rdma_wf_loop_ours"
	"rdma_wf_loop_ours rdma_wf_loop_librpma"
	"rdma_wf_loop_librpma rdma_wf_loop_ours"
)

impl() { echo "${1##*_}"; }	# rdma_wf_loop_ours -> ours

need() {	# need PROGRAM...: all of them in /files?
	local p
	for p in "$@"; do
		[[ -x /files/$p ]] || { fail "/files/$p was not passed in (make check-rdma-two passes it)"; return 1; }
	done
}

# serve STEP TARGET DAX: the target of one step, in this guest
serve() {
	local step=$1 bin=$2 dax=$3 what tpid rc done_at=''
	what="step $step: target $(impl "$bin") here, client $(impl "${steps[step - 1]#* }") in ${RPMA_VM_PEER_IP:-?}"
	if ! need "$bin"; then
		vm-peer ready "$step"
		return
	fi
	timeout 300 "/files/$bin" target "$ip" "$((base_port + step))" ${dax:+"$dax"} \
		>"$log/serve-$step" 2>&1 &
	tpid=$!
	wait_listen || echo "$what: the target did not listen within 30 s"
	vm-peer ready "$step" || fail "vm-peer ready $step"
	# the target ends when its client leaves; one that never came is
	# stopped 20 s after the client guest said it was done
	while kill -0 "$tpid" 2>/dev/null; do
		if [[ -z $done_at ]]; then
			vm-peer wait 1 "5$step" 2>/dev/null && done_at=$SECONDS
		elif ((SECONDS - done_at >= 20)); then
			echo "$what: the target was still running 20 s after the client was done"
			kill "$tpid" 2>/dev/null
			break
		else
			sleep 1
		fi
	done
	wait "$tpid"
	rc=$?
	show target "$log/serve-$step"
	if ((rc == 0)); then
		pass "$what: bytes verified"
	else
		fail "$what: target exit $rc"
	fi
}

# visit STEP CLIENT: the client of one step, in this guest
visit() {
	local step=$1 bin=$2 peer=$RPMA_VM_PEER_IP rc line what
	what="step $step: client $(impl "$bin") here, target $(impl "${steps[step - 1]% *}") in $peer (another guest)"
	if need "$bin" && vm-peer wait 300 "$step"; then
		timeout 240 "/files/$bin" client "$peer" "$((base_port + step))" "$rounds" 20 "$mode" \
			>"$log/visit-$step" 2>&1
		rc=$?
		line=$(grep -m1 '^wf_loop: ' "$log/visit-$step")
		if ((rc == 0)) && [[ -n $line ]]; then
			grep 'try [0-9]' "$log/visit-$step" | sed 's/^/    /'
			pass "$what: ${line#wf_loop: }"
		else
			fail "$what: client exit $rc"
			show client "$log/visit-$step"
		fi
	else
		fail "$what: not run (no program, or the server guest was never ready)"
	fi
	vm-peer ready "5$step" || fail "vm-peer ready 5$step"
}

# step 4 (repl-node): its rendezvous are 41 (replicas listen), 42 (the old
# primary streams), 43 (the old primary is done), 44 (the server is done:
# the client guest must stay up until then, its "ready 43" with it) and 45
# (the client saw 44).  A guest powers off as soon as its tests end, and its
# ready port with it, so the server waits up to 30 s for 45 before it ends;
# without that, a client that polled a moment late waited for 44 in vain.
fence_size=$((8 << 20))

wait_lines() {	# FILE N SECONDS: until FILE has N lines
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[[ -s $1 ]] && (($(wc -l <"$1") >= $2)) && return 0
		sleep 0.1
	done
	return 1
}

fence_server() {
	local r1 r2 p2 h1 h2 what="step 4: promotion over verbs here, old primary in ${RPMA_VM_PEER_IP:-?}"
	if ! need repl-node; then
		vm-peer ready 41
		vm-peer ready 44
		linger_for_client
		return
	fi
	export REPL_NODE_PROVIDER=verbs REPL_NODE_ADDR=$ip REPL_NODE_TIMEOUT_MS=3000
	/files/repl-node replica "$log/r1" $fence_size 7801 7802 >"$log/r1.out" 2>"$log/r1.err" &
	r1=$!
	/files/repl-node replica "$log/r2" $fence_size 7803 7804 >"$log/r2.out" 2>"$log/r2.err" &
	r2=$!
	if ! wait_lines "$log/r1.out" 1 60 || ! wait_lines "$log/r2.out" 1 60; then
		fail "$what: the replicas did not start"
		show r1 "$log/r1.err"
		vm-peer ready 41
		kill "$r1" "$r2" 2>/dev/null
		vm-peer ready 44
		linger_for_client
		return
	fi
	vm-peer ready 41
	if ! vm-peer wait 300 42; then
		fail "$what: the old primary never streamed"
		show r1 "$log/r1.err"
		kill "$r1" "$r2" 2>/dev/null
		vm-peer ready 44
		linger_for_client
		return
	fi
	# replica 2 becomes the primary while the old one writes on
	kill -TERM "$r2"
	wait "$r2"
	/files/repl-node primary "$log/r2" $fence_size 7 1000000000 1 \
		"$log/acked2" "$ip:7801" "$RPMA_VM_PEER_IP:7805" 2>"$log/p2.err" &
	p2=$!
	if wait_lines "$log/acked2" 200 150; then
		pass "$what: promoted, $(grep -c . "$log/acked2") records acknowledged by the new primary"
	else
		fail "$what: the new primary acknowledged nothing"
		show p2 "$log/p2.err"
	fi
	kill -KILL "$p2" 2>/dev/null
	wait "$p2" 2>/dev/null
	sleep 1
	h1=$(md5sum <"$log/r1")
	cp "$log/r1" "$log/r1.h1"
	vm-peer wait 300 43 || fail "$what: the old primary never finished"
	sleep 2
	h2=$(md5sum <"$log/r1")
	if [[ $h1 == "$h2" ]]; then
		pass "$what: replica 1's ring unchanged while the old primary tried"
	else
		fail "$what: replica 1's ring changed after the new primary stopped"
		cmp -l "$log/r1.h1" "$log/r1" | head -n 8 | sed 's/^/    cmp| /'
		show r1 "$log/r1.err"
	fi
	grep -m1 'refused request' "$log/r1.err" | sed 's/^/    r1| /'
	kill -TERM "$r1"
	wait "$r1"
	vm-peer ready 44
	linger_for_client
}

# linger_for_client: keep port 44 up until the client said 45 (30 s at most;
# the client may have powered off first, which is no failure)
linger_for_client() {
	vm-peer wait 30 45 2>/dev/null ||
		echo "two-tests: the client did not say it saw step 4's end (45) within 30 s"
}

fence_client() {
	local p1 rc peer=$RPMA_VM_PEER_IP what="step 4: old primary here, promotion in ${RPMA_VM_PEER_IP:-?}"
	if ! need repl-node || ! vm-peer wait 300 41; then
		fail "$what: not run (no program, or the replicas never listened)"
		vm-peer ready 43
		vm-peer wait 300 44
		vm-peer ready 45
		return
	fi
	export REPL_NODE_PROVIDER=verbs REPL_NODE_TIMEOUT_MS=3000
	# the cluster's first primary: it bootstraps the cluster, and its
	# control port is where the promotion in the other guest names it
	REPL_NODE_BOOTSTRAP=1 REPL_NODE_LISTEN=$ip:7805 \
		/files/repl-node primary "$log/p1" $fence_size 5 1000000000 1 \
		"$log/acked1" "$peer:7801" "$peer:7803" 2>"$log/p1.err" &
	p1=$!
	if ! wait_lines "$log/acked1" 300 150; then
		fail "$what: no records acknowledged over verbs"
		show p1 "$log/p1.err"
		kill "$p1" 2>/dev/null
	fi
	vm-peer ready 42
	wait "$p1"
	rc=$?
	if ((rc == 3)) && grep -q 'fenced' "$log/p1.err"; then
		pass "$what: fenced after $(grep -c . "$log/acked1") acknowledged records (exit 3)"
	else
		fail "$what: the old primary was not fenced (exit $rc)"
		show p1 "$log/p1.err"
	fi
	# how it learned it: a refused flush (remote access error), a dead
	# data connection, or the replica's word on the control channel
	grep -i 'failed\|error\|down' "$log/p1.err" | tail -n 4 | sed 's/^/    p1| /'
	vm-peer ready 43
	vm-peer wait 300 44 || fail "$what: the server guest never finished step 4"
	vm-peer ready 45
	sleep 2	# for the server's poll, which runs once a second
}

server() {
	local dax='' step
	/files/smoke.sh || failed=$((failed + 1))
	if [[ -n ${RPMA_VM_PMEM:-} ]]; then
		if dax=$(vm-devdax 2>"$log/devdax"); then
			echo "two-tests: targets on $dax"
		else
			fail "device-dax creation failed"
			show vm-devdax "$log/devdax"
			dax=
		fi
	fi
	for ((step = 1; step <= ${#steps[@]}; step++)); do
		serve "$step" "${steps[step - 1]% *}" "$dax"
	done
	fence_server
}

client() {
	local step
	: "${RPMA_VM_PEER_IP:?RPMA_VM_PEER_IP is not set}"
	/files/smoke.sh || failed=$((failed + 1))
	for ((step = 1; step <= ${#steps[@]}; step++)); do
		visit "$step" "${steps[step - 1]#* }"
	done
	fence_client
	((failed == 0)) || sleep 8
}

echo "two-tests: role $role, $ip"
case $role in
server) server ;;
client) client ;;
*) fail "two-tests.sh runs in run-guest --two guests, not with role '$role'" ;;
esac
rm -rf "$log"
echo "two-tests ($role): $passed passed, $failed failed"
((failed == 0))
