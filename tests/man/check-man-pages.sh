#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-man-pages.sh -- the manual pages of librpmacore are complete and clean.
#
#  a) every function exported by rpma/librpmacore.map has docs/man/<name>.3,
#     every page there is installed by docs/local.mk, and no page documents
#     a function that is not exported;
#  b) every page renders with groff -ww without a single warning (".so"
#     redirects are resolved), and every redirect points at a full page;
#  c) every full page has the sections NAME, SYNOPSIS, DESCRIPTION,
#     RETURN VALUE, ERRORS and SEE ALSO (librpmacore.7: NAME, DESCRIPTION,
#     SEE ALSO), and its NAME line lists every function it documents;
#  d) the SYNOPSIS of each function's page contains the function's
#     prototype exactly as rpma/include/rpma.h declares it.
#
# Run by "make check" from the build directory (automake exports $srcdir),
# or by hand from anywhere.  Exit 0: all good; 1: a page is missing or
# wrong (each problem is named); 77: groff is not installed (skip).

set -u

. "$(dirname "$0")/man_lib.sh"
map="$srcdir/rpma/librpmacore.map"
header="$srcdir/rpma/include/rpma.h"
man_require "$map" "$header"

if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: groff is not installed, so the pages cannot be rendered"
	exit 77
fi

man_scratch check-man-pages

# the exported functions: the names in the global: block of the version script
sed -n '/global:/,/local:/p' "$map" |
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*;.*$/\1/p' \
	> "$tmp/functions"
if [ ! -s "$tmp/functions" ]; then
	fail "no exported function found in $map"
	exit 1
fi

# render PAGE [groff options]: text of the page, warnings on stderr
render() {
	page=$1
	shift
	groff -man -Tascii -P-cbou -ww -I "$tmp" "$@" "$page"
}

# ---- a) one page per exported function, all installed, none stray -----
while read -r fn; do
	[ -f "$mandir/$fn.3" ] || fail "$fn is exported but docs/man/$fn.3 does not exist"
done < "$tmp/functions"

for page in "$mandir"/*.3 "$mandir"/*.7; do
	[ -f "$page" ] || continue
	base=$(basename "$page")
	case $base in
	librepl.3 | repl_*.3) ;;	# librepl's: tests/api/check-librepl-man.sh
	*.3)
		grep -qx "${base%.3}" "$tmp/functions" ||
			fail "docs/man/$base documents ${base%.3}, which librpmacore.map does not export"
		;;
	esac
	grep -q "docs/man/$base" "$localmk" ||
		fail "docs/man/$base is not installed: add it to dist_man_MANS in docs/local.mk"
done

# ---- b) rendering, c) sections ------------------------------------------
for page in "$mandir"/*.3 "$mandir"/*.7; do
	[ -f "$page" ] || continue
	base=$(basename "$page")

	if is_redirect "$page"; then
		target=$(sed -n 's/^\.so[[:space:]]*\(man[37]\/[^[:space:]]*\)[[:space:]]*$/\1/p' "$page")
		if [ -z "$target" ]; then
			fail "$base: a redirect must be one line \".so man3/<page>.3\""
			continue
		fi
		if [ ! -f "$mandir/$(basename "$target")" ]; then
			fail "$base: redirects to $target, which does not exist"
			continue
		fi
		if is_redirect "$mandir/$(basename "$target")"; then
			fail "$base: redirects to $target, which is itself a redirect"
			continue
		fi
	else
		for section in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS "SEE ALSO"; do
			case $base:$section in
			*.7:SYNOPSIS | *.7:"RETURN VALUE" | *.7:ERRORS) continue ;;
			esac
			grep -Eq "^\\.SH[[:space:]]+\"?$section\"?[[:space:]]*\$" "$page" ||
				fail "$base: no $section section"
		done
		grep -q '^\.TH ' "$page" || fail "$base: no .TH line"
	fi

	# every warning counts; try a narrow and the default line length
	for ll in "" "-rLL=60n"; do
		# shellcheck disable=SC2086
		if ! render "$page" $ll > "$tmp/out" 2> "$tmp/err"; then
			fail "$base: groff failed${ll:+ ($ll)}: $(head -n 3 "$tmp/err")"
		elif [ -s "$tmp/err" ]; then
			fail "$base: groff warnings${ll:+ ($ll)}:"
			sed 's/^/    /' "$tmp/err" >&2
		elif [ ! -s "$tmp/out" ]; then
			fail "$base: renders to nothing"
		fi
	done
done

# ---- c) NAME lists the function, d) prototypes match rpma.h -----------
# rpma.h without preprocessor lines and comments, one declaration per line
grep -v '^[[:space:]]*#' "$header" | tr '\n\t' '  ' |
	sed -e 's:/\*\([^*]\|\*[^/]\)*\*/: :g' | tr ';' '\n' |
	sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//' \
	> "$tmp/decls"

while read -r fn; do
	page="$mandir/$fn.3"
	[ -f "$page" ] || continue
	full=$page
	if is_redirect "$page"; then
		full="$mandir/$(basename "$(sed -n 's/^\.so[[:space:]]*//p' "$page")")"
	fi
	[ -f "$full" ] || continue

	# NAME: the text between .SH NAME and the next .SH names the function
	sed -n '/^\.SH[[:space:]]*NAME/,/^\.SH/p' "$full" | sed '1d;$d' |
		sed 's/\\-/-/g' | tr '\n' ' ' | grep -Eq "(^|[ ,])$fn([ ,]|$)" ||
		fail "$(basename "$full"): its NAME section does not list $fn (whatis/apropos would miss it)"

	proto=$(sed -En "s/^.*((const char \*|int )$fn\(.*\))\$/\1;/p" "$tmp/decls" | head -n 1)
	if [ -z "$proto" ]; then
		fail "$fn: no prototype found in rpma.h"
		continue
	fi
	render "$full" 2>/dev/null | sed -n '/^SYNOPSIS/,/^[A-Z]/p' | tr '\n\t' '  ' |
		sed 's/[[:space:]][[:space:]]*/ /g' > "$tmp/synopsis"
	grep -qF -- "$proto" "$tmp/synopsis" ||
		fail "$(basename "$full"): SYNOPSIS lacks the prototype of rpma.h: $proto"
done < "$tmp/functions"

if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s) in the manual pages" >&2
	exit 1
fi
echo "PASS: $(wc -l < "$tmp/functions") exported functions documented; all pages render cleanly"
exit 0
