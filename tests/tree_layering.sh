#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# tree_layering.sh -- the tree's top-level folders stay layered.
#
# The folders, by rank (docs/design.md §1):
#   lib (0) < rpma (1) < engine (2) < config, admin, ha, archive (3)
#   < sqlite (4) < tools (5)
# A folder may use itself and folders of lower rank; folders of one rank do
# not use each other.  tests/ and examples/ may use anything, and nothing
# may use them.  A folder that does not exist (yet: ha/) is checked once
# it does.  engine/'s wings inside engine/ are engine_layering.sh's.
#
# Checked:
#   - includes: every `#include "NAME"` of a .c or .h file of a ranked
#     folder, resolved by which folders hold NAME (a path ending in /NAME):
#     one beside the including file, or in its own folder, wins; otherwise
#     every folder that holds it must be usable.  "config.h" is the
#     build's; any other NAME the tree does not hold fails.
#   - build rules: in Makefile.am and every local.mk, each program's or
#     library's _SOURCES, _LDADD and _LIBADD (variables expanded) may name
#     files and libraries only of folders its own folder may use (a target
#     belongs to the folder its name starts with: tools_repld_repld is
#     tools/'s), and its _CPPFLAGS may add -I only for them.  AM_CPPFLAGS
#     and LDADD, the defaults (tests/unit for every test), are not followed.
# Scripts (tools/demo-cluster runs tests/engine/repl-node) are not checked.
set -u
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
fail=0

RANKED="lib rpma engine config admin sqlite ha archive tools"

rank() {
	case $1 in
	lib) echo 0 ;;
	rpma) echo 1 ;;
	engine) echo 2 ;;
	config | admin | ha | archive) echo 3 ;;
	sqlite) echo 4 ;;
	tools) echo 5 ;;
	tests | examples) echo 9 ;;	# may use anything; none may use them
	*) echo "" ;;
	esac
}

# ok FROM TO: may folder FROM use folder TO?
ok() {
	[ "$1" = "$2" ] && return 0
	case $1 in tests | examples) return 0 ;; esac
	[ "$(rank "$2")" -lt "$(rank "$1")" ]
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

folders=
for d in $RANKED tests examples; do
	[ -d "$top/$d" ] && folders="$folders $d"
done

# every file of the folders, as a path from the top (the index of names)
(cd "$top" && find $folders -type f) | sort > "$tmp/files"

# --- includes ------------------------------------------------------------
n_inc=0
: > "$tmp/incs"
for d in $RANKED; do
	[ -d "$top/$d" ] || continue
	(cd "$top" && find "$d" -type f -name '*.[ch]') | sort | while read -r f; do
		sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$top/$f" |
			while read -r inc; do echo "$f $inc"; done
	done >> "$tmp/incs"
