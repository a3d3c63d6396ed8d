#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# check-product-man.sh -- the pages of the programs are clean and complete:
# docs/man/repld.8, docs/man/repld.conf.5 and docs/man/replctl.8.
#
#  a) each page is installed by docs/local.mk, has a .TH line and the
#     sections NAME, SYNOPSIS (repld.conf.5 too), DESCRIPTION and SEE ALSO
#     (the .8 pages also EXIT STATUS and EXAMPLES, repld.conf.5 EXAMPLES);
#  b) each page renders with "man -l" (man-db, all groff warnings on:
#     --warnings=w) at the default width and at 60 columns, and with
#     "groff -man -ww -z", without a single line on standard error;
#  c) nothing is left out of the pages:
#     - every setting repld_conf.c knows (its *_keys[] tables: the top
#       level and each group's) has an entry in repld.conf.5, at its place
#       (a group's settings inside the group's entry), and the page has no
#       entry for a setting the code does not know;
#     - every value of its *_names[] tables (roles, transports, flush
#       methods, backends, log levels) appears in repld.conf.5 as "value";
#     - every long option of repld (repld.c's option table) is in repld.8;
#     - every verb of the admin socket (admin_proto.h) is in repld.8;
#     - every command replctl knows -- those its usage text lists (the
#       built program's "replctl --help" when it is there, and the usage
#       strings of replctl.c) and those its main() dispatches on -- has a
#       subsection (.SS) of its own in replctl.8.
#
# Run by "make check" from the build directory (automake exports $srcdir),
# or by hand from anywhere.  REPLCTL overrides the built replctl's path.
# Exit 0: all good; 1: a problem (each one is named); 77: neither man nor
# groff is installed (skip).

set -u

. "$(dirname "$0")/man_lib.sh"
conf_c="$srcdir/config/repld_conf.c"
conf_coord_c="$srcdir/config/conf_coord.c"
conf_archive_c="$srcdir/config/conf_archive.c"
repld_c="$srcdir/tools/repld/repld.c"
proto_h="$srcdir/admin/admin_proto.h"
replctl_c="$srcdir/tools/replctl/replctl.c"
replctl_bin=${REPLCTL:-tools/replctl/replctl}
man_require "$conf_c" "$conf_coord_c" "$conf_archive_c" "$repld_c" "$proto_h" "$replctl_c"

repld8="$mandir/repld.8"
conf5="$mandir/repld.conf.5"
replctl8="$mandir/replctl.8"

have_man=no
have_groff=no
command -v man >/dev/null 2>&1 && have_man=yes
command -v groff >/dev/null 2>&1 && have_groff=yes
if [ $have_man = no ] && [ $have_groff = no ]; then
	echo "SKIP: neither man nor groff is installed, so the pages cannot be rendered"
	exit 77
fi

man_scratch check-product-man
# messages of man-db itself must not depend on the caller's locale
LC_ALL=C
export LC_ALL
unset MANPAGER PAGER MANOPT 2>/dev/null || true

# ---- a) installed, sections ---------------------------------------------
pages=""
for page in "$repld8" "$conf5" "$replctl8"; do
	base=$(basename "$page")
	if [ ! -f "$page" ]; then
		fail "docs/man/$base does not exist"
		continue
	fi
	pages="$pages $page"
	grep -q "docs/man/$base" "$localmk" ||
		fail "docs/man/$base is not installed: add it to dist_man_MANS in docs/local.mk"
	grep -q '^\.TH ' "$page" || fail "$base: no .TH line"
	sections="NAME SYNOPSIS DESCRIPTION EXAMPLES SEE_ALSO"
	case $base in
	*.8) sections="$sections EXIT_STATUS" ;;
	esac
	for section in $sections; do
		section=$(echo "$section" | tr _ ' ')
		grep -Eq "^\\.SH[[:space:]]+\"?$section\"?[[:space:]]*\$" "$page" ||
			fail "$base: no $section section"
	done
done

