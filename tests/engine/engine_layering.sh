#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# engine_layering.sh -- engine/'s wings stay layered, and no file-level loop
# forms.
#
# The wings, by rank: common (0); log, ctl (1); primary, replica (2); the
# facade repl.c (3); examples (4).  A file may use what is in its own wing
# or in a wing of lower rank; wings of one rank do not use each other.
# Checked twice:
#   - includes: every `#include "WING/NAME.h"` in engine/ (the source);
#   - symbols: every undefined symbol of a built object that another engine
#     object defines (nm), which also gives the file graph: tsort must find
#     no loop in it.
# No header of the core's private tree (rpma/*.h) may be included either:
# engine/ sees rpma.h and the shared leaf lib/ (crc32c.h, deadline.h) only.
set -u
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
build=$(pwd)
fail=0

rank() {
	case $1 in
	common) echo 0 ;;
	log | ctl) echo 1 ;;
	primary | replica) echo 2 ;;
	top) echo 3 ;;
	examples) echo 4 ;;
	*) echo 9 ;;
	esac
}

# ok FROM TO: may wing FROM use wing TO?
ok() {
	[ "$1" = "$2" ] && return 0
	[ "$(rank "$2")" -lt "$(rank "$1")" ]
}

wing_of() {	# engine/WING/x.c -> WING; engine/x.c -> top
	case $1 in
	*/engine/*/*) w=${1#*/engine/}; echo "${w%%/*}" ;;
	*) echo top ;;
	esac
}

# --- includes ------------------------------------------------------------
n_inc=0
for f in $(find "$top/engine" -name '*.[ch]' | sort); do
	from=$(wing_of "$f")
	for inc in $(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		n_inc=$((n_inc + 1))
		case $inc in
		config.h | rpma.h | repl.h | crc32c.h | deadline.h) continue ;;	# lib/
		*/*) to=${inc%%/*} ;;
		*)
			# the facade's own headers (engine/*.h) are of its rank
			if [ -f "$top/engine/$inc" ]; then
				to=top
			else
				echo "FAIL: ${f#$top/} includes \"$inc\": not a wing's header (rpma's private tree?)"
				fail=1
				continue
			fi ;;
		esac
		if [ "$to" != top ] && [ ! -f "$top/engine/$inc" ]; then
			echo "FAIL: ${f#$top/} includes \"$inc\", which engine/ does not have"
			fail=1
		elif ! ok "$from" "$to"; then
			echo "FAIL: ${f#$top/} ($from) includes \"$inc\" ($to): an upward or sideways tie"
			fail=1
		fi
	done
done

# --- symbols -------------------------------------------------------------
# the objects of the sources engine/ has (not stale ones of older layouts)
objs=
for c in $(cd "$top" && find engine -name '*.c' ! -path 'engine/examples/*' | sort); do
	d=$(dirname "$c")
	o=$build/$d/.libs/librepl_internal_la-$(basename "$c" .c).o
	if [ ! -f "$o" ]; then
		echo "FAIL: no object $o for $c (build first)"
		exit 1
	fi
	objs="$objs $o"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in $objs; do
	unit=$(basename "$o" .o)
	unit=${unit#librepl_*_la-}
	w=$(wing_of "$o")
	nm "$o" | awk -v u="$w/$unit" '$2 ~ /^[TDBRC]$/ { print $3, u }' >> "$tmp/defs"
	nm "$o" | awk -v u="$w/$unit" '$1 == "U" { print $2, u }' >> "$tmp/uses"
done
sort -o "$tmp/defs" "$tmp/defs"
sort -o "$tmp/uses" "$tmp/uses"
# "user owner symbol" for each symbol used across files
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' > "$tmp/ties"
n_ties=$(awk '{ print $1, $2 }' "$tmp/ties" | sort -u | wc -l)
while read -r user owner sym; do
	if ! ok "${user%%/*}" "${owner%%/*}"; then
		echo "FAIL: $user uses $sym of $owner: an upward or sideways tie"
		fail=1
	fi
done < "$tmp/ties"
# tsort reads "a b" as a before b and names the files of any loop
awk '{ print $1, $2 }' "$tmp/ties" | sort -u > "$tmp/edges"
if ! tsort "$tmp/edges" > /dev/null 2> "$tmp/loops"; then
	echo "FAIL: the engine's files form a loop:"
	sed -n 's/^tsort: \([a-z]*\/[a-z_0-9]*\)$/  \1/p' "$tmp/loops" | sort -u
	fail=1
fi

n_files=$(echo $objs | wc -w)
echo "engine_layering: $n_files objects, $n_ties file ties, $n_inc includes checked"
exit $fail
