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
#   3. and our client into a librpma target.
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
}

client() {
	local step
	: "${RPMA_VM_PEER_IP:?RPMA_VM_PEER_IP is not set}"
	/files/smoke.sh || failed=$((failed + 1))
	for ((step = 1; step <= ${#steps[@]}; step++)); do
		visit "$step" "${steps[step - 1]#* }"
	done
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
