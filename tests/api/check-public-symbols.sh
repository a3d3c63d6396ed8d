#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-public-symbols.sh -- the product programs live on librepl's public
# API: they link the shared librepl (not the engine's internal archives)
# and use nothing of it but what it exports.  For each program:
#
#  a) it needs librepl.so (readelf -d), and not librpmacore.so: the core
#     is inside librepl, hidden (a program listed as PROGRAM:core may link
#     librpmacore.so too, for the core's own public API: repl-bench's
#     medium floor);
#  b) it defines no global symbol of the engine's or the core's internals
#     (wal_*, cluster_*, replica_*, ctl_*, membership_*, link_*, fabric_*,
#     log_lock*, promise_floor_*, peer_floor_*, rpma_*): a static copy of
#     them means it was linked with the internal archives;
#  c) none of those is undefined in it either (but the rpma_* that
#     librpmacore.so exports, in a PROGRAM:core), and every undefined
#     symbol is a repl_* that librepl.so exports, carries a version
#     (GLIBC_*, OPENSSL_*, ...), is weak, or is exported by one of the
#     system libraries it needs (libconfig, the sanitizers' runtimes, ...).
#
# Run by "make check" from the build directory (automake exports $srcdir),
# or by hand from there.  PROGRAMS overrides the list (paths of libtool's
# wrappers or binaries, relative to the build directory).
# Exit 0: all good; 1: a program reaches past the API (each symbol is
# named); 77: nm or readelf is not installed (skip).

set -u

programs=${PROGRAMS:-"tools/repld/repld tools/replctl/replctl tools/bench/repl-bench:core"}
lib=engine/.libs/librepl.so
core=rpma/.libs/librpmacore.so
internal='^(wal_|cluster_|replica_|ctl_|membership_|link_|fabric_|log_lock|promise_floor_|peer_floor_|rpma_)'

for t in nm readelf ldd; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "SKIP: $t is not installed"
		exit 77
	fi
done
if [ ! -f "$lib" ]; then
	echo "FAIL: $lib not found: run from the build directory after make" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-public-symbols.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sed 's/@.*$//' |
	sort -u > "$tmp/exported"
: > "$tmp/core"
if [ -f "$core" ]; then
	nm -D --defined-only "$core" | awk 'NF == 3 { print $3 }' | sed 's/@.*$//' |
		sort -u > "$tmp/core"
fi

# the ELF file behind a program: libtool's wrapper script keeps it in .libs/
real() {
	d=$(dirname "$1")
	b=$(basename "$1")
	for f in "$d/.libs/lt-$b" "$d/.libs/$b" "$1"; do
		if [ -f "$f" ] && head -c 4 "$f" | grep -q 'ELF'; then
			echo "$f"
			return 0
		fi
	done
	return 1
}

checked=0
for entry in $programs; do
	prog=${entry%:core}
	with_core=0
	[ "$prog" != "$entry" ] && with_core=1
	if ! bin=$(real "$prog"); then
		fail "$prog: not built (no ELF file found)"
		continue
	fi
	name=$(basename "$prog")
	checked=$((checked + 1))

	# a) librepl, not the core
	readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$tmp/needed"
	grep -q '^librepl\.so' "$tmp/needed" ||
		fail "$name does not link the shared librepl (needs: $(tr '\n' ' ' < "$tmp/needed"))"
	if [ "$with_core" = 0 ] && grep -q '^librpmacore\.so' "$tmp/needed"; then
		fail "$name links librpmacore.so: the core is reached through librepl only"
	fi

	# b) no static copy of the internals
	nm --defined-only "$bin" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ { print $3 }' |
		grep -E "$internal" > "$tmp/defined"
	if [ -s "$tmp/defined" ]; then
		fail "$name holds $(wc -l < "$tmp/defined") internal symbols of the engine or the core, e.g. $(head -n 5 "$tmp/defined" | tr '\n' ' ')"
	fi

	# c) what it takes from outside
	: > "$tmp/system"
	LD_LIBRARY_PATH="engine/.libs:rpma/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		ldd "$bin" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' |
		grep -v -e '/librepl\.so' -e '/librpmacore\.so' > "$tmp/libs" || :
	while read -r l; do
		nm -D --defined-only "$l" 2>/dev/null | awk 'NF == 3 { print $3 }' |
			sed 's/@.*$//' >> "$tmp/system"
	done < "$tmp/libs"
	sort -u "$tmp/system" -o "$tmp/system"
	nm -D --undefined-only "$bin" | awk '{ print $1, $2 }' > "$tmp/undef"
	while read -r kind sym; do
		base=${sym%%@*}
		if [ "$with_core" = 1 ] && grep -qx "$base" "$tmp/core"; then
			:	# the core's public API, from librpmacore.so
		elif echo "$base" | grep -Eq "$internal"; then
			fail "$name takes the internal $base"
		elif [ "$kind" = w ] || [ "$base" != "$sym" ]; then
			:	# weak, or a versioned system symbol
		elif grep -qx "$base" "$tmp/exported"; then
			case $base in
			repl_*) ;;
			*) fail "$name takes $base from librepl, which is not its API" ;;
			esac
		elif ! grep -qx "$base" "$tmp/system"; then
			fail "$name takes $base, which neither librepl nor a system library it needs exports"
		fi
	done < "$tmp/undef"
done

if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s): the programs reach past librepl's API" >&2
	exit 1
fi
echo "PASS: $checked programs link librepl.so and use only its repl_* API and system libraries"
exit 0