# ---- b) rendering ---------------------------------------------------------
for page in $pages; do
	base=$(basename "$page")
	if [ $have_man = yes ]; then
		for width in "" 60; do
			if ! MANWIDTH=$width man --warnings=w -l "$page" \
			    > "$tmp/out" 2> "$tmp/err"; then
				fail "$base: man -l failed${width:+ (MANWIDTH=$width)}:"
				sed 's/^/    /' "$tmp/err" >&2
			elif [ -s "$tmp/err" ]; then
				fail "$base: man -l warnings${width:+ (MANWIDTH=$width)}:"
				sed 's/^/    /' "$tmp/err" >&2
			elif [ ! -s "$tmp/out" ]; then
				fail "$base: man -l renders it to nothing"
			fi
		done
	fi
	[ $have_groff = no ] || man_groff_clean "$page"
done

# ---- c) repld.conf.5: every setting, at its place ----------------------------
# the code's: "GROUP.KEY" for a group's, "KEY" at the top level; peer_keys
# are the entries of the list "peers"; a table named a_b_keys holds the
# settings of the group a.b (conf_coord.c's nested groups)
awk '
/static const char \*const [a-z_]+_keys\[\][[:space:]]*=/ {
	match($0, /[a-z_]+_keys\[/)
	table = substr($0, RSTART, RLENGTH - 6)
	intable = 1
	line = substr($0, RSTART + RLENGTH)
}
intable {
	if (line == "")
		line = $0
	while (match(line, /"[^"]*"/)) {
		key = substr(line, RSTART + 1, RLENGTH - 2)
		if (table == "top")
			print key
		else if (table == "peer")
			print "peers." key
		else {
			path = table
			gsub(/_/, ".", path)
			print path "." key
		}
		line = substr(line, RSTART + RLENGTH)
	}
	if ($0 ~ /};/)
		intable = 0
	line = ""
}' "$conf_c" "$conf_coord_c" "$conf_archive_c" | sort -u > "$tmp/code-settings"
if [ ! -s "$tmp/code-settings" ] || ! grep -qx node_id "$tmp/code-settings"; then
	fail "no setting found in the *_keys[] tables of $conf_c (has their form changed?)"
fi

