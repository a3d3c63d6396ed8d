#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-api-status.sh -- docs/librpma-api-status.md matches both libraries.
#
#  a) every function exported by Debian's librpma.so.0 has a row in the
#     first table of docs/librpma-api-status.md;
#  b) every function of that table is exported by the librpmacore.so just
#     built, or its status is "`RPMA_E_NOSUPP` by design";
#  c) every rpma_* function librpmacore.so exports is declared in
#     rpma/include/rpma.h and listed in rpma/librpmacore.map, and every
#     rpma_ext_* one has a row in the second table (extensions);
#  d) every function declared in rpma.h is listed in librpmacore.map.
#
# Run by "make check" from the build directory (automake exports $srcdir;
# the built library is rpma/.libs/librpmacore.so there), or by hand:
#   srcdir=/path/to/source sh check-api-status.sh   (from the build directory)
# LIBRPMA_SO and LIBRPMACORE_SO override the two libraries' paths.
# Exit 0: all good; 1: something is missing (each function is named);
# 77: librpma.so.0 or nm is not available (skip).

set -u

if [ -z "${srcdir:-}" ]; then
	srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fi
status="$srcdir/docs/librpma-api-status.md"
header="$srcdir/rpma/include/rpma.h"
map="$srcdir/rpma/librpmacore.map"
ours=${LIBRPMACORE_SO:-rpma/.libs/librpmacore.so}

for f in "$status" "$header" "$map"; do
	if [ ! -f "$f" ]; then
		echo "FAIL: $f not found (srcdir=$srcdir)" >&2
		exit 1
	fi
done

if ! command -v nm >/dev/null 2>&1; then
	echo "SKIP: nm (binutils) is not installed"
	exit 77
fi

theirs=${LIBRPMA_SO:-}
if [ -z "$theirs" ]; then
	for f in /usr/lib/*-linux-gnu*/librpma.so.0 /usr/lib64/librpma.so.0 \
	    /usr/lib/librpma.so.0 /usr/local/lib/librpma.so.0 \
	    /usr/local/lib64/librpma.so.0; do
		if [ -f "$f" ]; then
			theirs=$f
			break
		fi
	done
fi
if [ -z "$theirs" ] || [ ! -f "$theirs" ]; then
	echo "SKIP: librpma.so.0 is not installed (install librpma-dev, or set LIBRPMA_SO)"
	exit 77
fi

if [ ! -f "$ours" ]; then
	echo "FAIL: $ours not found: run this from the build directory after make" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-api-status.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# defined, exported functions (type T), without their symbol versions
exported() {
	nm -D --defined-only "$1" | awk '$2 == "T" { print $3 }' |
		sed 's/@.*$//' | sort -u
}

exported "$theirs" > "$tmp/librpma"
exported "$ours" | grep '^rpma_' > "$tmp/ours"
if [ ! -s "$tmp/librpma" ]; then
	fail "no function exported by $theirs"
	exit 1
fi
if [ ! -s "$tmp/ours" ]; then
	fail "no rpma_* function exported by $ours"
	exit 1
fi

# the tables: rows "| `name` | status | notes |", by section
awk -v lib="$tmp/table" -v ext="$tmp/exttable" '
	/^## / {
		section = ""
		if ($0 ~ /^## librpma 1\.2 functions/) section = lib
		else if ($0 ~ /^## Extensions/) section = ext
		next
	}
	section != "" && /^\| *`rpma_[a-z0-9_]*`/ {
		n = split($0, col, "|")
		name = col[2]; st = col[3]
		gsub(/[ `]/, "", name)
		sub(/^ */, "", st); sub(/ *$/, "", st)
		print name "\t" st > section
	}
' "$status"
touch "$tmp/table" "$tmp/exttable"
if [ ! -s "$tmp/table" ]; then
	fail "docs/librpma-api-status.md has no table under \"## librpma 1.2 functions\""
	exit 1
fi
cut -f1 "$tmp/table" | sort > "$tmp/table.names"
cut -f1 "$tmp/exttable" | sort > "$tmp/exttable.names"
awk -F '\t' '$2 ~ /^`?RPMA_E_NOSUPP`? by design/ { print $1 }' "$tmp/table" |
	sort > "$tmp/nosupp"

dups=$(sort "$tmp/table.names" "$tmp/exttable.names" | uniq -d)
for fn in $dups; do
	fail "$fn has more than one row in docs/librpma-api-status.md"
done

# rpma.h without comments: the names of declared functions
sed -e 's:/\*.*\*/::' "$header" | tr '\n' ' ' | sed 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/: :g' |
	grep -o 'rpma_[a-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' |
	grep -vx 'rpma_log_function' | sort -u > "$tmp/declared"
# the map's global: names
sed -n '/global:/,/local:/p' "$map" |
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*;.*$/\1/p' |
	sort -u > "$tmp/map"

# a) librpma's functions are all in the table
while read -r fn; do
	grep -qx "$fn" "$tmp/table.names" ||
		fail "$fn is exported by librpma ($theirs) but has no row in docs/librpma-api-status.md"
done < "$tmp/librpma"
# ... and the table names no function librpma does not have
while read -r fn; do
	grep -qx "$fn" "$tmp/librpma" ||
		fail "$fn is in the librpma table of docs/librpma-api-status.md but librpma does not export it"
done < "$tmp/table.names"

# b) each function of the table is exported here, or NOSUPP by design
while read -r fn; do
	grep -qx "$fn" "$tmp/ours" && continue
	grep -qx "$fn" "$tmp/nosupp" && continue
	fail "$fn is not exported by $ours (and docs/librpma-api-status.md does not mark it \`RPMA_E_NOSUPP\` by design)"
done < "$tmp/table.names"

# c) what we export is declared, in the map, and extensions are listed
while read -r fn; do
	grep -qx "$fn" "$tmp/declared" ||
		fail "$fn is exported by $ours but not declared in rpma/include/rpma.h"
	grep -qx "$fn" "$tmp/map" ||
		fail "$fn is exported by $ours but not listed in rpma/librpmacore.map"
	case $fn in
	rpma_ext_*)
		grep -qx "$fn" "$tmp/exttable.names" ||
			fail "$fn is exported by $ours but has no row in the extensions table of docs/librpma-api-status.md"
		;;
	esac
done < "$tmp/ours"

# d) every declared function is in the map
while read -r fn; do
	grep -qx "$fn" "$tmp/map" ||
		fail "$fn is declared in rpma/include/rpma.h but not listed in rpma/librpmacore.map"
done < "$tmp/declared"

if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s) between docs/librpma-api-status.md, rpma.h, librpmacore.map and the libraries" >&2
	exit 1
fi
echo "PASS: $(wc -l < "$tmp/librpma") librpma functions listed ($(wc -l < "$tmp/nosupp") NOSUPP by design), $(wc -l < "$tmp/ours") rpma_* functions exported here, all declared and mapped"
exit 0
