#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-librepl-man.sh -- librepl's manual pages are complete and clean.
#
#  a) every repl_* function librepl exports has docs/man/<name>.3.  The
#     exported names are those of engine/librepl.map (its global: block may
#     name functions or give patterns such as repl_*, which are matched
#     against the functions engine/include/repl.h declares), and, when the
#     library has been built, those nm -D finds in engine/.libs/librepl.so;
#  b) no docs/man/repl_*.3 documents a function that is not exported, every
#     ".so" redirect points at a full page, and every page (librepl.3 too)
#     is installed by docs/local.mk;
#  c) every full page has the sections NAME, SYNOPSIS, DESCRIPTION,
#     RETURN VALUE, ERRORS and SEE ALSO, its NAME line lists each function
#     it documents, and its SYNOPSIS holds the function's prototype exactly
#     as repl.h declares it;
#  d) docs/man/librepl.3 and every docs/man/repl_*.3 render with
#     "groff -man -ww -z" (at the default and a narrow line length) without
#     a single warning, or, without groff, with "mandoc -T lint" without a
#     warning or error.
#
# Run by "make check" from the build directory (automake exports $srcdir),
# or by hand from anywhere:
#   srcdir=/path/to/source sh check-librepl-man.sh   (from the build directory)
# LIBREPL_SO overrides the built library's path.
# Exit 0: all good; 1: a page is missing or wrong (each problem is named);
# 77: neither groff nor mandoc is installed (skip).

set -u

. "$(dirname "$0")/../man/man_lib.sh"
map="$srcdir/engine/librepl.map"
header="$srcdir/engine/include/repl.h"
lib=${LIBREPL_SO:-engine/.libs/librepl.so}
man_require "$map" "$header"

if command -v groff >/dev/null 2>&1; then
	renderer=groff
elif command -v mandoc >/dev/null 2>&1; then
	renderer=mandoc
else
	echo "SKIP: neither groff nor mandoc is installed, so the pages cannot be checked"
	exit 77
fi

man_scratch check-librepl-man

# ---- the exported functions ---------------------------------------------
# repl.h without comments (first: they span lines, also after a #define)
# and preprocessor lines, one declaration per line
awk '{
	line = $0; out = ""
	while (line != "") {
		if (incomment) {
			i = index(line, "*/")
			if (i == 0) { line = ""; break }
			line = substr(line, i + 2); incomment = 0
		} else {
			i = index(line, "/*")
			if (i == 0) { out = out line; line = ""; break }
			out = out substr(line, 1, i - 1) " "
			line = substr(line, i + 2); incomment = 1
		}
	}
	print out
}' "$header" | grep -v '^[[:space:]]*#' | tr '\n\t' '  ' | tr ';{}' '\n\n\n' |
	sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//' \
	> "$tmp/decls"
# the functions it declares (not the typedef of the callback's type)
grep -v '^typedef ' "$tmp/decls" |
	sed -n 's/^.*[ *]\(repl_[a-z0-9_]*\)(.*$/\1/p' | sort -u > "$tmp/declared"

# the map's global: block, entries "name;" or "pattern;"
sed -n '/global:/,/local:/p' "$map" | sed -e 's:/\*.*\*/::' -e 's/#.*$//' |
	sed -n 's/^[[:space:]]*\([A-Za-z0-9_*?]*\)[[:space:]]*;.*$/\1/p' \
	> "$tmp/map"
if [ ! -s "$tmp/map" ]; then
	fail "no global: entry found in $map"
	exit 1
fi
: > "$tmp/functions"
while read -r entry; do
	case $entry in
	*'*'* | *'?'*)
		# a pattern: the declared functions it exports
		while read -r fn; do
			# shellcheck disable=SC2254
			case $fn in
			$entry) echo "$fn" >> "$tmp/functions" ;;
			esac
		done < "$tmp/declared"
		;;
	repl_*)
		echo "$entry" >> "$tmp/functions"
		;;
	esac
done < "$tmp/map"

# what the built library really exports, when it is there
from_lib=0
if [ -f "$lib" ]; then
	if command -v nm >/dev/null 2>&1; then
		nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' |
			sed 's/@.*$//' | grep '^repl_' | sort -u > "$tmp/lib"
		if [ ! -s "$tmp/lib" ]; then
			fail "$lib exports no repl_* function"
		fi
		cat "$tmp/lib" >> "$tmp/functions"
		from_lib=$(wc -l < "$tmp/lib")
	else
		echo "note: nm is not installed; $lib is not inspected"
	fi
fi
sort -u "$tmp/functions" -o "$tmp/functions"
if [ ! -s "$tmp/functions" ]; then
	fail "no exported repl_* function found in $map (with $header)"
	exit 1
fi

