#!/usr/bin/bash
# tests/vm/rdma-tests.sh -- runs inside the test guest: first the rig's own
# smoke test, then every project test program passed in /files (the verbs
# tests of make check, which SKIP on a machine without RDMA), and last the
# baselines (tests/vm/baselines.sh: perftest and the write+flush loops of
# librpma and of our core, one table).  Here none of them may skip: a skip
# means the rig is broken, and counts as a failure.
set -uo pipefail

cd /files || exit 99
passed=0 failed=0

if /files/smoke.sh; then
	passed=$((passed + 1))
else
	echo "FAIL: the rig's smoke test"
	failed=$((failed + 1))
fi

for t in /files/verbs_* /files/interop-*; do
	[ -x "$t" ] || continue
	name=${t##*/}
	echo "===== $name ====="
	timeout 120 "$t"
	rc=$?
	case $rc in
	0) echo "PASS: $name"; passed=$((passed + 1)) ;;
	77) echo "FAIL: $name skipped inside the rig"; failed=$((failed + 1)) ;;
	*) echo "FAIL: $name (exit $rc)"; failed=$((failed + 1)) ;;
	esac
done

# last, on a guest that the tests have left alone
if [ -x /files/baselines.sh ]; then
	echo "===== baselines ====="
	if /files/baselines.sh; then
		echo "PASS: baselines"
		passed=$((passed + 1))
	else
		echo "FAIL: baselines (a program failed: see above)"
		failed=$((failed + 1))
	fi
fi

echo "rdma: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
