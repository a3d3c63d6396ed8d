#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# kvstore.sh -- examples/kvstore built and run the way a database would use
# librepl:
#   1. make install DESTDIR=$T/stage of this build tree;
#   2. examples/kvstore's own Makefile, in a copy of it, finds librepl only
#      through pkg-config: PKG_CONFIG_PATH names the staged .pc file's
#      directory and PKG_CONFIG_SYSROOT_DIR=$T/stage puts the stage in front
#      of the -I and -L paths it gives (the .pc names the final prefix);
#   3. the program, on the staged librepl (LD_LIBRARY_PATH), one node with
#      a file log: set, get, del, list and bad commands; a restart rebuilds
#      the map from the log; another program's log is refused with the LSN
#      of its first record; a missing log names librepl's error.
#
# Run from the top of the build tree (as make check does); srcdir the
# source tree.  Environment, all optional: MAKE; EXAMPLE_CC, EXAMPLE_CFLAGS
# and EXAMPLE_LDFLAGS, the compiler and flags of this build.
set -u

NAME=kvstore
BUILD=$PWD
SRC=$(cd "${srcdir:-$(dirname "$0")/../..}" && pwd)
[[ -f $BUILD/engine/librepl.la ]] || { echo "$NAME: run from the build tree"; exit 99; }
[[ -f $SRC/examples/kvstore/kvstore.c ]] || { echo "$NAME: no source tree"; exit 99; }
command -v pkg-config > /dev/null || { echo "$NAME: no pkg-config"; exit 77; }
T=$(mktemp -d "/dev/shm/$NAME.XXXXXX" 2>/dev/null) ||
	T=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

fail() {
	echo "$NAME: FAIL: $*"
	exit 1
}

T0=$SECONDS

# 1. the install, staged
${MAKE:-make} -C "$BUILD" install DESTDIR="$T/stage" > "$T/install.log" 2>&1 || {
	tail -n 20 "$T/install.log"
	fail "make install DESTDIR=$T/stage"
}
mapfile -t pcs < <(find "$T/stage" -name librepl.pc)
[[ ${#pcs[@]} -eq 1 ]] || fail "${#pcs[@]} librepl.pc installed, not 1"
PCDIR=$(dirname "${pcs[0]}")
LIBDIR=$(dirname "$PCDIR")	# pkgconfigdir is $libdir/pkgconfig
echo "$NAME: installed in $((SECONDS - T0)) s: ${pcs[0]#"$T/stage"}"

# 2. the example's Makefile alone: nothing of this build's make is passed on
mkdir "$T/src"
cp "$SRC/examples/kvstore/kvstore.c" "$SRC/examples/kvstore/Makefile" "$T/src/"
chmod u+w "$T/src"/*
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	PKG_CONFIG_PATH="$PCDIR" PKG_CONFIG_SYSROOT_DIR="$T/stage" \
	make -C "$T/src" CC="${EXAMPLE_CC:-cc}" CFLAGS="${EXAMPLE_CFLAGS:--O2}" \
	LDFLAGS="${EXAMPLE_LDFLAGS:-}" > "$T/build.log" 2>&1 || {
	cat "$T/build.log"
	fail "examples/kvstore/Makefile"
}
grep -q -- " -I$T/stage/[^ ]*include " "$T/build.log" &&
	grep -q -- " -L$LIBDIR -lrepl" "$T/build.log" ||
	fail "the build did not take librepl's flags from pkg-config: $(cat "$T/build.log")"
KV=$T/src/kvstore
LD_LIBRARY_PATH=$LIBDIR ldd "$KV" | grep -q "librepl\.so[^ ]* => $LIBDIR/" ||
	fail "kvstore does not load the staged librepl: $(ldd "$KV" 2>&1)"
echo "$NAME: built with pkg-config ($((SECONDS - T0)) s)"

# 3. the store: kv EXPECTED_STATUS ARGS... < COMMANDS; answers in $T/out
kv() {
	local want=$1 rc
	shift
	LD_LIBRARY_PATH=$LIBDIR "$KV" "$@" > "$T/out" 2> "$T/err"
	rc=$?
	[[ $rc -eq $want ]] || fail "kvstore $* exited $rc, not $want: $(cat "$T/err")"
}

# expect TEXT: the answers, line by line
expect() {
	diff -u <(printf '%s\n' "$@") "$T/out" > "$T/diff" ||
		fail "unexpected answers:
$(cat "$T/diff")"
}

LOG=$T/kv.log
kv 0 -c -s 1M "$LOG" <<-CMDS
	set a 1
	set b two  words
	set c 3
	get a
	del b
	get b
	del b

	bogus x
	set onlykey
	get a extra
	list
CMDS
expect "ok 1" "ok 2" "ok 3" "value 1" "ok 4" "not found" "not found" \
	'error: unknown command "bogus" (set, get, del, list)' \
	"error: usage: set KEY VALUE" "error: usage: get KEY" \
	"a 1" "c 3" "ok 2"
grep -q "0 records replayed, 0 keys" "$T/err" || fail "a new log: $(cat "$T/err")"

# a restart: the map is the log's
kv 0 "$LOG" <<-CMDS
	get a
	get b
	get c
	set b back again
	set a 11
	list
CMDS
expect "value 1" "not found" "value 3" "ok 5" "ok 6" \
	"a 11" "b back again" "c 3" "ok 3"
grep -q "4 records replayed, 2 keys" "$T/err" || fail "replay: $(cat "$T/err")"

kv 0 "$LOG" <<< "list"
expect "a 11" "b back again" "c 3" "ok 3"
grep -q "6 records replayed, 3 keys" "$T/err" || fail "replay: $(cat "$T/err")"
echo "$NAME: set, get, del, list, bad commands, replay ok ($((SECONDS - T0)) s)"

# a log another program wrote (text records; its first is released)
if [[ -x $BUILD/engine/repl_example ]]; then
	"$BUILD/engine/repl_example" "$T/other.log" > /dev/null ||
		fail "engine/repl_example"
	kv 1 "$T/other.log" < /dev/null
	grep -q "lsn 2: malformed record (unknown record version)" "$T/err" ||
		fail "another program's log: $(cat "$T/err")"
	echo "$NAME: $(cat "$T/err")"
fi

# a log that is not there: librepl's own message
kv 1 "$T/none.log" < /dev/null
grep -q "repl_open $T/none.log: " "$T/err" || fail "no log: $(cat "$T/err")"
echo "$NAME: $(cat "$T/err")"
kv 2 -b dram "$LOG" < /dev/null
kv 2 -c -r 127.0.0.1:7400 "$LOG" < /dev/null	# a cluster needs its -u

echo "$NAME: ok ($((SECONDS - T0)) s)"