# target PAGE: the file a redirect names, in docs/man
target() {
	echo "$mandir/$(basename "$(sed -n 's/^\.so[[:space:]]*//p' "$1" | head -n 1)")"
}

# ---- a) a page per exported function --------------------------------------
while read -r fn; do
	[ -f "$mandir/$fn.3" ] ||
		fail "$fn is exported by librepl but docs/man/$fn.3 does not exist"
done < "$tmp/functions"

# ---- b) no stray page, redirects, installation ------------------------------
pages=""
for page in "$mandir/librepl.3" "$mandir"/repl_*.3; do
	[ -f "$page" ] || continue
	pages="$pages $page"
	base=$(basename "$page")
	case $base in
	repl_*)
		grep -qx "${base%.3}" "$tmp/functions" ||
			fail "docs/man/$base documents ${base%.3}, which librepl does not export"
		;;
	esac
	grep -q "docs/man/$base" "$localmk" ||
		fail "docs/man/$base is not installed: add it to dist_man_MANS in docs/local.mk"
	if is_redirect "$page"; then
		if ! grep -Eqx '\.so[[:space:]]+man3/[A-Za-z0-9_.]+\.3[[:space:]]*' "$page"; then
			fail "$base: a redirect must be one line \".so man3/<page>.3\""
		elif [ ! -f "$(target "$page")" ]; then
			fail "$base: redirects to $(sed 's/^\.so[[:space:]]*//' "$page"), which does not exist"
		elif is_redirect "$(target "$page")"; then
			fail "$base: redirects to a page that is itself a redirect"
		fi
	fi
done
if [ ! -f "$mandir/librepl.3" ]; then
	fail "docs/man/librepl.3 (the library's overview) does not exist"
fi

# ---- c) sections, NAME, SYNOPSIS ------------------------------------------
for page in $pages; do
	is_redirect "$page" && continue
	base=$(basename "$page")
	grep -q '^\.TH ' "$page" || fail "$base: no .TH line"
	for section in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "SEE ALSO"; do
		grep -Eq "^\\.SH[[:space:]]+\"?$section\"?[[:space:]]*\$" "$page" ||
			fail "$base: no $section section"
	done
done

if [ "$renderer" = groff ]; then
	while read -r fn; do
		page="$mandir/$fn.3"
		[ -f "$page" ] || continue
		full=$page
		is_redirect "$page" && full=$(target "$page")
		[ -f "$full" ] || continue

		sed -n '/^\.SH[[:space:]]*NAME/,/^\.SH/p' "$full" | sed '1d;$d' |
			sed 's/\\-/-/g' | tr '\n' ' ' | grep -Eq "(^|[ ,])$fn([ ,]|\$)" ||
			fail "$(basename "$full"): its NAME section does not list $fn (whatis would miss it)"

		proto=$(grep -E "^[a-z].*[ *]$fn\\(.*\\)\$" "$tmp/decls" | grep -v '^typedef ' |
			head -n 1)
		if [ -z "$proto" ]; then
			fail "$fn is exported but repl.h declares no prototype for it"
			continue
		fi
		groff -man -Tascii -P-cbou -I "$tmp" "$full" 2>/dev/null |
			sed -n '/^SYNOPSIS/,/^[A-Z]/p' | tr '\n\t' '  ' |
			sed 's/[[:space:]][[:space:]]*/ /g' > "$tmp/synopsis"
		grep -qF -- "$proto;" "$tmp/synopsis" ||
			fail "$(basename "$full"): SYNOPSIS lacks the prototype of repl.h: $proto;"
	done < "$tmp/functions"
fi

# ---- d) every page renders without a warning ------------------------------
for page in $pages; do
	base=$(basename "$page")
	if [ "$renderer" = groff ]; then
		man_groff_clean "$page"
		# shellcheck disable=SC2086
		[ -n "$(groff -man -Tascii -I "$tmp" "$page" 2>/dev/null)" ] ||
			fail "$base: renders to nothing"
	else
		# mandoc resolves ".so man3/x.3" from the current directory
		if ! (cd "$tmp" && mandoc -T lint -W warning "$mandir_abs/$base") \
		    > "$tmp/out" 2>&1 || [ -s "$tmp/out" ]; then
			fail "$base: mandoc -T lint:"
			sed 's/^/    /' "$tmp/out" >&2
		fi
	fi
done

n_pages=$(echo $pages | wc -w)
if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s) in librepl's manual pages" >&2
	exit 1
fi
source="librepl.map"
[ "$from_lib" -gt 0 ] && source="$source and nm -D $lib"
echo "PASS: $(wc -l < "$tmp/functions") exported repl_* functions ($source) each have a page; $n_pages pages render cleanly with $renderer"
exit 0
