#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-ha-man.sh -- repl_ha(3), the ha/ library's page, renders without a
# warning and names every function the library's headers (coordinator.h,
# ha_rules.h) declare, in its NAME and its SYNOPSIS.
set -u
srcdir=${srcdir:-.}
page="$srcdir/ha/repl_ha.3"
[ -f "$page" ] || { echo "FAIL: no $page"; exit 1; }
command -v groff > /dev/null 2>&1 ||
	{ echo "SKIP: groff is not installed, so the page cannot be rendered"; exit 77; }
fail=0
warn=$(groff -man -ww -z "$page" 2>&1)
[ -z "$warn" ] || { echo "FAIL: $page renders with warnings: $warn"; fail=1; }
funcs=$(grep -hv "^typedef" "$srcdir/ha/coordinator.h" "$srcdir/ha/ha_rules.h" | sed -n -E 's/^[A-Za-z][A-Za-z0-9_ *]*[ *]((coordinator|coord|ha)_[a-z_]+)\(.*/\1/p' \
	| sort -u)
[ -n "$funcs" ] || { echo "FAIL: no function found in ha/'s headers"; exit 1; }
name=$(sed -n '/^\.SH NAME/,/^\.SH SYNOPSIS/p' "$page")
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$page")
n=0
for f in $funcs; do
	n=$((n + 1))
	echo "$name" | grep -qw "$f" || { echo "FAIL: $f is not in NAME of $page"; fail=1; }
	echo "$synopsis" | grep -q "$f(" || { echo "FAIL: $f is not in SYNOPSIS of $page"; fail=1; }
done
[ $fail = 0 ] && echo "check-ha-man: $n functions, each in NAME and SYNOPSIS; renders clean"
exit $fail
