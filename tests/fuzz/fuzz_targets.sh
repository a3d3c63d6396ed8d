#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fuzz_targets.sh -- every libFuzzer target of tests/fuzz builds from the
# tree as it is (each names the sources it compiles: a file split or
# renamed must be named there too) and runs for FUZZ_SECONDS (default 2)
# from its corpus without a finding.  `make fuzz` runs them longer.
# Skipped (77) without clang.
NAME=fuzz_targets
CLANG=$(sed -n 's/^CLANG = //p' Makefile)
[[ -n $CLANG ]] || { echo "SKIP: $NAME: no clang (apt-get install clang libclang-rt-14-dev)"; exit 77; }
out=$(make -s fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-2}" 2>&1)
rc=$?
echo "$out" | grep -E '^fuzz: ' | tr '\n' ' '
echo
if [[ $rc != 0 ]]; then
	echo "$out" | tail -n 40
	echo "$NAME: FAIL: make fuzz exited $rc"
	exit 1
fi
n=$(echo "$out" | grep -c '^Done ')
t=$(echo "$out" | grep -c '^fuzz: ')
[[ $n == "$t" && $n -ge 10 ]] || { echo "$NAME: FAIL: $n of $t targets ran to the end"; exit 1; }
echo "$NAME: ok: $n targets built and ran"
