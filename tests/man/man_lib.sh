# tests/man/man_lib.sh -- what the manual-page checks share (sourced by
# tests/man/check-man-pages.sh, tests/man/check-product-man.sh and
# tests/api/check-librepl-man.sh): the source tree's places, a failure
# counter, a scratch directory in which ".so man3/x.3" resolves to
# docs/man, redirect detection, and groff's verdict on a page.

if [ -z "${srcdir:-}" ]; then
	srcdir=$(cd "$(dirname "$0")/../.." && pwd)
fi
mandir="$srcdir/docs/man"
localmk="$srcdir/docs/local.mk"

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# man_require FILE...: each exists, and so does docs/man; else exit 1
man_require() {
	for f in "$@" "$localmk"; do
		if [ ! -f "$f" ]; then
			echo "FAIL: $f not found (srcdir=$srcdir)" >&2
			exit 1
		fi
	done
	if [ ! -d "$mandir" ]; then
		echo "FAIL: $mandir not found (srcdir=$srcdir)" >&2
		exit 1
	fi
}

# man_scratch NAME: $tmp, removed on exit, with man3/ and man7/ being
# docs/man (renderers resolve ".so man3/x.3" against it)
man_scratch() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT HUP INT TERM
	mandir_abs=$(cd "$mandir" && pwd)
	ln -s "$mandir_abs" "$tmp/man3"
	ln -s "$mandir_abs" "$tmp/man7"
}

# is_redirect PAGE: the page is only a ".so" line
is_redirect() {
	grep -q '^\.so ' "$1" && [ "$(grep -cv '^[[:space:]]*$' "$1")" -eq 1 ]
}

# man_groff_clean PAGE: groff -ww renders PAGE at the default and a narrow
# line length without a warning; else a failure naming the page (needs $tmp)
man_groff_clean() {
	for ll in "" "-rLL=60n"; do
		# shellcheck disable=SC2086
		if ! groff -man -ww -z -I "$tmp" $ll "$1" > "$tmp/groff.err" 2>&1; then
			fail "$(basename "$1"): groff failed${ll:+ ($ll)}:"
			sed 's/^/    /' "$tmp/groff.err" >&2
		elif [ -s "$tmp/groff.err" ]; then
			fail "$(basename "$1"): groff warnings${ll:+ ($ll)}:"
			sed 's/^/    /' "$tmp/groff.err" >&2
		fi
	done
}