done
while read -r f inc; do
	n_inc=$((n_inc + 1))
	from=${f%%/*}
	[ "$inc" = config.h ] && continue
	# beside the file (or up from it: "../x.h")
	here=$(dirname "$f")/$inc
	if [ -f "$top/$here" ]; then
		to=$(cd "$(dirname "$top/$here")" && pwd)
		to=${to#$top/}
		to=${to%%/*}
		if ! ok "$from" "$to"; then
			echo "FAIL: $f includes \"$inc\" of $to/: $from/ may not use $to/"
			fail=1
		fi
		continue
	fi
	awk -v s="/$inc" 'substr($0, length($0) - length(s) + 1) == s' "$tmp/files" |
		cut -d/ -f1 | sort -u > "$tmp/owners"
	if [ ! -s "$tmp/owners" ]; then
		echo "FAIL: $f includes \"$inc\", which no folder of the tree holds"
		fail=1
		continue
	fi
	grep -qx "$from" "$tmp/owners" && continue
	while read -r to; do
		if ! ok "$from" "$to"; then
			echo "FAIL: $f includes \"$inc\" of $to/: $from/ may not use $to/"
			fail=1
		fi
	done < "$tmp/owners"
done < "$tmp/incs"

# --- build rules ---------------------------------------------------------
# the build files, continuation lines joined, as "NAME OP VALUE"
mks="$top/Makefile.am $(cd "$top" && find $folders -name local.mk | sort | sed "s|^|$top/|")"
awk '
	/^[[:space:]]*#/ && !cont { next }
	{
		line = cont ? line " " $0 : $0
		if (sub(/\\$/, "", line)) { cont = 1; next }
		cont = 0
		if (match(line, /^[A-Za-z0-9_]+[[:space:]]*\+?=/)) {
			head = substr(line, 1, RLENGTH)
			rest = substr(line, RLENGTH + 1)
			op = (head ~ /\+=$/) ? "+=" : "="
			sub(/[[:space:]]*\+?=$/, "", head)
			print head, op, rest
		}
		line = ""
	}
' $mks > "$tmp/assign"

# every target variable checked, with its words expanded: "TARGET KIND WORD"
awk '
	{ name = $1; val = $0; sub(/^[^ ]+ [^ ]+ ?/, "", val)
	  vars[name] = ($2 == "+=" && name in vars) ? vars[name] " " val : val }
	function expand(s, depth,   out, v, pre, post) {
		if (depth > 10) return ""
		while (match(s, /\$\([A-Za-z0-9_]+\)/)) {
			v = substr(s, RSTART + 2, RLENGTH - 3)
			pre = substr(s, 1, RSTART - 1)
			post = substr(s, RSTART + RLENGTH)
			# the targets set their own: AM_CPPFLAGS (tests/unit for all)
			# and LDADD (the tests default) are not the target naming them
			# (one it does not know, $(top_srcdir) say, stays as @(NAME))
			if (v in vars && v != "AM_CPPFLAGS" && v != "LDADD")
				out = " " expand(vars[v], depth + 1) " "
			else
				out = (v == "AM_CPPFLAGS" || v == "LDADD") ? "" : "@(" v ")"
			s = pre out post
		}
		return s
	}
	END {
		for (name in vars) {
			if (name !~ /_(SOURCES|LDADD|LIBADD|CPPFLAGS)$/) continue
			t = name
			sub(/^(nodist_|dist_|EXTRA_)/, "", t)
			kind = t; sub(/.*_/, "", kind)
			sub(/_[A-Z]+$/, "", t)
			if (t == "AM" || t == "") continue
			x = expand(vars[name], 0)
			gsub(/@\(/, "$(", x)
			k = split(x, w, /[[:space:]]+/)
			for (i = 1; i <= k; i++)
				if (w[i] != "") print t, kind, w[i]
		}
	}
' "$tmp/assign" | sort -u > "$tmp/words"

n_rule=0
while read -r target kind word; do
	from=${target%%_*}
	[ -n "$(rank "$from")" ] || continue
	case $kind in
	CPPFLAGS)
		case $word in -I*) path=${word#-I} ;; *) continue ;; esac ;;
	*)
		case $word in -*) continue ;; esac
		path=$word ;;
	esac
	path=${path#\$(top_srcdir)/}
	path=${path#\$(srcdir)/}
	path=${path#\$(abs_top_srcdir)/}
	path=${path#\$(top_builddir)/}
	path=${path#\$(builddir)/}
	path=${path#./}
	case $path in *'$('* | /*) continue ;; */*) ;; *) continue ;; esac
	to=${path%%/*}
	[ -n "$(rank "$to")" ] || continue
	n_rule=$((n_rule + 1))
	if ! ok "$from" "$to"; then
		echo "FAIL: $target's $kind names $path: $from/ may not use $to/"
		fail=1
	fi
done < "$tmp/words"

echo "tree_layering: folders$folders; $n_inc includes, $n_rule build-rule names checked"
exit $fail