# the page's: an entry is a tag line '.BR NAME " (TYPE...)"'; inside a
# group's .RS/.RE its settings
if [ -f "$conf5" ]; then
	awk '
	BEGIN { depth = 0 }
	/^\.RS/ { depth++; next }
	/^\.RE/ { if (depth > 0) depth--; next }
	/^\.BR [a-z_]+ " \(/ {
		at[depth] = $2
		path = at[0]
		for (d = 1; d <= depth; d++)
			path = path "." at[d]
		print path
	}' "$conf5" | sort -u > "$tmp/page-settings"
	# a group is documented by its entry; the page lists groups as settings
	# (and each group of a nested group: coordinator, coordinator.etcd)
	awk -F. '{ p = $1; print p; for (i = 2; i < NF; i++) { p = p "." $i; print p } }' \
		"$tmp/code-settings" | sort -u > "$tmp/code-top"
	cat "$tmp/code-settings" "$tmp/code-top" | sort -u > "$tmp/code-all"
	comm -23 "$tmp/code-all" "$tmp/page-settings" > "$tmp/missing"
	comm -13 "$tmp/code-all" "$tmp/page-settings" > "$tmp/extra"
	while read -r s; do
		fail "repld.conf.5: setting $s (config/repld_conf.c) has no entry (.BR $s \" (type, default ...)\")"
	done < "$tmp/missing"
	while read -r s; do
		fail "repld.conf.5: documents a setting $s that config/repld_conf.c does not know"
	done < "$tmp/extra"

	# every value of the *_names[] tables, as "value"
	awk '
	/static const char \*const [a-z_]+_names\[\][[:space:]]*=/ { intable = 1 }
	intable {
		line = $0
		sub(/^[^{]*\{/, "", line)
		while (match(line, /"[^"]*"/)) {
			v = substr(line, RSTART + 1, RLENGTH - 2)
			if (v != "")
				print v
			line = substr(line, RSTART + RLENGTH)
		}
		if ($0 ~ /};/)
			intable = 0
	}' "$conf_c" | sort -u > "$tmp/values"
	[ -s "$tmp/values" ] ||
		fail "no value found in the *_names[] tables of $conf_c (has their form changed?)"
	while read -r v; do
		grep -qF "\\(dq$v\\(dq" "$conf5" ||
			fail "repld.conf.5: the value \"$v\" (config/repld_conf.c) is not mentioned"
	done < "$tmp/values"
fi

# ---- c) repld.8: options and admin verbs -------------------------------------
if [ -f "$repld8" ]; then
	sed -n 's/^[[:space:]]*{[[:space:]]*"\([a-z][a-z-]*\)",[[:space:]]*[a-z_]*argument.*$/\1/p' \
		"$repld_c" | sort -u > "$tmp/options"
	grep -qx config "$tmp/options" ||
		fail "no long option found in $repld_c (has its option table changed?)"
	while read -r o; do
		opt=$(echo "$o" | sed 's/-/\\\\-/g')
		grep -q -- "\\\\-\\\\-$opt" "$repld8" ||
			fail "repld.8: the option --$o (tools/repld/repld.c) is not documented"
	done < "$tmp/options"

	# the verbs: the comment's lines " *   VERB ..." after "Verbs"
	sed -n '/Verbs/,/\*\//p' "$proto_h" |
		sed -n 's/^ \*   \([A-Z][A-Z_]*\)\([[:space:]].*\)\{0,1\}$/\1/p' |
		sort -u > "$tmp/verbs"
	grep -qx APPEND "$tmp/verbs" ||
		fail "no verb found in $proto_h (has its comment's form changed?)"
	while read -r v; do
		grep -Eq "^\\.(B|BI|BR|TQ|TP)?[[:space:]]*\"?$v([[:space:]\"]|\$)" "$repld8" ||
			fail "repld.8: the admin verb $v (admin/admin_proto.h) has no entry"
	done < "$tmp/verbs"
fi

# ---- c) replctl.8: every command ---------------------------------------------
if [ -f "$replctl8" ]; then
	: > "$tmp/commands"
	# what main() dispatches on
	sed -n 's/.*strcmp(argv\[[0-9]\], "\([a-z][a-z-]*\)").*/\1/p' "$replctl_c" \
		>> "$tmp/commands"
	# the usage strings: lines '"  COMMAND ...'
	sed -n 's/^[[:space:]]*"[[:space:]][[:space:]]*\([a-z][a-z-]*\)[[:space:]\\"].*$/\1/p' \
		"$replctl_c" >> "$tmp/commands"
	# the built program's usage, when there is one
	if [ -x "$replctl_bin" ]; then
		"$replctl_bin" --help 2>/dev/null |
			sed -n 's/^[[:space:]][[:space:]]*\([a-z][a-z-]*\)\([[:space:]].*\)\{0,1\}$/\1/p' \
			>> "$tmp/commands"
	fi
	grep -vx -e help -e usage "$tmp/commands" | sort -u > "$tmp/commands.u"
	grep -qx dump "$tmp/commands.u" ||
		fail "no command found in $replctl_c (has its usage's form changed?)"
	while read -r cmd; do
		grep -Eq "^\\.SS[[:space:]]+\"?$cmd([[:space:]\"\\\\]|\$)" "$replctl8" ||
			fail "replctl.8: the command $cmd (replctl's usage) has no subsection .SS \"$cmd ...\""
	done < "$tmp/commands.u"
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s) in the pages of repld, repld.conf and replctl" >&2
	exit 1
fi
renderers=""
[ $have_man = yes ] && renderers="man -l"
[ $have_groff = yes ] && renderers="${renderers:+$renderers and }groff -ww"
echo "PASS: 3 pages render cleanly with $renderers;" \
	"$(wc -l < "$tmp/code-settings") settings, $(wc -l < "$tmp/values") values," \
	"$(wc -l < "$tmp/options") repld options, $(wc -l < "$tmp/verbs") admin verbs and" \
	"$(wc -l < "$tmp/commands.u") replctl commands documented"
exit 0
